"""Bold markers left after a pattern cut some are cut, only with that evidence, and undone like any edit."""

from __future__ import annotations

import pytest

from zcp_core.artifacts import CleanConfig, clean, load_library
from zcp_core.artifacts.edits import undo
from zcp_core.artifacts.markup import RULE_ID, bold_evidence, find_left_bold
from zcp_core.schema import TextRecord

BOLD_CUT = [{"start": 0, "pattern_id": "beg-bold-headline", "original": "**"}]

# (cleaned text, the pattern edits applied, the text with the rule's cuts made)
GOLDEN = [
    ("London** - For a bold move, the council voted.", BOLD_CUT, "London - For a bold move, the council voted."),
    ("In a heart-wrenching incident**, four lives were lost.", BOLD_CUT, "In a heart-wrenching incident, four lives "
     "were lost."),
    ('the parties are stopped."****The move was welcomed.', BOLD_CUT, 'the parties are stopped."The move was welcomed.'),
    # a free-standing run takes one space with it; one closing the text takes the space before it
    ("She fell into old habits. ** ** She hardly knew.", BOLD_CUT, "She fell into old habits. She hardly knew."),
    ("The incident is being investigated. **", BOLD_CUT, "The incident is being investigated."),
    # a bold span stays, and so do asterisks that are no markup: in a word, between operands, in code, a rating,
    # a scene break (an independent review's human writing)
    ("This place is **really** the best.", BOLD_CUT, "This place is **really** the best."),
    ("What the f**k is up with the parking?", BOLD_CUT, "What the f**k is up with the parking?"),
    ("Run `x**2` and then print(2 ** 10).", BOLD_CUT, "Run `x**2` and then print(2 ** 10)."),
    ("Stars: ***** (5/5). The end.\n***\nThe next day.", BOLD_CUT, "Stars: ***** (5/5). The end.\n***\nThe next day."),
    # a stray marker next to a bold span goes; runs that meet at the end go as one
    ("Millions**[Kathmandu, Nepal]** - A quake hit.", BOLD_CUT, "Millions[Kathmandu, Nepal] - A quake hit."),
    ("The end. ** **", BOLD_CUT, "The end."),
    # no evidence: a human text's emphasis and scene breaks stay
    ("We would be there when the other **fell**. ***** The next day it rained.", [], None),
    # a rule's or the detector's cut is no evidence; nor is a pattern cut without "**"
    ("London** - The council voted.", [{"start": 0, "pattern_id": "rule:title-restated-4", "original": "**A**"}],
     None),
    ("London** - The council voted.", [{"start": 0, "pattern_id": "beg-here-is", "original": "Here is: "}], None),
]


@pytest.mark.parametrize("text, applied, after", GOLDEN)
def test_find_left_bold_golden(text, applied, after):
    cuts = find_left_bold(text, applied)
    if after is None:
        assert cuts == []
        return
    out, last = [], 0
    for c in cuts:
        out.append(text[last: c.start])
        last = c.end
    assert "".join(out) + text[last:] == after


def test_evidence_is_a_patterns_cut_of_bold():
    assert bold_evidence(BOLD_CUT)
    assert not bold_evidence([{"start": 0, "pattern_id": "learned:edges-1:head", "original": "**T**"}])


def test_the_cleaning_cuts_left_markers_records_and_undoes_them():
    text = "**Harbour Ferry Returns**London** - The ferry is back after the winter, the council said on Monday."
    t = TextRecord(id="b1", text=text, label="llm", llm_type="Google-PaLM", data_type="direct_prompt")
    r = clean([t], load_library(), config=CleanConfig(edges="auto"))
    rows = r.edits[(r.edits["pattern_id"] == RULE_ID) & r.edits["applied"]]
    assert len(rows) == 1 and rows.iloc[0]["original"] == "**"
    assert "**" not in r.texts[0].text
    assert undo(r.texts[0].text, r.edits[r.edits["id"] == "b1"].to_dict("records")) == text


def test_a_human_text_with_bold_and_no_pattern_cut_is_untouched():
    text = "We would be there when the other **fell**, and hold each other. ***** The next day it rained."
    t = TextRecord(id="h1", text=text, label="human", llm_type="", data_type="story")
    r = clean([t], load_library(), config=CleanConfig(edges="auto"))
    assert r.texts[0].text == text and not (r.edits["pattern_id"] == RULE_ID).any()
