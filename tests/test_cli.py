"""The zcp command line: every command module loads, --help works, --json is machine-readable."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from zcp_core.cli.main import COMMAND_MODULES, build_parser, main

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", COMMAND_MODULES)
def test_every_command_module_exists(name: str) -> None:
    assert hasattr(importlib.import_module(f"zcp_core.cli.{name}"), "register")


def test_help_for_every_command() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, p in sub.choices.items():  # type: ignore[attr-defined]
        assert p.format_help(), name


def test_data_inspect_counts_gsm8k(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "inspect", str(ROOT / "data/gsm8k/test.jsonl")]) == 0
    assert "1319 items" in capsys.readouterr().out
    assert main(["data", "inspect", str(ROOT / "data/gsm8k/test.jsonl"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["n"] == 1319 and summary["headline"] == {"label": "items", "value": 1319}


def test_data_inspect_reports_every_bad_row_and_carries_on(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "b.jsonl"
    p.write_text('{"question": "a", "answer": "#### 1"}\n{oops\n{"question": "b"}\n{"question": "c", "answer": "#### 3"}\n')
    assert main(["data", "inspect", str(p), "--json"]) == 1  # it found bad rows: not a success
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 2 and [b["line"] for b in out["bad_rows"]] == [2, 3]
    assert out["bad_rows"][1]["field"] == "answer"
    assert main(["data", "inspect", str(p)]) == 1
    text = capsys.readouterr().out
    assert "bad rows: 2" in text and "line 2: malformed JSON" in text and "line 3, field 'answer'" in text
    assert "None" not in text
    assert main(["data", "inspect", str(p), "--strict"]) == 1  # the old fail-fast behaviour, on request
    assert "line 2" in capsys.readouterr().err


def test_data_inspect_empty_file_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "empty.jsonl"
    p.write_text("")
    assert main(["data", "inspect", str(p)]) == 1
    err = capsys.readouterr().err
    assert "empty.jsonl" in err and "empty" in err


def test_missing_run_folder_is_one_line(tmp_path: Path) -> None:
    for argv in (["confidence", str(tmp_path / "nope")], ["release", str(tmp_path / "nope"), "--out", str(tmp_path / "x")]):
        proc = subprocess.run([sys.executable, "-m", "zcp_core.cli.main", *argv], capture_output=True, text=True,
                              cwd=ROOT, timeout=120)
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.strip().splitlines() == [f"zcp {argv[0]}: error: {tmp_path / 'nope'}: no such folder"]
        assert "Traceback" not in proc.stderr and not proc.stdout


@pytest.mark.parametrize("spec, fix", [("gpt-5-turbo", "zcp models"), ("lab:nosuch", "zcp lab build"),
                                       ("hf:/no/such/folder", "zcp models")])
def test_unknown_model_fails_before_probing(spec: str, fix: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "--model", spec, "--dataset", str(ROOT / "data/gsm8k/test.jsonl"), "--limit", "2"]) == 1
    cap = capsys.readouterr()
    assert "probing" not in cap.err and not cap.out
    (line,) = cap.err.strip().splitlines()
    assert line.startswith("zcp probe: error: ") and spec in line and fix in line


def test_unreadable_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "a_folder.jsonl"
    folder.mkdir()
    assert main(["data", "inspect", str(folder)]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert str(folder) in line and "Traceback" not in line
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b'{"question": "a", "answer": "#### 1"}\n\xff\xfe\n')
    assert main(["data", "inspect", str(binary)]) == 1
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "b.jsonl, line 2" in line and "UTF-8" in line


def test_models_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--json"]) == 0
    specs = {r["spec"]: r["status"] for r in json.loads(capsys.readouterr().out)["models"]}
    assert specs["smollm2"].startswith("available")
    assert "vllm:NAME_OR_PATH" in specs


def test_console_script_is_fast_and_light() -> None:
    code = ("import sys; from zcp_core.cli.main import build_parser; build_parser(); "
            "print(sorted(m for m in ('torch','transformers','pandas','streamlit','shap','sklearn','vllm','ray',"
            "'scipy','openai','re2','peft','math_verify') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ---- reference build: independent judges; probe: a reference run folder --------------------------------
@pytest.mark.parametrize(("extra", "message"), [
    ([], "needs two judges that are other models than the generator"),
    (["--judge", "smollm2", "--judge2", "hf:/elsewhere"], "judge 1 is the generator (smollm2)"),
    (["--judge", "hf:/a", "--judge2", "hf:/a"], "judges 1 and 2 are the same model (hf:/a)"),
])
def test_reference_build_llm_refuses_self_judging(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  extra: list[str], message: str) -> None:
    out = tmp_path / "ref"
    rc = main(["reference", "build", "--dataset", str(ROOT / "data/gsm8k/test.jsonl"), "--method", "llm",
               "--generator", "smollm2", "--limit", "1", "--out", str(out), *extra])
    assert rc == 1
    err = capsys.readouterr().err
    assert message in err and "--allow-self-judge" in err
    assert not out.exists()  # refused before any model loads or anything is written


def test_probe_reads_the_twins_of_a_reference_run_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from zcp_core.cli.probe import _load_sets

    data = str(ROOT / "data/gsm8k/test.jsonl")
    assert main(["reference", "build", "--dataset", data, "--method", "numeric", "--limit", "6",
                 "--out", str(tmp_path / "ref"), "--json"]) == 0
    built = json.loads(capsys.readouterr().out)
    args = build_parser().parse_args(["probe", "--dataset", data, "--limit", "6", "--reference", str(tmp_path / "ref")])
    original, reference, _, _ = _load_sets(args)
    assert len(original) == 6 and len(reference) == built["traced"] > 0
    assert {t.original_id for t in reference} <= {o.id for o in original}


def test_probe_refuses_twins_that_pair_with_no_original(tmp_path, capsys):
    """A reference whose original_id values match no dataset id is an error naming the file, not a crash."""
    data, twins = tmp_path / "items.jsonl", tmp_path / "twins.jsonl"
    data.write_text('{"uid": "q1", "question": "What is 2 + 2?", "answer": "4"}\n')
    twins.write_text('{"id": "t1", "original_id": "q1", "question": "What is 3 + 3?", "answer": "6"}\n')
    assert main(["probe", "--model", "smollm2", "--dataset", str(data), "--reference", str(twins),
                 "--out", str(tmp_path / "run")]) == 1  # no `id` field: ids by line ("items-1")
    err = capsys.readouterr().err
    assert str(twins) in err and "original_id" in err and "--format items" in err
    assert not (tmp_path / "run" / "manifest.json").exists()
