"""Keep-correct filters, matched arms (one chain per problem), AFR (both denominators), screen lines, provenance,
forced finishes, excision, file selection."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from zcp_core.afr import (
    FILTERS,
    afr_frame,
    afr_stats,
    bootstrap_afr,
    chain_afr,
    excise,
    excision_control,
    filter_dir,
    filter_warnings,
    find_block,
    forced_warnings,
    grade_records,
    histogram,
    keep_correct,
    read_records,
    records_frame,
    resolve_arms,
    restore_excised,
    screen,
    screen_line,
    screen_line_all,
    screen_line_own,
    screen_report,
    screen_summary,
    write_records,
)
from zcp_core.errors import DataError, ZcpError

GOLDEN = Path(__file__).resolve().parent / "data" / "afr_filter_golden"


def rec(uid: str, answer: str, chain: str, question: str = "What is it?", **kw: object) -> dict:
    """A chain record."""
    return {"uid": uid, "answer": answer, **kw,
            "messages": [{"role": "user", "content": question}, {"role": "assistant", "content": chain}]}


# ---- keep-correct filter -------------------------------------------------------------------------
# The paper's digit-stripping fallback accepts all of these; math-verify alone must not.
NON_FALLBACK = [("\\frac{1}{2}", "12"), ("(1,2)", "12"), ("2\\sqrt{3}", "23"), ("10^3", "103")]


@pytest.mark.parametrize(("pred", "gold"), NON_FALLBACK + [(g, p) for p, g in NON_FALLBACK])
def test_filter_has_no_digit_stripping_fallback(pred: str, gold: str) -> None:
    v = grade_records([rec("u", gold, f"so \\boxed{{{pred}}}")]).iloc[0]
    assert not v["correct"] and not v["kept"]
    assert v["pred"] == pred and v["status"] == "ok"
    assert v["pred_parsed"] and v["gold_parsed"]  # both parsed forms are recorded
    assert v["reason"] == "wrong answer"


@pytest.mark.parametrize(("chain", "gold", "correct", "status"), [
    ("x \\boxed{0.5}", "\\frac{1}{2}", True, "ok"),
    ("first \\boxed{3} then \\boxed{1000}", "1,000", True, "ok"),
    ("no box, the answer is 7", "7", False, "no_answer"),
    ("\\boxed{\\dfrac{3}{4}}", "0.75", True, "ok"),
])
def test_filter_verdicts(chain: str, gold: str, correct: bool, status: str) -> None:
    v = grade_records([rec("u", gold, chain)]).iloc[0]
    assert bool(v["correct"]) is correct and v["status"] == status


def _write_arms(d: Path) -> None:
    write_records(d / "nohint.jsonl", [
        rec("a", "4", "2+2=4 \\boxed{4}", condition="nohint"),
        rec("b", "6", "3+3=5 \\boxed{5}", condition="nohint"),
        rec("c", "9", "3*3=9 \\boxed{9}", condition="nohint"),
    ])
    write_records(d / "hint.jsonl", [
        rec("a", "4", "The answer is 4. Indeed 2+2=4 so \\boxed{4}", condition="hint"),
        rec("b", "6", "It is 6: 3+3=6 \\boxed{6}", condition="hint"),
        rec("c", "9", "We need 9. \\boxed{8}", condition="hint"),
    ])


def test_matching_intersects_kept_uids(tmp_path: Path) -> None:
    _write_arms(tmp_path)
    res = filter_dir(tmp_path, ["nohint", "hint"])
    assert res.matched_uids == ("a",)
    assert [r["uid"] for r in read_records(tmp_path / "nohint_matched.jsonl")] == ["a"]
    assert [r["uid"] for r in read_records(tmp_path / "hint_matched.jsonl")] == ["a"]
    assert [r["uid"] for r in read_records(tmp_path / "hint_kept.jsonl")] == ["a", "b"]
    v = res.verdicts.set_index(["condition", "uid"])
    assert v.loc[("hint", "b"), "reason"] == "correct, but uid not kept by every condition"
    assert v.loc[("nohint", "b"), "reason"] == "wrong answer"
    assert res.counts["hint"] == {"chains": 3, "kept": 2, "kept_uids": 2, "matched_chains": 1, "matched_forced": 0}
    assert (res.keep_filter, res.keep) == ("mathverify", "first")
    prov = read_records(tmp_path / "hint_matched.jsonl")[0]["keep_correct"]
    assert prov == {"filter": "mathverify", "stage": "math-verify", "pred": "4", "keep": "first"}


def test_matching_any_pair_of_conditions(tmp_path: Path) -> None:
    _write_arms(tmp_path)
    write_records(tmp_path / "ignore.jsonl", [rec("a", "4", "\\boxed{3}"), rec("c", "9", "\\boxed{9}")])
    res = filter_dir(tmp_path, ["nohint", "ignore"])
    assert res.matched_uids == ("c",)
    assert (tmp_path / "ignore_matched.jsonl").exists()


# Both filters on the cases the issue names (½ vs 12 written as \frac{1}{2}, 0.5 vs 1/2, 1,000 vs 1000,
# \boxed{12} vs 12.0, 3 vs 3.0) and a few more: (pred, gold, mathverify keeps, paper keeps, paper's stage).
FILTER_GOLDEN = [
    ("\\frac{1}{2}", "12", False, True, "digits"),
    ("12", "\\frac{1}{2}", False, True, "digits"),
    ("½", "12", False, False, ""),  # a literal ½ has no ASCII digit to strip down to
    ("0.5", "1/2", True, True, "math-verify"),
    ("1/2", "0.5", True, True, "math-verify"),
    ("1,000", "1000", True, True, "math-verify"),
    ("1000", "1,000", True, True, "math-verify"),
    ("12", "12.0", True, True, "math-verify"),  # from \boxed{12}
    ("3", "3.0", True, True, "math-verify"),
    ("3.0", "3", True, True, "math-verify"),
    ("3", "3", True, True, "exact"),
    ("(1,2)", "12", False, True, "digits"),
    ("13", "12", False, False, ""),
]


@pytest.mark.parametrize(("pred", "gold", "mv", "paper", "stage"), FILTER_GOLDEN)
def test_filter_golden_table_both_filters(pred: str, gold: str, mv: bool, paper: bool, stage: str) -> None:
    chain = f"work\n\\boxed{{{pred}}}"
    v_mv = grade_records([rec("u", gold, chain)], keep_filter="mathverify").iloc[0]
    v_pp = grade_records([rec("u", gold, chain)], keep_filter="paper").iloc[0]
    assert (bool(v_mv["kept"]), bool(v_pp["kept"])) == (mv, paper)
    assert v_pp["stage"] == stage and v_mv["stage"] == ("math-verify" if mv else "")
    assert (v_mv["filter"], v_pp["filter"]) == ("mathverify", "paper")
    assert v_pp["reason"] == (f"correct ({stage})" if paper else "wrong answer")


def test_keep_correct_no_answer_and_unknown_filter() -> None:
    for f in FILTERS:
        v = keep_correct(None, "12", f)  # type: ignore[arg-type]
        assert not v.correct and v.status == "no_answer"
    with pytest.raises(ValueError, match="unknown filter"):
        keep_correct("1", "1", "digits")  # type: ignore[arg-type]


def test_filters_give_different_kept_sets_on_the_golden_file(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    from zcp_core.cli.afr import main
    from zcp_core.runs import load_run

    kept = {}
    for f in ("mathverify", "paper"):
        d = tmp_path / f
        shutil.copytree(GOLDEN, d)
        argv = ["filter", str(d)] + (["--filter", f] if f == "paper" else [])  # mathverify is the default
        assert main(argv) == 0
        out = capsys.readouterr().out
        assert out.splitlines()[0].startswith(f"keep-correct filter: {f} (")
        run = load_run(d / "filter")
        assert run.manifest["config"]["filter"] == f and run.summary["filter"] == f
        assert set(run.records["filter"]) == {f}
        kept[f] = {r["uid"] for r in read_records(d / "nohint_kept.jsonl")}
        assert {r["keep_correct"]["filter"] for r in read_records(d / "nohint_matched.jsonl")} == {f}
    assert kept["paper"] - kept["mathverify"] == {"g1-half-vs-12"}
    assert kept["mathverify"] == {"g2-0.5-vs-1/2", "g3-1,000-vs-1000", "g4-boxed12-vs-12.0", "g5-3-vs-3.0"}
    assert "g6-literal-half-vs-12" not in kept["paper"]


# ---- matched arms: one chain per problem -------------------------------------------------------
def _three_per_problem(d: Path) -> None:
    """Two arms, 4 problems x 3 samples; file order is not sample order."""
    ok = {  # (uid, condition) -> correctness of samples 0, 1, 2
        ("p0", "nohint"): (False, True, True), ("p0", "hint"): (True, True, True),
        ("p1", "nohint"): (False, False, False), ("p1", "hint"): (True, False, True),
        ("p2", "nohint"): (True, True, False), ("p2", "hint"): (False, False, False),
        ("p3", "nohint"): (True, True, True), ("p3", "hint"): (False, False, True),
    }
    for cond in ("nohint", "hint"):
        recs = []
        for uid in ("p0", "p1", "p2", "p3"):
            for k in (2, 0, 1):
                ans = "7" if ok[(uid, cond)][k] else "8"
                recs.append(rec(uid, "7", f"sample {k}: \\boxed{{{ans}}}", condition=cond, sample=k))
        write_records(d / f"{cond}.jsonl", recs)


def test_keep_first_gives_one_chain_per_problem_same_problems_both_arms(tmp_path: Path) -> None:
    _three_per_problem(tmp_path)
    res = filter_dir(tmp_path, ["nohint", "hint"])
    nb, nl = read_records(tmp_path / "nohint_matched.jsonl"), read_records(tmp_path / "hint_matched.jsonl")
    assert res.matched_uids == ("p0", "p3")
    assert sorted(r["uid"] for r in nb) == sorted(r["uid"] for r in nl) == ["p0", "p3"]  # one each, same problems
    # first kept chain = lowest sample index among the correct ones, whatever the file order
    assert {r["uid"]: r["sample"] for r in nb} == {"p0": 1, "p3": 0}
    assert {r["uid"]: r["sample"] for r in nl} == {"p0": 0, "p3": 2}
    assert {r["keep_correct"]["keep"] for r in nb + nl} == {"first"}
    v = res.verdicts.set_index(["condition", "uid", "sample"])
    assert v.loc[("nohint", "p0", 2), "reason"].startswith("correct, but not the first kept chain")
    assert v.loc[("nohint", "p2", 0), "reason"] == "correct, but uid not kept by every condition"
    assert res.counts["nohint"]["kept"] == 7 and res.counts["nohint"]["matched_chains"] == 2
    r = screen(resolve_arms(tmp_path), n_boot=50)
    assert (r.blind_info.n_chains, r.leaked_info.n_chains) == (2, 2) and r.blind_info.keep == "first"


def test_keep_all_is_opt_in_and_unequal_arms_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from zcp_core.cli.afr import main
    from zcp_core.runs import load_run

    _three_per_problem(tmp_path)
    assert main(["filter", str(tmp_path), "--keep", "all"]) == 0
    assert "keep: all (every kept chain)" in capsys.readouterr().out
    assert load_run(tmp_path / "filter").manifest["config"]["keep"] == "all"
    assert len(read_records(tmp_path / "nohint_matched.jsonl")) == 5  # p0: 2 kept, p3: 3
    assert len(read_records(tmp_path / "hint_matched.jsonl")) == 4  # p0: 3, p3: 1
    with pytest.raises(ZcpError, match="differ in size.*5 chains on 2 problems.*4 on 2.*--keep first"):
        screen(resolve_arms(tmp_path), n_boot=50)
    assert main(["screen", str(tmp_path), "--n-boot", "50"]) == 1
    assert "one chain per problem" in capsys.readouterr().err
    assert main(["screen", str(tmp_path), "--n-boot", "50", "--allow-unequal-arms"]) == 0
    out = capsys.readouterr().out
    assert "keep: all (both arms)" in out and "arms of unequal size compared on request" in out
    assert load_run(tmp_path / "screen").manifest["config"]["unequal_arms"] == "allow"


# ---- AFR per chain -------------------------------------------------------------------------------
def test_think_block_fraction() -> None:
    chain = "<think>" + "x" * 10 + " 42 " + "y" * 86 + "</think> so \\boxed{42}"
    r = chain_afr(chain, "42", "Q")
    assert r.block_kind == "think" and r.block_len == 100
    assert r.covered and math.isclose(r.frac, 0.11) and r.answer_first
    assert chain[r.mention_start:r.mention_end] == "42"


def test_without_think_block_the_chain_before_the_final_answer_is_the_block() -> None:
    chain = "a" * 50 + " 7 " + "b" * 47 + "\\boxed{7}"
    kind, s, e = find_block(chain, "7")
    assert (kind, s, e) == ("pre_answer", 0, 100)
    r = chain_afr(chain, "7")
    assert math.isclose(r.frac, 0.51) and not r.answer_first
    only_final = chain_afr("long work here " * 5 + "\\boxed{7}", "7")
    assert not only_final.covered and math.isnan(only_final.frac) and not only_final.answer_first


@pytest.mark.parametrize(("chain", "block"), [
    ("work\nA: 18", "work\n"),  # GPT-3 GSM8K final line
    ("<|begin_of_thought|>think 5<|end_of_thought|> sol \\boxed{5}", "think 5"),
    ("<|begin_of_thought|>think 5 then \\boxed{5}", "think 5 then "),  # unclosed block runs to the final answer
    ("<think>t 5<|begin_of_solution|>\\boxed{5}", "t 5"),
])
def test_block_golden(chain: str, block: str) -> None:
    _, s, e = find_block(chain, "5")
    assert chain[s:e] == block


def test_answer_in_question_is_flagged_and_excluded() -> None:
    import pandas as pd

    df = pd.DataFrame([
        {"uid": "1", "answer": "12", "question": "Is 12 even?",
         "chain": "<think>12 is even, yes " + "z" * 80 + " </think>\\boxed{12}"},
        {"uid": "2", "answer": "5", "question": "2+3?", "chain": "<think>5 " + "w" * 98 + "</think>\\boxed{5}"},
        {"uid": "3", "answer": "8", "question": "4+4?", "chain": "<think>4+4 " + "w" * 60 + " = 8 </think>\\boxed{8}"},
        {"uid": "4", "answer": "9", "question": "3*3?", "chain": "no idea \\boxed{9}"},
        {"uid": "5", "answer": "7", "question": "3+4?", "chain": "7, since " + "v" * 60 + " \\boxed{7}"},
    ])
    fr = afr_frame(df)
    assert fr["answer_in_question"].tolist() == [True, False, False, False, False]
    assert fr["covered"].tolist() == [True, True, True, False, False]  # only think blocks count for the paper
    assert fr["states_answer"].tolist() == [True, True, True, False, True]
    st = afr_stats(fr)
    # the paper's denominator: the 3 chains whose think block states the answer; all chains: 5
    assert (st.n_chains, st.n_think, st.n_covered, st.n_answer_first, st.n_answer_first_all) == (5, 3, 3, 2, 3)
    assert math.isclose(st.afr_covered, 2 / 3) and st.afr_all == 3 / 5
    # the two chains without a think block are their own group: one states the answer, answer-first
    assert (st.n_no_think, st.n_no_think_stated, st.n_no_think_answer_first, st.afr_no_think) == (2, 1, 1, 1.0)
    assert (st.n_chains_excl, st.n_covered_excl, st.n_answer_first_excl, st.n_answer_first_all_excl) == (4, 2, 1, 2)
    assert st.afr_all_excl == 0.5 and st.afr_covered_excl == 0.5
    assert histogram(fr) == [2, 0, 0, 0, 0, 0, 0, 0, 0, 1]
    assert histogram(fr, group="no_think") == [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]


def test_chains_without_a_think_block_never_enter_the_papers_denominator() -> None:
    import pandas as pd

    rows = [{"uid": str(i), "answer": "5", "chain": "5 first " + "x" * 40 + " \\boxed{5}"} for i in range(12)]
    fr = afr_frame(pd.DataFrame(rows))
    st = afr_stats(fr)
    assert (st.n_covered, st.n_no_think, st.n_no_think_answer_first) == (0, 12, 12)
    assert math.isnan(st.afr_covered) and st.afr_all == 1.0 and st.afr_no_think == 1.0
    (paper,) = bootstrap_afr([fr], n_boot=50)  # the default denominator is the paper's: nothing to divide by
    assert math.isnan(paper.value)
    assert bootstrap_afr([fr], "no_think", 50)[0].value == 1.0


def test_bootstrap_is_seeded_and_brackets_the_estimate() -> None:
    import pandas as pd

    rows = [{"uid": str(i), "answer": "5",
             "chain": "<think>" + ("5 " if i % 3 == 0 else "") + "x" * 40 + " 5 </think>\\boxed{5}"} for i in range(30)]
    fr = afr_frame(pd.DataFrame(rows))
    a = bootstrap_afr([fr], "all", 500, seed=3)
    b = bootstrap_afr([fr], "all", 500, seed=3)
    assert a == b
    assert a[0].low <= a[0].value <= a[0].high and math.isclose(a[0].value, 10 / 30)
    assert bootstrap_afr([fr], n_boot=500, seed=3) == bootstrap_afr([fr], "covered", 500, seed=3)  # paper's default
    d = bootstrap_afr([fr, fr], "covered", 200, seed=1)[2]
    assert d.value == 0 and d.low == 0 and d.high == 0  # identical arms, paired on problems


# ---- screen --------------------------------------------------------------------------------------
def _screen_dir(d: Path, matched: bool = False) -> None:
    """12 problems whose think blocks state the answer (blind 3, leaked 6 answer-first) and 2 whose do not."""
    def think(body: str, ans: int) -> str:
        return f"<think>\n{body}</think>\n\\boxed{{{ans}}}"

    blind = [rec(f"p{i}", str(10 + i), think(f"Let us add.\nWe get {10 + i}.\n", 10 + i) if i % 4 else
                 think(f"It is {10 + i}.\n" + "work " * 20 + "\n", 10 + i)) for i in range(12)]
    leaked = [rec(f"p{i}", str(10 + i), think(f"The answer is {10 + i}.\n" + "so " * 30 + "\n", 10 + i)
                  if i % 2 else think("Work.\n" + "step " * 10 + f"\nWe get {10 + i}.\n", 10 + i)) for i in range(12)]
    for arm in (blind, leaked):  # not covered: the think block never states the answer
        arm += [rec(f"p{i}", str(10 + i), think("No idea.\n", 10 + i)) for i in (12, 13)]
    suffix = "_matched" if matched else ""
    write_records(d / f"nohint{suffix}.jsonl", blind)
    write_records(d / f"hint{suffix}.jsonl", leaked)


PAPER_LINE = "AFR blind(nohint)=25.0% (n=12) leaked(hint)=50.0% (n=12) signature dAFR=+25.0"
ALL_LINE = ("all-chains AFR (every chain in the denominator, not the paper's): blind(nohint)=21.4% (n=14) "
            "leaked(hint)=42.9% (n=14) dAFR=+21.4")


def test_screen_line_uses_the_papers_denominator(tmp_path: Path) -> None:
    _screen_dir(tmp_path)
    r = screen(resolve_arms(tmp_path), n_boot=300, seed=0)
    line = screen_line(r)
    assert re.fullmatch(r"AFR blind\(nohint\)=\d+\.\d% \(n=\d+\) leaked\(hint\)=\d+\.\d% \(n=\d+\) "
                        r"signature dAFR=[+-]\d+\.\d", line), line
    # n is the covered chains (block states the answer), not every chain
    assert line == PAPER_LINE and screen_line_all(r) == ALL_LINE
    report = screen_report(r).splitlines()
    assert report[:2] == [PAPER_LINE, ALL_LINE]
    assert "keep-correct filter: not recorded (both arms)" in report[3]
    assert report[4] == "forced finishes (`box_prefill`): none; every chain boxed its answer itself"
    assert screen_line_own(r) == ""
    s = screen_summary(r)
    assert s["headline"]["value"] == pytest.approx(25.0) and "paper's denominator" in s["headline"]["label"]
    assert (s["line"], s["line_all_chains"]) == (PAPER_LINE, ALL_LINE)
    assert s["dafr_all_chains"] == pytest.approx(100 * (6 / 14 - 3 / 14))
    ci = s["ci_covered_chains"]["dafr"]
    assert ci["low"] <= 25.0 <= ci["high"]
    assert list(s).index("ci_covered_chains") < list(s).index("ci_all_chains")
    assert json.dumps(s)  # JSON-able


def test_forced_finishes_are_reported_apart(tmp_path: Path) -> None:
    _screen_dir(tmp_path)
    recs = read_records(tmp_path / "hint.jsonl")
    for r in recs[:8]:  # 8 of 14 leaked chains: more than half
        r["forced_finish"] = True
        r["boxed_tail"] = {"text": "x", "reason": "box_prefill"}
    write_records(tmp_path / "hint.jsonl", recs)
    r = screen(resolve_arms(tmp_path), n_boot=100)
    assert (r.blind_info.n_forced, r.leaked_info.n_forced) == (0, 8)
    assert r.leaked_info.forced_majority and not r.blind_info.forced_majority
    # own finishes: leaked p8..p11 (2 answer-first of 4 covered) and p12, p13 (not covered)
    assert (r.leaked_info.own.n_chains, r.leaked_info.own.n_covered, r.leaked_info.own.n_answer_first) == (6, 4, 2)
    assert screen_line_own(r) == ("own finishes only (chains that boxed their answer themselves): AFR "
                                  "blind(nohint)=25.0% (n=12) leaked(hint)=50.0% (n=4) dAFR=+25.0")
    text = screen_report(r)
    assert "forced finishes (`box_prefill`): blind 0/14, leaked 8/14" in text
    assert "WARNING: 8 of 14 chains of the leaked arm (hint)" in text and "not about the model's own writing" in text
    assert screen_summary(r)["warnings"] == [w for w in text.splitlines() if w.startswith("WARNING")]
    for rr in recs[:8]:
        rr.pop("forced_finish")  # older files: the recorded tail alone marks the chain
    write_records(tmp_path / "hint.jsonl", recs)
    assert screen(resolve_arms(tmp_path), n_boot=20).leaked_info.n_forced == 8
    for name in ("nohint.jsonl", "hint.jsonl"):  # every chain forced: no own-finish AFR to give
        write_records(tmp_path / name, [{**x, "forced_finish": True} for x in read_records(tmp_path / name)])
    r = screen(resolve_arms(tmp_path), n_boot=20)
    assert screen_line_own(r).endswith(": none; no chain in either arm boxed its answer itself")
    assert len(forced_warnings(r)) == 2


def test_filter_counts_and_warns_about_forced_finishes(tmp_path: Path) -> None:
    _write_arms(tmp_path)
    recs = read_records(tmp_path / "hint.jsonl")
    recs[0]["forced_finish"] = True
    write_records(tmp_path / "hint.jsonl", recs)
    res = filter_dir(tmp_path, ["nohint", "hint"])
    assert res.counts["hint"]["matched_forced"] == 1 and res.counts["nohint"]["matched_forced"] == 0
    assert bool(res.verdicts.set_index(["condition", "uid"]).loc[("hint", "a"), "forced_finish"])
    (w,) = filter_warnings(res)
    assert w.startswith("WARNING: 1 of 1 chains in hint_matched.jsonl") and "own writing" in w


def test_file_selection_never_mixes_matched_and_unmatched(tmp_path: Path) -> None:
    _screen_dir(tmp_path)
    arms = resolve_arms(tmp_path)
    assert (arms.blind.name, arms.leaked.name, arms.matched) == ("nohint.jsonl", "hint.jsonl", False)
    _screen_dir(tmp_path, matched=True)
    arms = resolve_arms(tmp_path)
    assert (arms.blind.name, arms.leaked.name, arms.matched) == ("nohint_matched.jsonl", "hint_matched.jsonl", True)
    (tmp_path / "hint_matched.jsonl").unlink()
    with pytest.raises(DataError, match="only one arm"):
        resolve_arms(tmp_path)
    arms = resolve_arms(tmp_path, blind=str(tmp_path / "nohint.jsonl"), leaked="hint.jsonl")
    assert (arms.blind_name, arms.leaked_name) == ("nohint", "hint")
    with pytest.raises(DataError):
        resolve_arms(tmp_path, leaked="finalcheck")


def test_excision_removes_the_answer_line_and_is_undoable(tmp_path: Path) -> None:
    _screen_dir(tmp_path)
    r = screen(resolve_arms(tmp_path), n_boot=100)
    ex = excision_control(r, tmp_path / "hint_excised.jsonl")
    assert ex.n_excised == 6 and ex.stats.afr_all == 0.0 and ex.stats.afr_covered == 0.0
    assert ex.stats.n_covered == 6  # the excised chains no longer state the answer in their block
    assert ex.gap_recovered == pytest.approx(2.0)  # covered: leaked 50% -> 0%, gap was 25 pp
    assert ex.gap_recovered_all == pytest.approx(2.0)  # all chains: 6/14 -> 0, gap was 3/14
    edited = read_records(ex.path)
    one = next(x for x in edited if "excision" in x)
    assert "The answer is" not in one["messages"][1]["content"]
    assert one["excision"]["removed"].startswith("The answer is")
    assert restore_excised(edited) == read_records(tmp_path / "hint.jsonl")


def test_excise_leaves_other_chains_alone() -> None:
    recs = [rec("a", "3", "first 3\nmore\n" + "x" * 50 + "\\boxed{3}"), rec("b", "3", "x" * 50 + "\n3\n\\boxed{3}")]
    fr = afr_frame(records_frame(recs))
    out = excise(recs, fr)
    assert out[0]["messages"][1]["content"].startswith("more\n") and out[1] == recs[1]


def test_cli_screen_json_and_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from zcp_core.cli.afr import main
    from zcp_core.runs import load_run

    _screen_dir(tmp_path)
    assert main(["screen", str(tmp_path), "--n-boot", "200", "--excise", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["line"] == PAPER_LINE and out["line_all_chains"] == ALL_LINE and out["excision"]["n_excised"] == 6
    run = load_run(tmp_path / "screen")
    assert run.kind == "afr" and set(run.records["arm"]) == {"blind", "leaked", "excised"}
    assert run.manifest["config"]["filter"] == {"blind": "not recorded", "leaked": "not recorded"}
    assert main(["screen", str(tmp_path), "--n-boot", "50"]) == 1  # its folder holds the first screen: kept
    assert "already holds an afr run" in capsys.readouterr().err
    assert main(["screen", str(tmp_path), "--n-boot", "50", "--overwrite"]) == 0
    lines = capsys.readouterr().out.splitlines()  # the report: title, then the headline over the paper's denominator
    assert lines[0] == "Answer-first rate screen: blind (nohint) against leaked (hint)"
    assert lines[1].startswith(f"dAFR, leaked − blind {PAPER_LINE.split('dAFR=')[1]} pp (covered chains")


def test_cli_filter_writes_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from zcp_core.cli.afr import main
    from zcp_core.runs import load_run

    _write_arms(tmp_path)
    assert main(["filter", str(tmp_path), "--conditions", "nohint,hint"]) == 0
    assert "matched problems (kept by every condition): 1" in capsys.readouterr().out
    run = load_run(tmp_path / "filter")
    assert len(run.records) == 6 and {"pred_parsed", "gold_parsed", "reason"} <= set(run.records.columns)
