"""``--calibrate auto``: where the twins' answers are a priori less likely, the probe reads calibrated P metrics.

Why: on MATH-500 template twins the untouched model's raw P_all null rejects (Holm-adjusted p 0.032,
``benchmarks/results/probe_math500_null.md``) while the calibrated forms do not. A golden table of the choice, the
report's sentence, and the CLI end to end with the real embedded model on MATH-500's shipped templates.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from zcp_core.probe.calibrate import PRIOR_BAND, choose_calibration
from zcp_core.probe.report import calibration_sentence
from zcp_core.schema import Item

ROOT = Path(__file__).resolve().parent.parent


def twin(method: str | None, where: str = "metadata") -> Item:
    meta = {} if method is None else {"method": method} if where == "metadata" else {"verification": {"method": method}}
    return Item(id="a-ref", question="q", answer="1", original_id="a", metadata=meta)


def card(diff: float | None, too_few: bool = False) -> dict:
    return {"neutral_prior_diff": diff, "neutral_prior_model": "SmolLM2-135M-Instruct", "too_few_pairs": too_few}


PS = ("acc", "p_first", "p_all")


# mode, metrics, twins' method, card, on, basis
@pytest.mark.parametrize("mode, metrics, method, crd, on, basis", [
    ("on", PS, "numeric-perturbation-v7", None, True, "asked"),
    ("off", PS, "template-v1", card(0.3), False, "declined"),
    ("auto", ("acc",), "template-v1", card(0.3), False, "no_logit_metric"),
    ("auto", PS, "numeric-perturbation-v7", card(0.1047), True, "card_outside_band"),
    ("auto", PS, "numeric-perturbation-v7", card(-0.08), True, "card_outside_band"),   # the other way: toward clean
    ("auto", PS, "template-v1", card(0.0365), False, "card_in_band"),                  # its own card decides
    ("auto", PS, "template-v1", card(PRIOR_BAND), False, "card_in_band"),              # the band's edge is in it
    ("auto", PS, "numeric-perturbation-v7", card(0.3, too_few=True), False, "numeric_twins"),  # noisy card ignored
    ("auto", PS, "template-v1", None, True, "template_twins"),
    ("auto", PS, "numeric-perturbation-v5", None, False, "numeric_twins"),
    ("auto", ("p_all",), "numeric-perturbation-v7", card(None), False, "numeric_twins"),  # a card with no prior
    ("auto", PS, "llm-isomorphic-v1", None, False, "unknown_balance"),
    ("auto", PS, None, None, False, "unknown_balance"),
])
def test_choose_calibration_golden(mode, metrics, method, crd, on, basis):
    got = choose_calibration(mode, metrics, [twin(method)], crd)
    assert (got.on, got.basis) == (on, basis)
    assert got.as_dict()["mode"] == mode


def test_numeric_method_read_from_the_verification_record():
    assert choose_calibration("auto", PS, [twin("numeric-perturbation-v7", "verification")]).basis == "numeric_twins"
    # one template twin among numeric ones (`--method auto`) is enough without a card
    mixed = [twin("numeric-perturbation-v7"), twin("template-v1")]
    assert choose_calibration("auto", PS, mixed).basis == "template_twins"


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="--calibrate must be one of auto, on, off"):
        choose_calibration("yes", PS, [])


@pytest.mark.parametrize("cal, needle", [
    ({"basis": "card_outside_band", "neutral_prior_diff": 0.1047, "prior_model": "SmolLM2-135M-Instruct"},
     "0.105 nats a priori less likely than the originals' under SmolLM2-135M-Instruct, beyond the 0.050-nat band; "
     "raw P_first and P_all lean toward 'contaminated'"),
    ({"basis": "card_outside_band", "neutral_prior_diff": -0.08, "prior_model": "m"},
     "a priori more likely than the originals' under m, beyond the 0.050-nat band; raw P_first and P_all lean "
     "toward 'clean'"),
    ({"basis": "template_twins"}, "template twins' answers are a priori less likely"),
    ({"basis": "unknown_balance"}, "`--calibrate on` reads P_first and P_all net of each answer's own prior"),
])
def test_calibration_sentence_golden(cal, needle):
    assert needle in calibration_sentence(cal)


@pytest.mark.parametrize("basis", ["asked", "declined", "card_in_band", "numeric_twins", "no_logit_metric"])
def test_no_sentence_where_nothing_was_switched(basis):
    assert calibration_sentence({"basis": basis, "neutral_prior_diff": 0.01}) == ""


def test_cli_switches_calibration_on_for_math500_template_twins(tmp_path, capsys):
    """The user's command with no flag: MATH-500 twins built from the shipped templates, calibrated P_all leads."""
    from zcp_core.cli.main import main
    from zcp_core.probe.report import report
    from zcp_core.report import metric_name
    from zcp_core.runs import load_run

    out = tmp_path / "p"
    assert main(["probe", "--model", "smollm2", "--dataset", str(ROOT / "data/math500/test.jsonl"), "--limit", "24",
                 "--twins", "1", "--metrics", "p_first,p_all", "--max-new-tokens", "1", "--n-resamples", "200",
                 "--out", str(out)]) == 0
    assert "calibration on (--calibrate auto: template twins)" in capsys.readouterr().err
    s = load_run(out).summary
    assert s["calibration"] == {"mode": "auto", "on": True, "basis": "template_twins", "neutral_prior_diff": None,
                                "prior_model": None}
    assert s["metrics"]["p_all_cal"]["n"] >= 1
    assert s["headline"]["metric"] == "p_all_cal"
    assert s["flags"]["metric"] == "p_all_cal"  # the items are flagged on the calibrated P_all too
    rep = report(out)
    assert rep.headline.subject == metric_name("p_all_cal")
    assert any("template twins' answers are a priori less likely" in n for n in rep.notes)
