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
    subheaders = [s.value for s in at.subheader]
    for h in ("Contamination Confidence per metric", "Zero-CoT flips", "Truncation curve", "Sample-size curve"):
        assert h in subheaders
    # confidence table + flips table; the flips table keeps full-CoT columns because a CoT was generated
    assert len(at.dataframe) == 2
    flips = at.dataframe[1].value
    assert any(c.startswith("cot_correct_") for c in flips.columns)
    assert len(at.get("plotly_chart")) >= 6
    at.multiselect[0].set_value(["orig_only", "ref_only", "both", "neither"]).run()
    assert not at.exception and len(at.dataframe[1].value) == 3
