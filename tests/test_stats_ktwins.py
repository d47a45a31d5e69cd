"""The benchmark test at K twins (role permutation) and the conformal per-item p: golden values against
brute-force enumeration, equality with the K = 1 tests, and size on skewed and heavy-tailed nulls."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from zcp_core.stats import conformal_item_pvalues, log_binom_sf, mcnemar_test, role_permutation_test, sign_flip_test
from zcp_core.stats import ktwins as kt


def _brute_p(original: list[float], twins: list[list[float]]) -> float:
    """Share of all role assignments whose statistic reaches the observed one (the definition)."""
    vals = [[((len(t) + 1) * x - (o + sum(t))) / len(t) for x in [o, *t]] for o, t in zip(original, twins)]
    obs = sum(v[0] for v in vals)
    hits = total = 0
    for combo in itertools.product(*vals):
        total += 1
        hits += sum(combo) >= obs - 1e-9
    return hits / total


def test_binary_lattice_matches_enumeration_with_mixed_twin_counts() -> None:
    rng = np.random.default_rng(35)
    for _ in range(25):
        ks = rng.integers(1, 5, size=7).tolist()
        o = rng.integers(0, 2, size=7).astype(float).tolist()
        tw = [rng.integers(0, 2, size=k).astype(float).tolist() for k in ks]
        assert math.exp(kt.lattice_log_p(o, tw)) == pytest.approx(_brute_p(o, tw), abs=1e-12)


def test_continuous_enumeration_matches_the_definition() -> None:
    rng = np.random.default_rng(2)
    for _ in range(10):
        ks = rng.integers(1, 5, size=6).tolist()
        o = rng.beta(5, 0.5, 6).tolist()
        tw = [rng.beta(5, 0.5, k).tolist() for k in ks]
        t = role_permutation_test(o, tw, "p_all")
        assert t.test == "role_permutation" and t.p == pytest.approx(_brute_p(o, tw), abs=1e-12)


@pytest.mark.parametrize(("b", "c", "ties"), [(7, 2, 5), (0, 3, 4), (12, 0, 0), (5, 5, 10), (40, 9, 100)])
def test_at_one_twin_the_binary_test_is_the_exact_mcnemar_test(b: int, c: int, ties: int) -> None:
    o = [1.0] * b + [0.0] * c + [1.0] * (ties // 2) + [0.0] * (ties - ties // 2)
    r = [0.0] * b + [1.0] * c + [1.0] * (ties // 2) + [0.0] * (ties - ties // 2)
    expected = log_binom_sf(b, b + c) if b + c else 0.0
    assert kt.lattice_log_p(o, [[x] for x in r]) == pytest.approx(expected, abs=1e-12)
    assert role_permutation_test(o, [[x] for x in r], "acc", "binary", n_resamples=500).p == pytest.approx(
        mcnemar_test([bool(x) for x in o], [bool(x) for x in r]).p, rel=1e-9)


def test_at_one_twin_the_continuous_test_is_the_sign_flip_test_with_its_interval() -> None:
    rng = np.random.default_rng(1)
    o, r = rng.random(12), rng.random(12)  # 2**12 assignments: both tests enumerate
    a, b = sign_flip_test(o - r), role_permutation_test(o.tolist(), [[x] for x in r])
    assert b.p == pytest.approx(a.p, abs=1e-15) and b.effect == pytest.approx(a.effect)
    # the sign-flip interval is found by a grid search; the role test reads its bound off the draws exactly
    assert b.ci_low == pytest.approx(a.ci_low, abs=1e-4) and b.ci_high == pytest.approx(a.ci_high, abs=1e-4)
    assert b.effect_lower == pytest.approx(a.effect_lower, abs=1e-4)


def test_the_lower_bound_inverts_the_test() -> None:
    rng = np.random.default_rng(4)
    for n, k, shift in ((30, 4, 0.05), (60, 2, 0.0), (200, 8, 0.02)):
        x = rng.beta(2, 2, (n, k + 1))
        x[:, 0] += shift
        t = role_permutation_test(x[:, 0].tolist(), x[:, 1:].tolist(), "p_all", n_resamples=2000)
        assert (t.p < 0.05) == (t.effect_lower > 0)
        assert t.ci_low <= t.effect_lower <= t.mean_diff <= t.ci_high


def test_a_large_effect_is_found_and_reads_memorised() -> None:
    rng = np.random.default_rng(5)
    x = rng.beta(2, 5, (80, 5))
    x[:, 0] = np.minimum(x[:, 0] + 0.5, 1.0)
    t = role_permutation_test(x[:, 0].tolist(), x[:, 1:].tolist(), "p_all")
    assert t.p < 1e-4 and t.bound and t.direction == "original>reference" and t.resamples >= 30_000
    acc = (x > 0.5).astype(float)
    b = role_permutation_test(acc[:, 0].tolist(), acc[:, 1:].tolist(), "acc", "binary", n_resamples=500)
    assert b.test == "exact_role_permutation" and b.p < 1e-6


def test_lattice_p_past_direct_convolution_is_an_upper_bound(monkeypatch) -> None:
    o = [1.0] * 90 + [0.0] * 10
    tw = [[0.0]] * 60 + [[0.0, 1.0]] * 30 + [[0.0, 0.0]] * 10
    exact = math.exp(kt.lattice_log_p(o, tw))
    assert exact < 1e-20
    monkeypatch.setattr(kt, "DIRECT_MAX", 0)  # force the FFT path
    assert math.exp(kt.lattice_log_p(o, tw)) == pytest.approx(kt.FFT_P_FLOOR)  # a bound, never smaller


def _rejection(sampler, k: int, n: int, sims: int, seed: int) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    hits = np.zeros(2)
    for _ in range(sims):
        x = sampler(rng, (n, k + 1))
        null = kt.role_null(x[:, 0].tolist(), x[:, 1:].tolist())
        p = kt.role_p(null, kt.role_draws(null, 999, 0, extend_floor=False))
        hits += [p <= 0.05, p <= 0.01]
    return float(hits[0] / sims), float(hits[1] / sims)


@pytest.mark.parametrize(("name", "sampler"), [
    ("beta(5, 0.5)", lambda rng, shape: rng.beta(5, 0.5, shape)),
    ("t3 on log P", lambda rng, shape: np.exp(-2 + 0.5 * rng.standard_t(3, shape))),
])
@pytest.mark.parametrize("k", [2, 4])
def test_size_holds_on_skewed_and_heavy_tailed_nulls_at_k_twins(name: str, sampler, k: int) -> None:
    """The fast version of benchmarks/probe_test_size.py: 600 null runs of 80 items. The old sign-flip test
    read 0.065 to 0.078 at nominal 0.05 on Beta(5, 0.5) at K = 4; the binomial 99.9% bound at 600 runs
    lies near 0.077, so the check is that the rate stays inside it."""
    at05, at01 = _rejection(sampler, k, 80, 600, seed=10 + k)
    assert at05 <= 0.077 and at01 <= 0.024, (name, k, at05, at01)


def test_binary_size_at_high_accuracy_and_k_twins() -> None:
    rng = np.random.default_rng(9)
    hits = np.zeros(2)
    for _ in range(2000):
        x = (rng.random((80, 5)) < 0.9).astype(float)
        p = math.exp(kt.lattice_log_p(x[:, 0].tolist(), x[:, 1:].tolist()))
        hits += [p <= 0.05, p <= 0.01]
    assert hits[0] / 2000 <= 0.06 and hits[1] / 2000 <= 0.015


def _null_sets(m: int, k: int, rng, noise) -> tuple[np.ndarray, np.ndarray]:
    mu, sigma = rng.normal(-3, 1.5, m), rng.gamma(4, 0.15, m)
    z = mu[:, None] + sigma[:, None] * noise(rng, (m, k + 2))
    return z[:, 0], z[:, 1:]  # original, then K + 1 twins (the last is the spare)


@pytest.mark.parametrize("noise", [lambda rng, s: rng.standard_normal(s), lambda rng, s: rng.standard_t(3, s)])
def test_conformal_item_p_is_calibrated_in_the_tail(noise) -> None:
    """2,000 null items at K = 4: the share below 0.05 and below 0.01 stay near nominal, with normal and t3 noise,
    and the smallest p stays near its floor's order rather than far below it."""
    rng = np.random.default_rng(3)
    o, tw = _null_sets(2000, 4, rng, noise)
    res = conformal_item_pvalues(o.tolist(), tw[:, :-1].tolist(), tw.tolist())
    p = res.p
    assert 0.035 <= float((p < 0.05).mean()) <= 0.065 and float((p < 0.01).mean()) <= 0.017
    assert res.floor == pytest.approx(1 / (1999 * 5 + 1)) and float(p.min()) >= res.floor
    assert res.calibration_size.tolist() == [1999 * 5] * 2000


def test_conformal_p_golden_and_own_twins_left_out() -> None:
    # three items, one comparator each (two twins: comparator and spare); tau^2 from the spreading twin sets
    o = [5.0, 0.0, 0.0]
    sets = [[0.0, 1.0], [0.0, 2.0], [1.0, 1.0]]
    res = conformal_item_pvalues(o, [s[:1] for s in sets], sets)
    tau2 = float(np.median([0.5, 2.0]))  # the third set does not spread and stays out of tau^2
    assert res.tau2 == pytest.approx(tau2)
    # item 0: score 5/sqrt(tau2); calibration = items 1 and 2, each twin against the other: -2, 2, 0, 0 (/sqrt)
    assert res.score[0] == pytest.approx(5 / math.sqrt(tau2)) and res.p[0] == pytest.approx(1 / 5)
    assert res.calibration_size.tolist() == [4, 4, 4] and res.rank_p.tolist() == [0.5, 1.0, 1.0]
    assert res.p[1] == pytest.approx((1 + 3) / 5)  # items 0 and 2 give -1, 1, 0, 0 (/sqrt): three reach 0


def test_fewer_comparators_are_calibrated_on_as_many() -> None:
    rng = np.random.default_rng(1)
    o, tw = _null_sets(300, 4, rng, lambda r, s: r.standard_normal(s))
    sets = [row.tolist() for row in tw]
    sets[0] = sets[0][:3]  # item 0 has 3 twins: 2 comparators and a spare
    res = conformal_item_pvalues(o.tolist(), [s[:-1] for s in sets], sets)
    assert res.comparators[0] == 2 and res.calibration_size[0] == 299 * 3
    assert res.comparators[1] == 4 and res.calibration_size[1] == 298 * 5  # item 0 has too few twins for K = 4


def test_at_one_twin_a_bundled_run_gets_todays_tests_and_p() -> None:
    """The bundled contaminated run read at K = 1 (twin 1 only): McNemar and the sign-flip test, same p."""
    from pathlib import Path

    import pandas as pd

    from zcp_core.probe.analysis import graded, item_gaps, metric_tests

    run = Path(__file__).resolve().parent.parent / "data" / "examples" / "probe-lab-direct"
    r = pd.read_parquet(run / "records.parquet")
    one = r[(r["arm"] == "original") | (r["twin"].fillna(1) == 1)]
    tests = metric_tests(one, ("p_first", "p_all"), n_resamples=2000)
    g = item_gaps(graded(one), "acc").dropna(subset=["suspect", "reference"])
    acc = mcnemar_test(g["suspect"].astype(bool).tolist(), g["reference"].astype(bool).tolist())
    for m in ("p_first", "p_all"):
        d = item_gaps(one, m)["gap"].dropna().to_numpy()
        t = tests[m]
        assert not isinstance(t, str) and t.test == "permutation" and t.p == sign_flip_test(d, n_resamples=2000).p
    # and the role test, run at K = 1 directly, is the same test: the exact McNemar p to rounding
    assert role_permutation_test(g["suspect"].astype(float).tolist(), [[x] for x in g["reference"].astype(float)],
                                 "acc", "binary", n_resamples=500).p == pytest.approx(acc.p, rel=1e-9)
