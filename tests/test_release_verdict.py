"""Releases follow the verdict: the bundled contaminated example against --min-confidence (no model needed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zcp_core.probe import release
from zcp_core.probe.verdict import run_verdict

EXAMPLE = Path(__file__).resolve().parent.parent / "data" / "examples" / "probe-lab-direct"


def _headline_c() -> float:
    return float(json.loads((EXAMPLE / "manifest.json").read_text())["summary"]["headline"]["confidence"])


def test_min_confidence_halfway_to_one_replaces_nothing_and_says_why(tmp_path: Path) -> None:
    c = _headline_c()
    x = (c + 1) / 2
    rel = release(EXAMPLE, tmp_path / "rel", min_confidence=x)
    assert rel.replaced == () and rel.verdict is not None
    sentence = f"not replaced: Contamination Confidence {c:.3f} is below --min-confidence {x:g}"
    assert rel.verdict.not_replaced == sentence
    card = (tmp_path / "rel" / "README.md").read_text()
    assert sentence in card and "# Audited benchmark: nothing replaced" in card
    originals = [json.loads(x)["id"] for x in (EXAMPLE / "items_original.jsonl").read_text().splitlines()]
    bench = [json.loads(x)["id"] for x in (tmp_path / "rel" / "benchmark.jsonl").read_text().splitlines()]
    assert bench == originals  # written unchanged
    # the flags chance alone gives (c) and the estimated memorised items (b - c) with its CI
    items = json.loads((tmp_path / "rel" / "release.json").read_text())["verdict"]
    assert (items["b"], items["c"], items["memorised"]) == (27, 1, 26)
    lo, hi = items["memorised_ci"]
    assert lo < 26 <= hi <= 28
    assert "flags chance alone gives (twin only right, c): 1" in card
    assert f"estimated memorised items (b - c): 26 (95% CI {lo:.1f} to {hi:.1f})" in card


def test_min_confidence_one_half_replaces_the_flagged_items(tmp_path: Path) -> None:
    rel = release(EXAMPLE, tmp_path / "rel", min_confidence=0.5)
    assert len(rel.replaced) >= 20 and rel.verdict is not None and rel.verdict.not_replaced == ""
    assert all(r.verification == "reexecuted" for r in rel.replaced)
    card = (tmp_path / "rel" / "README.md").read_text()
    assert f"{len(rel.replaced)} flagged items replaced by verified twins" in card
    assert "license: mit" in card  # found beside the run folder: the manifest's dataset paths are gone


def test_default_min_confidence_and_too_few_pairs() -> None:
    import pandas as pd

    flags = pd.DataFrame({"flip": ["orig_only"] * 6 + ["neither"] * 2})
    few = {"metrics": {"acc": {"n": 8, "confidence": 0.98, "p": 0.01, "bf10": 9.0}},
           "headline": {"metric": "acc", "confidence": 0.98, "value": 0.98}}
    v = run_verdict(few, flags)
    assert v.not_replaced == "not replaced: too few pairs for a verdict (n < 10)" and v.min_confidence == 0.95
    enough = {"metrics": {"acc": {"n": 12, "confidence": 0.96}}, "headline": {"metric": "acc", "confidence": 0.96}}
    assert run_verdict(enough, flags).not_replaced == ""
    assert run_verdict(enough, flags, 0.97).not_replaced == (
        "not replaced: Contamination Confidence 0.960 is below --min-confidence 0.97")
    with pytest.raises(ValueError, match="min-confidence"):
        run_verdict(enough, flags, 1.5)
