"""New audit: every method maps to a runnable ``zcp`` command, the dataset is checked before Start, and a
started job runs the CLI in the background and lands where the app finds it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from zcp_core.app import AuditRequest, audit_args, check_dataset, plan_audit
from zcp_core.errors import ZcpError

ROOT = Path(__file__).resolve().parent.parent
GSM8K = ROOT / "data" / "gsm8k" / "test.jsonl"
MATH = next((ROOT / "data" / "math500").glob("*.jsonl"))
DETECTRL = sorted((ROOT / "data" / "detectrl_sample").glob("*.json"))[0]
AFR_DIR = ROOT / "data" / "afr_sample" / "arith_smollm2"
SKY = ROOT / "data" / "afr_sample" / "skythought_math500_traces" / "gemma-2-27b-it_math500.jsonl"
D = Path("/d/x.jsonl")


@pytest.mark.parametrize(("method", "model", "options", "expected"), [
    ("probe", "smollm2", {"metrics": "acc", "reference": "/d/twins.jsonl"},
     ["probe", "--model", "smollm2", "--dataset", "/d/x.jsonl", "--limit", "5", "--metrics", "acc",
      "--reference", "/d/twins.jsonl"]),
    ("probe", "smollm2", {"reference": ""}, ["probe", "--model", "smollm2", "--dataset", "/d/x.jsonl", "--limit", "5"]),
    ("guided", "smollm2", {"dataset_name": "GSM8K", "split_name": "test"},
     ["guided", "--model", "smollm2", "--dataset", "/d/x.jsonl", "--limit", "5", "--dataset-name", "GSM8K",
      "--split-name", "test"]),
    ("lab-build", "", {"mode": "evasive", "profile": "smoke", "name": "b1", "runs": "/r"},
     ["lab", "build", "--dataset", "/d/x.jsonl", "--mode", "evasive", "--profile", "smoke", "--name", "b1",
      "--runs", "/r"]),
    ("lab-evaluate", "", {"build": "direct", "con": "1"}, ["lab", "evaluate", "--name", "direct", "--con"]),
    ("lab-evaluate", "smollm2", {"build": "direct"}, ["lab", "evaluate", "--name", "direct", "--model", "smollm2"]),
    ("scan", "", {"mode": "first"}, ["scan", "/d/x.jsonl", "--mode", "first"]),
    ("clean", "", {"license": "MIT", "allow_unlicensed": ""}, ["clean", "/d/x.jsonl", "--license", "MIT"]),
    ("clean", "", {"allow_unlicensed": "1"}, ["clean", "/d/x.jsonl", "--allow-unlicensed"]),
    ("detector", "", {"kind": "tfidf", "explain_n": "20"},
     ["detector", "compare", "--data", "/d/x.jsonl", "--kind", "tfidf", "--explain-n", "20"]),
    ("afr-screen", "", {"threshold": "0.2", "n_boot": "500", "excise": "1"},
     ["afr", "screen", "/d/x.jsonl", "--threshold", "0.2", "--n-boot", "500", "--excise"]),
    ("afr-profile", "", {"adapter": "skythought", "compare": "/d/y.jsonl"},
     ["afr", "profile", "/d/x.jsonl", "--adapter", "skythought", "--compare", "/d/y.jsonl", "--limit", "5"]),
])
def test_audit_args_golden(method, model, options, expected) -> None:
    assert audit_args(AuditRequest(method, model, D, 5, options)) == expected


def test_every_method_parses_with_the_real_cli() -> None:
    """Each command the form can build is accepted by ``zcp``'s own parser (no unknown or missing options)."""
    from zcp_core.cli.main import build_parser

    parser = build_parser()
    for req in (AuditRequest("probe", "smollm2", D, 5, {"reference": "/t.jsonl"}),
                AuditRequest("guided", "smollm2", D, 5),
                AuditRequest("lab-build", "", D, 5, {"name": "b", "runs": "/r", "mode": "direct"}),
                AuditRequest("lab-evaluate", "", None, 5, {"build": "direct"}),
                AuditRequest("scan", "", D), AuditRequest("clean", "", D, options={"allow_unlicensed": "1"}),
                AuditRequest("detector", "", D, options={"kind": "tfidf"}),
                AuditRequest("afr-screen", "", D, options={"excise": "1"}),
                AuditRequest("afr-profile", "", D, options={"adapter": "skythought"})):
        plan = plan_audit(req, Path("/r"), "run1")
        argv = [*plan.args, *([plan.out_option, str(plan.folder)] if plan.out_option else [])]
        args = parser.parse_args(argv)
        assert callable(args.func), req.method


def test_plan_places_lab_builds_where_the_build_copies_its_run() -> None:
    plan = plan_audit(AuditRequest("lab-build", "", GSM8K, options={"mode": "direct"}), Path("/r"), "mine")
    assert plan.folder == Path("/r/lab-build-mine") and plan.out_option is None
    assert plan.args[-4:] == ("--name", "mine", "--runs", "/r")
    assert plan_audit(AuditRequest("scan", "", D), Path("/r"), "mine").folder == Path("/r/mine")


def test_missing_required_options_are_refused() -> None:
    with pytest.raises(ZcpError, match="lab build"):
        audit_args(AuditRequest("lab-evaluate", "", None))
    with pytest.raises(ZcpError):
        audit_args(AuditRequest("probe", "nonsense-backend:x", D))


@pytest.mark.parametrize(("method", "dataset", "options", "ok", "says"), [
    ("probe", GSM8K, {}, True, "1,319 problems"),
    ("probe", MATH, {}, False, "needs a reference file"),
    ("probe", MATH, {"reference": str(MATH)}, True, "problems"),
    ("guided", MATH, {}, True, "problems"),
    ("scan", DETECTRL, {}, True, "texts"),
    ("detector", DETECTRL, {}, True, "texts"),
    ("afr-screen", AFR_DIR, {}, True, "blind and"),
    ("afr-screen", ROOT / "data" / "gsm8k", {}, False, ""),
    ("afr-profile", SKY, {"adapter": "skythought"}, True, "chains (skythought adapter)"),
    ("lab-evaluate", None, {"build": "direct"}, True, "no dataset needed"),
    ("scan", None, {}, False, "choose a dataset"),
])
def test_check_dataset_golden(method, dataset, options, ok, says) -> None:
    check = check_dataset(AuditRequest(method, "smollm2", dataset, 20, options))
    assert check.ok is ok, check.message
    assert says in check.message


def test_check_refuses_empty_and_wrong_fields(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    check = check_dataset(AuditRequest("probe", "smollm2", empty))
    assert not check.ok and "empty.jsonl" in check.message and "empty" in check.message
    csv = tmp_path / "t.csv"
    csv.write_text("body,kind\nhello,human\n")
    check = check_dataset(AuditRequest("scan", "", csv))
    assert not check.ok and "t.csv" in check.message
    labels = tmp_path / "one_label.jsonl"
    labels.write_text('{"text": "a", "label": "human"}\n{"text": "b", "label": "human"}\n')
    check = check_dataset(AuditRequest("detector", "", labels))
    assert not check.ok and "human and LLM" in check.message


def _app(runs: Path, monkeypatch: pytest.MonkeyPatch, roots: Path | None = None):  # type: ignore[no-untyped-def]
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ZCP_RUNS", str(runs))
    if roots is not None:
        monkeypatch.setenv("ZCP_DATA_ROOTS", str(roots))
    at = AppTest.from_file(str(ROOT / "app_pages" / "new_audit.py"), default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


def test_every_method_renders_its_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zcp_core.app import METHODS

    at = _app(tmp_path / "runs", monkeypatch)
    for m in METHODS:
        at.selectbox(key="method").set_value(m).run()
        assert not at.exception, (m, at.exception)
    at.selectbox(key="method").set_value("probe").run()
    assert at.text_input(key="reference") is not None
    at.selectbox(key="method").set_value("lab-build").run()
    assert at.selectbox(key="lab_profile").options == ["default", "smoke", "probe-format-upper-bound"]


def test_empty_file_is_refused_before_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    roots = tmp_path / "data"
    roots.mkdir()
    (roots / "empty.jsonl").write_text("")
    at = _app(tmp_path / "runs", monkeypatch, roots)
    at.radio(key="data_source").set_value("Path").run()
    at.text_input(key="data_path").input(str(roots / "empty.jsonl")).run()
    assert any("Cannot start" in e.value and "empty.jsonl" in e.value for e in at.error)
    assert at.button(key="start").disabled


def test_start_runs_a_scan_in_the_background_under_the_typed_name(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's story: pick a method, a dataset and a name; Start; the job runs the CLI and its run appears."""
    runs = tmp_path / "runs"
    at = _app(runs, monkeypatch)
    at.selectbox(key="method").set_value("scan").run()
    at.radio(key="data_source").set_value("Path").run()
    at.text_input(key="data_path").input(str(DETECTRL)).run()
    assert any("Dataset checked" in s.value for s in at.success)
    at.text_input(key="run_name").input("my scan").run()
    at.button(key="start").click().run()
    assert not at.exception and not at.error
    folder = runs.resolve() / "my-scan"
    info = json.loads((folder / "job.json").read_text())
    assert info["command"][:3] == ["zcp", "scan", str(DETECTRL)] and info["command"][-2:] == ["--out", str(folder)]
    from zcp_core.app import job_status

    for _ in range(240):  # the job is a separate process; wait for its manifest (no time is asserted)
        if job_status(folder).state != "running":
            break
        time.sleep(0.5)
    status = job_status(folder)
    assert status.state == "done", status.log_tail
    assert json.loads((folder / "manifest.json").read_text())["kind"] == "scan"
    at.run()
    assert any("my-scan" in m.value and "done" in m.value for m in at.markdown)
    assert at.text_input(key="run_name").value == "my scan"


def test_a_job_stopped_by_the_user_says_so(tmp_path: Path) -> None:
    """A stop (the page's Stop button, the demo's Ctrl-C) ends the job with "stopped by the user", not "failed"."""
    from zcp_core.app import job_status, start_job, stop_job
    from zcp_core.runs import STOPPED_BY_USER

    folder = start_job(["probe", "--model", "smollm2", "--dataset", str(ROOT / "data/gsm8k/test.jsonl"),
                        "--limit", "40"], tmp_path / "job")
    for _ in range(600):  # wait until the command runs, so it handles the signal itself (no time is asserted)
        if "probing" in (folder / "log.txt").read_text() or job_status(folder).state != "running":
            break
        time.sleep(0.2)
    assert stop_job(folder)
    for _ in range(200):
        if job_status(folder).state != "running":
            break
        time.sleep(0.2)
    status = job_status(folder)
    assert status.state == "stopped" and status.headline == "stopped by the user", status.log_tail
    assert STOPPED_BY_USER in status.log_tail and "Traceback" not in status.log_tail


def test_job_panels_show_a_progress_bar_and_hide_the_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A running job is a bar with a label in words, no log lines; a failed one keeps its log behind an expander."""
    import json
    import os

    runs = tmp_path / "runs"
    running, failed = runs / "running-job", runs / "failed-job"
    for folder in (running, failed):
        folder.mkdir(parents=True)
    # This test's own process stands in for a live job; a pid above Linux's largest for one that is gone.
    (running / "job.json").write_text(json.dumps({"pid": os.getpid(), "command": ["zcp", "probe"]}))
    (running / "log.txt").write_text("answer:   0%|          | 0/160 [00:00<?, ?it/s]\r"
                                     "answer:  40%|████      | 64/160 [00:41<01:02,  1.55it/s]")
    (failed / "job.json").write_text(json.dumps({"pid": 2**22 + 7, "command": ["zcp", "scan"]}))
    (failed / "log.txt").write_text("scan:  10%|█         | 1/10 [00:01<00:09]\nZcpError: the file is empty\n")
    at = _app(runs, monkeypatch)
    shown = " ".join(str(m.value) for m in [*at.markdown, *at.caption])
    assert "running-job** — running" in shown and "failed-job** — failed: ZcpError: the file is empty" in shown
    bars = at.get("progress")
    assert len(bars) == 1
    assert bars[0].proto.value == 40 and bars[0].proto.text == "answer: 64 of 160 done, about 1 min left"
    assert [e.label for e in at.expander] == ["Log (last lines)"]
    assert len(at.code) == 1 and "ZcpError" in at.code[0].value  # the failed job's log, inside the expander
    assert "64/160" not in " ".join(c.value for c in at.code)  # the running job shows no log lines
