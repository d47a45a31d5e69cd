"""Separation of two score samples (AUROC, ROC curve, TPR at a fixed FPR) and a binomial share's interval."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


def auroc(scores_pos: Sequence[float], scores_neg: Sequence[float]) -> float:
    """Area under the ROC curve: P(pos > neg) + 0.5 P(pos = neg) (ties count half).

    NaN scores are dropped; NaN is returned when either side is empty.
    """
    import numpy as np

    pos = np.asarray(scores_pos, dtype=float)
    neg = np.asarray(scores_neg, dtype=float)
    pos, neg = pos[~np.isnan(pos)], neg[~np.isnan(neg)]
    if pos.size == 0 or neg.size == 0:
        return math.nan
    neg_sorted = np.sort(neg)
    below = np.searchsorted(neg_sorted, pos, side="left")  # negatives strictly below each positive
    not_above = np.searchsorted(neg_sorted, pos, side="right")
    wins = below.sum() + 0.5 * (not_above - below).sum()
    return float(wins / (pos.size * neg.size))


@dataclass(frozen=True)
class RocCurve:
    """ROC points at every distinct threshold (ties kept together), from (0, 0) to (1, 1)."""

    fpr: tuple[float, ...]
    tpr: tuple[float, ...]
    thresholds: tuple[float, ...]


def roc_curve(scores_pos: Sequence[float], scores_neg: Sequence[float]) -> RocCurve:
    """ROC curve for "score >= threshold means positive"; NaN scores are dropped."""
    import numpy as np

    pos = np.asarray(scores_pos, dtype=float)
    neg = np.asarray(scores_neg, dtype=float)
    pos, neg = pos[~np.isnan(pos)], neg[~np.isnan(neg)]
    if pos.size == 0 or neg.size == 0:
        return RocCurve((), (), ())
    thr = np.unique(np.concatenate([pos, neg]))[::-1]
    ps, ns = np.sort(pos), np.sort(neg)
    tpr = (pos.size - np.searchsorted(ps, thr, side="left")) / pos.size
    fpr = (neg.size - np.searchsorted(ns, thr, side="left")) / neg.size
    return RocCurve(fpr=(0.0, *map(float, fpr)), tpr=(0.0, *map(float, tpr)),
                    thresholds=(math.inf, *map(float, thr)))


def tpr_at_fpr(scores_pos: Sequence[float], scores_neg: Sequence[float], fpr: float = 0.05) -> float:
    """Highest true-positive rate over thresholds whose false-positive rate is at most ``fpr``.

    Tie-aware: a threshold keeps tied scores together (``score >= t``), so a
    block of ties is never split to hit the target rate. NaN when a side is empty.
    """
    curve = roc_curve(scores_pos, scores_neg)
    if not curve.fpr:
        return math.nan
    return max(t for f, t in zip(curve.fpr, curve.tpr, strict=True) if f <= fpr + 1e-12)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a binomial share ``successes / n`` (scipy's ``binomtest``).

    Unlike the normal interval it stays inside [0, 1] and is not empty at 0 or n
    successes (0 / 1528 gives an upper bound near 0.25%). NaNs when ``n`` is 0.
    """
    if n <= 0:
        return (math.nan, math.nan)
    if not 0 <= successes <= n:
        raise ValueError(f"wilson_interval: successes {successes} outside 0..{n}")
    from scipy.stats import binomtest

    ci = binomtest(successes, n).proportion_ci(confidence_level=confidence, method="wilson")
    return (float(ci.low), float(ci.high))
