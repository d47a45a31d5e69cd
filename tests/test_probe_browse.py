"""The probe page's item browser: ordering, number highlighting, answer rendering, one item's panel."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from zcp_core.probe.browse import Segment, browse_table, item_view, number_segments, render_answer, segments_markdown


@pytest.mark.parametrize("text, other, changed", [
    ("Tom has 3 apples and 5 pears.", "Tom has 4 apples and 5 pears.", ["3"]),
    ("It costs $1,250.50 for 12 months.", "It costs $1,375.25 for 12 months.", ["1,250.50"]),
    ("Use 3/4 of the 40 liters.", "Use 3/4 of the 60 liters.", ["40"]),
    ("20% of 80", "20% of 80", []),
    ("a 7 b 9", "a 7", ["9"]),  # nothing to compare against: marked as changed
])
def test_number_segments_golden(text: str, other: str, changed: list[str]) -> None:
    segs = number_segments(text, other)
    assert "".join(s.text for s in segs) == text
    assert [s.text for s in segs if s.changed] == changed


def test_segments_markdown_escapes_and_highlights() -> None:
    md = segments_markdown((Segment("costs $", False), Segment("5", True), Segment(" *now*", False)))
    assert md == "costs \\$:orange-background[**5**] \\*now\\*"


@pytest.mark.parametrize("answer, shown", [
    ("\\text{300}", "300"), ("300", "300"), ("\\frac{1}{2}", "$\\frac{1}{2}$"), (None, "— (no answer parsed)"),
    (float("nan"), "— (no answer parsed)"), ("2^{10}", "$2^{10}$"), (" \\text{3.5 hours} ", "3.5 hours"),
])
def test_render_answer_golden(answer: object, shown: str) -> None:
    assert render_answer(answer) == shown


def _run() -> tuple[pd.DataFrame, pd.DataFrame]:
    rows = []
    for pid, acc_o, acc_r, pa_o, pa_r in (("a", True, False, 0.9, 0.1), ("b", False, False, 0.2, 0.3),
                                          ("c", True, True, 0.5, 0.1)):
        rows.append({"arm": "original", "id": pid, "pair_id": pid, "ratio": 0.0, "question": f"{pid}: 3 and 5",
                     "gold": "8", "completion": "8}", "pred": "8" if acc_o else None, "acc": acc_o,
                     "p_first": pa_o, "p_all": pa_o})
        rows.append({"arm": "reference", "id": f"{pid}-twin", "pair_id": pid, "ratio": 0.0,
                     "question": f"{pid}: 4 and 5", "gold": "9", "completion": "7}", "pred": "9" if acc_r else "7",
                     "acc": acc_r, "p_first": pa_r, "p_all": pa_r})
    records = pd.DataFrame(rows)
    items = pd.DataFrame({
        "pair_id": ["a", "b", "c"], "question": ["a: 3 and 5", "b: 3 and 5", "c: 3 and 5"],
        "reference_question": ["a: 4 and 5", "b: 4 and 5", "c: 4 and 5"], "acc_original": [True, False, True],
        "acc_reference": [False, False, True], "p_all_gap": [0.8, -0.1, 0.4],
        "flip": ["orig_only", "both_wrong", "both_correct"], "flagged": [True, False, False],
        "evidence": ["e-a", "e-b", "e-c"],
    })
    return records, items


def test_browse_table_lists_flagged_first_then_by_gap() -> None:
    _, items = _run()
    table = browse_table(items)
    assert list(table["Item"]) == ["a", "c", "b"]
    assert list(table.columns[:3]) == ["Item", "Flagged", "Flip"]
    assert "P(all answer tokens), original minus twins" in table.columns
    # No internal name on the browser: no snake_case, no P_all / P_first.
    assert not [c for c in table.columns if "_" in c], list(table.columns)


def test_item_view_shows_both_sides() -> None:
    records, items = _run()
    view = item_view(records, items, "a")
    assert view.flagged and view.flip == "orig_only" and math.isclose(view.p_all_gap, 0.8)
    orig, twin = view.arms
    assert (orig.arm, twin.arm) == ("original", "reference")
    assert [s.text for s in orig.segments if s.changed] == ["3"] and [s.text for s in twin.segments if s.changed] == ["4"]
    assert orig.correct and not twin.correct and twin.pred == "7" and twin.completion == "7}"
    with pytest.raises(KeyError):
        item_view(records, items, "zzz")


@pytest.mark.parametrize(("completion", "shown"), [
    ("48}", "\\boxed{48}"),
    ("1.25} 16.00", "\\boxed{1.25}   (then, outside the box: 16.00)"),
    ("\\frac{1}{2}}", "\\boxed{\\frac{1}{2}}"),
    ("the answer is 5", "\\boxed{the answer is 5   ← the box was never closed"),
    ("  ", "(empty completion)"),
])
def test_a_completion_shows_its_box_and_what_followed_apart(completion: str, shown: str) -> None:
    from zcp_core.probe.browse import show_completion

    assert show_completion(completion) == shown


def test_a_c_bar_takes_its_colour_from_its_reading() -> None:
    from pathlib import Path

    import pandas as pd

    from zcp_core.probe.viz import READING_COLORS, confidence_figure
    from zcp_core.report import evidence_words

    tests = pd.read_parquet(Path(__file__).resolve().parent.parent / "data/examples/probe-lab-direct/tests.parquet")
    fig = confidence_figure(tests)
    for bar in fig.data:
        assert bar.marker.color == READING_COLORS[bar.name]
        assert all(evidence_words(c) == bar.name for c in bar.y)
    assert {b.name for b in fig.data} == {"no evidence", "evidence of contamination"}


def test_an_item_without_a_p_says_how_many_distinct_twins_it_has() -> None:
    from pathlib import Path

    from zcp_core.probe.browse import item_view

    run = Path(__file__).resolve().parent.parent / "data" / "examples" / "probe-lab-direct"
    items = pd.read_parquet(run / "items.parquet")
    records = pd.read_parquet(run / "records.parquet")
    lone = items[items["item_p"].isna()].iloc[0]
    view = item_view(records, items, str(lone["pair_id"]))
    assert view.p_text.startswith("no per-item p: 1 distinct twin, and a p needs at least 2")


@pytest.mark.parametrize(("completion", "status", "correct"), [
    ("5}", "ok", True),
    ("6}", "ok", False),
    ("I think it is 5 because 1 and 4 make 5", "unclosed", False),  # the last number of prose is no answer
    ("answer}", "not_a_number", False),
    ("", "no_answer", False),
])
def test_an_unclosed_box_is_never_graded(completion: str, status: str, correct: bool) -> None:
    from zcp_core.probe import ProbeConfig
    from zcp_core.probe.config import NOT_GRADED
    from zcp_core.probe.measure import grade_zero_cot

    _, _, got, right = grade_zero_cot(completion, "5", ProbeConfig(metrics=("acc",)))
    assert (got, right) == (status, correct)
    assert (got in NOT_GRADED) == (status in ("unclosed", "not_a_number"))
