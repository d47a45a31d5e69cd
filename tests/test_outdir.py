"""Nothing is lost: a command resumes its own run, refuses anything else in one line, replaces only on --overwrite.

Each data-loss case a user met is walked through the real command: a probe onto another probe's folder, a
release into a folder of the user's own files, a twin build rerun with other options, and a GSM8K-style file
that carries its own ids.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from zcp_core.cli.main import main
from zcp_core.outdir import OutputRefused, claim_output, command_options, differences

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "data" / "examples" / "probe-lab-direct"


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _run_folder(path: Path, kind: str, options: dict | None) -> Path:
    path.mkdir(parents=True)
    (path / "manifest.json").write_text(json.dumps({"kind": kind, "options": options}))
    (path / "records.parquet").write_bytes(b"old")
    return path


# ---- the rule, on folders made by hand -------------------------------------------------------------------


def test_a_new_or_empty_folder_is_new(tmp_path: Path) -> None:
    assert claim_output(tmp_path / "none", "probe", {}).action == "new"
    (tmp_path / "empty").mkdir()
    assert claim_output(tmp_path / "empty", "probe", {}).action == "new"
    # the app writes its job's log before the command starts; that folder is still the job's own
    job = tmp_path / "job"
    job.mkdir()
    (job / "log.txt").write_text("starting")
    (job / "job.json").write_text("{}")
    assert claim_output(job, "probe", {}).action == "new"


def test_same_kind_same_options_resumes_and_other_options_are_refused_by_name(tmp_path: Path) -> None:
    run = _run_folder(tmp_path / "r", "probe", {"limit": 30, "twins": 4})
    before = _snapshot(run)
    assert claim_output(run, "probe", {"limit": 30, "twins": 4}).action == "resume"
    with pytest.raises(OutputRefused) as e:
        claim_output(run, "probe", {"limit": 40, "twins": 4})
    msg = str(e.value)
    assert "\n" not in msg and "--limit: 30 then, 40 now" in msg and "--overwrite" in msg
    assert _snapshot(run) == before  # a refusal touches nothing
    assert claim_output(run, "probe", {"limit": 40, "twins": 4}, overwrite=True).action == "replace"
    assert not any(run.iterdir())  # the old run is gone, the folder is ready for the new one


def test_overwrite_keeps_the_app_jobs_log(tmp_path: Path) -> None:
    run = _run_folder(tmp_path / "r", "probe", {"limit": 1})
    (run / "log.txt").write_text("the job's log")
    claim_output(run, "probe", {"limit": 2}, overwrite=True)
    assert [p.name for p in run.iterdir()] == ["log.txt"]


def test_another_kind_is_refused_and_overwrite_replaces_it(tmp_path: Path) -> None:
    run = _run_folder(tmp_path / "r", "scan", {"mode": "all"})
    with pytest.raises(OutputRefused, match="already holds a scan run, not a probe run"):
        claim_output(run, "probe", {})
    assert claim_output(run, "probe", {}, overwrite=True).action == "replace"


def test_files_zcp_did_not_write_are_never_replaced(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "benchmark.jsonl").write_text("my own\n")
    (mine / "notes.txt").write_text("my notes\n")
    before = _snapshot(mine)
    for overwrite in (False, True):
        with pytest.raises(OutputRefused, match=r"holds files zcp did not write \(benchmark.jsonl, notes.txt\)"):
            claim_output(mine, "release", None, overwrite=overwrite)
    assert _snapshot(mine) == before
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputRefused, match="is a file"):
        claim_output(tmp_path / "file", "probe", {})


def test_a_command_without_options_never_resumes(tmp_path: Path) -> None:
    rel = tmp_path / "rel"
    rel.mkdir()
    (rel / "release.json").write_text("{}")
    with pytest.raises(OutputRefused, match="already holds a release; pass --overwrite"):
        claim_output(rel, "release", None)
    # a run written outside the command line stored no options: a rerun cannot be known for the same
    run = _run_folder(tmp_path / "r", "probe", None)
    with pytest.raises(OutputRefused, match="already holds a probe run;"):
        claim_output(run, "probe", {"limit": 3})


def test_options_leave_out_what_changes_no_output() -> None:
    opts = command_options({"limit": 3, "json": True, "out": "x", "overwrite": True, "batch_size": 8,
                            "device": "cpu", "no_cache": True, "func": print, "command": "probe"})
    assert opts == {"command": "probe", "limit": 3}
    assert differences({"a": 1, "b": None}, {"a": 1, "b": True}) == ["--b: not given then, on now"]


# ---- the commands ----------------------------------------------------------------------------------------


def test_release_into_a_folder_of_the_users_files_is_refused(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    shutil.copytree(EXAMPLE, run)
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "benchmark.jsonl").write_text("the user's own benchmark\n")
    (mixed / "notes.txt").write_text("the user's notes\n")
    before = _snapshot(mixed)
    assert main(["release", str(run), "--out", str(mixed)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds files zcp did not write" in err[0]
    assert main(["release", str(run), "--out", str(mixed), "--overwrite"]) == 1
    assert _snapshot(mixed) == before

    rel = tmp_path / "rel"
    assert main(["release", str(run), "--out", str(rel)]) == 0
    written = _snapshot(rel)
    capsys.readouterr()
    assert main(["release", str(run), "--out", str(rel), "--replace", "covered"]) == 1
    assert "already holds a release; pass --overwrite" in capsys.readouterr().err
    assert _snapshot(rel) == written
    (rel / "stale.txt").write_text("left from an old release")
    assert main(["release", str(run), "--out", str(rel), "--replace", "covered", "--overwrite"]) == 0
    assert not (rel / "stale.txt").exists()  # the release folder holds only what this release wrote
    assert json.loads((rel / "release.json").read_text())["replace"] == "covered"


def test_probe_onto_another_run_is_refused_before_any_model_loads(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run"
    shutil.copytree(EXAMPLE, run)
    before = _snapshot(run)
    # refused once its inputs are read, before the model loads: its error is the last line, and nothing ran
    assert main(["probe", "--dataset", str(ROOT / "data/gsm8k/test.jsonl"), "--limit", "5", "--out", str(run)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert "already holds a probe run" in err[-1] and "--overwrite" in err[-1]
    assert not any("probing" in line for line in err)
    assert _snapshot(run) == before


def test_reference_build_resumes_refuses_and_overwrites(tmp_path: Path, capsys) -> None:
    out = tmp_path / "twins"
    base = ["reference", "build", "--dataset", str(ROOT / "data/gsm8k/test.jsonl"), "--out", str(out)]
    assert main([*base, "--limit", "6"]) == 0
    first = json.loads((out / "manifest.json").read_text())
    assert first["options"]["limit"] == 6
    capsys.readouterr()
    assert main([*base, "--limit", "6", "--json"]) == 0  # same options: its own run, written again
    assert "resuming" in capsys.readouterr().err
    made = _snapshot(out)
    assert main([*base, "--limit", "8"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--limit: 6 then, 8 now" in err[0]
    assert _snapshot(out) == made
    assert main([*base, "--limit", "8", "--overwrite"]) == 0
    assert json.loads((out / "manifest.json").read_text())["options"]["limit"] == 8


def test_a_gsm8k_file_keeps_its_own_ids(tmp_path: Path) -> None:
    from zcp_core.data import load_items

    rows = [json.loads(x) for x in (ROOT / "data/gsm8k/test.jsonl").read_text().splitlines()[:3]]
    f = tmp_path / "mine.jsonl"
    f.write_text("".join(json.dumps({"id": f"q-{i:03d}", **r}) + "\n" for i, r in enumerate(rows)))
    assert [it.id for it in load_items(f)] == ["q-000", "q-001", "q-002"]
    assert load_items(f)[0].metadata["calculations"]  # still read as GSM8K (calculator annotations)
    bare = tmp_path / "bare.jsonl"
    bare.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert all(it.id.startswith("gsm8k-") for it in load_items(bare))


# ---- one cache, and a resume that is shown -----------------------------------------------------------------


def test_one_cache_in_a_documented_order(tmp_path: Path, monkeypatch) -> None:
    from zcp_core.backends.cache import cache_dir

    monkeypatch.setenv("ZCP_CACHE", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"
    monkeypatch.delenv("ZCP_CACHE")
    # run from a checkout (this one), zcp uses the checkout's cache, as make does: one cache for every way in
    assert cache_dir() == ROOT / ".zcp_cache"


def _rows(db: Path) -> int:
    import sqlite3

    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db, timeout=5) as con:
            return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.OperationalError:  # the table is not made yet
        return 0


def _model_calls(err: str) -> tuple[int, int]:
    import re

    found = re.search(r"model calls: (\d+) computed, (\d+) answered from the cache", err)
    assert found, err[-2000:]
    return int(found.group(1)), int(found.group(2))


@pytest.mark.model
@pytest.mark.heavy
@pytest.mark.parametrize("stop", ["ctrl-c", "kill"])
def test_an_interrupted_probe_reruns_only_the_missing_answers(tmp_path: Path, stop: str) -> None:
    """Stopped mid-arm (Ctrl-C, or killed outright), the rerun computes exactly the answers the cache lacks."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from zcp_core.backends import ensure_converted

    model = ensure_converted()  # the shared conversion; the answers go to a private cache
    cache = tmp_path / "cache"
    (cache / "models").mkdir(parents=True)
    (cache / "models" / model.name).symlink_to(model)
    db = cache / "responses.sqlite"
    cmd = [sys.executable, "-m", "zcp_core.cli.main", "probe", "--dataset", str(ROOT / "data/gsm8k/test.jsonl"),
           "--limit", "8", "--metrics", "p_first,p_all", "--batch-size", "2", "--out", str(tmp_path / "run")]
    env = {**os.environ, "ZCP_CACHE": str(cache)}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while _rows(db) == 0 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT if stop == "ctrl-c" else signal.SIGKILL)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == (130 if stop == "ctrl-c" else -signal.SIGKILL), err[-2000:]
    if stop == "ctrl-c":
        assert "cached work is kept and a rerun resumes from it" in err
    stored = _rows(db)
    assert stored > 0 and not (tmp_path / "run" / "manifest.json").exists()

    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    computed, reused = _model_calls(rerun.stderr)
    # each answer is stored under two keys (its completion and its scores), so rows count answers twice
    assert reused == stored // 2 and computed == (_rows(db) - stored) // 2 and computed > 0
