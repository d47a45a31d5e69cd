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


def test_metrics_are_named_by_the_report_layer_on_every_figure_and_caption() -> None:
    """One source for a metric's words: the probe's figures and the app's labels use ``report.metric_name``."""
    from zcp_core.probe import viz
    from zcp_core.report import METRIC_NAMES, capital, metric_name

    assert labels.METRIC_WORDS is METRIC_NAMES
    assert viz.METRIC_LABELS == {m: capital(metric_name(m)) for m in viz.PROBE_METRICS}
    assert viz.METRIC_LABELS["p_all"] == "P(all answer tokens)" and viz.METRIC_LABELS["acc"] == "Accuracy (Acc)"
    explained = labels.CONFIDENCE_EXPLAINED.format(prior=0.5)
    assert "P_all" not in explained and "P_first" not in explained and metric_name("p_first") in explained
    sizes = pd.DataFrame({"metric": ["p_all"] * 3, "n": [10, 20, 40], "confidence_mean": [0.6, 0.8, 0.9],
                          "confidence_q10": [0.5, 0.7, 0.85], "confidence_q90": [0.7, 0.9, 0.95]})
    assert [t.name for t in viz.sample_size_figure(sizes).data] == ["P(all answer tokens)"]
    records = pd.DataFrame({"arm": ["original", "reference"] * 2, "pair_id": ["a", "a", "b", "b"],
                            "id": ["a", "a-ref", "b", "b-ref"], "ratio": [0.0] * 4, "acc": [1.0, 0.0, 1.0, 1.0],
                            "p_first": [0.9, 0.2, 0.8, 0.7]})
    assert viz.distribution_figure(records, "acc").layout.yaxis.title.text == "Mean accuracy (Acc)"
    assert viz.distribution_figure(records, "p_first").layout.yaxis.title.text == "P(first answer token)"
    tests = pd.DataFrame({"metric": ["p_all"], "value": [1.0]})
    assert list(labels.readable(tests)["Metric"]) == ["P(all answer tokens)"]
