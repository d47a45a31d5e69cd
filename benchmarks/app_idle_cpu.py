"""CPU the Streamlit server spends while nobody uses the app.

Starts the app the way ``zcp app`` does (from the folder holding ``.streamlit/config.toml``), opens
one headless-Chromium tab and measures the server process's CPU time:

1. idle: the tab on the run browser, nothing happening, for ``--seconds``;
2. job: the tab on New audit while a background ``zcp probe`` job writes its run.

The baseline is the same app with Streamlit's default file watcher (``--server.fileWatcherType auto``),
measured in the same run. The target is under 5% of one core in both phases.

    .venv/bin/python benchmarks/app_idle_cpu.py --seconds 60
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_app(runs: Path, home: Path, watcher: str | None) -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port", str(port)]
    if watcher:
        cmd += ["--server.fileWatcherType", watcher]
    env = {**os.environ, "ZCP_RUNS": str(runs), "HOME": str(home)}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                return proc, url
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("streamlit did not become healthy")


def cpu_share(pid: int, seconds: float) -> float:
    """Share of one core the process used over ``seconds`` (user + system)."""
    p = psutil.Process(pid)
    t0 = p.cpu_times()
    time.sleep(seconds)
    t1 = p.cpu_times()
    return (t1.user - t0.user + t1.system - t0.system) / seconds


def measure(page, url: str, runs: Path, pid: int, seconds: float, tag: str) -> dict[str, float]:
    from zcp_core.app import start_job

    page.goto(url)
    page.get_by_text("Run browser").first.wait_for(timeout=30_000)
    time.sleep(3)  # let the first render settle
    idle = cpu_share(pid, seconds)
    page.goto(f"{url}/new_audit")
    page.get_by_text("New audit").first.wait_for(timeout=30_000)
    job = start_job(["probe", "--model", "smollm2", "--dataset", str(ROOT / "data/gsm8k/test.jsonl"),
                     "--limit", "12", "--metrics", "acc,p_all", "--n-resamples", "500", "--no-cache"], runs / f"job-{tag}")
    page.reload()  # the page sees the running job and follows it
    t0 = time.time()
    p = psutil.Process(pid)
    c0 = p.cpu_times()
    while not (job / "manifest.json").exists() and time.time() - t0 < 600:
        time.sleep(1)
    c1 = p.cpu_times()
    busy = (c1.user - c0.user + c1.system - c0.system) / max(time.time() - t0, 1e-9)
    return {"idle": idle, "job": busy, "job_seconds": time.time() - t0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="idle measurement window")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    results = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=FLAGS)
        for tag, watcher in (("project config", None), ("baseline: file watcher on", "auto")):
            runs = Path(tmp) / tag.split(":")[0].replace(" ", "-")
            runs.mkdir()
            proc, url = start_app(runs, Path(tmp) / "home", watcher)
            try:
                page = browser.new_page()
                results[tag] = measure(page, url, runs, proc.pid, args.seconds, tag.split(":")[0].replace(" ", "-"))
                page.close()
            finally:
                proc.terminate()
                proc.wait(timeout=30)
        browser.close()
    print(f"Streamlit server CPU, one headless tab ({args.seconds:.0f} s idle window; share of one core)")
    print("| app settings | idle tab | tab on New audit while a job writes its run |")
    print("|---|---|---|")
    for tag, r in results.items():
        print(f"| {tag} | {100 * r['idle']:.1f}% | {100 * r['job']:.1f}% ({r['job_seconds']:.0f} s job) |")
    base, ours = results["baseline: file watcher on"], results["project config"]
    print(f"idle ratio baseline/ours: {base['idle'] / max(ours['idle'], 1e-4):.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
