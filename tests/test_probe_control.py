"""A control model (difference in differences): golden tables of the pure helpers and SmolLM2 as its own control."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from zcp_core.probe.control import (
    RELATIVE,
    control_gaps,
    did_confidence,
    format_did,
    strength_check,
)


def _records(acc_o, acc_r, p_o, p_r):
    rows = []
    for i, (ao, ar, po, pr) in enumerate(zip(acc_o, acc_r, p_o, p_r)):
        for arm, acc, p in (("original", ao, po), ("reference", ar, pr)):
            rows.append({"arm": arm, "id": f"q{i}" + ("-ref" if arm == "reference" else ""), "pair_id": f"q{i}",
                         "ratio": 0.0, "acc": bool(acc), "p_first": p, "p_all": p})
    return pd.DataFrame(rows)


def test_gaps_are_log_ratios_and_acc_differences():
    audited = _records([1, 1, 0], [0, 1, 0], [0.5, 0.2, 0.1], [0.1, 0.2, 0.4])
    control = _records([0, 1, 1], [0, 0, 0], [0.25, 0.2, 0.1], [0.25, 0.1, 0.1])
    g = control_gaps(audited, control, ("acc", "p_all")).set_index(["metric", "pair_id"])
    assert g.loc[("acc", "q0"), ["audited_gap", "control_gap", "difference"]].tolist() == [1.0, 0.0, 1.0]
    assert g.loc[("acc", "q2"), "difference"] == -1.0  # the control got the original right, not its twin
    assert g.loc[("p_all", "q0"), "audited_gap"] == pytest.approx(math.log(5.0))
    assert g.loc[("p_all", "q1"), "control_gap"] == pytest.approx(math.log(2.0))
    assert g.loc[("p_all", "q1"), "difference"] == pytest.approx(-math.log(2.0))
    assert "p_first" not in set(g.index.get_level_values("metric"))  # only the metrics asked for


def test_control_equal_to_the_audited_model_gives_exactly_zero():
    recs = _records([1] * 12, [0] * 12, [0.6 + 0.01 * i for i in range(12)], [0.1] * 12)
    did = did_confidence(control_gaps(recs, recs.copy(), ("acc", "p_first", "p_all")))
    for m in ("acc", "p_first", "p_all"):
        v = did["metrics"][m]
        assert v["effect"] == 0.0 and v["p"] == 1.0 and v["confidence"] == 0.5 and v["n"] == 12
        assert v["audited_gap"] == v["control_gap"] != 0
    assert did["headline"]["label"] == f"Contamination Confidence (p_all, {RELATIVE})"


def test_a_gap_the_control_lacks_is_found_and_one_it_shares_is_not():
    n = 20
    audited = _records([1] * n, [0] * n, [0.6] * n, [0.1] * n)
    clean = _records([0] * n, [0] * n, [0.1] * n, [0.1] * n)
    shared = did_confidence(control_gaps(audited, audited.copy(), ("p_all",)))["metrics"]["p_all"]
    found = did_confidence(control_gaps(audited, clean, ("acc", "p_all")))["metrics"]
    assert shared["confidence"] == 0.5
    assert found["p_all"]["bound"] and found["p_all"]["effect"] == pytest.approx(math.log(6.0))
    assert found["acc"]["effect"] == 1.0 and found["acc"]["confidence"] == 0.999
    lo, hi = found["acc"]["effect_ci"]
    assert lo <= 1.0 <= hi


def test_acc_difference_test_holds_its_size_for_exchangeable_models():
    import numpy as np

    from zcp_core.stats import sign_flip_pvalues

    rng = np.random.default_rng(11)
    n, draws = 60, 1000
    # both models: original and twin right 30% of the time, independently (no contamination anywhere)
    a_o, a_r, c_o, c_r = rng.random((4, draws, n)) < 0.3
    d = (a_o.astype(int) - a_r) - (c_o.astype(int) - c_r)
    p = sign_flip_pvalues(d.astype(float), 2000)
    assert float(np.mean(p < 0.05)) <= 0.07


def test_strength_warning_above_a_factor_of_two():
    ok = strength_check({"p_all": 0.08, "acc": 0.0}, {"p_all": 0.06, "acc": 0.02})
    assert ok["metric"] == "p_all" and ok["ratio"] == pytest.approx(0.08 / 0.06) and ok["warning"] == ""
    bad = strength_check({"p_all": 0.30}, {"p_all": 0.10})
    assert bad["ratio"] == pytest.approx(3.0) and "more than a factor of 2" in bad["warning"]


@pytest.mark.model
def test_probing_a_model_with_itself_as_control_gives_zero(smollm2, gsm8k_items, tmp_path, capsys):
    import argparse

    from zcp_core.cli.probe import confidence_cmd, register
    from zcp_core.probe import ProbeConfig, run_probe
    from zcp_core.probe.control import Control
    from zcp_core.reference import perturb_gsm8k

    twins = list(perturb_gsm8k(gsm8k_items[:4]).items)[:3]
    keep = {t.original_id for t in twins}
    original = [it for it in gsm8k_items[:4] if it.id in keep]
    res = run_probe(smollm2, original, twins, ProbeConfig(max_new_tokens=8, n_resamples=200), out=tmp_path / "run",
                    model_spec="smollm2", control=Control(smollm2, "smollm2"))
    did = res.summary["did"]
    for m in ("acc", "p_first", "p_all"):
        assert did["metrics"][m]["effect"] == 0.0 and did["metrics"][m]["n"] == 3
    assert (res.tables["did_gaps"]["difference"] == 0.0).all()
    means = res.summary["control"]["twin_means"]
    assert means["audited"] == means["control"] and res.summary["control"]["strength"]["warning"] == ""
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    assert confidence_cmd(parser.parse_args(["confidence", str(res.run_path)])) == 0
    text = capsys.readouterr().out
    assert RELATIVE in text and "Control model smollm2" in text
    assert RELATIVE in format_did(did, res.summary["control"])
