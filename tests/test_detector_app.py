"""The detector page renders with no runs and with a compare run made on the bundled sample (AppTest)."""

from __future__ import annotations

from pathlib import Path

import pytest
from apphelp import render_page

ROOT = Path(__file__).resolve().parent.parent
CLAUDE = sorted(str(p) for p in (ROOT / "data" / "detectrl_sample").glob("*Claude*.json"))


def _run_page(monkeypatch: pytest.MonkeyPatch, runs: Path):  # type: ignore[no-untyped-def]
    return render_page("detector.py", runs, monkeypatch)


def test_page_without_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = _run_page(monkeypatch, tmp_path)
    assert any("No detector runs" in i.value for i in at.info)


def test_page_with_compare_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zcp_core.artifacts import load_library
    from zcp_core.detector import CompareConfig, TfidfConfig, compare, load_texts_for_detector, write_compare_run

    cfg = CompareConfig(explain_n=10, explain_attacked=2,
                        detector_config=TfidfConfig(max_word_features=3000, max_char_features=3000))
    res = compare(load_texts_for_detector(CLAUDE), load_library(), cfg)
    write_compare_run(tmp_path / "runs" / "cmp", res, {"dataset": CLAUDE})
    at = _run_page(monkeypatch, tmp_path / "runs")
    html = "".join(m.value for m in at.markdown)
    assert "rgba(214,39,40" in html and "<span title=" in html  # SHAP-coloured tokens
    assert len(at.dataframe) == 2  # metrics and attack tables
    at.radio(key="det_pick").set_value("cleaned").run()
    assert not at.exception
    at.checkbox(key="det_only_art").check().run()
    assert not at.exception
