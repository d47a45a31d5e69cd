"""One real-browser test: `streamlit run app.py` driven by headless Chromium.

Skips with a clear reason only where Chromium is not installed (`make test`
installs it with apt-get when it can).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]

pytestmark = pytest.mark.browser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def app_server(tmp_path: Path, browser_run: Path):
    port = _free_port()
    env = {**os.environ, "ZCP_RUNS": str(browser_run), "HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("streamlit did not become healthy")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.fixture
def browser_run(tmp_path: Path) -> Path:
    """A real run made by the CLI: an artifact scan of the bundled DetectRL sample."""
    from zcp_core.cli.main import main

    sample = sorted((ROOT / "data" / "detectrl_sample").glob("*.json"))
    assert sample, "bundled DetectRL sample missing"
    runs = tmp_path / "runs"
    assert main(["scan", *map(str, sample), "--out", str(runs / "browser-scan")]) == 0
    return runs


def test_home_and_run_page_in_chromium(app_server: str, browser_run: Path, tmp_path: Path) -> None:
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed (/usr/bin/chromium); `make test` installs it with apt-get as root")
    from playwright.sync_api import sync_playwright

    from zcp_core.runs import load_run

    run = load_run(browser_run / "browser-scan")
    headline = run.summary["headline"]
    with sync_playwright() as p:
        # A fresh profile folder per test (Playwright passes it as --user-data-dir).
        browser = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=str(CHROMIUM), args=FLAGS,
            viewport={"width": 1400, "height": 1000},
        )
        page = browser.new_page()
        page.goto(app_server)
        page.get_by_text("contamination audits").first.wait_for(timeout=90_000)
        page.get_by_text("Open a run").first.wait_for(timeout=90_000)
        # The label also sits in the (canvas) run table, so look for it inside a metric.
        metric = page.locator('[data-testid="stMetric"]').filter(has_text=str(headline["label"])).first
        metric.wait_for(timeout=90_000)
        value = metric.locator('[data-testid="stMetricValue"]')
        assert str(headline["value"]) in value.inner_text().replace(",", "")
        page.screenshot(path=str(tmp_path / "home.png"), full_page=True)
        page.get_by_role("button", name="Open on its page").click()
        page.get_by_text("Artifacts in generated-text benchmarks").first.wait_for(timeout=90_000)
        page.get_by_text("Flagged (high-precision)").first.wait_for(timeout=90_000)
        values = [v.inner_text().replace(",", "") for v in page.locator('[data-testid="stMetricValue"]').all()]
        assert str(headline["value"]) in values
        page.screenshot(path=str(tmp_path / "run.png"), full_page=True)
        browser.close()
