"""``--calibrate auto``: template twins are read net of the neutral prior; other twins by the audited model's prior.

Why: on MATH-500 template twins the untouched model's raw P_all null fails at two twin seeds, while P_all net of
the neutral prior passes and catches both lab controls (``benchmarks/results/lab_math500.md``). A golden table of
the choice, the report's sentence, and the CLI end to end with the real embedded model on MATH-500's shipped
templates.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from zcp_core.probe.calibrate import PRIOR_BAND, choose_calibration, needs_prior
from zcp_core.probe.prior import MIN_PRIOR_PAIRS, NeutralPrior, PriorPart
from zcp_core.probe.report import calibration_sentence
from zcp_core.schema import Item

ROOT = Path(__file__).resolve().parent.parent


def twin(method: str | None, where: str = "metadata") -> Item:
    meta = {} if method is None else {"method": method} if where == "metadata" else {"verification": {"method": method}}
    return Item(id="a-ref", question="q", answer="1", original_id="a", metadata=meta)


def prior(diff: float | None, n: int = 200) -> NeutralPrior:
    part = PriorPart(n, diff, None if diff is None else (diff - 0.1, diff + 0.1))
    return NeutralPrior("SmolLM2-135M-Instruct", part, part, PriorPart(0, None, None))


PS = ("acc", "p_first", "p_all")


# mode, metrics, twins' method, the audited model's prior, on, basis
@pytest.mark.parametrize("mode, metrics, method, pri, on, basis", [
    ("on", PS, "numeric-perturbation-v7", None, True, "asked"),
    ("off", PS, "template-v1", prior(0.3), False, "declined"),
    ("off", ("p_all", "p_all_cal"), "numeric-perturbation-v7", None, True, "asked"),  # named in --metrics
    ("auto", ("acc", "p_all_cal"), "numeric-perturbation-v7", None, True, "asked"),
    ("auto", ("acc",), "template-v1", prior(0.3), False, "no_logit_metric"),
    # template twins: calibrated whatever one run's prior reads (decided on MATH-500), the prior shown beside it
    ("auto", PS, "template-v1", prior(0.1047), True, "template_twins"),
    ("auto", PS, "template-v1", prior(0.0), True, "template_twins"),
    ("auto", PS, "template-v1", prior(0.0, n=MIN_PRIOR_PAIRS - 1), True, "template_twins"),
    ("auto", PS, "template-v1", None, True, "template_twins"),
    # other twins: the audited model's own prior decides, one threshold read the same way on both sides
    ("auto", PS, "llm-isomorphic-v1", prior(0.1047), True, "prior_outside_band"),
    ("auto", PS, "llm-isomorphic-v1", prior(-0.08), True, "prior_outside_band"),  # toward clean
    ("auto", PS, "llm-isomorphic-v1", prior(0.049), False, "prior_in_band"),
    ("auto", PS, "llm-isomorphic-v1", prior(-0.049), False, "prior_in_band"),
    ("auto", PS, "llm-isomorphic-v1", prior(PRIOR_BAND), False, "prior_in_band"),  # the edge is in the band
    ("auto", PS, None, prior(0.2), True, "prior_outside_band"),
    # too few pairs to decide: unknown balance, left uncalibrated (the report suggests --calibrate on)
    ("auto", PS, "llm-isomorphic-v1", prior(0.3, n=MIN_PRIOR_PAIRS - 1), False, "unknown_balance"),
    ("auto", PS, None, None, False, "unknown_balance"),
    # numeric twins: the generator's balance shown at scale decides, whatever a small run's prior reads
    ("auto", PS, "numeric-perturbation-v7", prior(0.3), False, "numeric_twins"),
    ("auto", PS, "numeric-perturbation-v5", None, False, "numeric_twins"),
])
def test_choose_calibration_golden(mode, metrics, method, pri, on, basis):
    got = choose_calibration(mode, metrics, [twin(method)], pri)
    assert (got.on, got.basis) == (on, basis)
    assert got.as_dict() == {"mode": mode, "on": on, "basis": basis,
                             "neutral_prior_diff": got.neutral_prior_diff, "prior_model": got.prior_model}
    scored = pri is not None and pri.decides and basis not in ("numeric_twins", "asked", "declined", "no_logit_metric")
    assert (got.neutral_prior_diff is not None) == scored
    assert got.prior_model == ("SmolLM2-135M-Instruct" if scored else None)


def test_the_prior_is_scored_only_where_it_can_decide_or_be_shown():
    assert needs_prior(PS, [twin("template-v1")]) and needs_prior(("p_all_cal",), [twin("llm-isomorphic-v1")])
    assert not needs_prior(PS, [twin("numeric-perturbation-v7")]) and not needs_prior(("acc",), [twin("template-v1")])


def test_neutral_prior_pairs_every_twin_and_splits_numeric_from_other_forms():
    """Golden: a fake backend whose log-probability is minus the answer's length, so each pair's difference is
    known by hand."""
    from zcp_core.probe.prior import neutral_prior

    class Fake:
        model_id = "fake"

        def score(self, reqs):
            from zcp_core.backends.base import TokenLogprobs

            assert all(r.prompt == "The answer is \\boxed{" and r.continuation.endswith("}") for r in reqs)
            return [TokenLogprobs(tuple(r.continuation), tuple([-1.0] * len(r.continuation))) for r in reqs]

    orig = [Item(id="a", question="q", answer="12"), Item(id="b", question="q", answer="\\sqrt{2}")]
    tw = [Item(id="a1", question="q", answer="7", original_id="a"),
          Item(id="a2", question="q", answer="123", original_id="a"),
          Item(id="b1", question="q", answer="\\sqrt{3}", original_id="b"),
          Item(id="x1", question="q", answer="5", original_id="x")]  # no original in the run: left out
    got = neutral_prior(Fake(), orig, tw)
    assert got.model == "fake"
    assert (got.numeric.n_pairs, got.numeric.diff) == (2, 0.0)  # -3 - (-2) = -1 and -3 - (-4) = +1
    assert (got.other.n_pairs, got.other.diff, got.other.ci90) == (1, 0.0, None)
    assert got.pooled.n_pairs == 3 and got.pooled.diff == 0.0 and not got.decides


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


CAL_HEADLINE = {"metric": "p_all_net"}


PRIOR_SUMMARY = {"neutral_prior": {"pooled": {"n_pairs": 1240, "diff": 0.1047, "ci90": [0.03, 0.18]}}}


@pytest.mark.parametrize("summary, needle", [
    ({"calibration": {"basis": "prior_outside_band", "neutral_prior_diff": 0.1047,
                      "prior_model": "SmolLM2-135M-Instruct"}, "headline": CAL_HEADLINE, **PRIOR_SUMMARY},
     "the twins' answers are 0.105 nats a priori less likely than the originals' under SmolLM2-135M-Instruct "
     "(90% CI 0.030 to 0.180, 1240 pairs), beyond the 0.050-nat band; raw P_first and P_all lean toward "
     "'contaminated' on a clean model, so the verdict reads P_all net of the neutral prior. Raw, net and calibrated "
     "are shown side by side."),
    ({"calibration": {"basis": "prior_outside_band", "neutral_prior_diff": -0.08, "prior_model": "m"},
      "headline": CAL_HEADLINE},
     "a priori more likely than the originals' under m, beyond the 0.050-nat band; raw P_first and P_all lean "
     "toward 'clean'"),
    ({"calibration": {"basis": "prior_in_band", "neutral_prior_diff": -0.02, "prior_model": "m"},
      "headline": {"metric": "p_all"}},
     "Raw metrics lead (--calibrate auto): the twins' answers are 0.020 nats a priori more likely than the "
     "originals' under m, inside the 0.050-nat band, so raw P_first and P_all are read as they are."),
    ({"calibration": {"basis": "template_twins"}, "headline": CAL_HEADLINE},
     "as for every probe of template twins: on MATH-500 the untouched model's raw P_all reads its originals as "
     "contaminated even with twins balanced at the source, while P_all net of the neutral prior passes that null "
     "and still catches the lab's memorised builds, so the verdict reads P_all net of the neutral prior."),
    ({"calibration": {"basis": "template_twins"}, "headline": {"metric": "p_all_cal"}},
     "so the verdict reads calibrated P_all"),
    ({"calibration": {"basis": "template_twins", "neutral_prior_diff": 0.4376, "prior_model": "m"},
      "headline": CAL_HEADLINE, **PRIOR_SUMMARY},
     "Here the twins' answers are 0.438 nats a priori less likely than the originals' under m (90% CI 0.030 to "
     "0.180, 1240 pairs)."),
    # no calibrated verdict (e.g. a prompt-mode backend without logprobs): the sentence says what the verdict reads
    ({"calibration": {"basis": "template_twins"}, "headline": {"metric": "acc"}},
     "but calibrated P_all has no verdict in this run, so the verdict reads accuracy"),
    ({"calibration": {"basis": "template_twins"}, "headline": CAL_HEADLINE, "original_arm": "twin 1"},
     "here a twin stands as the original, so both arms share the twins' a-priori balance"),
    ({"calibration": {"basis": "prior_outside_band", "neutral_prior_diff": 0.2}, "headline": CAL_HEADLINE,
      "original_arm": "twin 1"}, "here a twin stands as the original"),
    ({"calibration": {"basis": "unknown_balance"}},
     "`--calibrate on` reads P_first and P_all net of each answer's own prior"),
])
def test_calibration_sentence_golden(summary, needle):
    assert needle in calibration_sentence(summary)


@pytest.mark.parametrize("basis", ["asked", "declined", "numeric_twins", "no_logit_metric"])
def test_no_sentence_where_nothing_was_switched(basis):
    assert calibration_sentence({"calibration": {"basis": basis, "neutral_prior_diff": 0.01},
                                 "headline": CAL_HEADLINE}) == ""


@pytest.mark.heavy
def test_cli_calibrates_math500_template_twins_and_shows_the_audited_models_prior(tmp_path, capsys):
    """The user's command with no flag: MATH-500 twins built from the shipped templates; the run scores its own
    pairs' neutral prior with the model it audits and shows it; template twins are read calibrated (the verdict and
    the flags), raw beside them; an explicit --flag-metric is kept."""
    from zcp_core.cli.main import main
    from zcp_core.probe.report import report
    from zcp_core.runs import load_run

    base = ["probe", "--model", "smollm2", "--dataset", str(ROOT / "data/math500/test.jsonl"), "--limit", "20",
            "--twins", "2", "--metrics", "p_first,p_all", "--max-new-tokens", "1", "--n-resamples", "200"]
    out = tmp_path / "p"
    assert main([*base, "--out", str(out)]) == 0
    s = load_run(out).summary
    pri, cal = s["neutral_prior"], s["calibration"]
    assert pri["model"] == "SmolLM2-135M-Instruct" and pri["pooled"]["n_pairs"] >= MIN_PRIOR_PAIRS
    assert pri["pooled"]["n_pairs"] == pri["numeric"]["n_pairs"] + pri["other"]["n_pairs"]
    assert cal == {"mode": "auto", "on": True, "basis": "template_twins", "neutral_prior_diff": pri["pooled"]["diff"],
                   "prior_model": "SmolLM2-135M-Instruct"}
    assert s["headline"]["metric"] == "p_all_net" and s["flags"]["metric"] == "p_all_net"
    assert {"p_all", "p_all_cal", "p_all_net"} <= set(s["metrics"])  # raw beside both corrections
    # the net form is log P_all minus the gold's per-token mean after the neutral context, as lab_math500.py
    # recomputes it for runs that predate it
    import numpy as np
    import pandas as pd

    from zcp_core.backends import load_backend
    from zcp_core.probe.calibrate import neutral_values

    r = pd.read_parquet(out / "records.parquet")
    nv = neutral_values(load_backend("smollm2"), r["gold"].str.strip().tolist())
    again = np.log(r["p_all"]) - r["gold"].str.strip().map(lambda g: nv[g][1])
    assert np.allclose(r["p_all_net"], again, atol=1e-4)
    rep = report(out)
    assert any("as for every probe of template twins" in n and "Here the twins' answers are" in n for n in rep.notes)
    kept = tmp_path / "q"
    assert main([*base, "--flag-metric", "p_all", "--calibrate", "on", "--out", str(kept)]) == 0
    assert load_run(kept).summary["flags"]["metric"] == "p_all"


def test_cli_checks_arguments_before_loading_data(tmp_path, capsys):
    """--calibrate on with no P metric fails before the dataset is read (its error, not the missing file's)."""
    from zcp_core.cli.main import main

    assert main(["probe", "--model", "smollm2", "--dataset", str(tmp_path / "absent.jsonl"), "--metrics", "acc",
                 "--calibrate", "on", "--out", str(tmp_path / "p")]) != 0
    err = capsys.readouterr().err
    assert "--calibrate calibrates p_first and p_all" in err and "absent.jsonl" not in err
