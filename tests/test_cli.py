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
    assert main(["data", "inspect", str(p), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n"] == 2 and [b["line"] for b in out["bad_rows"]] == [2, 3]
    assert out["bad_rows"][1]["field"] == "answer"
    assert main(["data", "inspect", str(p)]) == 0
    text = capsys.readouterr().out
    assert "bad rows: 2" in text and "line 2" in text and "line 3 field answer" in text
    assert main(["data", "inspect", str(p), "--strict"]) == 1  # the old fail-fast behaviour, on request
    assert "line 2" in capsys.readouterr().err


def test_data_inspect_empty_file_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "empty.jsonl"
    p.write_text("")
    assert main(["data", "inspect", str(p)]) == 1
    err = capsys.readouterr().err
    assert "empty.jsonl" in err and "empty" in err


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
