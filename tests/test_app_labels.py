"""The app's table labels follow the report layer: one missing mark, one reading of C, one name per effect."""

from __future__ import annotations

import pandas as pd

from zcp_core import report
from zcp_core.app import labels


def test_labels_are_the_report_layers() -> None:
    assert labels.MISSING is report.MISSING
    assert labels.EVIDENCE_LEVELS is report.EVIDENCE_LEVELS
    assert labels.evidence_words is report.evidence_words
    assert labels.evidence_words(0.80) == "weak evidence"


def test_readable_names_effects_and_tests_as_reports_do() -> None:
    df = pd.DataFrame({"effect_name": ["cohens_dz", "risk_difference", "mean_diff"],
                       "test": ["permutation", "mcnemar", "bootstrap"], "effect": [0.5, float("nan"), 0.1]})
    out = labels.readable(df)
    assert list(out["Effect measure"]) == [report.effect_name(e) for e in df["effect_name"]]
    assert "Cohen's d)" not in " ".join(out["Effect measure"])  # d_z is named for what it is
    assert list(out["Test"]) == [report.statistical_test_name(t) for t in df["test"]]
    assert list(out["Effect"]) == ["0.5", report.MISSING, "0.1"]
