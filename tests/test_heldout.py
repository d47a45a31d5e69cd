"""Held out means held out: the DetectRL report set shares no text with the development set (issue 26)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

from zcp_core.artifacts.heldout import hold_out, normalise_ws
from zcp_core.schema import TextRecord
from zcp_core.stats import wilson_interval

ROOT = Path(__file__).resolve().parent.parent


def _t(i: str, text: str, label: str = "llm") -> TextRecord:
    return TextRecord(id=i, text=text, label=label, llm_type="X" if label == "llm" else "")


def test_hold_out_golden():
    head = "A" * 130
    dev = [_t("d1", "The  cat sat.\n"), _t("d2", head + " middle one"), _t("d3", "tail end " + "Z" * 125)]
    report = [
        _t("r1", "The cat sat."),                      # same text after whitespace normalisation: removed
        _t("r2", "\tThe cat\n sat. "),                 # ditto
        _t("r3", "The cat sat!"),                      # different text: kept
        _t("r4", head + " another middle", "human"),   # shares its first 120 chars: near-duplicate
        _t("r5", "other start " + "Z" * 125),          # shares its last 120 chars: near-duplicate
    ]
    held = hold_out(report, dev)
    assert [t.id for t in held.removed] == ["r1", "r2"]
    assert [t.id for t in held.kept] == ["r3", "r4", "r5"]
    assert held.near_duplicate_ids == frozenset({"r4", "r5"})
    assert [t.id for t in held.near_duplicates] == ["r4", "r5"]
    assert normalise_ws(" a \n\t b ") == "a b"


@pytest.mark.parametrize(("k", "n", "lo", "hi"), [
    (5, 10, 0.2366, 0.7634),     # textbook Wilson 95% interval
    (0, 10, 0.0, 0.2775),
    (10, 10, 0.7225, 1.0),
    (1, 100, 0.0018, 0.0545),
    (0, 1528, 0.0, 0.0025),
])
def test_wilson_interval_golden(k, n, lo, hi):
    got = wilson_interval(k, n)
    assert got[0] == pytest.approx(lo, abs=1e-4) and got[1] == pytest.approx(hi, abs=1e-4)


def test_wilson_interval_empty():
    assert all(math.isnan(x) for x in wilson_interval(0, 0))


def _report_module():
    spec = importlib.util.spec_from_file_location("detectrl_report", ROOT / "benchmarks" / "detectrl_report.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_detectrl_report_set_is_disjoint_from_dev(shared_data):
    """The texts the report's figures are computed on share none with the development set."""
    data = shared_data / "detectrl"
    if not data.exists():
        pytest.skip("../shared/data/detectrl is not present on this machine")
    mod = _report_module()
    dev, _ = mod.load_set(data, mod.DEV)
    report, _ = mod.load_set(data, mod.REPORT)
    held = hold_out(report, dev)
    dev_keys = {" ".join(t.text.split()) for t in dev}
    shared = [t.id for t in held.kept if " ".join(t.text.split()) in dev_keys]
    assert not shared, f"report set shares {len(shared)} texts with the development set, e.g. {shared[:3]}"
    assert held.removed and len(held.kept) + len(held.removed) == len(report)
    assert {t.id for t in held.near_duplicates} <= {t.id for t in held.kept}
