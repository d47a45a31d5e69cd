"""Inputs are checked before any work: a bad flag value, a taken port or a bad dataset row is one line, non-zero.

Everything here is fast: no model is loaded, files are small and made in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from zcp_core.cli.common import open_probability, port, positive_int, probability
from zcp_core.cli.main import build_parser, main
from zcp_core.data import BadRow, FieldMap, load_dataset
from zcp_core.errors import DataError

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_PROBE = ROOT / "data" / "examples" / "probe-lab-direct"
#: What no text summary may show: a dict, list or tuple repr, or Python's None / nan.
REPR = re.compile(r"\{'|\['|\('|\{\"|\[\"|\bNone\b|\bnan\b")


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``zcp ARGV``, expect argparse's refusal (exit 2) in at most three lines and return its error line."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    errors = [line for line in captured.err.splitlines() if ": error: " in line]
    assert len(errors) == 1, captured.err
    assert "Traceback" not in captured.err
    lines = captured.err.rstrip().splitlines()
    # the error first, then its flag's hint, then where the usage is: nothing scrolls it away
    assert lines[0] == errors[0] and len(lines) <= 3 and lines[-1].startswith("see `zcp")
    return errors[0]


@pytest.fixture()
def gsm8k(tmp_path: Path) -> Path:
    p = tmp_path / "g.jsonl"
    p.write_text('{"question": "1+1?", "answer": "#### 2"}\n')
    return p


BAD_VALUES = [
    # (command, flag, value, words the error gives)
    (["probe", "--dataset", "{data}"], "--limit", "0", "at least 1, not 0"),
    (["probe", "--dataset", "{data}"], "--limit", "-5", "at least 1, not -5"),
    (["probe", "--dataset", "{data}"], "--limit", "ten", "whole number"),
    (["guided", "--dataset", "{data}", "--dataset-name", "GSM8K", "--out", "{out}"], "--limit", "-1", "at least 1"),
    (["baselines", "--dataset", "{data}", "--out", "{out}"], "--limit", "0", "at least 1"),
    (["reference", "paraphrase", "--dataset", "{data}", "--out", "{out}"], "--limit", "0", "at least 1"),
    (["reference", "build", "--dataset", "{data}", "--out", "{out}"], "--limit", "-3", "at least 1"),
    (["afr", "generate", "--problems", "{data}"], "--limit", "0", "at least 1"),
    (["afr", "profile", "{data}"], "--limit", "0", "at least 1"),
    (["release", "{run}", "--out", "{out}"], "--min-confidence", "1.5", "between 0 and 1, not 1.5"),
    (["release", "{run}", "--out", "{out}"], "--min-confidence", "-0.1", "between 0 and 1"),
    (["release", "{run}", "--out", "{out}"], "--min-confidence", "nan", "not NaN"),
    (["probe", "--dataset", "{data}"], "--prior", "0", "strictly between 0 and 1, not 0"),
    (["probe", "--dataset", "{data}"], "--prior", "1", "strictly between 0 and 1"),
    (["probe", "--dataset", "{data}"], "--prior", "half", "must be a number"),
    (["confidence", "{run}"], "--prior", "1.2", "strictly between 0 and 1"),
    (["probe", "--dataset", "{data}"], "--fdr", "0", "strictly between 0 and 1, not 0"),
    (["probe", "--dataset", "{data}"], "--fdr", "1", "strictly between 0 and 1"),
    (["probe", "--dataset", "{data}"], "--twins", "0", "at least 1, not 0"),
    (["probe", "--dataset", "{data}"], "--twin", "-1", "at least 1"),
    (["app"], "--port", "70000", "1 to 65535, not 70000"),
    (["app"], "--port", "0", "1 to 65535"),
    (["app"], "--port", "http", "port number"),
    (["serve"], "--port", "-1", "1 to 65535"),
]


@pytest.mark.parametrize(("command", "flag", "value", "words"), BAD_VALUES,
                         ids=[f"{c[0]}{flag}={v}" for c, flag, v, _ in BAD_VALUES])
def test_bad_flag_values_are_one_line_usage_errors(command: list[str], flag: str, value: str, words: str,
                                                   gsm8k: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    fill = {"{data}": str(gsm8k), "{out}": str(tmp_path / "out"), "{run}": str(EXAMPLE_PROBE)}
    argv = [fill.get(a, a) for a in command] + [flag, value]
    line = _usage_error(argv, capsys)
    assert f"error: argument {flag}: " in line and words in line
    assert not (tmp_path / "out").exists()  # refused before any work


def _options(parser: argparse.ArgumentParser, path: str = "zcp") -> Iterator[tuple[str, argparse.Action]]:
    """Every optional argument of every (sub)command, with the command's path."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, f"{path} {name}")
        else:
            for flag in action.option_strings:
                yield f"{path} {flag}", action


@pytest.mark.parametrize(("flag", "check"), [("--limit", positive_int), ("--min-confidence", probability),
                                             ("--prior", open_probability), ("--fdr", open_probability),
                                             ("--port", port)])
def test_every_such_flag_of_every_command_is_checked(flag: str, check: object) -> None:
    """A command added later with its own ``--limit`` (or port, prior...) gets the same check, or this fails."""
    found = [(where, action.type) for where, action in _options(build_parser()) if where.endswith(" " + flag)]
    unchecked = [where for where, kind in found if kind is not check]
    assert unchecked == []
    if flag != "--fdr":  # no command has --fdr today; one that adds it must check it
        assert found


def test_checks_accept_their_bounds() -> None:
    assert positive_int("1") == 1 and positive_int("1319") == 1319
    assert probability("0") == 0.0 and probability("1") == 1.0 and probability("0.95") == 0.95
    assert open_probability("0.5") == 0.5 and open_probability("1e-6") == 1e-6
    assert port("1") == 1 and port("65535") == 65535
    for check, bad in ((positive_int, "0"), (probability, "1.0001"), (open_probability, "0.0"), (port, "65536"),
                       (probability, "inf"), (open_probability, "nan")):
        with pytest.raises(argparse.ArgumentTypeError):
            check(bad)


def test_good_values_still_parse(gsm8k: Path) -> None:
    args = build_parser().parse_args(["probe", "--dataset", str(gsm8k), "--limit", "1", "--prior", "0.3"])
    assert args.limit == 1 and args.prior == 0.3
    assert build_parser().parse_args(["probe", "--dataset", str(gsm8k)]).limit is None  # absent: every item
    args = build_parser().parse_args(["release", "run", "--out", "o", "--min-confidence", "1"])
    assert args.min_confidence == 1.0


# ---- a port in use ----------------------------------------------------------------------------------------------


@pytest.fixture()
def taken_port() -> Iterator[int]:
    """A port another program is listening on, for the length of the test."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        yield s.getsockname()[1]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_app_on_a_taken_port_says_how_to_pick_another(taken_port: int, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    def no_exec(*args: object) -> None:
        raise AssertionError("the app was started on a taken port")

    monkeypatch.setattr(os, "execv", no_exec)
    for argv in (["app", "--port", str(taken_port)], ["app", "--port", str(taken_port), "--check-port"]):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err
        assert err.startswith(f"zcp app: error: port {taken_port} on 127.0.0.1 is in use")
        assert "ZCP_PORT=" in err and "make demo" in err and "zcp app --port " in err


def test_check_port_on_a_free_port_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["app", "--port", str(_free_port()), "--check-port"]) == 0
    assert capsys.readouterr().err == ""


def test_the_demo_checks_its_port_before_announcing_the_app() -> None:
    script = (ROOT / "scripts" / "demo").read_text()
    first, last = script.index("app --check-port"), script.rindex("app --check-port")
    assert first < script.index("\nrun_once demo-")  # before any work, so a taken port fails at once
    assert last < script.index('"$PY" scripts/demo_jobs.py') < script.index('echo "demo: opening the app')


@pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "zcp").exists(), reason="needs the project's .venv (make setup)")
def test_demo_on_a_taken_port_fails_before_opening(taken_port: int, tmp_path: Path) -> None:
    env = {**os.environ, "ZCP_PORT": str(taken_port), "ZCP_RUNS": str(tmp_path / "runs"),
           "PYTHONPATH": str(ROOT)}  # this checkout's zcp_core, whatever the venv's editable install points at
    out = subprocess.run([str(ROOT / "scripts" / "demo")], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 1
    assert "opening" not in out.stderr and "Traceback" not in out.stderr
    assert out.stderr.strip().splitlines() == [out.stderr.strip()]  # one line
    assert "is in use" in out.stderr and "ZCP_PORT=" in out.stderr
    assert not (tmp_path / "runs").exists()


# ---- duplicate ids and bad rows -------------------------------------------------------------------------------

MALFORMED = "malformed JSON: Expecting property name enclosed in double quotes (column 2)"


def test_duplicate_id_names_both_lines_and_a_malformed_line_is_still_reported(tmp_path: Path) -> None:
    p = tmp_path / "items.jsonl"
    p.write_text('{"id": "a", "question": "q", "answer": "1"}\n{"id": "b", "question": "r", "answer": "2"}\n'
                 '{oops\n{"id": "a", "question": "s", "answer": "3"}\n')
    ds = load_dataset(p, on_error="skip")
    assert [it.id for it in ds.items] == ["a", "b"]  # the first of the two keeps its id; the second is reported
    assert ds.bad_rows == (BadRow(str(p), 3, None, MALFORMED),
                           BadRow(str(p), 4, "id", "duplicate id 'a': line 1 has it too; ids must be unique"))
    with pytest.raises(DataError) as err:
        load_dataset(p)
    # the first problem in file order, and the lines of the others: nothing is lost
    assert str(err.value) == (f"{p}, line 3: {MALFORMED} (and 1 more bad row: line 4; "
                              f"`zcp data inspect {p}` lists every one)")
    assert (err.value.line, err.value.field) == (3, None)


def test_duplicate_first_then_malformed(tmp_path: Path) -> None:
    p = tmp_path / "probs.jsonl"
    p.write_text('{"uid": "x", "question": "q", "answer": "1"}\n{"uid": "x", "question": "r", "answer": "2"}\n'
                 '{oops\n{"uid": "y"}\n')
    with pytest.raises(DataError) as err:
        load_dataset(p, fields=FieldMap(id="uid"))
    assert str(err.value) == (f"{p}, line 2, field 'uid': duplicate id 'x': line 1 has it too; ids must be unique "
                              f"(and 2 more bad rows: lines 3, 4; `zcp data inspect {p}` lists every one)")


def test_gsm8k_duplicate_question_names_the_question_field(tmp_path: Path) -> None:
    p = tmp_path / "test.jsonl"
    p.write_text('{"question": "1+1?", "answer": "#### 2"}\n{"question": "2+2?", "answer": "#### 4"}\n'
                 '{"question": "1+1?", "answer": "so #### 2"}\n')
    with pytest.raises(DataError, match=r"line 3, field 'question': duplicate id 'gsm8k-[0-9a-f]{12}': line 1 has"):
        load_dataset(p)


def test_cli_reports_duplicate_and_malformed_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "items.jsonl"
    p.write_text('{"id": "a", "question": "q", "answer": "1"}\n{oops\n{"id": "a", "question": "s", "answer": "3"}\n')
    assert main(["data", "inspect", str(p)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[-4:] == [
        "bad rows: 2",
        f"  line 2: {MALFORMED}",
        "  line 3, field 'id': duplicate id 'a': line 1 has it too; ids must be unique",
        "2 bad rows were skipped: fix them, or load the file knowing they are left out",
    ]
    assert main(["data", "inspect", str(p), "--strict"]) == 1
    err = capsys.readouterr().err
    assert err == (f"zcp data: error: {p}, line 2: {MALFORMED} (and 1 more bad row: line 3; "
                   f"`zcp data inspect {p}` lists every one)\n")


# ---- what zcp data inspect prints -----------------------------------------------------------------------------


def test_inspect_prints_the_fields_with_types_and_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "g.jsonl"
    p.write_text('{"id": "a", "question": "1+1?", "answer": "2", "level": 3}\n'
                 '{"id": "b", "question": "2+2?", "answer": 4, "level": null, "tags": ["x"]}\n')
    assert main(["data", "inspect", str(p)]) == 0
    assert capsys.readouterr().out == "\n".join([
        f"{p}: jsonl format, 2 items",
        "fields in 2 records:",
        "  field     type               records",
        "  id        text                     2",
        "  question  text                     2",
        "  answer    text 1, integer 1        2",
        "  level     integer 1, null 1        2",
        "  tags      list                     1",
        "first id: a   last id: b",
        "with solution: 0   with original_id: 0",
        "bad rows: 0",
    ]) + "\n"
    assert main(["data", "inspect", str(p), "--json"]) == 0
    fields = json.loads(capsys.readouterr().out)["fields"]
    assert fields[2] == {"name": "answer", "records": 2, "types": {"text": 1, "integer": 1}}


def test_inspect_texts_in_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "t.json"
    p.write_text('[{"text": "hi", "label": "human", "llm_type": "", "data_type": "story"}, '
                 '{"text": "Sure! hi", "label": "llm", "llm_type": "ChatGPT", "data_type": "story", "meta": {"k": 1}}]')
    assert main(["data", "inspect", str(p)]) == 0
    assert capsys.readouterr().out == "\n".join([
        f"{p}: detectrl format, 2 texts",
        "fields in 2 records:",
        "  field      type    records",
        "  text       text          2",
        "  label      text          2",
        "  llm_type   text          2",
        "  data_type  text          2",
        "  meta       object        1",
        "labels: human 1, llm 1",
        "LLM types: ChatGPT 1",
        "data types: story 2",
        "bad rows: 0",
    ]) + "\n"


def test_readme_says_what_inspect_prints() -> None:
    readme = (ROOT / "README.md").read_text()
    line = next(x for x in readme.splitlines() if x.startswith("zcp data inspect "))
    assert "fields with types and counts" in line


# ---- text summaries are words and tables, never reprs ---------------------------------------------------------


def test_clean_flags_are_words() -> None:
    from zcp_core.cli.artifacts import flags_text

    assert flags_text({"pattern": 97, "residual_score": 10}) == (
        "Flags to review: 97 matches of review-only patterns (left in place); 10 texts the under-cleaning scorer "
        "marked.")
    assert flags_text({}) == "Flags to review: none."


def test_text_summaries_hold_no_reprs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Commands that need no model, on small inputs: their text output has no dict, list or tuple repr."""
    texts = tmp_path / "t.json"
    texts.write_text('[{"text": "As an AI language model, I cannot.", "label": "llm", "llm_type": "X", '
                     '"data_type": "story"}, {"text": "The rain fell.", "label": "human", "data_type": "story"}]')
    runs = tmp_path / "runs"
    commands = [
        ["data", "inspect", str(texts)],
        ["scan", str(texts), "--out", str(runs / "scan")],
        ["clean", str(texts), "--out", str(runs / "clean"), "--allow-unlicensed", "--scorer", "none"],
        ["confidence", str(EXAMPLE_PROBE)],
        ["release", str(EXAMPLE_PROBE), "--out", str(runs / "release"), "--allow-unlicensed"],
    ]
    for argv in commands:
        assert main(argv) == 0, argv
        out = capsys.readouterr().out
        assert out.strip() and not REPR.search(out), (argv, out)


def test_bundled_gsm8k_loads_as_before(tmp_path: Path) -> None:
    """Copies of the bundled GSM8K load as before: 1319 items, no bad rows (the duplicate check adds none)."""
    p = tmp_path / "test.jsonl"
    shutil.copy(ROOT / "data" / "gsm8k" / "test.jsonl", p)
    ds = load_dataset(p)
    assert len(ds.items) == 1319 and ds.bad_rows == ()
