"""The Zero-CoT probe: pure helpers (golden tables) and the real SmolLM2 on a handful of items."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from zcp_core.probe import (
    DEFAULT_SUFFIX,
    ProbeConfig,
    confidence_summary,
    cot_prefix,
    enforce_min_pairs,
    enforce_min_pairs_table,
    item_flags,
    item_gaps,
    probe_items,
    run_probe,
    sample_size_curve,
    truncation_curve,
)
from zcp_core.probe import tests_table as table_of_tests  # not named test*, so pytest does not collect it
from zcp_core.probe.flags import _flip
from zcp_core.probe.ktwins import FlagRule
from zcp_core.probe.measure import _Cot, _extract
from zcp_core.schema import Item
from zcp_core.stats import TOO_FEW_PAIRS

FAST = {"max_new_tokens": 12, "n_resamples": 500}


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    """Many test processes share 2 cores here; one torch thread avoids oversubscription stalls."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# ---- golden tables of pure helpers -----------------------------------------------------------
@pytest.mark.parametrize(("completion", "mode", "pred", "source"), [
    # prefill mode: the completion starts inside the prefilled "\\boxed{"
    ("18}\n\\]", "prefill", "18", "boxed"),
    ("\\frac{1}{2}} and more", "prefill", "\\frac{1}{2}", "boxed"),
    ("\n  \\text{2 x 2 = 4}\n}\n}", "prefill", "\\text{2 x 2 = 4}", "boxed"),
    ("1 + 2 = 3", "prefill", "3", "last_number"),  # unbalanced: falls back to the last number
    ("\n  \\begin{align*}", "prefill", None, "none"),
    ("The answer is \\boxed{7}.", "prompt", "7", "boxed"),
    ("I think it is 12", "prompt", "12", "last_number"),
])
def test_extract_golden(completion, mode, pred, source):
    cfg = ProbeConfig(mode=mode)
    assert _extract(completion, cfg) == (pred, source)


@pytest.mark.parametrize(("ratio", "expected"), [(0.0, ""), (0.25, "a"), (0.5, "ab"), (0.75, "abc"), (1.0, "abcd")])
def test_cot_prefix_golden(ratio, expected):
    cot = _Cot(text="abcd", n_tokens=4, capped=False, tokens=("a", "b", "c", "d"))
    assert cot_prefix(cot, ratio) == expected


@pytest.mark.parametrize(("s", "r", "flip"), [  # r: the share of the item's twins answered right
    (True, 0.0, "orig_only"), (False, 1.0, "ref_only"), (True, 1.0, "both"), (False, 0.0, "neither"),
    (pd.NA, 1.0, "ref_only"), (True, float("nan"), "orig_only"), (True, 0.25, "both"), (False, 0.5, "ref_only"),
])
def test_flip_golden(s, r, flip):
    assert _flip(s, r) == flip


def test_config_validates_and_always_probes_zero():
    assert ProbeConfig(ratios=(0.5, 1.0)).ratios == (0.0, 0.5, 1.0)
    assert not ProbeConfig().needs_cot
    assert ProbeConfig(metrics=("acc", "con")).needs_cot
    assert ProbeConfig(ratios=(0.0, 0.25)).needs_cot and ProbeConfig(full_cot=True).needs_cot
    with pytest.raises(ValueError, match="unknown metrics"):
        ProbeConfig(metrics=("acc", "bleu"))
    with pytest.raises(ValueError, match="ratios"):
        ProbeConfig(ratios=(1.5,))
    assert ProbeConfig().continuous_test == "permutation"
    assert ProbeConfig(continuous_test="bootstrap").test_options()["continuous_test"] == "bootstrap"
    with pytest.raises(ValueError, match="continuous_test"):
        ProbeConfig(continuous_test="t-test")  # type: ignore[arg-type]


def _synthetic(n=30, p_nan=False):
    rows = []
    for i in range(n):
        for arm, acc, p in (("original", i % 3 != 0, 0.6), ("reference", i % 5 == 0, 0.2)):
            rows.append({"arm": arm, "id": f"q{i}" + ("-ref" if arm == "reference" else ""), "pair_id": f"q{i}",
                         "ratio": 0.0, "question": "?", "gold": "1", "pred": "1" if acc else "2", "acc": acc,
                         "con": pd.NA, "p_first": math.nan if p_nan else p + 0.001 * i,
                         "p_all": math.nan if p_nan else p + 0.002 * i, "cot_text": None, "cot_correct": pd.NA,
                         "logprob_reason": "unavailable" if p_nan else "", "grade_status": "ok"})
    df = pd.DataFrame(rows)
    df["con"] = df["con"].astype("boolean")
    df["cot_correct"] = df["cot_correct"].astype("boolean")
    return df


def test_confidence_summary_shape_and_headline_fallback():
    recs = _synthetic()
    cfg = ProbeConfig(metrics=("acc", "p_first", "p_all"), n_resamples=500)
    out = confidence_summary(recs, cfg.metrics, **cfg.test_options())
    assert set(out) == {"metrics", "headline"}
    assert set(out["metrics"]) == {"acc", "con", "p_first", "p_all", "p_first_cal", "p_all_cal", "p_first_net", "p_all_net"}
    for m in ("acc", "p_first", "p_all"):
        assert set(out["metrics"][m]) == {"n", "effect", "effect_ci", "effect_lower", "effect_size", "p", "bf10",
                                          "confidence", "bound", "direction", "reading", "ci_method",
                                          *(("discordant",) if m == "acc" else ())}
        assert out["metrics"][m]["n"] == 30 and out["metrics"][m]["direction"] == "original>reference"
    assert out["metrics"]["con"]["confidence"] is None and "not measured" in out["metrics"]["con"]["reason"]
    assert out["headline"]["metric"] == "p_all" and out["headline"]["value"] == out["metrics"]["p_all"]["confidence"]
    assert out["headline"]["label"] == "Contamination Confidence (p_all)"
    # No logprobs (closed API): P_* are unavailable, not 0, and the headline falls back to Acc.
    api = confidence_summary(_synthetic(p_nan=True), ("acc", "p_first", "p_all"))
    assert api["metrics"]["p_all"]["confidence"] is None and "unavailable" in api["metrics"]["p_all"]["reason"]
    assert api["headline"]["metric"] == "acc"


@pytest.mark.parametrize("n", [9, 10])
def test_min_pairs_rule_in_the_confidence_json(n):
    recs = _synthetic(n=n)
    out = confidence_summary(recs, ("acc", "p_first", "p_all"))
    for m in ("acc", "p_first", "p_all"):
        v = out["metrics"][m]
        assert v["n"] == n and v["direction"] == "original>reference"  # description stays
        if n < 10:
            assert (v["p"], v["bf10"], v["confidence"], v["reason"]) == (None, None, None, TOO_FEW_PAIRS)
        else:
            assert 0.5 <= v["confidence"] <= 1 and "reason" not in v
    if n < 10:
        assert out["headline"]["value"] is None and out["headline"]["reason"] == TOO_FEW_PAIRS
        table = table_of_tests(recs, ("acc", "p_all"))
        measured = table[table["metric"].isin(["acc", "p_all"])]
        assert (measured["reason"] == TOO_FEW_PAIRS).all() and measured["confidence"].isna().all()
        assert (measured["n"] == n).all()
    else:
        assert out["headline"]["metric"] == "p_all" and out["headline"]["value"] is not None
    assert enforce_min_pairs(out) == out  # a json that follows the rule is unchanged


def test_enforce_min_pairs_on_a_run_written_before_the_rule():
    old = confidence_summary(_synthetic(n=12), ("acc", "p_all"))
    old["metrics"]["p_all"]["n"] = old["metrics"]["acc"]["n"] = 4  # as an old run with 4 pairs stored it
    fixed = enforce_min_pairs(old)
    assert fixed["metrics"]["p_all"]["confidence"] is None and fixed["metrics"]["p_all"]["reason"] == TOO_FEW_PAIRS
    assert fixed["headline"] == {"metric": None, "confidence": None, "label": "Contamination Confidence",
                                 "value": None, "reason": TOO_FEW_PAIRS}
    table = table_of_tests(_synthetic(n=12), ("acc", "p_all")).assign(n=4)
    assert enforce_min_pairs_table(table).query("metric in ['acc', 'p_all']")["confidence"].isna().all()


def test_confidence_json_carries_the_evidence_and_effect_lies_in_its_ci():
    out = confidence_summary(_synthetic(n=30), ("acc", "p_first", "p_all"), n_resamples=500)
    for m in ("acc", "p_first", "p_all"):
        v = out["metrics"][m]
        lo, hi = v["effect_ci"]
        assert lo <= v["effect"] <= hi and lo <= v["effect_lower"] <= v["effect"]
        assert v["effect_size"] is not None and v["reading"] == "originals favoured"
    acc = out["metrics"]["acc"]
    b = sum(i % 3 != 0 and i % 5 != 0 for i in range(30))  # original right, twin wrong (see _synthetic)
    c = sum(i % 3 == 0 and i % 5 == 0 for i in range(30))
    assert acc["discordant"] == [b, c] and acc["effect"] == pytest.approx((b - c) / 30)
    assert "discordant" not in out["metrics"]["p_all"]


def test_sample_size_curve_shares_the_one_ceiling():
    curve = sample_size_curve(_synthetic(n=30), ["p_all"], sizes=(20, 30), repeats=3)
    # every gap positive: the Monte Carlo floor is redrawn, so C reaches the ceiling as the exact tests do
    assert (curve["confidence_median"] == 0.999).all() and (curve["bound_share"] == 1.0).all()


@pytest.mark.parametrize("example, reading", [("probe-lab-direct", "originals favoured"),
                                               ("probe-smollm2-lab-items",
                                                "twins favoured: no evidence of contamination")])
def test_confidence_reads_the_evidence_from_the_runs_tests_table(example, reading, capsys):
    import argparse
    from pathlib import Path

    from zcp_core.cli.probe import confidence_cmd, register

    run = Path(__file__).resolve().parent.parent / "data" / "examples" / example
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    assert confidence_cmd(parser.parse_args(["confidence", str(run), "--json"])) == 0
    out = json.loads(capsys.readouterr().out)
    tests = pd.read_parquet(run / "tests.parquet").set_index("metric")
    for m in ("acc", "p_first", "p_all"):
        v, t = out["metrics"][m], tests.loc[m]
        if pd.isna(t["n"]):  # not measured: no number, and the same reason as the run's
            assert v["n"] is None and v["confidence"] is None and v["reason"] == t["reason"]
            continue
        assert v["n"] == t["n"] and v["effect"] == pytest.approx(t["mean_diff"]) and v["p"] == pytest.approx(t["p"])
        lo, hi = v["effect_ci"]
        assert lo <= v["effect"] <= hi and v["effect_lower"] <= v["effect"]
        # the one-sided lower bound agrees with the one-sided test (p < 0.05 iff the bound is above 0)
        assert (v["effect_lower"] > 0) == (v["p"] < 0.05)
    assert out["metrics"]["p_all"]["effect_size"] == pytest.approx(tests.loc["p_all", "effect"])  # d_z
    assert out["metrics"]["p_all"]["reading"] == reading
    assert confidence_cmd(parser.parse_args(["confidence", str(run)])) == 0
    text = capsys.readouterr().out
    assert reading in text and "95% CI" in text
    if example == "probe-lab-direct":  # the lab model writes words in its boxes: Acc is said, not graded
        assert out["metrics"]["acc"]["reason"] == "not measured: 79 of 80 answers hold no number or never close their box"
        assert "accuracy (Acc): 79 of 80 answers hold no number or never close their box" in text


def test_permutation_is_the_default_and_bootstrap_an_option():
    recs = _synthetic(n=12)
    perm = table_of_tests(recs, ("p_all",)).set_index("metric").loc["p_all"]
    boot = table_of_tests(recs, ("p_all",), continuous_test="bootstrap", n_resamples=500).set_index("metric").loc["p_all"]
    assert (perm["test"], boot["test"]) == ("permutation", "bootstrap")
    assert perm["p"] == pytest.approx(1 / 4096)  # every gap positive: exact p 2**-12
    assert perm["confidence"] > 0.99 and boot["confidence"] > 0.9


def test_sample_size_curve_leaves_out_sizes_below_min_pairs():
    curve = sample_size_curve(_synthetic(n=30), ["p_all"], sizes=(5, 9, 10, 30), repeats=3)
    assert curve["n"].tolist() == [10, 30]
    assert sample_size_curve(_synthetic(n=8), ["p_all"]).empty


def test_item_gaps_and_flags_on_synthetic_records():
    recs = _synthetic(n=6)
    g = item_gaps(recs, "p_all")
    assert list(g.columns) == ["pair_id", "suspect", "reference", "n_twins", "gap"]
    assert g["gap"].round(6).tolist() == [round(0.4, 6)] * 6
    flags = item_flags(recs, rule=FlagRule("acc"))
    # q0: orig wrong (0 % 3 == 0), ref right (0 % 5 == 0) -> ref_only; q1: orig right, ref wrong -> orig_only.
    assert flags.set_index("pair_id").loc["q0", "flip"] == "ref_only"
    assert flags.set_index("pair_id").loc["q1", "flip"] == "orig_only"
    assert flags["flagged"].tolist() == (flags["flip"] == "orig_only").tolist()
    assert sorted(flags["p_all_gap_rank"].tolist()) == [1, 1, 1, 1, 1, 1]  # equal gaps tie at rank 1
    assert "P(all answer tokens), original minus twin, +0.400" in flags.set_index("pair_id").loc["q1", "evidence"]


# ---- the real model -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pairs(gsm8k_items):
    from zcp_core.reference import perturb_gsm8k

    ref = perturb_gsm8k(gsm8k_items[:6])
    twins = list(ref.items)[:3]
    keep = {t.original_id for t in twins}
    return [it for it in gsm8k_items[:6] if it.id in keep], twins


@pytest.fixture(scope="module")
def zero_run(smollm2, pairs, tmp_path_factory):
    original, reference = pairs
    cfg = ProbeConfig(**FAST)
    return run_probe(smollm2, original, reference, cfg, out=tmp_path_factory.mktemp("runs") / "zero",
                     model_spec="smollm2")


def test_zero_cot_generates_no_cot_and_fills_metrics(zero_run, pairs):
    recs = zero_run.records
    assert list(recs.columns)[:14] == ["arm", "id", "pair_id", "ratio", "question", "gold", "completion", "pred",
                                       "pred_source", "grade_status", "acc", "con", "p_first", "p_all"]
    assert len(recs) == 6 and set(recs["arm"]) == {"original", "reference"}
    assert recs["cot_text"].isna().all() and recs["cot_tokens"].isna().all()
    assert zero_run.summary["generated_tokens"]["original"]["cot"] == 0
    assert zero_run.summary["cot_generated"] is False
    assert (recs["answer_tokens"] <= FAST["max_new_tokens"]).all() and (recs["answer_tokens"] > 0).all()
    assert recs["p_all"].between(0, 1).all() and recs["p_first"].between(0, 1).all()
    assert recs["con"].isna().all()  # Con was not asked for
    ref = recs[recs["arm"] == "reference"]
    assert ref["pair_id"].tolist() == [o.id for o in pairs[0]]


def test_p_all_and_p_first_equal_backend_score(smollm2, zero_run, pairs):
    from zcp_core.backends import ScoreRequest, chat
    from zcp_core.probe import DEFAULT_INSTRUCTION

    original = pairs[0]
    scored = smollm2.score([ScoreRequest(continuation=it.answer, messages=chat(f"{it.question}\n{DEFAULT_INSTRUCTION}"),
                                         prefill=DEFAULT_SUFFIX + "{", thinking="off") for it in original])
    recs = zero_run.records[zero_run.records["arm"] == "original"]
    for tl, (_, row) in zip(scored, recs.iterrows(), strict=True):
        assert row["p_all"] == pytest.approx(math.exp(sum(tl.logprobs) / len(tl.logprobs)), rel=1e-5)
        assert row["p_first"] == pytest.approx(math.exp(tl.logprobs[0]), rel=1e-5)


def test_run_folder_confidence_json_and_cli(zero_run, capsys):
    from zcp_core.cli.probe import confidence_cmd, register
    from zcp_core.runs import load_run

    run = load_run(zero_run.run_path)
    assert run.kind == "probe" and run.summary["headline"]["label"].startswith("Contamination Confidence")
    for t in ("items", "tests", "truncation", "sample_size"):
        assert run.has_table(t)
    assert (zero_run.run_path / "items_reference.jsonl").exists()
    import argparse

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["confidence", str(zero_run.run_path), "--json"])
    assert confidence_cmd(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"metrics", "headline", "flags"}
    assert out["flags"] == json.loads(json.dumps(run.summary["flags"]))  # the run's flag block, as stored
    # Three pairs are too few for a verdict: no p, BF or confidence, and the reason instead.
    assert set(out["metrics"]["p_all"]) >= {"n", "effect", "effect_ci", "p", "bf10", "confidence", "reason"}
    assert out["metrics"]["p_all"]["n"] == 3 and out["metrics"]["p_all"]["confidence"] is None
    assert out["metrics"]["p_all"]["reason"] == TOO_FEW_PAIRS
    # at 12 tokens the embedded model never closes its box (LaTeX or prose): no answer is graded, so no Acc
    assert out["metrics"]["acc"]["confidence"] is None
    assert out["metrics"]["acc"]["reason"] == "not measured: 3 of 3 answers hold no number or never close their box"
    assert out["metrics"]["con"]["confidence"] is None and "not measured" in out["metrics"]["con"]["reason"]
    assert out["headline"]["value"] is None and out["headline"]["reason"] == TOO_FEW_PAIRS
    assert run.manifest["config"]["continuous_test"] == "permutation"
    assert run.summary["continuous_test"] == "permutation" and run.summary["min_pairs"] == 10
    assert confidence_cmd(parser.parse_args(["confidence", str(zero_run.run_path)])) == 0
    text = capsys.readouterr().out
    assert "too few pairs for a verdict (n < 10)" in text and "significant" not in text
    assert "No Contamination Confidence: too few pairs for a verdict (n < 10)" in text


def test_parse_failures_are_counted(smollm2, pairs):
    # One new token cannot close "\boxed{": every answer is a parse failure, counted and graded wrong.
    original, reference = pairs
    res = run_probe(smollm2, original[:2], [t for t in reference if t.original_id in {o.id for o in original[:2]}],
                    ProbeConfig(metrics=("acc",), max_new_tokens=1, n_resamples=200))
    assert res.summary["parse_failures"] == {"original": 2, "reference": 2}
    assert not res.records["acc"].any()
    assert set(res.records["grade_status"]) == {"no_answer"}


def test_truncation_generates_one_capped_cot_and_con(smollm2, pairs):
    original = pairs[0][:1]
    cfg = ProbeConfig(metrics=("acc", "con"), ratios=(0.0, 0.5), cot_tokens=6, max_new_tokens=8)
    recs = probe_items(smollm2, original, cfg)
    assert recs["ratio"].tolist() == [0.0, 0.5]
    assert recs["cot_tokens"].tolist() == [6, 6] and recs["cot_capped"].all() and recs["cot_cap"].tolist() == [6, 6]
    assert recs["cot_text"].nunique() == 1
    # A 6-token CoT states no final answer: Con is False (inconsistent), never read from its last number.
    assert recs["cot_answer"].isna().all() and recs["con"].tolist() == [False, False]
    curve = truncation_curve(recs, ["acc"])
    assert curve["ratio"].tolist() == [0.0, 0.5]


def test_release_replaces_flagged_with_verified_twin_and_undo(smollm2, tmp_path):
    from zcp_core.probe import release, undo_release

    # Originals whose gold is what the model answers at zero-CoT (so they are "correct"), and twins that
    # the model gets wrong: a re-executed numeric twin (replaceable), a numeric twin without a passed
    # re-execution record (kept) and one made by no method zcp can verify (kept).
    # Ten pairs (MIN_PAIRS), so the run has a verdict; only the first three twins differ in how they were made.
    qs = ["What is 2 + 3?", "What is 10 minus 4?", "What is 7 + 1?", "What is 3 + 3?", "What is 9 minus 2?",
          "What is 4 + 4?", "What is 6 + 3?", "What is 8 minus 5?", "What is 1 + 1?", "What is 5 + 4?"]
    probe0 = probe_items(smollm2, [Item(id=f"toy-{i}", question=q, answer="0") for i, q in enumerate(qs)],
                         ProbeConfig(metrics=("acc",), max_new_tokens=12, answer_format="number"))
    golds = probe0["pred"].tolist()  # closed boxes (the number format): an unclosed one is never graded
    assert all(golds), golds
    original = [Item(id=f"toy-{i}", question=q, answer=g, source="toy") for i, (q, g) in enumerate(zip(qs, golds))]
    numeric = {"method": "numeric-perturbation-v1"}
    verified = {**numeric, "verification": {"method": "numeric-perturbation-v1", "reexecuted": True,
                                            "check": "reexecute-v1"}}
    reference = [
        Item(id="toy-0-ref", question=qs[0], answer=golds[0] + "1", source="toy-numeric-ref", original_id="toy-0",
             metadata=verified),
        Item(id="toy-1-ref", question=qs[1], answer=golds[1] + "1", source="toy-manual", original_id="toy-1"),
        Item(id="toy-2-ref", question=qs[2], answer=golds[2] + "1", source="toy-numeric-ref", original_id="toy-2",
             metadata=numeric),
        *[Item(id=f"toy-{i}-ref", question=qs[i], answer=golds[i] + "1", source="toy-numeric-ref",
               original_id=f"toy-{i}", metadata=verified) for i in range(3, len(qs))],
    ]
    res = run_probe(smollm2, original, reference, ProbeConfig(metrics=("acc", "p_all"), max_new_tokens=12,
                                                              n_resamples=200, flag_metric="acc",
                                                              answer_format="number"), out=tmp_path / "run")
    flagged = [str(i) for i in res.items.loc[res.items["flagged"], "pair_id"]]
    # batched decoding may change an answer or two against the unbatched pass that set the golds
    assert res.summary["n_pairs"] == 10 and len(flagged) >= 8 and {"toy-0", "toy-1", "toy-2"} <= set(flagged)
    # toy items: no dataset to inherit a licence from; 0.5 lets any verdict through (C is never below it)
    rel = release(res.run_path, tmp_path / "release", license="apache-2.0", min_confidence=0.5)
    assert rel.verdict is not None and rel.verdict.not_replaced == "" and rel.verdict.b == len(flagged)
    assert [r.original_id for r in rel.replaced] == [i for i in flagged if i not in ("toy-1", "toy-2")]
    assert rel.replaced[0].verification == "reexecuted" and "re-executed" in rel.replaced[0].verified_by
    kept = {k.original_id: k.reason for k in rel.kept}
    assert set(kept) == {"toy-1", "toy-2"}
    assert "cannot verify" in kept["toy-1"] and "re-execution" in kept["toy-2"]
    bench = [json.loads(x) for x in (tmp_path / "release" / "benchmark.jsonl").read_text().splitlines()]
    assert [b["id"] for b in bench][:3] == ["toy-0-ref", "toy-1", "toy-2"]
    assert all(b["canary"] == rel.canary for b in bench) and rel.canary.startswith("ZCP-CANARY ")
    assert [b["status"] for b in bench][:3] == ["replaced", "kept", "kept"] and bench[0]["original_id"] == "toy-0"
    assert bench[0]["source"] == "toy"  # a twin's source is its original's dataset, not its own file
    card = (tmp_path / "release" / "README.md").read_text()
    assert rel.canary in card and "toy-0-ref" in card and "toy-1" in card
    # one twin per item: no spare, so the first verified twin replaces it and the score after leaves it out
    assert ("| toy-0 | yes | toy-0-ref | first verified | reexecuted | numeric twin (numeric-perturbation-v1); "
            "solution re-executed") in card
    assert rel.scores is not None and rel.scores.left_out == len(rel.replaced) and not rel.scores.spare_held_out
    assert "deterministic" not in card and "judge_verified" not in card
    assert len((tmp_path / "release" / "replacements.jsonl").read_text().splitlines()) == len(rel.replaced)
    assert undo_release(tmp_path / "release") == original
    # Three of the pairs are too few for a verdict: nothing is replaced, whatever --min-confidence says.
    few = run_probe(smollm2, original[:3], reference[:3], ProbeConfig(metrics=("acc", "p_all"), max_new_tokens=12,
                                                                      n_resamples=200, flag_metric="acc",
                                                                      answer_format="number"), out=tmp_path / "few")
    rel3 = release(few.run_path, tmp_path / "release3", license="apache-2.0", min_confidence=0.0)
    assert rel3.replaced == () and {k.original_id for k in rel3.kept} == {"toy-0", "toy-1", "toy-2"}
    card3 = (tmp_path / "release3" / "README.md").read_text()
    assert "not replaced: too few pairs for a verdict (n < 10)" in card3 and "nothing replaced" in card3
    bench3 = [json.loads(x) for x in (tmp_path / "release3" / "benchmark.jsonl").read_text().splitlines()]
    assert [b["id"] for b in bench3] == ["toy-0", "toy-1", "toy-2"]  # the benchmark, unchanged


class _ScriptedApi:
    """A closed-API stand-in (no logprobs) that only answers in \\boxed{} under the third, strictest prompt.

    It stubs the backend, not the probe: the retry loop and the "unavailable" path are what is tested.
    """

    name, model_id, revision = "scripted", "scripted-api", "0"
    supports_logprobs = False

    def __init__(self):
        self.calls = []

    def generate(self, requests, progress=False):
        from zcp_core.backends import Completion
        from zcp_core.probe import PROMPT_INSTRUCTIONS

        self.calls.append(len(requests))
        out = []
        for r in requests:
            assert r.thinking == "off" and r.prefill == ""
            strict = PROMPT_INSTRUCTIONS[2] in r.messages[-1].content
            out.append(Completion(text="\\boxed{18}" if strict else "Let me think", n_tokens=4, finish_reason="stop"))
        return out

    def score(self, requests, progress=False):
        raise AssertionError("score must not be called when logprobs are unsupported")


def test_prompt_mode_retries_until_boxed_and_reports_logprobs_unavailable(pairs):
    api = _ScriptedApi()
    original = pairs[0][:2]
    recs = probe_items(api, original, ProbeConfig(mode="prompt"))
    assert api.calls == [2, 2, 2]  # two retries, each one batched call
    assert recs["attempts"].tolist() == [3, 3] and recs["answer_tokens"].tolist() == [12, 12]
    assert recs["pred"].tolist() == ["18", "18"] and recs["pred_source"].tolist() == ["boxed", "boxed"]
    assert recs["p_all"].isna().all() and set(recs["logprob_reason"]) == {"unavailable"}


def test_paraphrased_arm_is_tested_against_the_reference():
    recs = _synthetic(n=20)
    para = recs[recs["arm"] == "original"].copy()
    para["arm"], para["id"] = "paraphrased", para["pair_id"] + "-para"
    para["acc"] = False  # the paraphrase lost the memorised answer
    recs = pd.concat([recs, para], ignore_index=True)
    cfg = ProbeConfig(metrics=("acc", "p_all"), n_resamples=500)
    orig = confidence_summary(recs, cfg.metrics, "original", **cfg.test_options())
    par = confidence_summary(recs, cfg.metrics, "paraphrased", **cfg.test_options())
    assert orig["metrics"]["acc"]["direction"] == "original>reference"
    assert par["metrics"]["acc"]["direction"] == "reference>original" and par["metrics"]["acc"]["confidence"] == 0.5
    flags = item_flags(recs)
    assert {"acc_paraphrased", "p_all_paraphrased", "pred_paraphrased"} <= set(flags.columns)
    assert not flags["acc_paraphrased"].any()


def test_probe_grades_outside_the_main_thread(pairs):
    # The app runs probes in worker threads, where math-verify's signal timeouts cannot be used.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as ex:
        recs = ex.submit(probe_items, _ScriptedApi(), pairs[0][:1], ProbeConfig(mode="prompt")).result()
    assert recs["grade_status"].tolist() == ["ok"] and recs["pred"].tolist() == ["18"]
    assert recs["acc"].tolist() == [pairs[0][0].answer == "18"]


@pytest.mark.parametrize(("pred", "gold", "status"), [
    ("answer", "18", "not_a_number"),  # math-verify alone would read E*a*n*r*s*w and grade it wrong
    ("\\text{answer}", "18", "not_a_number"),
    ("eighteen", "18", "not_a_number"),
    ("x", "\\frac{1}{2}", "not_a_number"),
    ("18", "18", "ok"),
    ("17", "18", "ok"),
    ("", "18", "no_answer"),
    ("answer", "x+1", "ok"),  # a gold that is not a number: a word may be an answer, graded as usual
])
def test_a_box_with_no_number_is_not_graded(pred: str, gold: str, status: str) -> None:
    from zcp_core.answers import grade

    g = grade(pred, gold)
    assert g.status == status and (g.correct is False or status == "ok")


def _words_in_boxes(recs: pd.DataFrame, pairs: int) -> pd.DataFrame:
    recs = recs.copy()
    hit = (recs["arm"] == "original") & recs["pair_id"].isin([f"q{i}" for i in range(pairs)])
    recs.loc[hit, ["pred", "acc", "grade_status"]] = ["answer", False, "not_a_number"]
    return recs


def test_acc_reads_not_measured_when_most_boxes_hold_words() -> None:
    from zcp_core.probe.analysis import metric_tests
    from zcp_core.probe.flags import item_flags

    recs = _words_in_boxes(_synthetic(30), 20)  # 20 of 30 original boxes hold a word
    out = metric_tests(recs, ("acc", "con", "p_all"), n_resamples=200)
    assert out["acc"] == "not measured: 20 of 30 answers in the box are not numbers"
    assert out["con"] == "not measured: 20 of 30 answers in the box are not numbers"
    assert not isinstance(out["p_all"], str)  # the logprob metrics do not read the box
    flags = item_flags(recs, rule=FlagRule("acc"))
    assert set(flags.loc[flags["pair_id"].isin([f"q{i}" for i in range(20)]), "flip"]) == {"no_number"}
    assert not flags.loc[flags["flip"] == "no_number", "flagged"].any()


def test_pairs_with_a_word_in_the_box_leave_acc() -> None:
    from zcp_core.probe.analysis import metric_tests

    recs = _words_in_boxes(_synthetic(30), 5)  # a minority: Acc is measured on the other 25 pairs
    acc = metric_tests(recs, ("acc",), n_resamples=200)["acc"]
    assert not isinstance(acc, str) and acc.n == 25
