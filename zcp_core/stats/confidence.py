"""Contamination Confidence from a p-value, and the result every paired test returns (pure Python).

p-values are turned into a Bayes factor with the Sellke-Bayarri-Berger bound,
``BF10 = 1/(-e p ln p)`` for ``p < 1/e`` (else 1), and into Contamination
Confidence ``C = BF10*pi / (BF10*pi + 1 - pi)``: 0.5 is no evidence, 1 is
memorised. Below :data:`MIN_PAIRS` pairs no verdict is given anywhere in the
product (:data:`TOO_FEW_PAIRS` is the reason shown instead).

Two defects of the published reference code are avoided on purpose:

* ``p = 0`` never happens: resampling p-values are floored at ``1/(B+1)`` and
  exact binomial p-values are computed in log space, so BF10 and C come out
  finite (C is computed from ``log p`` directly, never from an underflowed 0).
* An effect pointing the wrong way (reference > original) is evidence of *no*
  contamination: it gives C = 0.5 (BF10 = 1) with the direction stated, not 0.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

Direction = Literal["original>reference", "reference>original", "none"]
#: ``exact_sign_flip`` is read from runs made before the role-permutation test at K >= 2.
TestName = Literal["mcnemar", "bootstrap", "permutation", "exact_sign_flip", "exact_role_permutation",
                   "role_permutation"]

#: The one minimum-sample rule of the product: fewer pairs (instances, matched problems) give no verdict.
MIN_PAIRS = 10
TOO_FEW_PAIRS = f"too few pairs for a verdict (n < {MIN_PAIRS})"

#: Smallest p-value reported; a smaller exact p (e.g. ``2**-2000``) is stored as this.
P_FLOOR = 1e-300
#: The one ceiling of C on every metric: a larger C is reported as this value with ``bound=True`` ("≥ 0.999").
C_CAP = 0.999
#: Sign vectors a Monte Carlo p at its floor (no vector reached the observed sum) is redrawn with: its
#: floor ``1/(B+1)`` then gives C above :data:`C_CAP` (C = 0.999 needs p of about 3.6e-5).
MC_FLOOR_RESAMPLES = 30_000
MCNEMAR_CI = "exact, conditional on the discordant pairs (Clopper-Pearson); the lower bound matches the test"


@dataclass(frozen=True)
class TestResult:
    """One paired one-sided test of original against reference.

    Attributes:
        metric: Metric name (``acc``, ``con``, ``p_first``, ``p_all``...).
        test: ``mcnemar`` (binary metrics), ``permutation`` or ``bootstrap`` (continuous ones).
        n: Pairs used (NaN pairs dropped for the continuous tests).
        effect: ``risk_difference`` ``(b - c)/n`` for McNemar, Cohen's ``d_z``
            (mean difference / SD of differences) for the continuous tests; ``inf``
            when every difference is the same non-zero value.
        effect_name: ``risk_difference`` or ``cohens_dz``.
        mean_diff: Mean paired difference ``original - reference``.
        ci_low: Lower end of its 95% CI (Wald for McNemar, Student t for the permutation
            test, percentile for the bootstrap).
        ci_high: Upper end of its 95% CI.
        p: One-sided p-value, floored at :data:`P_FLOOR` (never 0).
        bf10: Sellke-Bayarri-Berger upper bound on the Bayes factor.
        confidence: Contamination Confidence C in [0.5, 1] for prior 0.5.
        direction: Which arm scored higher (``none`` for a tie or no data).
        discordant_b: Pairs with the original correct and the reference wrong.
        discordant_c: Pairs with the reference correct and the original wrong.
        effect_size: Cohen's ``d_z`` of the paired differences (for McNemar: of the +1/-1/0 differences).
        effect_lower: One-sided 95% lower bound of ``mean_diff`` that inverts this test (``p < 0.05``
            exactly when it is above 0; see :mod:`zcp_core.intervals`); ``-inf`` when too few pairs bound it.
        ci_method: How ``ci_low``/``ci_high`` and ``effect_lower`` were computed.
        bound: Whether C was above :data:`C_CAP` and is reported as that ceiling ("≥ 0.999").
        resamples: Sign vectors or bootstrap resamples drawn (``2**n`` for the exact test, 0 for McNemar).
    """

    __test__ = False  # not a pytest test class despite the name

    metric: str
    test: TestName
    n: int
    effect: float
    effect_name: str
    mean_diff: float
    ci_low: float
    ci_high: float
    p: float
    bf10: float
    confidence: float
    direction: Direction
    discordant_b: int | None = None
    discordant_c: int | None = None
    effect_size: float = math.nan
    effect_lower: float = math.nan
    ci_method: str = ""
    bound: bool = False
    resamples: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON; non-finite floats (NaN, inf) become ``None``."""
        out: dict[str, Any] = {}
        for k, v in asdict(self).items():
            out[k] = None if isinstance(v, float) and not math.isfinite(v) else v
        return out


def _log_bf10(log_p: float) -> float:
    """``log BF10`` from ``log p`` (0 for ``p >= 1/e``), finite for any ``log_p > -inf``."""
    if not log_p < -1.0:  # p >= 1/e, or NaN
        return 0.0
    # BF = 1 / (-e p ln p)  =>  log BF = -1 - log p - log(-log p)
    return -1.0 - log_p - math.log(-log_p)


def _confidence_from_log_bf(log_bf: float, prior: float) -> float:
    if not 0.0 < prior < 1.0:
        raise ValueError(f"prior must be in (0, 1), got {prior}")
    # C = 1 / (1 + (1 - pi) / (pi * BF)), written to stay finite for a huge BF
    log_odds = log_bf + math.log(prior) - math.log1p(-prior)
    if log_odds > 700:
        return 1.0
    return 1.0 / (1.0 + math.exp(-log_odds))


def _safe_log_p(p: float) -> float:
    if math.isnan(p):
        return 0.0
    return math.log(max(p, P_FLOOR))


def bf10_from_p(p: float) -> float:
    """Sellke-Bayarri-Berger bound: ``1/(-e p ln p)`` for ``p < 1/e``, else 1.

    ``p <= 0`` is treated as :data:`P_FLOOR` (1e-300) so the result is finite;
    callers that know ``log p`` exactly (McNemar) use it instead. NaN gives 1.
    """
    return math.exp(_log_bf10(_safe_log_p(p)))


def confidence_from_p(p: float, prior: float = 0.5) -> float:
    """Contamination Confidence ``C = BF*pi/(BF*pi + 1 - pi)`` from a p-value.

    Golden values (prior 0.5): p=0.05 -> 0.711, 0.01 -> 0.889, 0.001 -> 0.982,
    any p >= 1/e -> 0.5.
    """
    return _confidence_from_log_bf(_log_bf10(_safe_log_p(p)), prior)


def _direction(diff: float) -> Direction:
    if diff > 0:
        return "original>reference"
    if diff < 0:
        return "reference>original"
    return "none"


def min_pairs_reason(n: int) -> str:
    """:data:`TOO_FEW_PAIRS` when ``n < MIN_PAIRS`` (no verdict may be shown), else ``""``."""
    return TOO_FEW_PAIRS if n < MIN_PAIRS else ""


@dataclass(frozen=True)
class _Evidence:
    """What a test adds beside its p: the lower bound, the effect size and how they were computed."""

    lower: float
    size: float
    method: str
    resamples: int = 0


def _finish(metric: str, test: TestName, n: int, effect: float, effect_name: str,
            stats: tuple[float, float, float], log_p: float, prior: float,
            discordant: tuple[int | None, int | None] = (None, None),
            evidence: _Evidence | None = None) -> TestResult:
    """Assemble a result; a reversed or null effect gets BF 1, so C equals the prior (0.5 by default).

    C above :data:`C_CAP` is reported as the cap with ``bound=True``.
    """
    mean_diff, lo, hi = stats
    ev = evidence or _Evidence(math.nan, math.nan, "")
    direction = _direction(mean_diff)
    log_bf = _log_bf10(log_p) if direction == "original>reference" else 0.0
    p = max(math.exp(log_p), P_FLOOR)
    conf = _confidence_from_log_bf(log_bf, prior)
    return TestResult(
        metric=metric, test=test, n=n, effect=effect, effect_name=effect_name, mean_diff=mean_diff,
        ci_low=lo, ci_high=hi, p=p, bf10=math.exp(min(log_bf, 709.0)),
        confidence=min(conf, C_CAP), direction=direction, discordant_b=discordant[0], discordant_c=discordant[1],
        effect_size=ev.size, effect_lower=ev.lower, ci_method=ev.method, bound=conf > C_CAP,
        resamples=ev.resamples,
    )
