"""The lab's manipulation check (did the build take?) and the cot_acc detector's pieces; pure parts only.

The end-to-end runs (a smoke build evaluated, a smoke matrix) are in test_lab_build.py and test_lab_matrix.py.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from zcp_core.lab.took import (
    cot_acc_confidence,
    cot_final_answer,
    cot_requests,
    did_interval,
    took_row,
)
from zcp_core.schema import Item


def test_did_interval_on_the_issue_s_solution_build() -> None:
    # solution-default: lab answers 22/40 of C and 0/40 of U, the base 0/40 and 1/40 (the issue's measurement).
    c = [1.0] * 22 + [0.0] * 18
    u = [-1.0] + [0.0] * 39
    r = did_interval(c, u, seed=0)
    assert r.gain == pytest.approx(0.575) and (r.n_c, r.n_u) == (40, 40)
    assert r.ci[0] == pytest.approx(0.41, abs=0.03) and r.ci[1] == pytest.approx(0.74, abs=0.03)
    assert r.p == pytest.approx(1 / 10_001)  # no relabelling reaches the observed gain
    assert did_interval(c, u, seed=0) == r  # seeded


def test_did_interval_without_any_change_is_zero() -> None:
    r = did_interval([0.0] * 12, [0.0] * 12)
    assert r.gain == 0 and r.ci == (0.0, 0.0) and r.p == 1.0


def test_did_interval_empty_side_is_nan() -> None:
    r = did_interval([1.0, math.nan], [])
    assert math.isnan(r.gain) and math.isnan(r.ci[0]) and (r.n_c, r.n_u) == (1, 0)


def test_did_interval_holds_its_size_at_small_n() -> None:
    """No true gain, 10 items a side: the interval lies above 0 at most about 2.5% of the time (one side)."""
    rng = np.random.default_rng(3)
    above = covered = 0
    for s in range(200):
        c = rng.choice([-1.0, 0.0, 1.0], size=10, p=[0.15, 0.7, 0.15])
        u = rng.choice([-1.0, 0.0, 1.0], size=10, p=[0.15, 0.7, 0.15])
        r = did_interval(c, u, n_resamples=999, seed=s)
        above += r.ci[0] > 0
        covered += r.ci[0] <= 0 <= r.ci[1]
    assert above <= 10 and covered >= 180


@pytest.mark.parametrize(("text", "answer"), [
    ("Ann has 3+2=<<3+2=5>>5 pens.\n#### 5\nBob has 4 cats.", "5"),
    ("She pays 2 * 9 = 18 dollars.\nThe answer is 18.", "18"),
    ("So we get \\boxed{7} in the end.", "7"),
    ("I am not sure about this one.", None),
    ("####\n", None),
])
def test_cot_final_answer_golden(text: str, answer: str | None) -> None:
    assert cot_final_answer(text) == answer


def test_cot_requests_follow_the_trained_style() -> None:
    it = Item("gsm8k-test-1", "Ann has 3 pens and buys 2. How many pens?", "5")
    [raw] = cot_requests([it], "completion", 256)
    assert raw.prompt == it.question + "\n" and raw.messages is None and raw.params.max_new_tokens == 256
    assert raw.params.temperature == 0.0
    [chat] = cot_requests([it], "chat", 256)
    assert chat.prompt is None and chat.messages[-1].content == it.question and chat.thinking == "off"


def test_cot_acc_confidence_withholds_a_verdict_below_min_pairs() -> None:
    pairs = pd.DataFrame({"split": ["C"] * 12 + ["U"] * 3, "original": [True] * 12 + [False] * 3,
                          "twin": [False] * 12 + [False] * 3})
    out = cot_acc_confidence(pairs)
    assert out["C"][0] is not None and out["C"][0] > 0.99 and out["C"][1] == ""
    assert out["U"] == (None, "too few pairs for a verdict (n < 10)")


def test_the_took_row_of_a_kind_without_a_build() -> None:
    row = took_row("none", None)
    assert row["took"] is None and row["took_gain"] is None and row["reason"].startswith("no build")


def test_matrix_reading_and_figure_set_a_build_that_did_not_take_apart() -> None:
    from zcp_core.lab.report import matrix_reading
    from zcp_core.lab.viz import matrix_figure

    t = pd.DataFrame([
        {"kind": "solution", "detector": "min_k", "auroc": 0.5, "auroc_ci_fw": [0.3, 0.7], "auroc_ci": [0.35, 0.65],
         "took": False, "took_gain": 0.05},
        {"kind": "direct", "detector": "min_k", "auroc": 0.9, "auroc_ci_fw": [0.7, 1.0], "auroc_ci": [0.8, 1.0],
         "took": True, "took_gain": 0.5},
        {"kind": "none", "detector": "min_k", "auroc": 0.5, "auroc_ci_fw": [0.3, 0.7], "auroc_ci": [0.35, 0.65],
         "took": None, "took_gain": None},
    ])
    assert matrix_reading(t) == [
        "solution: the build did not take (full-CoT gain on C over U 0.050, CI not above 0): its row does not show "
        "whether a detector is blind.",
        "direct: caught by Min-K% probability (family-wise CI above 0.5).",
        "Untouched model: no detector separates C from U family-wise (as it should).",
    ]
    assert list(matrix_figure(t).data[0].y) == ["direct", "none", "solution (did not take)"]


def test_exact_gain_p_equals_enumeration_of_every_relabelling() -> None:
    import itertools
    from fractions import Fraction

    from zcp_core.lab.took import exact_gain_p

    c, u = [1, 1, 0, -1, 1], [0, 1, 0, 0, -1, 0]
    pool, n_c = c + u, len(c)
    obs = sum(c)
    splits = list(itertools.combinations(range(len(pool)), n_c))
    want = Fraction(sum(sum(pool[i] for i in s) >= obs for s in splits), len(splits))
    assert exact_gain_p(c, u) == want
    assert exact_gain_p([0.5, 1], [0, 0]) is None  # not integers: no exact count, the interval decides


def test_took_is_decided_at_the_stated_level_not_by_a_floating_bound() -> None:
    """The dose-12 case: a CI lower bound of about -2.6e-17 (a rounding error of 0) with one-sided p 0.032."""
    from zcp_core.lab.took import TOOK_LEVEL, did_interval, exact_gain_p, took_verdict

    c, u = [1] * 7 + [0] * 32 + [-1], [0] * 40
    ci_lo = did_interval(c, u).ci[0]
    assert abs(ci_lo) < 1e-15  # the floating bound says nothing either way
    took, p, how = took_verdict(c, u, fallback_p=0.0)
    assert float(TOOK_LEVEL) == 0.025 and how.startswith("exact")
    assert p == pytest.approx(0.0316897, abs=1e-6) and took is False
    c2 = [1] * 6 + [0] * 34  # one more item on the edge: p 0.0129 < 0.025, took
    assert exact_gain_p(c2, u) < TOOK_LEVEL and took_verdict(c2, u, 1.0)[0] is True
