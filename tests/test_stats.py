"""Golden tests for zcp_core.stats: BF/C mapping, McNemar, permutation and bootstrap tests, size under the null,
the minimum-sample rule, pairing, AUROC."""

from __future__ import annotations

import json
import math

import pytest

from zcp_core.errors import DataError
from zcp_core.schema import Item
from zcp_core.stats import (
    C_CAP,
    EXACT_MAX_N,
    MC_FLOOR_RESAMPLES,
    MIN_PAIRS,
    P_FLOOR,
    TOO_FEW_PAIRS,
    ItemPair,
    auroc,
    bf10_from_p,
    confidence_from_p,
    log_binom_sf,
    mcnemar_test,
    min_pairs_reason,
    pair_items,
    paired_bootstrap_test,
    paired_permutation_test,
    paired_test,
    roc_curve,
    sign_flip_pvalues,
    tpr_at_fpr,
)


@pytest.mark.parametrize("p, c", [
    (0.05, 0.711), (0.01, 0.889), (0.001, 0.982), (1 / math.e, 0.5), (0.5, 0.5), (1.0, 0.5), (0.9, 0.5),
    (1e-10, 1.0), (0.0, 1.0),
])
def test_confidence_golden(p: float, c: float) -> None:
    assert confidence_from_p(p) == pytest.approx(c, abs=5e-4)


@pytest.mark.parametrize("p, bf", [
    (0.05, 2.456), (0.01, 7.988), (0.001, 53.256), (0.3678, 1.0), (0.5, 1.0), (float("nan"), 1.0),
])
def test_bf10_golden(p: float, bf: float) -> None:
    assert bf10_from_p(p) == pytest.approx(bf, abs=1e-3)


def test_bf10_p_zero_is_finite() -> None:
    bf = bf10_from_p(0.0)
    assert math.isfinite(bf) and bf == pytest.approx(bf10_from_p(P_FLOOR))


@pytest.mark.parametrize("prior, c", [(0.5, 0.7107), (0.1, 0.2144), (0.9, 0.9567)])
def test_confidence_prior(prior: float, c: float) -> None:
    # C = BF*pi / (BF*pi + 1 - pi) with BF(0.05) = 2.4560
    assert confidence_from_p(0.05, prior=prior) == pytest.approx(c, abs=5e-4)


@pytest.mark.parametrize("k, n, p", [
    (0, 5, 1.0), (5, 5, 1 / 32), (3, 4, 5 / 16), (1, 1, 0.5), (2, 3, 0.5), (10, 10, 2**-10),
])
def test_log_binom_sf_golden(k: int, n: int, p: float) -> None:
    assert math.exp(log_binom_sf(k, n)) == pytest.approx(p, rel=1e-9)


# (original, reference) -> b, c, p, direction, confidence
MCNEMAR = [
    ([1, 1, 1, 1, 1, 0], [0, 0, 0, 0, 0, 0], 5, 0, 1 / 32, "original>reference", 0.7726),
    ([1, 1, 1, 0, 0], [0, 0, 0, 0, 1], 3, 1, 5 / 16, "original>reference", 0.503),
    ([0, 0, 0, 0, 0], [1, 1, 1, 1, 1], 0, 5, 1.0, "reference>original", 0.5),
    ([1, 0, 1, 0], [0, 1, 0, 1], 2, 2, 11 / 16, "none", 0.5),
    ([1, 1, 0], [1, 1, 0], 0, 0, 1.0, "none", 0.5),
]


@pytest.mark.parametrize("orig, ref, b, c, p, direction, conf", MCNEMAR)
def test_mcnemar_golden(orig: list[int], ref: list[int], b: int, c: int, p: float, direction: str,
                        conf: float) -> None:
    r = mcnemar_test([bool(x) for x in orig], [bool(x) for x in ref], metric="acc")
    assert (r.discordant_b, r.discordant_c, r.direction, r.test, r.n) == (b, c, direction, "mcnemar", len(orig))
    assert r.p == pytest.approx(p, rel=1e-9)
    assert r.confidence == pytest.approx(conf, abs=5e-4)
    assert r.effect == pytest.approx((b - c) / len(orig)) and r.effect_name == "risk_difference"
    assert r.ci_low <= r.mean_diff <= r.ci_high


def test_mcnemar_empty() -> None:
    r = mcnemar_test([], [], metric="acc")
    assert (r.n, r.p, r.confidence, r.direction) == (0, 1.0, 0.5, "none")
    d = r.to_dict()
    assert d["effect"] is None and json.dumps(d)


def test_mcnemar_no_underflow() -> None:
    # 2**-2000 underflows a float; computed in log space the result is still finite and C ~ 1
    r = mcnemar_test([True] * 2000, [False] * 2000)
    assert r.p == P_FLOOR and r.p > 0
    assert math.isfinite(r.bf10) and r.bf10 > 1e300
    assert r.confidence == C_CAP and r.bound and r.direction == "original>reference"  # the one ceiling
    assert log_binom_sf(2000, 2000) == pytest.approx(-2000 * math.log(2))


def test_mcnemar_large_mixed_counts() -> None:
    r = mcnemar_test([True] * 1200 + [False] * 800, [False] * 1200 + [True] * 800)
    assert (r.discordant_b, r.discordant_c) == (1200, 800)
    assert 0 < r.p < 1e-15 and (r.confidence, r.bound) == (C_CAP, True)  # shown as "≥ 0.999"


def test_mcnemar_length_mismatch() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        mcnemar_test([True], [True, False])


def test_bootstrap_p_floor_and_huge_effect() -> None:
    orig = [10.0 + 0.01 * (i % 7) for i in range(40)]
    ref = [0.0] * 40
    r = paired_bootstrap_test(orig, ref, metric="p_all", n_resamples=2000, seed=0)
    assert r.p == pytest.approx(1 / 2001)
    assert math.isfinite(r.bf10) and r.bf10 > 50
    assert r.confidence == pytest.approx(confidence_from_p(1 / 2001)) and r.confidence > 0.98
    assert r.direction == "original>reference"
    assert r.effect_name == "cohens_dz" and r.effect > 100
    # the default B = 10,000 floors p at 1/10,001: C close to 1
    assert paired_bootstrap_test(orig, ref).confidence > 0.997


def test_bootstrap_reversed_direction_gives_half() -> None:
    r = paired_bootstrap_test([0.1, 0.2, 0.15, 0.3], [0.6, 0.7, 0.9, 0.8], n_resamples=1000)
    assert r.direction == "reference>original"
    assert r.confidence == 0.5 and r.bf10 == 1.0 and r.p > 0.5
    assert r.mean_diff == pytest.approx(-0.5625)


def test_bootstrap_golden_moderate() -> None:
    orig = [0.9, 0.8, 0.7, 0.95, 0.6, 0.85, 0.75, 0.5, 0.65, 0.9]
    ref = [0.5, 0.7, 0.75, 0.6, 0.55, 0.5, 0.8, 0.45, 0.4, 0.7]
    r = paired_bootstrap_test(orig, ref, n_resamples=10_000, seed=0)
    d = [a - b for a, b in zip(orig, ref, strict=True)]
    mean = sum(d) / len(d)
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (len(d) - 1))
    assert r.mean_diff == pytest.approx(mean) and r.effect == pytest.approx(mean / sd)
    assert r.ci_low < mean < r.ci_high and r.ci_low > 0
    assert r.p < 0.01 and r.confidence > 0.9
    # seeded: the same call gives the same p
    assert paired_bootstrap_test(orig, ref, n_resamples=10_000, seed=0).p == r.p


def test_bootstrap_drops_nan_pairs() -> None:
    nan = float("nan")
    r = paired_bootstrap_test([0.9, nan, 0.8, 0.7], [0.1, 0.2, nan, 0.3], n_resamples=500)
    assert r.n == 2 and r.mean_diff == pytest.approx(0.6)


def test_bootstrap_all_zero_and_empty() -> None:
    r = paired_bootstrap_test([0.5] * 5, [0.5] * 5, n_resamples=200)
    assert (r.direction, r.confidence, r.p, r.effect) == ("none", 0.5, 1.0, 0.0)
    e = paired_bootstrap_test([], [], n_resamples=200)
    assert (e.n, e.confidence, e.direction) == (0, 0.5, "none")
    one = paired_bootstrap_test([0.9], [0.1], n_resamples=200)  # one pair is no evidence
    assert (one.n, one.p, one.confidence, one.direction) == (1, 1.0, 0.5, "original>reference")


# ---- sign-flip permutation test -------------------------------------------------------------------
# differences -> exact one-sided p (count of the 2**n sign vectors whose sum reaches the observed one)
PERMUTATION = [
    ([1.0] * 10, 1 / 1024),  # every sign positive: only the observed vector reaches it
    ([3.0, 1.0, 2.0], 1 / 8),  # the smallest p three pairs can give
    ([1.0, 2.0, 3.0, 4.0, -1.0], 3 / 32),  # sums >= 9: {+ + + +, -}, {+ + + +, +}, {- + + +, +}
    ([0.5, -0.5], 3 / 4),  # ties count as reaching the observed sum
    ([0.0, 0.0, 0.0], 1.0),
]


@pytest.mark.parametrize("diffs, p", PERMUTATION)
def test_permutation_exact_golden(diffs: list[float], p: float) -> None:
    r = paired_permutation_test(diffs, [0.0] * len(diffs), metric="p_all")
    assert r.p == pytest.approx(p, rel=1e-12) and r.test == "permutation" and r.n == len(diffs)
    assert r.confidence == pytest.approx(confidence_from_p(p), abs=1e-12)


@pytest.mark.parametrize("n", [2, 5, 9, 13])
def test_permutation_agrees_with_scipy_exact(n: int) -> None:
    import numpy as np
    from scipy.stats import permutation_test

    d = np.random.default_rng(n).normal(0.2, 1.0, size=n)
    ref = permutation_test((d,), lambda x, axis: x.sum(axis=axis), permutation_type="samples",
                           alternative="greater", n_resamples=10**9).pvalue  # 2**n < 10**9: scipy enumerates
    assert float(sign_flip_pvalues(d)) == pytest.approx(ref, rel=1e-12)


def test_permutation_monte_carlo_floor_seed_and_rows() -> None:
    import numpy as np

    n = EXACT_MAX_N + 14
    r = paired_permutation_test([0.3 + 0.01 * i for i in range(n)], [0.0] * n, n_resamples=2000, seed=3)
    # the observed sum is the largest possible: no vector reaches it, so the floor is redrawn with 30,000
    assert r.resamples == MC_FLOOR_RESAMPLES and r.p == pytest.approx(1 / (MC_FLOOR_RESAMPLES + 1))
    assert (r.confidence, r.bound) == (C_CAP, True)
    assert float(sign_flip_pvalues([0.3 + 0.01 * i for i in range(n)], 2000, 3, extend_floor=False)) == 1 / 2001
    d = np.random.default_rng(0).normal(0.1, 1.0, size=(5, n))
    batch = sign_flip_pvalues(d, 2000, seed=7)
    assert [float(sign_flip_pvalues(row, 2000, seed=7)) for row in d] == pytest.approx(batch.tolist())
    assert not np.array_equal(batch, sign_flip_pvalues(d, 2000, seed=8))  # the seed matters, and only it
    assert np.all((batch >= 1 / 2001) & (batch <= 1))


def test_permutation_ci_effect_direction_and_nan() -> None:
    orig = [0.9, 0.8, 0.7, 0.95, 0.6, 0.85, 0.75, 0.5, 0.65, 0.9]
    ref = [0.5, 0.7, 0.75, 0.6, 0.55, 0.5, 0.8, 0.45, 0.4, 0.7]
    r = paired_permutation_test(orig, ref)
    d = [a - b for a, b in zip(orig, ref, strict=True)]
    mean = sum(d) / len(d)
    sd = math.sqrt(sum((x - mean) ** 2 for x in d) / (len(d) - 1))
    assert (r.mean_diff, r.effect, r.effect_size) == (pytest.approx(mean), pytest.approx(mean / sd),
                                                       pytest.approx(mean / sd))
    # brute force over the 1,024 sign vectors, in plain Python
    import itertools

    def p_at(shift: float) -> float:
        e = [x - shift for x in d]
        return sum(sum(s * abs(x) for s, x in zip(signs, e)) >= sum(e) - 1e-12
                   for signs in itertools.product((1, -1), repeat=len(e))) / 1024

    assert r.p == pytest.approx(p_at(0.0)) and r.confidence == pytest.approx(confidence_from_p(p_at(0.0)))
    assert r.p < 0.05 and r.ci_low <= r.mean_diff <= r.ci_high and r.ci_low < r.effect_lower < r.mean_diff
    # The bounds invert the test: just below each, the test rejects; just above, it does not.
    step = 1e-3
    assert p_at(r.effect_lower - step) <= 0.05 < p_at(r.effect_lower + step)
    assert p_at(r.ci_low - step) <= 0.025 < p_at(r.ci_low + step)
    assert "inverted sign-flip" in r.ci_method
    back = paired_permutation_test(ref, orig)
    assert back.direction == "reference>original" and back.confidence == 0.5 and back.bf10 == 1.0
    nan = float("nan")
    part = paired_permutation_test([0.9, nan, 0.8, 0.7], [0.1, 0.2, nan, 0.3])
    assert part.n == 2 and part.mean_diff == pytest.approx(0.6)
    empty = paired_permutation_test([], [])
    assert (empty.n, empty.p, empty.confidence, empty.direction) == (0, 1.0, 0.5, "none")


def test_paired_test_dispatches_on_the_mode() -> None:
    o, r = [0.5, 0.6, 0.7, 0.4], [0.1, 0.2, 0.3, 0.0]
    assert paired_test(o, r).test == "permutation"
    assert paired_test(o, r, "bootstrap", n_resamples=200) == paired_bootstrap_test(o, r, n_resamples=200)
    with pytest.raises(ValueError, match="unknown continuous test"):
        paired_test(o, r, "t-test")  # type: ignore[arg-type]


# ---- size under a symmetric null ------------------------------------------------------------------
DRAWS = 2000


@pytest.mark.parametrize("n", [3, 5, 10, 30, 100])
def test_permutation_holds_its_size_under_a_symmetric_null(n: int) -> None:
    """Both arms from one skewed distribution (like P_all), so each difference is symmetric about 0."""
    import numpy as np

    rng = np.random.default_rng(1000 + n)
    orig, ref = rng.beta(0.5, 2.0, size=(2, DRAWS, n))
    p = sign_flip_pvalues(orig - ref)  # the production defaults: 10,000 sign vectors, seed 0
    share = float(np.mean(p < 0.05))
    if n >= 10:
        assert 0.03 <= share <= 0.07, share
    else:  # an exact test with 2**n sign vectors cannot reach 0.05 often: conservative, never liberal
        assert share <= 0.07, share
    assert float(np.mean(p < 0.01)) <= 0.02
    # C is meaningful under the null: mostly exactly 0.5 (no evidence), rarely high.
    conf = np.array([confidence_from_p(x) for x in p[:200]])
    assert np.median(conf) == 0.5 and np.mean(conf > 0.9) <= 0.05


@pytest.mark.parametrize("n", [3, 5, 10, 30, 100])
def test_mcnemar_holds_its_size_under_a_symmetric_null(n: int) -> None:
    import numpy as np

    rng = np.random.default_rng(2000 + n)
    orig, ref = rng.random((2, DRAWS, n)) < 0.4  # both arms right 40% of the time, independently
    b = (orig & ~ref).sum(axis=1)
    c = (ref & ~orig).sum(axis=1)
    # The production test on each distinct (b, c) table; the draws only count how often each occurs.
    p_of = {(bi, ci): mcnemar_test([True] * bi + [False] * ci + [True] * (n - bi - ci),
                                   [False] * bi + [True] * ci + [True] * (n - bi - ci)).p
            for bi, ci in set(zip(b.tolist(), c.tolist()))}
    p = np.array([p_of[bc] for bc in zip(b.tolist(), c.tolist())])
    assert float(np.mean(p < 0.05)) <= 0.07
    if n == 100:
        assert float(np.mean(p < 0.05)) >= 0.02  # exact, so somewhat conservative, but not blind


def test_permutation_finds_a_real_effect_at_ten_pairs() -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    ref = rng.beta(0.5, 2.0, size=(DRAWS, 10))
    p = sign_flip_pvalues(ref + 0.3 - ref * 0.3 - ref)  # original = ref + 0.3 (1 - ref): always higher
    assert float(np.mean(p < 0.05)) == 1.0 and float(p.max()) == 1 / 1024


# ---- one minimum-sample rule ------------------------------------------------------------------------
@pytest.mark.parametrize("n, reason", [(0, TOO_FEW_PAIRS), (9, TOO_FEW_PAIRS), (10, ""), (500, "")])
def test_min_pairs_rule(n: int, reason: str) -> None:
    assert MIN_PAIRS == 10 and TOO_FEW_PAIRS == "too few pairs for a verdict (n < 10)"
    assert min_pairs_reason(n) == reason


def _ref(i: str, orig: str | None) -> Item:
    return Item(id=i, question="q", answer="1", original_id=orig)


def test_pair_items_matches_and_counts_unpaired() -> None:
    p = pair_items(["a", "b", "c"], [_ref("c-ref", "c"), _ref("a-ref", "a")])
    assert p.pairs == (ItemPair("a", "a-ref"), ItemPair("c", "c-ref"))
    assert p.unpaired_original == ("b",)


@pytest.mark.parametrize("refs, message", [
    ([_ref("x", "a"), _ref("y", "a")], "'a' is claimed by reference items 'x' and 'y'"),
    ([_ref("x", "zzz")], "names original_id 'zzz', which is not in the original set"),
    ([_ref("x", None)], "has no original_id"),
])
def test_pair_items_mismatch(refs: list[Item], message: str) -> None:
    with pytest.raises(DataError, match=message.replace("(", r"\(")):
        pair_items(["a", "b"], refs)


def test_pair_items_duplicate_original() -> None:
    with pytest.raises(DataError, match="duplicate original id 'a'"):
        pair_items(["a", "a"], [])


@pytest.mark.parametrize("pos, neg, auc", [
    ([3, 4, 5], [0, 1, 2], 1.0),
    ([0, 1, 2], [3, 4, 5], 0.0),
    ([1, 1], [1, 1], 0.5),
    ([1, 2, 3], [0, 1, 2], 7 / 9),
    ([0.5], [0.1, 0.5, 0.9], 0.5),
])
def test_auroc_golden(pos: list[float], neg: list[float], auc: float) -> None:
    assert auroc(pos, neg) == pytest.approx(auc)


@pytest.mark.parametrize("pos, neg, fpr, tpr", [
    ([3, 4, 5], [0, 1, 2], 0.05, 1.0),
    ([1, 2, 3], [0, 1, 2], 0.05, 1 / 3),
    ([1, 2, 3], [0, 1, 2], 0.34, 2 / 3),
    # a tie block of negatives at the top is never split: nothing passes at 5% FPR
    ([5, 5, 1], [5, 0, 0, 0], 0.05, 0.0),
    ([5, 5, 1], [5] + [2] * 19, 0.05, 2 / 3),
])
def test_tpr_at_fpr_golden(pos: list[float], neg: list[float], fpr: float, tpr: float) -> None:
    assert tpr_at_fpr(pos, neg, fpr) == pytest.approx(tpr)


def test_roc_curve_and_empty_sides() -> None:
    c = roc_curve([1, 2], [0])
    assert c.fpr[0] == 0.0 and c.tpr[-1] == 1.0 and c.fpr[-1] == 1.0
    assert math.isnan(auroc([], [1])) and math.isnan(tpr_at_fpr([1], []))


def test_import_is_light() -> None:
    import subprocess
    import sys

    code = ("import zcp_core.stats, sys; print([m for m in ('numpy', 'scipy', 'pandas', 'torch') "
            "if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ---- evidence beside C: bounds that agree with the test, one ceiling ---------------------------------
@pytest.mark.parametrize("b, c, n", [(27, 1, 80), (0, 1, 80), (5, 0, 10), (3, 3, 20), (0, 0, 12), (12, 4, 40)])
def test_mcnemar_bounds_match_the_exact_test(b: int, c: int, n: int) -> None:
    from scipy.stats import binomtest

    orig = [True] * b + [False] * c + [True] * (n - b - c)
    ref = [False] * b + [True] * c + [True] * (n - b - c)
    r = mcnemar_test(orig, ref, metric="acc")
    assert r.ci_low <= r.mean_diff <= r.ci_high and r.ci_low <= r.effect_lower <= r.mean_diff
    # the one-sided lower bound is above 0 exactly when the one-sided test rejects at 5%
    assert (r.effect_lower > 0) == (r.p < 0.05)
    if b + c:
        pi_low = binomtest(b, b + c, alternative="greater").proportion_ci(0.95).low
        assert r.effect_lower == pytest.approx((b + c) / n * (2 * pi_low - 1))
        mean = (b - c) / n
        sd = math.sqrt(((b + c) - n * mean**2) / (n - 1))
        assert r.effect_size == pytest.approx(mean / sd if sd else 0.0)


def test_permutation_lower_bound_matches_the_test_on_random_data() -> None:
    import numpy as np

    rng = np.random.default_rng(5)
    for k in range(12):
        d = rng.normal(0.15, 1.0, size=40)
        r = paired_permutation_test(d.tolist(), [0.0] * 40, n_resamples=2000, seed=k)
        assert r.ci_low <= r.mean_diff <= r.ci_high
        if abs(r.p - 0.05) > 0.005:  # away from the edge, where Monte Carlo noise decides
            assert (r.effect_lower > 0) == (r.p < 0.05), (r.p, r.effect_lower)
        if abs(r.p - 0.025) > 0.005:
            assert (r.ci_low > 0) == (r.p < 0.025), (r.p, r.ci_low)


def test_bootstrap_basic_bounds_hold_the_mean() -> None:
    orig = [0.9, 0.8, 0.7, 0.95, 0.6, 0.85, 0.75, 0.5, 0.65, 0.9, 0.7, 0.8]
    ref = [0.5, 0.7, 0.75, 0.6, 0.55, 0.5, 0.8, 0.45, 0.4, 0.7, 0.6, 0.5]
    r = paired_bootstrap_test(orig, ref, n_resamples=4000)
    assert r.ci_low <= r.mean_diff <= r.ci_high and r.ci_low <= r.effect_lower <= r.mean_diff
    assert (r.effect_lower > 0) == (r.p < 0.05) and r.resamples == 4000


@pytest.mark.parametrize("n", [10, 13, 16])
def test_exact_permutation_ceiling(n: int) -> None:
    """The exact test's smallest p is 2**-n: above C_CAP only from 16 pairs, and then shown as the bound."""
    r = paired_permutation_test([1.0 + 0.1 * i for i in range(n)], [0.0] * n)
    assert r.p == pytest.approx(2.0**-n) and r.resamples == 2**n
    raw = confidence_from_p(2.0**-n)
    assert r.bound == (raw > C_CAP) and r.confidence == pytest.approx(min(raw, C_CAP))
    assert r.bound == (n == 16)


def test_monte_carlo_floor_is_redrawn_only_at_the_floor() -> None:
    import numpy as np

    from zcp_core.stats import sign_flip_counts

    n = 40
    rng = np.random.default_rng(3)
    rows = np.vstack([np.full(n, 1.0) + 0.01 * np.arange(n), rng.normal(0.0, 1.0, size=n)])
    p, totals = sign_flip_counts(rows, 2000, seed=1)
    assert totals.tolist() == [MC_FLOOR_RESAMPLES, 2000]
    assert p[0] == pytest.approx(1 / (MC_FLOOR_RESAMPLES + 1)) and confidence_from_p(p[0]) > C_CAP
    # a row's p does not depend on the other rows, floor redraw included
    assert float(sign_flip_pvalues(rows[0], 2000, seed=1)) == p[0]
    assert float(sign_flip_pvalues(rows[1], 2000, seed=1)) == p[1]
