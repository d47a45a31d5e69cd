"""The lab's Report is what every surface shows: the app page and the CLI text carry the same strings."""

from __future__ import annotations

import logging
import re
import shutil
from pathlib import Path

import pytest
from apphelp import render_page

from zcp_core.lab.report import report
from zcp_core.runs import load_run

EXAMPLES = Path(__file__).resolve().parent.parent / "data" / "examples"
BAD = re.compile(r"\bNone\b|\bnan\b|NaN|\+nan|\{'|mappingproxy\(|\b[a-z]+_[a-z_]+\b")


def _runs(tmp_path: Path) -> Path:
    for ex in EXAMPLES.glob("lab-*"):
        if ex.is_dir():
            shutil.copytree(ex, tmp_path / ex.name)
    return tmp_path


def test_page_opens_on_the_replicates_and_draws_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run with most to show opens first: the matrix over replicate builds, its report, heatmap and table."""
    at = render_page("lab.py", _runs(tmp_path), monkeypatch)
    rep = report(load_run(EXAMPLES / "lab-matrix-replicates"))
    assert at.metric[0].label == rep.headline.label and at.metric[0].value == rep.headline.value
    assert at.subheader[0].value == "Lab matrix, 3 replicates"
    shown = "\n".join(m.value for m in at.markdown)
    assert rep.headline.text in shown and all(s in shown for s in rep.sentences)
    assert len(at.get("plotly_chart")) == 1
    table = at.dataframe[0].value
    assert list(table.columns) == list(rep.columns) and len(table) == len(rep.rows)
    p_all = table[(table["Detector"] == "ZCP P(all answer tokens)") & (table["Contamination kind"].str.startswith("direct"))]
    assert p_all["Reading"].tolist() == ["caught"] and p_all["Replicates caught"].tolist() == ["2 of 3"]
    assert not [c for c in table.columns if BAD.search(str(c))]  # headers in words, cells without reprs or nan
    assert not BAD.search(" ".join(str(v) for v in table.to_numpy().ravel() if "_" not in str(v)))


def test_matrix_page_shows_its_report_and_logs_no_arrow_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from streamlit.testing.v1 import AppTest

    caplog.set_level(logging.WARNING)
    runs = _runs(tmp_path)
    monkeypatch.setenv("ZCP_RUNS", str(runs))
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app_pages" / "lab.py"), default_timeout=60)
    at.session_state["selected_run"] = str(runs / "lab-matrix")  # as the run browser opens it
    at.run()
    assert not at.exception, at.exception
    rep = report(load_run(EXAMPLES / "lab-matrix"))
    assert at.metric[0].label == rep.headline.label and at.metric[0].value == rep.headline.value
    assert "Lab matrix" in at.subheader[0].value
    shown = "\n".join(m.value for m in at.markdown)
    assert rep.headline.text in shown and all(s in shown for s in rep.sentences)
    took = at.dataframe[-1].value
    assert "did not take at n = 40 per side (p = 0.059)" in took["Verdict"].tolist()  # paper: exact one-sided p
    assert "ArrowInvalid" not in caplog.text
    for df in at.dataframe:  # headers in words, cells without reprs or nan
        assert not [c for c in df.value.columns if BAD.search(str(c))]
        assert not BAD.search(" ".join(str(v) for v in df.value.to_numpy().ravel() if "_" not in str(v)))


@pytest.mark.parametrize("name", ["lab-matrix", "lab-dose-paper", "lab-eval-direct"])
def test_cli_text_and_report_agree_and_read_in_words(name: str) -> None:
    matrix = load_run(EXAMPLES / "lab-matrix")
    rep = report(load_run(EXAMPLES / name), matrix)
    text = rep.to_text()
    assert rep.headline.text in text and all(" ".join(r) or True for r in rep.rows)
    prose = "\n".join([rep.headline.text, *rep.sentences, *rep.notes])
    assert not re.search(r"\bNone\b|\bnan\b|\+nan|\{'|mappingproxy\(", text)
    assert "does not contaminate" not in prose
    assert not [c for c in rep.columns if "_" in c]
    if name == "lab-dose-paper":
        assert "did not take at n = 40 per side (p = 0.046)" in text
        assert "on SmolLM2-135M with LoRA" in text
    if name == "lab-matrix":  # an AUROC is not a difference: its intervals carry no sign
        for col in ("95% CI", "Family-wise 95% CI"):
            cis = [r[rep.columns.index(col)] for r in rep.rows]
            assert all(re.fullmatch(r"\[\d\.\d{3}, \d\.\d{3}\]", ci) for ci in cis), cis
        assert "[0.568, 0.802]" in text
    if name == "lab-eval-direct":
        # the example and the matrix read the same build: the note says so, and never "different models"
        assert "reads this same build (direct-default-d8330389) on its split: accuracy AUROC 0.525, where this run " \
               "reads 0.525" in text and "different models" not in text
        from types import SimpleNamespace

        other = SimpleNamespace(summary={**matrix.summary, "builds": [{"kind": "direct", "build": "direct-other"}]})
        assert "(direct-other, against this run's direct-default-d8330389) on its own split of C and U, so the two " \
               "are different models" in report(load_run(EXAMPLES / name), other).to_text()
