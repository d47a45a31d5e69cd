"""MATH-500 end to end with the shipped templates and the real embedded model: twins, a probe verdict, a loadable
release, and the item browser rendering LaTeX."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
MATH = ROOT / "data" / "math500" / "test.jsonl"
TEMPLATES = ROOT / "data" / "templates" / "math500.jsonl"
PAGE = str(ROOT / "app_pages" / "probe.py")
N_ITEMS = 20

pytestmark = pytest.mark.skipif(not TEMPLATES.exists(), reason="no MATH-500 templates shipped")


@pytest.fixture(scope="module")
def math_run(smollm2, tmp_path_factory):
    """20 MATH-500 items with two template twins each, probed on P_first and P_all (teacher-forced)."""
    import torch

    from zcp_core.data import load_items
    from zcp_core.probe import ProbeConfig, run_probe
    from zcp_core.reference.template import load_templates
    from zcp_core.reference.template_build import template_twins

    templates = load_templates(TEMPLATES)
    items = [it for it in load_items(MATH) if it.id in templates]
    sets = template_twins(items[: N_ITEMS + 10], templates, seed=0, twins=2)
    covered = [it for it in items if all(any(t.original_id == it.id for t in s.items) for s in sets)][:N_ITEMS]
    keep = {it.id for it in covered}
    twins = [t for s in sets for t in s.items if t.original_id in keep]
    root = tmp_path_factory.mktemp("math_runs")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        res = run_probe(smollm2, covered, twins, ProbeConfig(metrics=("p_first", "p_all"), max_new_tokens=4,
                                                             n_resamples=500),
                        out=root / "math500-probe", model_spec="smollm2", dataset_paths=(str(MATH),))
    finally:
        torch.set_num_threads(before)
    return res, covered, twins


@pytest.mark.heavy
def test_twenty_items_give_a_verdict(math_run):
    res, covered, twins = math_run
    assert len(covered) == N_ITEMS and len(twins) == 2 * N_ITEMS
    p_all = res.summary["metrics"]["p_all"]
    assert p_all["n"] == N_ITEMS and p_all["confidence"] is not None and 0.0 <= p_all["confidence"] <= 1.0
    assert all(t.metadata["verification"]["check"] == "template-v1" for t in twins)


@pytest.mark.heavy
def test_a_math_release_loads(math_run, tmp_path):
    import datasets

    from zcp_core.probe import release

    res, covered, _ = math_run
    rel = release(res.run_path, tmp_path / "rel", min_confidence=0.0)
    card = (tmp_path / "rel" / "README.md").read_text()
    assert card.startswith("---\nlicense: mit\n") and rel.canary in card
    ds = datasets.load_dataset(str(tmp_path / "rel"), cache_dir=str(tmp_path / "hf-cache"))
    assert ds["test"].num_rows == len(covered)
    rows = [json.loads(x) for x in (tmp_path / "rel" / "benchmark.jsonl").read_text().splitlines()]
    assert {r["id"] for r in rows} == {it.id for it in covered} - {r.original_id for r in rel.replaced} | {
        r.replacement_id for r in rel.replaced}
    for r in rel.replaced:  # a replacement is a checked template twin
        assert r.verification == "template_checked"


@pytest.mark.heavy
def test_the_item_browser_renders_a_math_items_latex(math_run, monkeypatch):
    res, covered, _ = math_run
    monkeypatch.setenv("ZCP_RUNS", str(res.run_path.parent))
    at = AppTest.from_file(PAGE, default_timeout=90)
    at.run()
    assert not at.exception
    latex_item = next(it for it in covered if "\\frac" in it.question or "^" in it.question)
    table = at.dataframe[1].value if len(at.dataframe) > 1 else None
    assert table is not None and latex_item.id in set(table["Item"])
    row = list(table["Item"]).index(latex_item.id)
    at.session_state["item_browser"] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    texts = [m.value for m in at.markdown]
    shown = next(t for t in texts if "$" in t and ("\\frac" in t or "^" in t))
    assert "\\$" not in shown.replace("\\\\$", "")  # math delimiters are kept, not escaped
    assert "\\\\frac" not in shown  # LaTeX commands reach the renderer as LaTeX
