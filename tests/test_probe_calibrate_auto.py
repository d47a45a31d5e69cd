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


def card(diff: float | None, ci: tuple[float, float] | None = None, too_few: bool = False) -> dict:
    return {"neutral_prior_diff": diff, "neutral_prior_ci90": ci, "neutral_prior_model": "SmolLM2-135M-Instruct",
            "too_few_pairs": too_few}


PS = ("acc", "p_first", "p_all")


# mode, metrics, twins' method, card, on, basis
@pytest.mark.parametrize("mode, metrics, method, crd, on, basis", [
    ("on", PS, "numeric-perturbation-v7", None, True, "asked"),
    ("off", PS, "template-v1", card(0.3), False, "declined"),
    ("off", ("p_all", "p_all_cal"), "numeric-perturbation-v7", None, True, "asked"),  # named in --metrics
    ("auto", ("acc", "p_all_cal"), "numeric-perturbation-v7", None, True, "asked"),
    ("auto", ("acc",), "template-v1", card(0.3), False, "no_logit_metric"),
    # MATH-500's template card: the point estimate is beyond the band though its interval holds 0
    ("auto", PS, "numeric-perturbation-v7", card(0.1047, (-0.0329, 0.2422)), True, "card_outside_band"),
    ("auto", PS, "numeric-perturbation-v7", card(-0.08, (-0.12, -0.04)), True, "card_outside_band"),  # toward clean
    # GSM8K under --method auto: in the band, but its interval is not, so the template twins decide
    ("auto", PS, "template-v1", card(0.0365, (-0.0135, 0.0864)), True, "template_twins"),
    ("auto", PS, "template-v1", card(0.01, (-0.02, 0.04)), False, "card_in_band"),  # balance shown: off
    ("auto", PS, "template-v1", card(0.0, (-PRIOR_BAND, PRIOR_BAND)), False, "card_in_band"),  # the edge is in it
    # GSM8K numeric twins: in the band, interval not; the numeric method's shipped card decides
    ("auto", PS, "numeric-perturbation-v7", card(0.028, (-0.0249, 0.0809)), False, "numeric_twins"),
    ("auto", PS, "numeric-perturbation-v7", card(0.3, (0.2, 0.4), too_few=True), False, "numeric_twins"),  # noisy
    ("auto", PS, "template-v1", None, True, "template_twins"),
    ("auto", PS, "numeric-perturbation-v5", None, False, "numeric_twins"),
    ("auto", ("p_all",), "numeric-perturbation-v7", card(None), False, "numeric_twins"),  # a card with no prior
    ("auto", PS, "llm-isomorphic-v1", None, False, "unknown_balance"),
    ("auto", PS, None, None, False, "unknown_balance"),
])
def test_choose_calibration_golden(mode, metrics, method, crd, on, basis):
    got = choose_calibration(mode, metrics, [twin(method)], crd)
    assert (got.on, got.basis) == (on, basis)
    assert got.as_dict() == {"mode": mode, "on": on, "basis": basis,
                             "neutral_prior_diff": got.neutral_prior_diff, "prior_model": got.prior_model}
    assert (got.neutral_prior_diff is not None) == basis.startswith("card_")


def test_a_verification_that_is_not_a_record_is_read_as_unknown():
    it = Item(id="a-ref", question="q", answer="1", original_id="a", metadata={"verification": "human-checked"})
    assert choose_calibration("auto", PS, [it]).basis == "unknown_balance"


def test_numeric_method_read_from_the_verification_record():
    assert choose_calibration("auto", PS, [twin("numeric-perturbation-v7", "verification")]).basis == "numeric_twins"
    # one template twin among numeric ones (`--method auto`) is enough without a card
    mixed = [twin("numeric-perturbation-v7"), twin("template-v1")]
    assert choose_calibration("auto", PS, mixed).basis == "template_twins"


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="--calibrate must be one of auto, on, off"):
        choose_calibration("yes", PS, [])


CAL_HEADLINE = {"metric": "p_all_cal"}


@pytest.mark.parametrize("summary, needle", [
    ({"calibration": {"basis": "card_outside_band", "neutral_prior_diff": 0.1047,
                      "prior_model": "SmolLM2-135M-Instruct"}, "headline": CAL_HEADLINE},
     "0.105 nats a priori less likely than the originals' under SmolLM2-135M-Instruct, beyond the 0.050-nat band; "
     "raw P_first and P_all lean toward 'contaminated' on a clean model, so the verdict reads calibrated P_all."),
    ({"calibration": {"basis": "card_outside_band", "neutral_prior_diff": -0.08, "prior_model": "m"},
      "headline": CAL_HEADLINE},
     "a priori more likely than the originals' under m, beyond the 0.050-nat band; raw P_first and P_all lean "
     "toward 'clean'"),
    ({"calibration": {"basis": "template_twins"}, "headline": CAL_HEADLINE},
     "template twins' answers are a priori less likely"),
    # no calibrated verdict (e.g. a prompt-mode backend without logprobs): the sentence says what the verdict reads
    ({"calibration": {"basis": "template_twins"}, "headline": {"metric": "acc"}},
     "but calibrated P_all has no verdict in this run, so the verdict reads accuracy"),
    ({"calibration": {"basis": "template_twins"}, "headline": CAL_HEADLINE, "original_arm": "twin 1"},
     "here a twin stands as the original, so both arms share the twins' a-priori balance"),
    ({"calibration": {"basis": "unknown_balance"}},
     "`--calibrate on` reads P_first and P_all net of each answer's own prior"),
])
def test_calibration_sentence_golden(summary, needle):
    assert needle in calibration_sentence(summary)


@pytest.mark.parametrize("basis", ["asked", "declined", "card_in_band", "numeric_twins", "no_logit_metric"])
def test_no_sentence_where_nothing_was_switched(basis):
    assert calibration_sentence({"calibration": {"basis": basis, "neutral_prior_diff": 0.01},
                                 "headline": CAL_HEADLINE}) == ""


def test_reference_card_read_from_the_folder_or_its_reference_file(tmp_path):
    """The same twins get the same decision whether the folder or its reference.jsonl is passed."""
    import pandas as pd

    from zcp_core.cli.probe import _reference_card
    from zcp_core.runs import RunSpec, write_run

    crd = card(0.1047, [-0.0329, 0.2422])  # as JSON keeps it
    ref = write_run(tmp_path / "ref", RunSpec(kind="reference", config={}, command="zcp reference build"),
                    pd.DataFrame({"id": ["a"]}), {"twin_card": crd})
    (ref / "reference.jsonl").write_text("")
    other = tmp_path / "twins.jsonl"
    other.write_text("")
    assert _reference_card(str(ref)) == crd
    assert _reference_card(str(ref / "reference.jsonl")) == crd
    assert _reference_card(str(other)) is None and _reference_card(None) is None


@pytest.mark.heavy
def test_cli_switches_calibration_on_for_math500_template_twins(tmp_path, capsys):
    """The user's command with no flag: MATH-500 twins built from the shipped templates, calibrated P_all leads
    the verdict and the flags; an explicit --flag-metric is kept."""
    from zcp_core.cli.main import main
    from zcp_core.probe.report import report
    from zcp_core.report import metric_name
    from zcp_core.runs import load_run

    base = ["probe", "--model", "smollm2", "--dataset", str(ROOT / "data/math500/test.jsonl"), "--limit", "20",
            "--twins", "2", "--metrics", "p_first,p_all", "--max-new-tokens", "1", "--n-resamples", "200"]
    out = tmp_path / "p"
    assert main([*base, "--out", str(out)]) == 0
    assert "calibration on (--calibrate auto: template twins)" in capsys.readouterr().err
    s = load_run(out).summary
    assert s["calibration"] == {"mode": "auto", "on": True, "basis": "template_twins", "neutral_prior_diff": None,
                                "prior_model": None}
    assert s["metrics"]["p_all_cal"]["n"] >= 1
    assert s["headline"]["metric"] == "p_all_cal"
    assert s["flags"]["metric"] == "p_all_cal" and s["flags"]["controlled"]  # items flagged on calibrated P_all
    rep = report(out)
    assert rep.headline.subject == metric_name("p_all_cal")
    assert any("template twins' answers are a priori less likely" in n for n in rep.notes)
    kept = tmp_path / "q"
    assert main([*base, "--flag-metric", "p_all", "--out", str(kept)]) == 0
    assert load_run(kept).summary["flags"]["metric"] == "p_all"


def test_cli_checks_arguments_before_loading_data(tmp_path, capsys):
    """--calibrate on with no P metric fails before the dataset is read (its error, not the missing file's)."""
    from zcp_core.cli.main import main

    assert main(["probe", "--model", "smollm2", "--dataset", str(tmp_path / "absent.jsonl"), "--metrics", "acc",
                 "--calibrate", "on", "--out", str(tmp_path / "p")]) != 0
    err = capsys.readouterr().err
    assert "--calibrate calibrates p_first and p_all" in err and "absent.jsonl" not in err
