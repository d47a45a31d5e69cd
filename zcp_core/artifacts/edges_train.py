"""Building an edge detector (:mod:`zcp_core.artifacts.edges`): examples, out-of-fold scores, thresholds, the fit.

An :class:`Example` is a text with the cut points known to be artifacts at
each edge (none: every candidate is a negative). Every candidate of every
example becomes one row; a row is positive when its cut point lies within
:data:`TOLERANCE` characters of a known one. Out-of-fold scores come from
grouped folds (one text's candidates never straddle folds), and thresholds are
read from the out-of-fold scores of texts known to be clean (the development
human texts), never from the texts a figure is reported on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from zcp_core.artifacts.edges import EDGES, HASH_FEATURES, EdgeModel, candidates, features, hasher

TOLERANCE = 2  # characters: a known cut point and a candidate's differ by whitespace at most
DEFAULT_C = 0.5  # inverse regularisation strength of the logistic model


@dataclass(frozen=True)
class Example:
    """A training text and its known artifact cut points.

    Attributes:
        id: A group id (the source text's id): its candidates stay in one fold.
        text: The text as the detector sees it (after the patterns' cleaning).
        head: Cut points known to end a head artifact (``text[:p]`` is one).
        tail: Cut points known to start a tail artifact (``text[p:]`` is one).
        source: Where the example comes from (``human``, ``headline``, ``review-artifact``...).
        domain: The text's domain (:func:`zcp_core.artifacts.cleaner.domain_of`).
    """

    id: str
    text: str
    head: tuple[int, ...] = ()
    tail: tuple[int, ...] = ()
    source: str = ""
    domain: str = ""


@dataclass(frozen=True)
class Rows:
    """One edge's training rows: hashed features, labels, groups and which example each row came from."""

    x: Any
    y: Any
    groups: list[str]
    example: list[int] = field(default_factory=list)


def rows(examples: Sequence[Example], edge: str) -> Rows:
    """Every candidate of every example at ``edge`` as a training row."""
    import numpy as np

    feats, y, groups, ex = [], [], [], []
    for k, e in enumerate(examples):
        known = e.head if edge == "head" else e.tail
        for c in candidates(e.text, edge):  # type: ignore[arg-type]
            feats.append(features(e.text, c, e.domain))
            y.append(any(abs(c.at - p) <= TOLERANCE for p in known))
            groups.append(e.id)
            ex.append(k)
    return Rows(hasher().transform(feats) if feats else None, np.asarray(y, dtype=bool), groups, ex)


def fit(r: Rows, c: float = DEFAULT_C) -> tuple[Any, float]:
    """A logistic model's weight vector and intercept (class-balanced: positives are rare)."""
    from sklearn.linear_model import LogisticRegression

    m = LogisticRegression(C=c, class_weight="balanced", max_iter=2000, solver="liblinear")
    m.fit(r.x, r.y)
    return m.coef_[0].astype(float), float(m.intercept_[0])


def oof_scores(r: Rows, folds: int = 5, c: float = DEFAULT_C) -> Any:
    """Out-of-fold scores of every row (grouped folds: a text's candidates are scored by a model that never saw it)."""
    import numpy as np
    from sklearn.model_selection import GroupKFold

    out = np.zeros(len(r.y))
    for train, test in GroupKFold(n_splits=folds).split(r.x, r.y, r.groups):
        w, b = fit(Rows(r.x[train], r.y[train], [r.groups[i] for i in train]), c)
        out[test] = 1.0 / (1.0 + np.exp(-(r.x[test] @ w + b)))
    return out


def per_example_max(r: Rows, scores: Any, n_examples: int) -> list[float]:
    """Each example's best candidate score (0 where it has no candidate)."""
    best = [0.0] * n_examples
    for k, s in zip(r.example, scores):
        best[k] = max(best[k], float(s))
    return best


def build_model(examples: Sequence[Example], cut: dict[str, float], review: dict[str, float], name: str,
                version: str, meta: dict[str, Any], c: float = DEFAULT_C) -> EdgeModel:
    """Fit each edge's model on every example and package it with its thresholds."""
    weights, intercept = {}, {}
    for edge in EDGES:
        w, b = fit(rows(examples, edge), c)
        assert len(w) == HASH_FEATURES
        weights[edge], intercept[edge] = w, b
    return EdgeModel(name=name, version=version, weights=weights, intercept=intercept, cut=cut, review=review,
                     meta=meta)
