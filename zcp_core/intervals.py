"""Confidence bounds that agree with the paired tests of :mod:`zcp_core.stats` (pure numpy/scipy).

A one-sided p-value and a two-sided 95% interval answer different questions: a
one-sided test at 5% matches a one-sided 95% *lower bound*, and a two-sided 95%
interval matches a one-sided test at 2.5%. So every test reports both:

* ``effect_lower``: the one-sided 95% lower bound got by inverting the test
  itself, so ``p < 0.05`` exactly when ``effect_lower > 0`` (up to the bisection's
  resolution and Monte Carlo noise);
* ``effect_ci``: the two-sided 95% interval (for the sign-flip test the same
  inversion at 2.5% on each side, so it excludes 0 when ``p < 0.025``).

Inversions:

* sign-flip permutation test: the shifts ``delta`` the test of ``d - delta``
  does not reject (the same seeded sign vectors for every shift), found on a
  grid refined three times;
* exact McNemar test: the Clopper-Pearson bound (``scipy.stats.binomtest``) of
  ``pi = P(original only right | discordant)``, mapped to the risk difference
  ``(m / n)(2 pi - 1)`` with the ``m`` discordant pairs held fixed (the test is
  conditional on ``m`` too);
* paired bootstrap: the basic (reverse-percentile) bound ``2 mean - q``, which
  is the one its null-centred p inverts.
"""

from __future__ import annotations

import math
from typing import Any

#: Grid points per refinement round of the sign-flip inversion (three rounds: resolution range / 32**3).
_GRID = 33
_ROUNDS = 3


def sign_flip_lower(d: Any, alpha: float, p_of: Any) -> float:
    """Largest shift ``delta`` the one-sided sign-flip test of ``d - delta`` rejects at ``alpha``.

    Args:
        d: Paired differences (1-d, finite).
        alpha: One-sided level (0.05 for the lower bound, 0.025 for each end of a 95% interval).
        p_of: ``p_of(rows)`` returns one p-value per row of a 2-d array of differences (the test,
            with its seed fixed, so every shift is tested on the same sign vectors).

    Returns:
        The bound; ``-inf`` when even ``delta = min(d)`` is not rejected (too few pairs to bound it).
    """
    import numpy as np

    d = np.asarray(d, dtype=float)
    lo, hi = float(d.min()), float(d.mean())
    if d.size == 0:
        return -math.inf
    if hi <= lo:  # every difference equal (up to rounding): that value, when n pairs can reject below it
        return hi if float(p_of(np.ones((1, d.size)))[0]) <= alpha else -math.inf
    if float(p_of((d - lo)[None, :])[0]) > alpha:
        return -math.inf
    for _ in range(_ROUNDS):
        grid = np.linspace(lo, hi, _GRID)
        p = np.asarray(p_of(d[None, :] - grid[:, None]), dtype=float)
        above = np.flatnonzero(p > alpha)
        first = int(above[0]) if above.size else _GRID - 1
        if first == 0:  # not expected (lo was rejected); keep the bracket's lower end
            break
        lo, hi = float(grid[first - 1]), float(grid[first])
    return min(lo, float(d.mean()))


def mcnemar_bounds(b: int, c: int, n: int) -> tuple[float, float, float]:
    """Exact conditional bounds of the risk difference ``(b - c) / n``: (two-sided low, high, one-sided lower).

    With no discordant pair the difference is bounded by the discordance rate alone: its exact
    (Clopper-Pearson, 0 of n) upper bound on each side.
    """
    from scipy.stats import binomtest

    if n <= 0:
        return math.nan, math.nan, math.nan
    m = b + c
    if m == 0:
        two, one = 1.0 - 0.025 ** (1.0 / n), 1.0 - 0.05 ** (1.0 / n)
        return -two, two, -one
    scale = m / n
    ci = binomtest(b, m, 0.5).proportion_ci(0.95, method="exact")
    low = binomtest(b, m, 0.5, alternative="greater").proportion_ci(0.95, method="exact").low
    return scale * (2 * ci.low - 1), scale * (2 * ci.high - 1), scale * (2 * low - 1)


def dz_from_counts(b: int, c: int, n: int) -> float:
    """Cohen's ``d_z`` of paired 0/1 outcomes from the discordant counts (differences +1, -1 and 0)."""
    if n < 2:
        return math.nan
    mean = (b - c) / n
    var = ((b + c) - n * mean * mean) / (n - 1)
    if var <= 0:
        return 0.0 if mean == 0 else math.copysign(math.inf, mean)
    return mean / math.sqrt(var)


def t_lower_from_ci(mean: float, low: float, high: float, n: int) -> float:
    """A one-sided 95% lower bound from a stored two-sided Student-t 95% interval (runs made before the bounds)."""
    from scipy.special import stdtrit

    if n < 2 or not (math.isfinite(low) and math.isfinite(high)):
        return math.nan
    se = (high - low) / (2.0 * float(stdtrit(n - 1, 0.975)))
    return mean - float(stdtrit(n - 1, 0.95)) * se
