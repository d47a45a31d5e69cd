"""AppTest for the shell pages: run browser and new-audit form."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from zcp_core.runs import RunSpec, write_run

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def fixture_runs(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    for name, value in (("alpha", 0.91), ("beta", 0.52)):
        write_run(runs / name, RunSpec(kind="probe", config={"limit": 3}, model="smollm2"),
                  pd.DataFrame({"id": ["a"]}), {"headline": {"label": "Contamination Confidence", "value": value},
                                                 "metrics": {"acc": {"confidence": value}}})
    return runs


def _app(page: str) -> AppTest:
    return AppTest.from_file(str(ROOT / "app_pages" / page), default_timeout=60)


def test_home_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZCP_RUNS", str(tmp_path / "none"))
    at = _app("home.py").run()
    assert not at.exception
    assert any("No runs yet" in i.value for i in at.info)


def test_home_lists_and_compares(fixture_runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZCP_RUNS", str(fixture_runs))
    at = _app("home.py").run()
    assert not at.exception
    assert at.dataframe[0].value.shape[0] == 2
    assert at.metric[0].value in ("0.910", "0.520")
    at.multiselect(key="compare").set_value([0, 1]).run()
    assert not at.exception
    comp = at.dataframe[1].value
    assert set(comp.columns) == {"alpha", "beta"} and {"Method", "Headline metric", "Headline"} <= set(comp.index)
    assert not any("." in str(i) or "_" in str(i) for i in comp.index)  # rows in words, not flattened keys


def test_new_audit_form(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZCP_RUNS", str(tmp_path / "runs"))
    at = _app("new_audit.py").run()
    assert not at.exception
    at.radio(key="data_source").set_value("Path").run()
    at.text_input(key="data_path").set_value("../../etc/passwd").run()
    assert any("outside the allowed data roots" in e.value or "not found" in e.value for e in at.error)


def test_new_audit_keeps_the_typed_run_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZCP_RUNS", str(tmp_path / "runs"))
    at = _app("new_audit.py").run()
    default = at.text_input(key="run_name").value
    assert default.startswith("audit-")
    at.text_input(key="run_name").input("my-gsm8k-audit").run()
    # Other widgets rerun the page; the typed name must survive every rerun.
    at.selectbox(key="method").set_value("guided").run()
    at.number_input(key="limit").set_value(7).run()
    assert not at.exception
    assert at.text_input(key="run_name").value == "my-gsm8k-audit"
