"""The probe app page renders with no runs and with a real probe run."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parent.parent / "app_pages" / "probe.py")


@pytest.fixture(scope="module")
def runs_root(smollm2, gsm8k_items, tmp_path_factory):
    import torch

    from zcp_core.probe import ProbeConfig, run_probe
    from zcp_core.reference import perturb_gsm8k

    before = torch.get_num_threads()
    torch.set_num_threads(1)  # shared 2-core box: avoid thread oversubscription stalls
    try:
        twins = list(perturb_gsm8k(gsm8k_items[:6]).items)[:3]
        keep = {t.original_id for t in twins}
        original = [it for it in gsm8k_items[:6] if it.id in keep]
        root = tmp_path_factory.mktemp("probe_runs")
        cfg = ProbeConfig(metrics=("acc", "con", "p_first", "p_all"), ratios=(0.0, 1.0), cot_tokens=6,
                          max_new_tokens=8, n_resamples=200)
        run_probe(smollm2, original, twins, cfg, out=root / "probe-3", model_spec="smollm2")
    finally:
        torch.set_num_threads(before)
    return root


def test_page_without_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("ZCP_RUNS", str(tmp_path))
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception
    assert any("No probe runs" in i.value for i in at.info)


def test_page_with_a_probe_run(runs_root, monkeypatch):
    monkeypatch.setenv("ZCP_RUNS", str(runs_root))
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception
    assert at.title[0].value == "Zero-CoT probe"
    # Three pairs: the page shows why there is no confidence instead of a number.
    assert at.metric[0].value == "n/a"
    assert any("too few pairs for a verdict (n < 10)" in w.value for w in at.warning)
    subheaders = [s.value for s in at.subheader]
    for h in ("Contamination Confidence per metric", "Items", "Truncation curve", "Sample-size curve"):
        assert h in subheaders
    # confidence table, item browser, flips table; the flips table keeps full-CoT columns (a CoT was generated)
    assert len(at.dataframe) == 3
    browser = at.dataframe[1].value
    assert list(browser.columns[:3]) == ["Item", "Flagged", "Flip"] and len(browser) == 3
    assert browser["Flagged"].tolist() == sorted(browser["Flagged"].tolist(), reverse=True)  # flagged first
    flips = at.dataframe[2].value
    assert any(c.startswith("cot_correct_") for c in flips.columns) and len(flips) == 3
    assert len(at.get("plotly_chart")) >= 6


def test_one_click_opens_an_item_side_by_side(runs_root, monkeypatch):
    """Selecting a row of the item browser opens the item: both questions, answers, P_* and raw completions."""
    monkeypatch.setenv("ZCP_RUNS", str(runs_root))
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    first = at.dataframe[1].value.iloc[0]["Item"]
    at.session_state["item_browser"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert f"**{first}**" in text and "**original**" in text and "**reference**" in text
    assert "Gold:" in text and "Prediction:" in text and ":orange-background[" in text  # changed numbers marked
    assert len(at.code) >= 2  # both raw completions
    assert any("P_all" in c.value for c in at.caption)
