"""Keep-correct filter, matched arms, AFR (both denominators), screen line, excision, file selection."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from zcp_core.afr import (
    afr_frame,
    afr_stats,
    bootstrap_afr,
    chain_afr,
    excise,
    excision_control,
    filter_dir,
    find_block,
    grade_records,
    histogram,
    read_records,
    records_frame,
    resolve_arms,
    restore_excised,
    screen,
    screen_line,
    screen_report,
    screen_summary,
    write_records,
)
from zcp_core.errors import DataError


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
    assert res.counts["hint"] == {"chains": 3, "kept": 2, "kept_uids": 2, "matched_chains": 1}


def test_matching_any_pair_of_conditions(tmp_path: Path) -> None:
    _write_arms(tmp_path)
    write_records(tmp_path / "ignore.jsonl", [rec("a", "4", "\\boxed{3}"), rec("c", "9", "\\boxed{9}")])
    res = filter_dir(tmp_path, ["nohint", "ignore"])
    assert res.matched_uids == ("c",)
    assert (tmp_path / "ignore_matched.jsonl").exists()


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
        {"uid": "1", "answer": "12", "question": "Is 12 even?", "chain": "12 is even, yes " + "z" * 80 + " \\boxed{12}"},
        {"uid": "2", "answer": "5", "question": "2+3?", "chain": "5 " + "w" * 98 + "\\boxed{5}"},
        {"uid": "3", "answer": "8", "question": "4+4?", "chain": "4+4 " + "w" * 60 + " = 8 \\boxed{8}"},
        {"uid": "4", "answer": "9", "question": "3*3?", "chain": "no idea \\boxed{9}"},
    ])
    fr = afr_frame(df)
    assert fr["answer_in_question"].tolist() == [True, False, False, False]
    st = afr_stats(fr)
    # both denominators: all chains (4) and covered chains (3)
    assert (st.n_chains, st.n_covered, st.n_answer_first) == (4, 3, 2)
    assert st.afr_all == 0.5 and math.isclose(st.afr_covered, 2 / 3)
    assert (st.n_chains_excl, st.n_covered_excl, st.n_answer_first_excl) == (3, 2, 1)
    assert math.isclose(st.afr_all_excl, 1 / 3) and st.afr_covered_excl == 0.5
    assert histogram(fr) == [2, 0, 0, 0, 0, 0, 0, 0, 0, 1]


def test_bootstrap_is_seeded_and_brackets_the_estimate() -> None:
    import pandas as pd

    rows = [{"uid": str(i), "answer": "5", "chain": ("5 " if i % 3 == 0 else "") + "x" * 40 + " 5 \\boxed{5}"}
            for i in range(30)]
    fr = afr_frame(pd.DataFrame(rows))
    a = bootstrap_afr([fr], "all", 500, seed=3)
    b = bootstrap_afr([fr], "all", 500, seed=3)
    assert a == b
    assert a[0].low <= a[0].value <= a[0].high and math.isclose(a[0].value, 10 / 30)
    d = bootstrap_afr([fr, fr], "covered", 200, seed=1)[2]
    assert d.value == 0 and d.low == 0 and d.high == 0  # identical arms, paired on problems


# ---- screen --------------------------------------------------------------------------------------
def _screen_dir(d: Path, matched: bool = False) -> None:
    blind = [rec(f"p{i}", str(10 + i), f"Let us add.\nWe get {10 + i}.\n\\boxed{{{10 + i}}}" if i % 4 else
                 f"It is {10 + i}.\n" + "work " * 20 + f"\n\\boxed{{{10 + i}}}") for i in range(12)]
    leaked = [rec(f"p{i}", str(10 + i), f"The answer is {10 + i}.\n" + "so " * 30 + f"\n\\boxed{{{10 + i}}}"
                  if i % 2 else "Work.\n" + "step " * 10 + f"\nWe get {10 + i}.\n\\boxed{{{10 + i}}}") for i in range(12)]
    suffix = "_matched" if matched else ""
    write_records(d / f"nohint{suffix}.jsonl", blind)
    write_records(d / f"hint{suffix}.jsonl", leaked)


def test_screen_line_format_and_ci(tmp_path: Path) -> None:
    _screen_dir(tmp_path)
    r = screen(resolve_arms(tmp_path), n_boot=300, seed=0)
    line = screen_line(r)
    assert re.fullmatch(r"AFR  blind\(nohint\)=\d+\.\d% \(n=\d+\)  leaked\(hint\)=\d+\.\d% \(n=\d+\)  "
                        r"signature dAFR=[+-]\d+\.\d", line), line
    assert line == "AFR  blind(nohint)=25.0% (n=12)  leaked(hint)=50.0% (n=12)  signature dAFR=+25.0"
    report = screen_report(r)
    assert report.splitlines()[0] == line and "covered chains" in report and "all chains" in report
    s = screen_summary(r)
    assert s["headline"]["value"] == pytest.approx(25.0)
    ci = s["ci_all_chains"]["dafr"]
    assert ci["low"] <= 25.0 <= ci["high"]
    assert json.dumps(s)  # JSON-able


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
    assert ex.n_excised == 6 and ex.stats.afr_all == 0.0
    assert ex.gap_recovered == pytest.approx(2.0)  # leaked 50% -> 0%, gap was 25 pp
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
    assert out["line"].startswith("AFR  blind(nohint)=25.0%") and out["excision"]["n_excised"] == 6
    run = load_run(tmp_path / "screen")
    assert run.kind == "afr" and set(run.records["arm"]) == {"blind", "leaked", "excised"}
    assert main(["screen", str(tmp_path), "--n-boot", "50"]) == 0
    assert capsys.readouterr().out.splitlines()[0].startswith("AFR  blind(nohint)=25.0% (n=12)  leaked(hint)=50.0%")


def test_cli_filter_writes_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from zcp_core.cli.afr import main
    from zcp_core.runs import load_run

    _write_arms(tmp_path)
    assert main(["filter", str(tmp_path), "--conditions", "nohint,hint"]) == 0
    assert "matched problems (kept by every condition): 1" in capsys.readouterr().out
    run = load_run(tmp_path / "filter")
    assert len(run.records) == 6 and {"pred_parsed", "gold_parsed", "reason"} <= set(run.records.columns)
