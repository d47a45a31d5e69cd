"""Detector metrics: ROC-AUC, F1, accuracy and TPR at a fixed false-positive rate.

The positive class is ``llm``. TPR at FPR ``f`` uses the threshold that lets
at most ``floor(f * n_human)`` human texts score above it (strictly), so the
realised FPR never exceeds ``f``. It is only reported when the test set holds
at least ``ceil(1 / f)`` human texts: with fewer, not one false positive is
allowed and the figure says nothing about the rate. The paper's 0.01% FPR
therefore needs at least 10,000 human texts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

POSITIVE = "llm"


@dataclass(frozen=True)
class TprAtFpr:
    """TPR at a target FPR, or ``None`` with the reason it cannot be estimated.

    Attributes:
        target_fpr: The FPR bound (0.01 is 1%).
        tpr: True-positive rate at that bound, or ``None``.
        threshold: Score threshold used (predict LLM when score > threshold).
        n_human: Human texts available.
        reason: Why ``tpr`` is ``None`` (empty when it is estimated).
    """

    target_fpr: float
    tpr: float | None
    threshold: float | None
    n_human: int
    reason: str = ""


def min_humans(target_fpr: float) -> int:
    """Human texts needed before TPR at ``target_fpr`` is estimable."""
    return math.ceil(1.0 / target_fpr - 1e-9)


def tpr_at_fpr(labels: Sequence[str], scores: Sequence[float], target_fpr: float) -> TprAtFpr:
    """TPR at a false-positive rate bound.

    Args:
        labels: ``human`` / ``llm`` per text.
        scores: Higher means more LLM-like.
        target_fpr: FPR bound in (0, 1).

    Returns:
        The estimate, or ``tpr=None`` with a reason when too few human texts exist.
    """
    human = sorted((s for s, y in zip(scores, labels, strict=True) if y != POSITIVE), reverse=True)
    llm = [s for s, y in zip(scores, labels, strict=True) if y == POSITIVE]
    need = min_humans(target_fpr)
    if len(human) < need:
        return TprAtFpr(target_fpr, None, None, len(human),
                        f"not estimable: needs >= {need:,} human texts, have {len(human):,}")
    if not llm:
        return TprAtFpr(target_fpr, None, None, len(human), "not estimable: no LLM texts")
    allowed = math.floor(target_fpr * len(human) + 1e-9)
    threshold = human[allowed]  # the highest human score that must not be flagged
    tpr = sum(1 for s in llm if s > threshold) / len(llm)
    return TprAtFpr(target_fpr, tpr, float(threshold), len(human))


@dataclass(frozen=True)
class Metrics:
    """Binary detection metrics (positive class ``llm``).

    Attributes:
        n: Texts scored.
        n_human: Human texts.
        n_llm: LLM texts.
        roc_auc: Area under the ROC curve (None with one class only).
        f1: F1 of the ``llm`` class at probability 0.5.
        accuracy: Accuracy at probability 0.5.
        tpr_at_1pct_fpr: TPR at 1% FPR (None when not estimable).
        tpr_at_001pct_fpr: TPR at 0.01% FPR (None when not estimable).
        notes: Why any figure is None.
    """

    n: int
    n_human: int
    n_llm: int
    roc_auc: float | None
    f1: float
    accuracy: float
    tpr_at_1pct_fpr: float | None
    tpr_at_001pct_fpr: float | None
    notes: str = ""

    def to_dict(self) -> dict:
        """Plain dict for tables and JSON."""
        return asdict(self)


def compute_metrics(labels: Sequence[str], p_llm: Sequence[float], threshold: float = 0.5) -> Metrics:
    """All metrics for one detector on one labelled set.

    Args:
        labels: ``human`` / ``llm`` per text.
        p_llm: Probability of ``llm`` per text.
        threshold: Probability above which a text is called LLM (for F1 and accuracy).

    Returns:
        A :class:`Metrics`.
    """
    from sklearn.metrics import accuracy_score, f1_score, roc_auc_score

    y = [1 if lab == POSITIVE else 0 for lab in labels]
    pred = [1 if p >= threshold else 0 for p in p_llm]
    n_llm = sum(y)
    notes = []
    auc: float | None = None
    if 0 < n_llm < len(y):
        auc = float(roc_auc_score(y, list(p_llm)))
    else:
        notes.append("roc_auc: needs both classes")
    t1 = tpr_at_fpr(labels, p_llm, 0.01)
    t2 = tpr_at_fpr(labels, p_llm, 0.0001)
    for name, t in (("tpr@1%fpr", t1), ("tpr@0.01%fpr", t2)):
        if t.tpr is None:
            notes.append(f"{name}: {t.reason}")
    return Metrics(
        n=len(y), n_human=len(y) - n_llm, n_llm=n_llm, roc_auc=auc,
        f1=float(f1_score(y, pred, zero_division=0.0)), accuracy=float(accuracy_score(y, pred)) if y else 0.0,
        tpr_at_1pct_fpr=t1.tpr, tpr_at_001pct_fpr=t2.tpr, notes="; ".join(notes),
    )
