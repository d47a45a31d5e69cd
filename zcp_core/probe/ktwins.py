"""Statistics of a probe with K twins per item: the exact benchmark test, per-item p-values, BH flags.

With K twins the paired statistic of a metric is the original's value minus the mean of its twins'.

* **Benchmark test, Acc and Con.** The differences are multiples of ``1/K_i``, so the sign-flip null
  distribution of their sum lives on a lattice: :func:`lattice_sign_flip_log_p` convolves it exactly
  (never Monte Carlo). At K = 1 the probe keeps the exact McNemar test, which is the same test.
* **Per item, P_first and P_all** (:func:`item_pvalues`). For an item with ``K_i >= 2`` twins the
  one-sided p of "the original scores above its own twins" is a prediction-interval t-test of
  ``log P(original)`` against the twins' ``log P``: ``t = (x0 - mean(y)) / (s * sqrt(1 + 1/K_i))``.
  ``s`` is the item's twin SD moderated towards the SD of all items (empirical Bayes, Smyth 2004,
  limma's ``squeezeVar``): twins sharing a first token have SD about 0, and an unmoderated t would then
  read p about 0 on any gap. Degrees of freedom are ``d0 + K_i - 1`` (``d0`` estimated). The exact
  rank p ``(1 + #{twins >= original}) / (K_i + 1)`` is reported beside it.
* **Flags** (:func:`bh_flags`): Benjamini-Hochberg discoveries at level q over the items with a p.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Sequence, get_args

if TYPE_CHECKING:
    import pandas as pd

FlagMetric = Literal["p_all", "p_first", "p_all_cal", "p_first_cal", "acc"]
FLAG_METRICS: tuple[str, ...] = get_args(FlagMetric)
DEFAULT_FDR = 0.1
#: Twins per item a probe builds by default (``zcp probe --twins``); chosen by measurement, see the docs.
DEFAULT_TWINS = 4
DEFAULT_FLAG_METRIC = "p_all"
#: Per-item p needs this many twins (an SD from fewer is undefined).
MIN_ITEM_TWINS = 2
# log P of a probability of 0 (a token the model never emits) is -inf; floor it like the tests floor p.
_LOG_FLOOR = math.log(1e-300)
EXACT_LATTICE = "exact sign-flip test over the lattice of differences (convolution)"
#: Multiply-adds above which a convolution step switches from direct (exact) to FFT.
DIRECT_MAX = 4e8
#: p below this is reported as this upper bound when the lattice was too large for direct convolution.
FFT_P_FLOOR = 1e-14
#: Twin log-probability variances below this (nat^2; SD 0.001 nats, the size of batched-logprob noise) count as
#: zero: twins that agree to that precision carry no information about the item's spread.
VAR_FLOOR = 1e-6
#: Items with twin spread above the floor needed to estimate the variance prior (else no item gets a p).
MIN_PRIOR_ITEMS = 10


@dataclass(frozen=True)
class FlagRule:
    """How items are flagged: BH at ``fdr`` on ``metric``'s per-item p, or the paper's rule for ``acc``.

    Attributes:
        metric: ``p_all`` (default), ``p_first`` (or their calibrated forms), or ``acc``: original right and
            every twin wrong, with no false-discovery control.
        fdr: The BH level q, in (0, 1).
    """

    metric: FlagMetric = DEFAULT_FLAG_METRIC  # type: ignore[assignment]
    fdr: float = DEFAULT_FDR

    def __post_init__(self) -> None:
        if self.metric not in FLAG_METRICS:
            raise ValueError(f"flag metric must be one of {FLAG_METRICS}, got {self.metric!r}")
        if not 0.0 < float(self.fdr) < 1.0:
            raise ValueError(f"--fdr must lie in (0, 1), got {self.fdr}")

    @property
    def controlled(self) -> bool:
        """Whether the flags carry a false-discovery rate (every metric but ``acc``)."""
        return self.metric != "acc"


def lattice_sign_flip_log_p(d: Sequence[float], denominators: Sequence[int]) -> float:
    """``log P(sum(s_i |d_i|) >= sum(d_i))`` over uniform random signs, exactly.

    Args:
        d: Paired differences, each a multiple of ``1 / denominators[i]`` (original minus its twins' mean
            of 0/1 outcomes).
        denominators: ``K_i`` per difference.

    Returns:
        The log of the one-sided p-value (0 when every difference is 0).
    """
    import numpy as np

    if len(d) != len(denominators):
        raise ValueError(f"{len(d)} differences but {len(denominators)} denominators")
    if not len(d):
        return 0.0
    lcm = 1
    for k in {int(x) for x in denominators}:
        lcm = lcm * k // math.gcd(lcm, k)
    units = np.rint(np.asarray(d, dtype=float) * lcm).astype(np.int64)
    obs = int(units.sum())
    mags = np.abs(units[units != 0])
    if not mags.size:
        return 0.0
    g = int(np.gcd.reduce(mags))
    mags, obs_g = mags // g, obs / g
    # The sum of c signed copies of v is v * (2 B - c), B ~ Binomial(c, 1/2): convolve one such term per value.
    from scipy.stats import binom

    dist = np.ones(1)
    lo = 0
    fft = False
    values, counts = np.unique(mags, return_counts=True)
    for v, c in zip(values.tolist(), counts.tolist()):
        term = np.zeros(2 * v * c + 1)
        term[::2 * v] = binom.pmf(np.arange(c + 1), c, 0.5)
        if dist.size * term.size < DIRECT_MAX:
            dist = np.convolve(dist, term)
        else:  # very mixed K on many items: FFT, exact only to about 1e-15 absolute
            dist, fft = _fft_convolve(dist, term), True
        lo -= v * c
    idx = int(math.ceil(obs_g - lo - 1e-9))
    tail = float(dist[max(idx, 0):].sum()) if idx < dist.size else 0.0
    if fft:  # below the FFT's resolution only an upper bound is known: report it, never a smaller p
        tail = max(tail, FFT_P_FLOOR)
    return math.log(min(1.0, max(tail, 1e-300)))


def _fft_convolve(a: Any, b: Any) -> Any:
    from scipy.signal import fftconvolve

    return fftconvolve(a, b).clip(min=0.0)


def lattice_test(suspect: Sequence[float], ref_mean: Sequence[float], n_twins: Sequence[int], metric: str,
                 prior: float = 0.5, n_resamples: int = 10_000, seed: int = 0) -> Any:
    """The benchmark test of a 0/1 metric against K twins per item: exact p, inverted sign-flip interval.

    The interval inverts the seeded sign-flip test (a shifted difference leaves the lattice), so only the
    p-value and C are exact.

    Returns:
        A :class:`zcp_core.stats.TestResult` with ``test == "exact_sign_flip"``.
    """
    import numpy as np

    from zcp_core.stats import TestResult, _Evidence, _finish, sign_flip_test

    d = np.asarray(suspect, dtype=float) - np.asarray(ref_mean, dtype=float)
    mc: TestResult = sign_flip_test(d, metric, n_resamples, seed, prior)
    log_p = lattice_sign_flip_log_p(d.tolist(), list(n_twins))
    return _finish(metric, "exact_sign_flip", int(d.size), mc.mean_diff, "mean_difference",
                   (mc.mean_diff, mc.ci_low, mc.ci_high), log_p, prior,
                   evidence=_Evidence(mc.effect_lower, mc.effect_size, f"{EXACT_LATTICE}; interval: {mc.ci_method}"))


def _trigamma_inverse(x: float) -> float:
    """``y`` with ``trigamma(y) = x`` (Newton's method, as limma's ``trigammaInverse``)."""
    from scipy.special import polygamma

    if x > 1e7:
        return 1.0 / math.sqrt(x)
    if x < 1e-6:
        return 1.0 / x
    y = 0.5 + 1.0 / x
    for _ in range(50):
        tri = float(polygamma(1, y))
        dif = tri * (1.0 - tri / x) / float(polygamma(2, y))
        y += dif
        if -dif / y < 1e-8:
            break
    return y


def fit_variance_prior(s2: Any, df: Any) -> tuple[float, float]:
    """Prior ``(d0, s0^2)`` of sample variances ``s2`` on ``df`` degrees of freedom (limma's ``fitFDist``).

    Zero variances carry no log and are left out of the fit. ``d0`` is ``inf`` when the variances vary no
    more than sampling alone makes them (every item then takes ``s0^2``).
    """
    import numpy as np
    from scipy.special import digamma, polygamma

    s2, df = np.asarray(s2, dtype=float), np.asarray(df, dtype=float)
    ok = (s2 > 0) & np.isfinite(s2) & (df > 0)
    if ok.sum() < 2:
        pos = s2[ok]
        return math.inf, float(pos.mean()) if pos.size else 1.0
    s2, df = s2[ok], df[ok]
    e = np.log(s2) - digamma(df / 2) + np.log(df / 2)
    emean = float(e.mean())
    evar = float(((e - emean) ** 2).sum() / (e.size - 1) - polygamma(1, df / 2).mean())
    if evar <= 0:
        return math.inf, math.exp(emean)
    d0 = 2.0 * _trigamma_inverse(evar)
    return d0, math.exp(emean + float(digamma(d0 / 2)) - math.log(d0 / 2))


def item_pvalues(records: pd.DataFrame, metric: str, suspect_arm: str = "original") -> pd.DataFrame:
    """Per-item one-sided p of "the original scores above its own twins" on a P metric (r = 0 rows).

    Twin variances below :data:`VAR_FLOOR` count as zero, and the variance prior needs
    :data:`MIN_PRIOR_ITEMS` items with spread above it; with fewer, no item gets a p (an empty table).

    Returns:
        One row per pair with at least :data:`MIN_ITEM_TWINS` finite twin scores: ``pair_id``, ``n_twins``,
        ``item_t``, ``item_df``, ``item_p`` (moderated prediction-interval t) and ``item_rank_p`` (exact).
    """
    import numpy as np
    import pandas as pd
    from scipy.stats import t as student_t

    cols = ["pair_id", "n_twins", "item_t", "item_df", "item_p", "item_rank_p"]
    # P metrics are probabilities (compared as logs); the calibrated ones are already log-ratios in nats
    logged = not metric.endswith("_cal")
    z = records[records["ratio"] == 0.0]
    s = z[z["arm"] == suspect_arm].set_index("pair_id")[metric].astype(float)
    r = z[z["arm"] == "reference"][["pair_id", metric]].dropna()
    rows = []
    for pid, g in r.groupby("pair_id", sort=False):
        x0 = s.get(pid, math.nan)
        if len(g) < MIN_ITEM_TWINS or not math.isfinite(x0):
            continue
        raw = g[metric].astype(float).to_numpy()
        if logged:
            y = np.maximum(np.log(np.maximum(raw, 0.0), where=raw > 0, out=np.full(raw.size, -np.inf)), _LOG_FLOOR)
            lx = max(math.log(x0) if x0 > 0 else -math.inf, _LOG_FLOOR)
        else:
            y, lx = raw, float(x0)
        rows.append({"pair_id": pid, "n_twins": int(y.size), "x0": lx, "mean": float(y.mean()),
                     "s2": float(y.var(ddof=1)), "rank_p": (1 + int((raw >= x0).sum())) / (y.size + 1)})
    if not rows:
        return pd.DataFrame(columns=cols)
    df = pd.DataFrame(rows)
    s2 = df["s2"].to_numpy(dtype=float)
    s2 = np.where(s2 < VAR_FLOOR, 0.0, s2)  # twins that agree to batched-logprob precision: no spread
    if int((s2 > 0).sum()) < MIN_PRIOR_ITEMS:
        return pd.DataFrame(columns=cols)  # too few items with twin spread to know what spread is usual
    d0, s0 = fit_variance_prior(s2, df["n_twins"] - 1)
    k = df["n_twins"].to_numpy(dtype=float)
    if math.isinf(d0):
        post, dof = np.full(len(df), s0), np.full(len(df), np.inf)
    else:
        post = (d0 * s0 + (k - 1) * s2) / (d0 + k - 1)
        dof = d0 + k - 1
    t = (df["x0"].to_numpy() - df["mean"].to_numpy()) / np.sqrt(post * (1 + 1 / k))
    out = pd.DataFrame({"pair_id": df["pair_id"], "n_twins": df["n_twins"], "item_t": t, "item_df": dof,
                        "item_p": student_t.sf(t, dof), "item_rank_p": df["rank_p"]})
    return out[cols]


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
