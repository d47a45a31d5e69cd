"""Answer-prior calibration (``--calibrate``): golden tables, and the real SmolLM2 against its own score calls."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from zcp_core.probe import DEFAULT_INSTRUCTION, DEFAULT_SUFFIX, ProbeConfig, confidence_summary, run_probe
from zcp_core.probe.calibrate import NOT_ZERO_COT, mask_numbers, prior_values
from zcp_core.schema import Item


@pytest.mark.parametrize("text, masked", [
    ("Janet's ducks lay 16 eggs per day.", "Janet's ducks lay N eggs per day."),
    ("She eats three for breakfast and sells them at $2.50 each.", "She eats N for breakfast and sells them at $N each."),
    ("It costs 1,200 dollars, 25% of which is tax.", "It costs N dollars, N% of which is tax."),
    ("He used 1/6 of the 40 liters.", "He used N of the N liters."),
    ("twenty-one apples and a half", "N apples and N"),
    ("No numbers here.", "No numbers here."),
    ("", ""),
])
def test_mask_numbers_golden(text, masked):
    assert mask_numbers(text) == masked


@pytest.mark.parametrize("gold, prior, expected", [
    ((-1.0, -2.0), (-3.0, -2.0), (2.0, 1.0)),          # the question's numbers raise the first token only
    ((-0.5,), (-0.5,), (0.0, 0.0)),                    # no lift: calibrated value 0
    ((-4.0, -1.0), (-1.0, -1.0), (-3.0, -1.5)),        # the masked question likes this answer better
    ((), (-1.0,), (math.nan, math.nan)),               # nothing scored
    ((-1.0, -1.0), (-1.0,), (math.nan, math.nan)),     # the two contexts cut the gold differently
])
def test_prior_values_golden(gold, prior, expected):
    got = prior_values(gold, prior)
    for g, e in zip(got, expected, strict=True):
        assert (math.isnan(g) and math.isnan(e)) or g == pytest.approx(e)


def test_answer_format_defaults_to_free():
    assert ProbeConfig().answer_format == "free"
    with pytest.raises(ValueError, match="answer_format"):
        ProbeConfig(answer_format="digits")


def test_config_knows_it_is_calibrated():
    assert ProbeConfig(metrics=("acc", "p_all", "p_all_cal")).calibrated
    assert not ProbeConfig().calibrated
    with pytest.raises(ValueError):
        ProbeConfig(metrics=("p_all_calibrated",))


def test_cli_calibrate_adds_the_calibrated_metrics():
    from zcp_core.cli.probe import with_calibration
    from zcp_core.errors import ZcpError

    assert with_calibration(("acc", "p_first", "p_all"), True) == ("acc", "p_first", "p_all", "p_first_net",
                                                                     "p_first_cal", "p_all_net", "p_all_cal")
    assert with_calibration(("acc", "p_all"), True) == ("acc", "p_all", "p_all_net", "p_all_cal")
    assert with_calibration(("acc",), False) == ("acc",)
    with pytest.raises(ZcpError, match="add one of them"):
        with_calibration(("acc",), True)


def _records(cal_orig, cal_ref):
    rows = []
    for i, (o, r) in enumerate(zip(cal_orig, cal_ref)):
        for arm, v in (("original", o), ("reference", r)):
            rows.append({"arm": arm, "id": f"{arm}-{i}", "pair_id": f"q{i}", "ratio": 0.0, "acc": False, "con": None,
                         "p_first": 0.5, "p_all": 0.5, "logprob_reason": "", "p_first_cal": v, "p_all_cal": v,
                         "calibration_reason": "", "cot_text": None})
    return pd.DataFrame(rows)


def test_calibrated_metrics_are_tested_and_lead_the_headline():
    # The raw metrics tie on every pair; the calibrated ones favour the original on every pair.
    recs = _records([0.5 + 0.01 * i for i in range(20)], [0.0] * 20)
    conf = confidence_summary(recs, ("acc", "p_first", "p_all", "p_first_cal", "p_all_cal"), n_resamples=2000)
    assert conf["metrics"]["p_all"]["confidence"] == pytest.approx(0.5, abs=0.01)
    assert conf["metrics"]["p_all_cal"]["confidence"] > 0.95  # 20 of 20 pairs; Monte Carlo p floors C
    assert conf["headline"]["metric"] == "p_all_cal"
    plain = confidence_summary(recs, ("acc", "p_first", "p_all"), n_resamples=2000)
    assert plain["headline"]["metric"] == "p_all"
    assert plain["metrics"]["p_all_cal"]["reason"] == "not measured (add --calibrate)"


@pytest.fixture(scope="module")
def cal_run(smollm2, gsm8k_items, tmp_path_factory):
    from zcp_core.reference import perturb_gsm8k

    ref = perturb_gsm8k(gsm8k_items[:6])
    twins = list(ref.items)[:3]
    keep = {t.original_id for t in twins}
    original = [it for it in gsm8k_items[:6] if it.id in keep]
    cfg = ProbeConfig(metrics=("acc", "p_first", "p_all", "p_first_cal", "p_all_cal"), ratios=(0.0, 1.0),
                      max_new_tokens=8, cot_tokens=8, n_resamples=500, answer_format="auto")
    out = tmp_path_factory.mktemp("runs") / "cal"
    return run_probe(smollm2, original, twins, cfg, out=out, model_spec="smollm2"), original


def test_calibrated_values_equal_two_score_calls(smollm2, cal_run):
    from zcp_core.backends import ScoreRequest, chat

    res, original = cal_run
    def req(q, it):
        return ScoreRequest(continuation=it.answer, messages=chat(f"{q}\n{DEFAULT_INSTRUCTION}"),
                            prefill=DEFAULT_SUFFIX + "{", thinking="off")

    real = smollm2.score([req(it.question, it) for it in original])
    prior = smollm2.score([req(mask_numbers(it.question), it) for it in original])
    recs = res.records[(res.records["arm"] == "original") & (res.records["ratio"] == 0.0)]
    for r, p, (_, row) in zip(real, prior, recs.iterrows(), strict=True):
        assert row["p_all_cal"] == pytest.approx(r.mean - p.mean, abs=1e-5)
        assert row["p_first_cal"] == pytest.approx(r.logprobs[0] - p.logprobs[0], abs=1e-5)
        assert row["calibration_reason"] == ""
        # The raw metrics keep their meaning.
        assert row["p_all"] == pytest.approx(math.exp(r.mean), rel=1e-5)


def test_only_zero_cot_rows_are_calibrated_and_the_run_reports_them(cal_run):
    res, _ = cal_run
    later = res.records[res.records["ratio"] > 0]
    assert len(later) and later["p_all_cal"].isna().all() and set(later["calibration_reason"]) == {NOT_ZERO_COT}
    manifest = json.loads((res.run_path / "manifest.json").read_text())
    metrics = manifest["summary"]["metrics"]
    assert {"p_first_cal", "p_all_cal", "p_first", "p_all"} <= set(metrics)
    assert metrics["p_all_cal"]["n"] == metrics["p_all"]["n"] == 3


class _Backend:
    def __init__(self, constraints: bool):
        self.supports_constraints = constraints


def _items(*golds):
    return [Item(id=f"i{k}", question="q", answer=g) for k, g in enumerate(golds)]


@pytest.mark.parametrize("fmt, mode, constraints, golds, resolved", [
    ("auto", "prefill", True, ("18", "1,234", "-3.5", "0.25"), "number"),
    ("auto", "prefill", True, ("18", "\\frac{1}{2}"), "free"),       # one non-number gold: MATH-style answers
    ("auto", "prefill", True, ("18", "3 hours"), "free"),
    ("auto", "prefill", False, ("18",), "free"),                     # a server that cannot mask tokens
    ("auto", "prompt", True, ("18",), "free"),                       # closed APIs cannot be constrained
    ("free", "prefill", True, ("18",), "free"),
    ("number", "prefill", True, ("\\frac{1}{2}",), "number"),        # asked for explicitly
])
def test_resolve_answer_format_golden(fmt, mode, constraints, golds, resolved):
    from zcp_core.probe.measure import resolve_answer_format

    cfg = ProbeConfig(answer_format=fmt, mode=mode)
    assert resolve_answer_format(cfg, _Backend(constraints), _items(*golds)) == resolved


def test_number_format_on_a_backend_that_cannot_constrain_is_refused():
    from zcp_core.probe.measure import resolve_answer_format

    with pytest.raises(ValueError, match="--answer-format free"):
        resolve_answer_format(ProbeConfig(answer_format="number"), _Backend(False), _items("18"))


def test_auto_format_on_gsm8k_writes_only_a_number_in_the_box(cal_run):
    res, _ = cal_run
    assert res.summary["answer_format"] == "number"
    zero = res.records[res.records["ratio"] == 0.0]
    for text in zero["completion"]:
        body = text[:-1] if text.endswith("}") else text
        assert set(body) <= set("0123456789.,-/ "), text
    # The budget is 8 tokens, so a closed box (not a spent budget) is what shows the constraint answering briefly.
    assert (zero["answer_stop"] == "closed").any()


def test_confidence_table_keeps_measured_metrics_and_says_how_to_measure_the_rest():
    from zcp_core.probe import tests_table as table_of
    from zcp_core.probe.viz import confidence_table, measured_rows, unmeasured_notes

    recs = _records([0.5 + 0.01 * i for i in range(12)], [0.0] * 12)
    t = confidence_table(table_of(recs, ("acc", "p_all"), n_resamples=200))
    assert list(measured_rows(t)["metric"]) == ["acc", "p_all"]
    assert unmeasured_notes(t) == ["con: add con to --metrics", "p_first: add p_first to --metrics",
                                   "p_first_cal: add --calibrate", "p_all_cal: add --calibrate",
                                   "p_first_net: add --calibrate", "p_all_net: add --calibrate"]


def test_net_rows_subtract_the_neutral_prior_per_token_mean_from_the_golds():
    """Golden: the gold after the question minus the gold after ``The answer is \\boxed{``, first token and per-token
    mean, each over its own tokens; r > 0 rows and unscorable golds carry their reason."""
    from zcp_core.backends.base import TokenLogprobs
    from zcp_core.probe.calibrate import NOT_ZERO_COT, net_rows
    from zcp_core.schema import Item

    class Fake:
        supports_logprobs = True

        def score(self, reqs):
            assert all(r.prompt == "The answer is \\boxed{" for r in reqs)
            # "12" is cut into 1 token here, "7" into 2: the contexts need not cut a gold alike
            table = {"12": (-2.0,), "7": (-1.0, -3.0)}
            return [TokenLogprobs(tuple("x" * len(table[r.continuation])), table[r.continuation]) for r in reqs]

    items = [Item(id="a", question="q", answer="12"), Item(id="b", question="q", answer=" 7 "),
             Item(id="a", question="q", answer="12")]
    lps = [TokenLogprobs(("1", "2"), (-0.5, -1.5)), TokenLogprobs(("7",), (-1.0,)), None]
    got = net_rows(Fake(), items, [0.0, 0.0, 0.5], lps)
    assert got[0] == (-0.5 - -2.0, -1.0 - -2.0, "")
    assert got[1] == (-1.0 - -1.0, -1.0 - -2.0, "")
    assert got[2] == (pytest.approx(float("nan"), nan_ok=True), pytest.approx(float("nan"), nan_ok=True),
                      NOT_ZERO_COT)
