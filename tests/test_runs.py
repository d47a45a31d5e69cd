"""Run folders: manifest contents, atomic writes, reading back, listing."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from zcp_core.runs import RunSpec, load_run, runs_table, shell_command, write_run


def _write(tmp_path: Path, name: str = "r1", kind: str = "probe") -> Path:
    data = tmp_path / "d.jsonl"
    data.write_text('{"question": "q", "answer": "#### 1"}\n')
    return write_run(
        tmp_path / "runs" / name,
        RunSpec(kind=kind, config={"limit": 5}, command="zcp probe", model="smollm2", model_revision="abc",
                dataset=(str(data),), seed=7),
        pd.DataFrame({"id": ["a", "b"], "acc": [True, False]}),
        {"headline": {"label": "C", "value": 0.71}, "n": 2},
        tables={"items": pd.DataFrame({"pair_id": ["a"]})},
    )


def test_manifest_fields(tmp_path: Path) -> None:
    folder = _write(tmp_path)
    m = json.loads((folder / "manifest.json").read_text())
    for key in ("kind", "command", "config", "model", "model_revision", "datasets", "seed", "versions",
                "git_sha", "started", "finished", "summary", "tables"):
        assert key in m
    assert m["datasets"][0]["sha256"] and len(m["datasets"][0]["sha256"]) == 64
    assert m["versions"]["math-verify"] == "0.9.0"
    assert m["seed"] == 7 and m["tables"] == ["items", "records"]


def test_load_run_reads_tables(tmp_path: Path) -> None:
    run = load_run(_write(tmp_path))
    assert run.kind == "probe"
    assert list(run.records["id"]) == ["a", "b"]
    assert run.table("items").shape == (1, 1)
    assert run.summary["headline"]["value"] == 0.71
    with pytest.raises(FileNotFoundError, match="no table 'nope'"):
        run.table("nope")


def test_no_temp_files_left(tmp_path: Path) -> None:
    folder = _write(tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == ["items.parquet", "manifest.json", "records.parquet"]


def test_runs_table_lists_runs_and_skips_broken(tmp_path: Path) -> None:
    _write(tmp_path, "a")
    _write(tmp_path, "b", kind="scan")
    broken = tmp_path / "runs" / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_text("{not json")
    t = runs_table(tmp_path / "runs")
    assert sorted(t["name"]) == ["a", "b"]
    assert set(t["kind"]) == {"probe", "scan"}
    assert t["headline_value"].tolist() == [0.71, 0.71]


def test_unknown_kind_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown run kind"):
        write_run(tmp_path / "x", RunSpec(kind="nope", config={}), pd.DataFrame(), {})


def test_empty_runs_dir(tmp_path: Path) -> None:
    assert runs_table(tmp_path / "missing").empty


@pytest.mark.parametrize("argv, command", [
    (["/x/.venv/bin/zcp", "probe", "--limit", "5"], "zcp probe --limit 5"),
    (["/x/zcp_core/cli/main.py", "scan", "data/a b.json"], "zcp scan 'data/a b.json'"),
    (["benchmarks/probe_cost.py", "--n", "3"], "benchmarks/probe_cost.py --n 3"),
    ([], ""),
])
def test_shell_command_can_be_pasted(argv: list[str], command: str) -> None:
    assert shell_command(argv) == command


def test_cli_runs_record_real_start_and_a_pasteable_command(tmp_path: Path) -> None:
    import datetime as dt
    import subprocess
    import sys

    files = Path(__file__).resolve().parent.parent / "data" / "detectrl_sample"
    sample = sorted(files.glob("*.json"))[0]
    out = tmp_path / "scan"
    # The app starts jobs as `python -m zcp_core.cli.main`; the manifest must still read `zcp scan ...`.
    subprocess.run([sys.executable, "-m", "zcp_core.cli.main", "scan", str(sample), "--out", str(out)],
                   check=True, capture_output=True)
    m = json.loads((out / "manifest.json").read_text())
    assert m["command"].startswith("zcp scan ")
    started, finished = dt.datetime.fromisoformat(m["started"]), dt.datetime.fromisoformat(m["finished"])
    assert started < finished  # the command's start, not the moment the manifest was written


def test_a_notebook_kernel_records_no_command() -> None:
    from zcp_core.runs import shell_command

    assert shell_command(["/x/ipykernel_launcher.py", "-f", "/r/kernel-1.json",
                          "--HistoryManager.hist_file=:memory:"]) == ""
    assert shell_command([".venv/bin/zcp", "probe", "--limit", "5"]) == "zcp probe --limit 5"
