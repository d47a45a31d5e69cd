"""The estimate of contaminated items a release leaves in: Storey's null share, over the kept items."""

from __future__ import annotations

import math

import numpy as np
import pytest

from zcp_core.probe.leftover import leftover_text, storey_leftover


def test_storey_golden() -> None:
    p = [0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.6, 0.8, 0.9]
    rep = [True, True] + [False] * 8
    est = storey_leftover(p, rep)
    assert est is not None and est.method == "storey" and est.lam == 0.5
    # 3 of 10 p above 0.5: pi0 = 3 / (0.5 * 10) = 0.6, so 4 contaminated; 2 of them replaced, 2 left
    assert est.tested == 10 and est.pi0 == pytest.approx(0.6) and est.contaminated == pytest.approx(4.0)
    assert est.kept == 8 and est.left == pytest.approx(2.0)
    lo, hi = est.left_ci
    assert 0.0 <= lo <= est.left <= hi
    assert est == storey_leftover(p, rep)  # seeded: the same run gives the same interval
    # pi0 is capped at 1, and the count left is never negative
    many = storey_leftover([0.01] * 4 + [0.2] * 2 + [0.6, 0.7, 0.8, 0.9], [True] * 4 + [False] * 6)
    assert many is not None and many.pi0 == pytest.approx(0.8) and many.contaminated == pytest.approx(2.0)
    assert many.left == 0.0  # max(0, 2 - 4 replaced)
    null = storey_leftover([0.6, 0.7, 0.8, 0.9], [False] * 4)
    assert null is not None and null.pi0 == 1.0 and null.left == 0.0 and null.left_ci == (0.0, 0.0)


def test_items_without_a_p_are_not_counted_and_replacing_everything_leaves_none() -> None:
    est = storey_leftover([math.nan, 0.01, 0.02, 0.9, math.nan], [True, False, False, False, False])
    assert est is not None and est.tested == 3 and est.kept == 3
    # 1 of 3 above 0.5: m0 = 2, so 1 contaminated, all kept
    assert est.contaminated == pytest.approx(1.0) and est.left == pytest.approx(1.0)
    assert storey_leftover([math.nan, math.nan], [False, False]) is None
    covered = storey_leftover([0.01, 0.3, 0.7], [True, True, True])
    assert covered is not None and covered.kept == 0 and covered.left == 0.0


def test_bootstrap_interval_covers_a_simulated_truth() -> None:
    covered = 0
    for seed in range(20):  # 100 contaminated items (p near 0) among 500, no item replaced
        rng = np.random.default_rng(seed)
        p = np.concatenate([rng.uniform(size=400), rng.beta(0.05, 20, size=100)])
        est = storey_leftover(p, np.zeros(500, bool))
        assert est is not None
        covered += est.left_ci[0] <= 100 <= est.left_ci[1]
    assert covered >= 16  # a 95% interval: 19 of 20 expected; 16 or fewer happens with probability < 2%
    with pytest.raises(ValueError, match="lambda"):
        storey_leftover(p, np.zeros(500, bool), lam=1.0)


def test_the_card_says_it_is_an_estimate_and_what_is_not_counted() -> None:
    est = storey_leftover([0.01, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.6, 0.8, 0.9], [True, True] + [False] * 8)
    text = leftover_text(est, True)
    assert "Estimated contaminated items left in the release: 2.0" in text and "Storey" in text
    assert "estimate" in text and "items without a p are not counted" in text
    assert "pi0 at lambda = 0.5: 0.600" in text
    assert leftover_text(None, False) == "No estimate of the contaminated items left: the acc rule gives no per-item p."
