"""The AFR page renders with no runs, with a screen run and with a profile run (AppTest)."""

from __future__ import annotations

from pathlib import Path

import pytest
from apphelp import render_page

from zcp_core.runs import load_run

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "afr_sample" / "skythought_math500_traces"


def _run_page(monkeypatch: pytest.MonkeyPatch, runs: Path):  # type: ignore[no-untyped-def]
    return render_page("afr.py", runs, monkeypatch)


def test_page_without_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = _run_page(monkeypatch, tmp_path)
    assert any("No afr runs" in i.value for i in at.info)


def test_page_with_screen_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_afr import ALL_LINE, PAPER_LINE, _screen_dir

    from zcp_core.cli.afr import main

    data = tmp_path / "data"
    data.mkdir()
    _screen_dir(data)
    assert main(["screen", str(data), "--n-boot", "100", "--excise", "--out", str(tmp_path / "runs" / "s1")]) == 0
    at = _run_page(monkeypatch, tmp_path / "runs")
    # the headline names its denominator (the paper's), the all-chains figures below it; no log lines
    run = load_run(tmp_path / "runs" / "s1")
    assert [m.label for m in at.metric][:1] == ["dAFR, leaked − blind"]
    assert at.metric[0].value == f"{run.summary['headline']['value']:+.1f} pp"
    assert PAPER_LINE.split("dAFR=")[1].split()[0] in at.metric[0].value
    assert any(c.value.startswith("Counting every chain") and "dAFR " + ALL_LINE.split("dAFR=")[1] in c.value
               for c in at.caption)
    assert not at.code
    html = "".join(m.value for m in at.markdown)
    captions = "".join(c.value for c in at.caption)
    assert "keep-correct filter: not recorded" in captions and "forced finishes (`box_prefill`): none" in captions
    assert "<mark" in html and "\\boxed{" in html
    assert not at.warning
    at.checkbox[0].check().run()
    assert not at.exception


def test_one_click_opens_a_chain_with_its_first_answer_position_marked(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A user's story: open the AFR page on a screen run, click a chain, see where the gold answer is first stated."""
    from test_afr import _screen_dir

    from zcp_core.cli.afr import main
    from zcp_core.runs import load_run

    data = tmp_path / "data"
    data.mkdir()
    _screen_dir(data)
    assert main(["screen", str(data), "--n-boot", "50", "--out", str(tmp_path / "runs" / "s1")]) == 0
    frame = load_run(tmp_path / "runs" / "s1").records
    at = _run_page(monkeypatch, tmp_path / "runs")
    table = at.dataframe[1].value  # [0] is the evidence table
    assert list(table.columns[:3]) == ["Chain", "Arm", "Answer first"]
    assert table["Answer first"].tolist() == sorted(table["Answer first"].tolist(), reverse=True)
    last = len(table) - 1
    at.session_state["chain_browser"] = {"selection": {"rows": [last], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    key = table.iloc[last]["Chain"]
    group, uid, _ = key.split(" · ")
    row = frame[(frame["arm"] == group) & (frame["uid"] == uid)].iloc[0]
    text = " ".join(m.value for m in at.markdown)
    assert f"**{uid}** · {group}" in text and f"gold answer `{row['answer']}`" in text
    if row["mention_start"] >= 0:  # the marked text is exactly the stored first statement of the answer
        marked = row["chain"][int(row["mention_start"]):int(row["mention_end"])]
        assert f'title="first statement of the gold answer">{marked}</mark>' in text
        assert "Answer position: first stated at" in text
    else:
        assert "never states the gold answer" in text


def test_page_states_filter_and_warns_about_forced_finishes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_afr import _write_arms

    from zcp_core.afr import read_records, write_records
    from zcp_core.cli.afr import main

    data = tmp_path / "data"
    data.mkdir()
    _write_arms(data)
    recs = read_records(data / "hint.jsonl")
    recs[0]["forced_finish"] = True  # the one matched hint chain
    write_records(data / "hint.jsonl", recs)
    assert main(["filter", str(data), "--filter", "paper"]) == 0
    assert main(["screen", str(data), "--n-boot", "50", "--out", str(tmp_path / "runs" / "s1")]) == 0
    at = _run_page(monkeypatch, tmp_path / "runs")
    captions = "".join(c.value for c in at.caption)
    assert "keep-correct filter: paper (both arms); keep: first (both arms), one chain per problem" in captions
    assert len(at.warning) == 1 and "not about the model's own writing" in at.warning[0].value
    assert any(c.value.startswith("own finishes only") for c in at.caption)


def test_page_with_profile_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zcp_core.cli.afr import main

    out = tmp_path / "runs" / "p1"
    assert main(["profile", str(SAMPLE / "gemma-2-27b-it_math500.jsonl"), "--adapter", "skythought", "--compare",
                 str(SAMPLE / "sky-t1-math-correct-5k-27b_math500.jsonl"), "--n-boot", "100", "--out", str(out)]) == 0
    at = _run_page(monkeypatch, tmp_path / "runs")
    # one sign convention: the audited corpus (--compare) minus the comparison (FILE), as the CLI prints it
    # gemma has no think block, so the paper's denominator cannot compare them: the headline says "all chains"
    assert [(m.label, m.value) for m in at.metric][:1] == [("Difference in AFR, audited − comparison", "+20.0 pp")]
    assert at.metric[0].help == "all chains, not the paper's denominator"
    evidence = at.dataframe[0].value
    assert evidence["AFR, all chains"].tolist()[:2] == ["33.3%", "13.3%"]
    assert evidence["AFR, covered chains"].tolist()[1:] == ["–", "–"]  # gemma has no covered chain
    assert "difference=+20.0 pp" in load_run(out).summary["line_all_chains"]
    assert any("Chains without a think block" in c.value for c in at.caption)
    assert at.radio[0].value == "all chains"  # opens on the headline's denominator: gemma has no covered chain
    at.radio[0].set_value("covered chains (the paper's)").run()
    assert not at.exception
    table = at.dataframe[1].value
    assert list(table.columns[:2]) == ["Chain", "Corpus"] and len(table) > 0
    # answer-first chains first, then by position; uncovered chains (no position) last
    pos = table["Answer position (%)"].tolist()
    covered = [p for p in pos if p == p]
    assert pos[:len(covered)] == covered


def test_chain_html_escapes_and_highlights() -> None:
    from zcp_core.afr import chain_html

    chain = "<script>x</script> so 4 then \\boxed{4}"
    out = chain_html(chain, chain.index("4"), chain.index("4") + 1)
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert out.count("<mark") == 2 and ">4</mark>" in out and ">\\boxed{4}</mark>" in out
    assert chain_html("no mention", -1, -1).count("<mark") == 0


# golden tables for the pure chain-browser functions


@pytest.mark.parametrize(("chain", "block", "first", "boxes", "expected"), [
    ("think: 4 so \\boxed{4}", (0, 12), (7, 8), [(12, 21)],
     [("think: ", "block"), ("4", "first"), (" so ", "block"), ("\\boxed{4}", "box")]),
    ("Q<think>a 4 b</think>A", (8, 13), (10, 11), [],
     [("Q<think>", "outside"), ("a ", "block"), ("4", "first"), (" b", "block"), ("</think>A", "outside")]),
    ("no answer here", (0, 14), (-1, -1), [], [("no answer here", "block")]),
    ("x \\boxed{7}", (0, 2), (9, 10), [(2, 11)], [("x ", "block"), ("\\boxed{", "outside"), ("7", "first"),
                                                    ("}", "outside")]),
])
def test_chain_segments_golden(chain, block, first, boxes, expected) -> None:
    from zcp_core.afr import chain_segments

    segs = chain_segments(chain, block, first, boxes)
    assert [(s.text, s.kind) for s in segs] == expected
    assert "".join(s.text for s in segs) == chain


def test_chain_table_and_view_golden() -> None:
    import pandas as pd

    from zcp_core.afr import chain_table, chain_view

    frame = pd.DataFrame({
        "arm": ["blind", "leaked", "leaked", "blind"], "uid": ["q1", "q1", "q2", "q2"], "sample": [0, 0, 0, 0],
        "answer": ["4", "4", "9", "9"], "chain": ["so 4", "4 is it", "nine", "then 9"],
        "block_kind": ["pre_answer"] * 4, "block_start": [0, 0, 0, 0], "block_end": [4, 7, 4, 6],
        "block_len": [4, 7, 4, 6], "mention_start": [3, 0, -1, 5], "mention_end": [4, 1, -1, 6],
        "frac": [0.75, 0.0, float("nan"), 5 / 6], "covered": [True, True, False, True],
        "answer_first": [False, True, False, False], "answer_in_question": [False] * 4,
    })
    t = chain_table(frame)
    assert t["Chain"].tolist() == ["leaked · q1 · #0", "blind · q1 · #0", "blind · q2 · #0", "leaked · q2 · #0"]
    assert t["Answer position (%)"].tolist()[:3] == [0.0, 75.0, 83.3]
    v = chain_view(frame, "blind · q1 · #0", threshold=0.2)
    assert [(s.text, s.kind) for s in v.segments] == [("so ", "block"), ("4", "first")]
    assert v.position == "first stated at 75.0% of the block (character 3 of 4): not answer-first at the 20% threshold"
    assert "never states" in chain_view(frame, "leaked · q2 · #0", 0.2).position
    with pytest.raises(KeyError):
        chain_view(frame, "nope", 0.2)
