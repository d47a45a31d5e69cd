"""Per-item p-values calibrated on the run's own twins (conformal), the within-item rank p, and BH flags.

Question per item: does the original stand out among its own twins more than a twin stands out among
its item's other twins? The score of a question against ``k`` comparators is standardised,

    s = (x - mean(y)) / sqrt(var(y) + tau^2),

with ``var`` the comparators' sample variance (0 for one comparator) and ``tau^2`` the median twin
variance of the items whose twins spread (twins only; no original enters it). ``tau`` keeps items whose twins agree (a
shared first token gives a variance of about 0) from turning a small gap into a huge score.

The item's p compares its original's score with a calibration set, in the manner of conformal p-values
(Bates, Candes, Lei, Romano and Sesia 2023, "Testing for outliers with conformal p-values"): every
*other* item's twins, each scored in the original's role against ``k`` of its remaining twins, where
``k`` is the number of comparators the original had. No original enters the calibration set, because
other items' contaminated originals would pull the calibration scores down and make every p too small.
The item's own twins stay out of its calibration set too. Then

    p_i = (1 + #{calibration scores >= s_i}) / (calibration size + 1),

valid when the original is exchangeable with its twins and the items with one another. Items are not
exactly exchangeable (some questions draw more spread than others), so BH on these p controls the false
discovery rate approximately; the null checks in ``benchmarks/`` measure how close. Its floor is
``1 / (calibration size + 1)``: with ``m`` items of ``K + 1`` twins about ``1 / ((m - 1)(K + 1))``.

The original is scored against all its twins but the spare (the last twin when the run built ``K + 1``),
which takes no part in its p and can score the item after a release replaces it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Twin variances below this (nat^2: SD 0.001 nats, the size of batched-logprob noise) count as zero.
VAR_FLOOR = 1e-6


@dataclass(frozen=True)
class ItemPValues:
    """Per-item p-values, in the items' order (NaN where an item could not be given one).

    Attributes:
        score: The original's standardised score against its comparators.
        p: Conformal p: the share of other items' twin scores at or above it (with the +1 of conformal p).
        rank_p: Exact within-item rank p ``(1 + #{comparators >= original}) / (k + 1)``.
        comparators: ``k``, the twins the original was scored against.
        calibration_size: Twin scores its p was compared with.
        tau2: The variance floor ``tau^2`` every score used.
    """

    score: Any
    p: Any
    rank_p: Any
    comparators: Any
    calibration_size: Any
    tau2: float

    @property
    def floor(self) -> float:
        """The smallest p any item could get: ``1 / (largest calibration size + 1)``."""
        import numpy as np

        sizes = np.asarray(self.calibration_size)
        return 1.0 / (float(sizes.max()) + 1.0) if sizes.size and sizes.max() > 0 else math.nan


def twin_variance_floor(calibration_sets: Sequence[Sequence[float]]) -> float:
    """``tau^2``: the median twin variance of the items whose twins spread (above :data:`VAR_FLOOR`).

    Items whose twins agree are left out of the median: on a run where most twins share a first token,
    a median over every item would be about 0 and would leave the scores unstandardised.
    """
    import numpy as np

    v = [float(np.var(np.asarray(s, dtype=float), ddof=1)) for s in calibration_sets if len(s) >= 2]
    v = [x for x in v if math.isfinite(x) and x > VAR_FLOOR]
    return float(np.median(v)) if v else VAR_FLOOR


def _scores(x: Any, y: Any, tau2: float) -> Any:
    """Standardised score of ``x`` (shape ``(m,)``) against the rows of ``y`` (shape ``(m, k)``)."""
    import numpy as np

    k = y.shape[1]
    var = y.var(axis=1, ddof=1) if k >= 2 else np.zeros(y.shape[0])
    return (x - y.mean(axis=1)) / np.sqrt(var + tau2)


def _pool(calibration_sets: Sequence[Sequence[float]], k: int, tau2: float) -> tuple[Any, Any]:
    """Every item's first ``k + 1`` twins, each scored against the other ``k``: (scores, owner item index)."""
    import numpy as np

    owners = [j for j, s in enumerate(calibration_sets) if len(s) >= k + 1]
    if not owners:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    z = np.asarray([list(calibration_sets[j])[:k + 1] for j in owners], dtype=float)
    scores = []
    for t in range(k + 1):
        rest = np.delete(z, t, axis=1)
        scores.append(_scores(z[:, t], rest, tau2))
    return np.concatenate(scores), np.tile(np.asarray(owners, dtype=np.int64), k + 1)


def conformal_item_pvalues(original: Sequence[float], comparators: Sequence[Sequence[float]],
                           calibration_sets: Sequence[Sequence[float]]) -> ItemPValues:
    """Each item's conformal p of "its original scores above its twins" (see the module docstring).

    Args:
        original: Per item, the original's score (log P, or a calibrated log-ratio; NaN: no p).
        comparators: Per item, the twins' scores the original is scored against (``k >= 1`` for a p).
        calibration_sets: Per item, its twins' scores (in twin order, all of them, the spare included);
            every other item's set is scored into item i's calibration set.

    Returns:
        :class:`ItemPValues` in the items' order.
    """
    import numpy as np

    n = len(original)
    if not (len(comparators) == len(calibration_sets) == n):
        raise ValueError(f"{n} originals, {len(comparators)} comparator lists, {len(calibration_sets)} twin sets")
    tau2 = twin_variance_floor(calibration_sets)
    x0 = np.asarray(original, dtype=float)
    ks = np.asarray([len(c) for c in comparators], dtype=np.int64)
    score, p, rank_p = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    size = np.zeros(n, dtype=np.int64)
    for k in sorted({int(k) for k in ks if k >= 1}):
        idx = np.flatnonzero((ks == k) & np.isfinite(x0))
        if not idx.size:
            continue
        y = np.asarray([list(comparators[int(i)]) for i in idx], dtype=float)
        s = _scores(x0[idx], y, tau2)
        pool, owner = _pool(calibration_sets, k, tau2)
        order = np.sort(pool)
        tol = 1e-12 * np.maximum(1.0, np.abs(s))
        above = pool.size - np.searchsorted(order, s - tol, side="left")
        for pos, i in enumerate(idx):
            own = owner == i
            c = int(above[pos]) - int(np.count_nonzero(pool[own] >= s[pos] - tol[pos]))
            total = int(pool.size - own.sum())
            score[i], size[i] = s[pos], total
            p[i] = (1 + c) / (total + 1) if total > 0 else math.nan
            rank_p[i] = (1 + int(np.count_nonzero(y[pos] >= x0[i]))) / (k + 1)
    return ItemPValues(score=score, p=p, rank_p=rank_p, comparators=ks, calibration_size=size, tau2=tau2)


def bh_flags(p: Sequence[float], q: float) -> tuple[Any, Any]:
    """Benjamini-Hochberg q-values and discoveries at level ``q`` over the finite p-values (NaN stays NaN)."""
    import numpy as np
    from scipy.stats import false_discovery_control

    pv = np.asarray(p, dtype=float)
    qv = np.full(pv.shape, np.nan)
    ok = np.isfinite(pv)
    if ok.any():
        qv[ok] = false_discovery_control(pv[ok], method="bh")
    return qv, np.nan_to_num(qv, nan=np.inf) <= q
