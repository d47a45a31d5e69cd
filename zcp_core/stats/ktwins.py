"""The benchmark test against K twins per item: which of an item's K_i + 1 questions plays the original.

Null: the model treats the original like its twins, so an item's original and its ``K_i`` twins are
exchangeable. The statistic is ``T = sum_i (x_i0 - mean_k x_ik)``, the original's score minus the mean of
its twins', summed over items (as before). Its null distribution comes from choosing, independently per
item and uniformly, which of the ``K_i + 1`` scores plays the original: the role ``r`` contributes
``v_ir = x_ir - mean_{k != r} x_ik = ((K_i + 1) x_ir - S_i) / K_i`` with ``S_i`` the item's sum.

Why not sign flips of ``x_i0 - mean(twins)``: at ``K_i >= 2`` that difference is not symmetric about 0
under exchangeability (its third cumulant is ``kappa_3 (1 - 1/K^2)``), so flipping its sign is not a
symmetry of the null and the test runs hot on skewed scores. At ``K_i = 1`` the two roles are exactly
the two signs, so this test *is* the sign-flip test (and, for 0/1 scores, the exact McNemar test).

* 0/1 scores (Acc, Con): an item with ``a`` of its ``K + 1`` scores right contributes one of two lattice
  values, so the null of ``T`` is a convolution of binomials, computed exactly (:func:`lattice_log_p`).
* Other scores: exact enumeration of all ``prod(K_i + 1)`` role choices up to :data:`EXACT_MAX_ROLES`,
  else seeded Monte Carlo with ``p = (1 + #{T* >= T}) / (B + 1)``, redrawn up to
  :data:`~zcp_core.stats.confidence.MC_FLOOR_RESAMPLES` at its floor, as the sign-flip test is.

The interval of the mean difference inverts the same test with the original's score shifted by
``delta`` (every shift tested on the same role draws). ``p(delta)`` is a step function that rises with
``delta``, so the bound is read off the draws exactly, without a search (:func:`role_lower_bound`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from zcp_core.stats.confidence import MC_FLOOR_RESAMPLES, TestResult, _Evidence, _finish

#: Up to this many role assignments (``prod(K_i + 1)``) the null is enumerated, as the sign-flip test
#: enumerates 2**16 sign vectors.
EXACT_MAX_ROLES = 2**16
#: Multiply-adds above which a lattice convolution step switches from direct (exact) to FFT.
DIRECT_MAX = 4e8
#: p below this is reported as this upper bound when the lattice was too large for direct convolution.
FFT_P_FLOOR = 1e-14
ROLE_CI = ("inverted role-permutation test (95% CI: 2.5% each side; lower bound: the one-sided 5% test), "
           "read off the same seeded role draws")
EXACT_LATTICE = "exact role-permutation test over the lattice of 0/1 scores (convolution)"
ScoreKind = Literal["binary", "continuous"]


@dataclass(frozen=True)
class RoleNull:
    """The role values of a set of items: ``values[i, r]`` is item i's statistic when score r plays the original.

    Attributes:
        values: ``(n, Kmax + 1)`` array; column 0 is the observed role (the original); NaN beyond ``K_i + 1``.
        shift: ``(n, Kmax + 1)`` array: how ``values`` moves per unit the original's score is lowered
            (1 in column 0, ``-1/K_i`` elsewhere), used to invert the test.
        n_twins: ``K_i`` per item.
    """

    values: Any
    shift: Any
    n_twins: Any

    @property
    def observed(self) -> float:
        """The statistic ``T``: the sum of column 0."""
        return float(self.values[:, 0].sum())


def role_null(original: Sequence[float], twins: Sequence[Sequence[float]]) -> RoleNull:
    """The role values of items given each original's score and its twins' scores (finite, at least one twin).

    Raises:
        ValueError: An item without a twin, or a non-finite score.
    """
    import numpy as np

    if len(original) != len(twins):
        raise ValueError(f"{len(original)} originals but {len(twins)} twin lists")
    ks = np.asarray([len(t) for t in twins], dtype=np.int64)
    if ks.size and ks.min() < 1:
        raise ValueError("every item needs at least one twin")
    width = int(ks.max()) + 1 if ks.size else 1
    x = np.full((len(twins), width), np.nan)
    for i, (o, tw) in enumerate(zip(original, twins, strict=True)):
        x[i, 0] = o
        x[i, 1:len(tw) + 1] = tw
    if not np.isfinite(x[~np.isnan(x)]).all() or np.isnan(x[:, 0]).any():
        raise ValueError("scores must be finite")
    total = np.nansum(x, axis=1)
    k = ks[:, None].astype(float)
    values = ((k + 1) * x - total[:, None]) / k
    shift = np.where(np.isnan(x), np.nan, -1.0 / k)
    shift[:, 0] = 1.0
    return RoleNull(values=values, shift=shift, n_twins=ks)


def _draws(null: RoleNull, n_draws: int, rng: Any) -> tuple[Any, Any]:
    """Null sums ``A`` and shift sums ``W`` of ``n_draws`` uniform role assignments (chunked)."""
    import numpy as np

    n = null.values.shape[0]
    a, w = np.empty(n_draws), np.empty(n_draws)
    rows = np.arange(n)
    step = max(1, 2_000_000 // max(n, 1))
    for s0 in range(0, n_draws, step):
        k = min(step, n_draws - s0)
        r = np.floor(rng.random((k, n)) * (null.n_twins + 1)).astype(np.int64)
        a[s0:s0 + k] = null.values[rows, r].sum(axis=1)
        w[s0:s0 + k] = null.shift[rows, r].sum(axis=1)
    return a, w


def _enumerate(null: RoleNull) -> tuple[Any, Any]:
    """Null sums and shift sums of every role assignment (``prod(K_i + 1)`` of them)."""
    import numpy as np

    a, w = np.zeros(1), np.zeros(1)
    for i, k in enumerate(null.n_twins.tolist()):
        a = (a[:, None] + null.values[i, :k + 1][None, :]).ravel()
        w = (w[:, None] + null.shift[i, :k + 1][None, :]).ravel()
    return a, w


@dataclass(frozen=True)
class RoleDraws:
    """The null draws a test (and its interval) reads: exact enumeration or seeded Monte Carlo.

    Attributes:
        sums: Null statistic per draw.
        shifts: Shift sum per draw (see :class:`RoleNull`).
        exact: Whether ``sums`` enumerates every role assignment (p = count / total) or samples them
            (p = (1 + count) / (B + 1)).
    """

    sums: Any
    shifts: Any
    exact: bool


def role_draws(null: RoleNull, n_resamples: int = 10_000, seed: int = 0,
               extend_floor: bool = True) -> RoleDraws:
    """The null draws of :func:`role_permutation_test`; at the Monte Carlo floor (no draw reached ``T``)
    the same generator draws on to :data:`MC_FLOOR_RESAMPLES` in all."""
    import numpy as np

    n_roles = math.prod(int(k) + 1 for k in null.n_twins.tolist())
    if n_roles <= EXACT_MAX_ROLES:
        a, w = _enumerate(null)
        return RoleDraws(a, w, True)
    rng = np.random.default_rng(seed)
    a, w = _draws(null, n_resamples, rng)
    if extend_floor and n_resamples < MC_FLOOR_RESAMPLES and _count(a, null.observed, _tol(null)) == 0:
        a2, w2 = _draws(null, MC_FLOOR_RESAMPLES - n_resamples, rng)
        a, w = np.concatenate([a, a2]), np.concatenate([w, w2])
    return RoleDraws(a, w, False)


def _tol(null: RoleNull) -> float:
    """Sums of the same numbers in another order differ by rounding: count those ties as ties."""
    import numpy as np

    return 1e-12 * float(np.nansum(np.abs(null.values))) + 1e-300


def _count(sums: Any, observed: float, tol: float) -> int:
    import numpy as np

    return int(np.count_nonzero(sums >= observed - tol))


def role_p(null: RoleNull, draws: RoleDraws) -> float:
    """One-sided p of ``T``: exact share of assignments at or above it, or the Monte Carlo ``(1 + c)/(B + 1)``."""
    c = _count(draws.sums, null.observed, _tol(null))
    b = int(draws.sums.size)
    return c / b if draws.exact else (c + 1) / (b + 1)


def role_lower_bound(null: RoleNull, draws: RoleDraws, alpha: float) -> float:
    """Largest shift ``delta`` of the mean difference that the test of "original lowered by delta" rejects.

    Lowering every original by ``delta`` lowers ``T`` by ``n delta`` and draw b's sum by ``delta W_b``, so
    draw b reaches the shifted statistic exactly when ``delta >= (T - A_b) / (n - W_b)`` (``W_b <= n``;
    ``W_b = n`` only for the observed assignment, which always reaches it). The bound is read off the
    sorted thresholds. ``-inf`` when no shift is rejected (too few items to bound it).
    """
    import numpy as np

    n = null.values.shape[0]
    tol = _tol(null)
    gap = n - draws.shifts
    fixed = gap <= 1e-9
    always = int(np.count_nonzero(fixed & (draws.sums >= null.observed - tol)))
    thresholds = np.sort((null.observed - tol - draws.sums[~fixed]) / gap[~fixed])
    b = int(draws.sums.size)
    allowed = math.floor(alpha * b + 1e-9) if draws.exact else math.floor(alpha * (b + 1) + 1e-9) - 1
    j = allowed - always
    if j < 0:
        return -math.inf
    if j >= thresholds.size:
        return math.inf
    return min(float(thresholds[j]), float(null.values[:, 0].mean()))


def _negated(null: RoleNull) -> RoleNull:
    return RoleNull(values=-null.values, shift=null.shift, n_twins=null.n_twins)


def lattice_log_p(original: Sequence[float], twins: Sequence[Sequence[float]]) -> float:
    """``log P(T* >= T)`` under uniform roles, exactly, for 0/1 scores.

    An item with ``a`` of its ``K + 1`` scores equal to 1 contributes ``(K + 1 - a)/K`` with probability
    ``a/(K + 1)`` and ``-a/K`` otherwise; ``c`` such items sum to ``-c a/K + B (K + 1)/K`` with
    ``B ~ Binomial(c, a/(K + 1))``. The sum is convolved on the lattice of ``1/lcm(K_i)``.
    """
    import numpy as np
    from scipy.stats import binom

    lcm = 1
    for k in {len(t) for t in twins}:
        lcm = lcm * k // math.gcd(lcm, k)
    groups: dict[tuple[int, int], int] = {}
    obs = 0
    for o, tw in zip(original, twins, strict=True):
        k, a = len(tw), int(round(o)) + int(round(sum(tw)))
        obs += ((k + 1) * int(round(o)) - a) * (lcm // k)
        if 0 < a < k + 1:  # an item whose scores all agree contributes 0 in every role
            groups[(k, a)] = groups.get((k, a), 0) + 1
    if not groups:
        return 0.0
    dist, lo, fft = np.ones(1), 0, False
    for (k, a), c in sorted(groups.items()):
        step = (k + 1) * (lcm // k)
        term = np.zeros(step * c + 1)
        term[::step] = binom.pmf(np.arange(c + 1), c, a / (k + 1))
        if dist.size * term.size < DIRECT_MAX:
            dist = np.convolve(dist, term)
        else:  # very mixed K on many items: FFT, exact only to about 1e-15 absolute
            from scipy.signal import fftconvolve

            dist, fft = fftconvolve(dist, term).clip(min=0.0), True
        lo -= c * a * (lcm // k)
    idx = obs - lo
    tail = float(dist[max(idx, 0):].sum()) if idx < dist.size else 0.0
    if fft:  # below the FFT's resolution only an upper bound is known: report it, never a smaller p
        tail = max(tail, FFT_P_FLOOR)
    return math.log(min(1.0, max(tail, 1e-300)))


def role_permutation_test(original: Sequence[float], twins: Sequence[Sequence[float]], metric: str = "",
                          kind: ScoreKind = "continuous", n_resamples: int = 10_000, seed: int = 0,
                          prior: float = 0.5) -> TestResult:
    """The benchmark test of original against its K twins, exact under "the model treats the original like
    its twins" at every K (see the module docstring).

    Args:
        original: Each item's score on its original (finite).
        twins: Each item's twin scores (finite, at least one per item).
        metric: Name stored in the result.
        kind: ``binary`` (0/1 scores: exact lattice p, effect the mean difference) or ``continuous``
            (enumerated or Monte Carlo p, effect Cohen's ``d_z`` of the per-item differences).
        n_resamples: Role draws when the assignments are too many to enumerate (and for a binary
            metric's interval).
        seed: Seed of the role draws.
        prior: Prior probability of contamination for C.

    Returns:
        A :class:`~zcp_core.stats.TestResult` (test ``exact_role_permutation`` for binary scores, else
        ``role_permutation``).
    """
    from zcp_core.stats.paired import _cohens_dz

    null = role_null(original, twins)
    n = int(null.n_twins.size)
    if n == 0:
        return _finish(metric, "role_permutation", 0, math.nan, "cohens_dz", (0.0, math.nan, math.nan), 0.0, prior)
    d = null.values[:, 0]
    mean = float(d.mean())
    draws = role_draws(null, n_resamples, seed)
    neg = _negated(null)
    lo, lower = role_lower_bound(null, draws, 0.025), role_lower_bound(null, draws, 0.05)
    hi = -role_lower_bound(neg, RoleDraws(-draws.sums, draws.shifts, draws.exact), 0.025)
    if kind == "binary":
        log_p = lattice_log_p(original, twins)
        return _finish(metric, "exact_role_permutation", n, mean, "mean_difference", (mean, lo, hi), log_p, prior,
                       evidence=_Evidence(lower, _cohens_dz(d) if n > 1 else math.nan,
                                          f"{EXACT_LATTICE}; interval: {ROLE_CI}", int(draws.sums.size)))
    effect = _cohens_dz(d) if n > 1 else math.nan
    return _finish(metric, "role_permutation", n, effect, "cohens_dz", (mean, lo, hi),
                   math.log(role_p(null, draws)), prior, evidence=_Evidence(lower, effect, ROLE_CI,
                                                                            int(draws.sums.size)))
