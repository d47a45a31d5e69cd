"""Sentence numbers left after a cut "1." are cut as a run from 2; a human inline list is not."""

from __future__ import annotations

import pytest

from zcp_core.artifacts import CleanConfig, clean, load_library
from zcp_core.artifacts.edits import undo
from zcp_core.artifacts.numbering import RULE_ID, find_sentence_numbers
from zcp_core.schema import TextRecord

# (text, the numbers cut)
GOLDEN = [
    ("Mia was excited for her birthday. 2. Today she would turn five. 3. Her parents had a plan. 4. It rained.",
     [2, 3, 4]),
    ('He left. 2. "Come back," she said. 3. He did not.', [2, 3]),
    # a stray number that is not the next one does not break the run
    ("She ran. 2. She came 3. in the race. 3. She smiled.", [2, 3]),
    # a human list written inline: it starts where the list starts, or after its own "1."
    ("The tower has three parts. 1. The base. 2. The shaft. 3. The top.", []),
    ("1. Preheat the oven. 2. Mix the flour. 3. Bake.", []),
    ("We reached capacity. 3. Electrostatic tower. 4. Cooling.", []),
    # a number after an abbreviation is no sentence number; a list opened after a colon has its own "1."
    ("Murray moves up to No. 2. Federer drops to No. 3. Nadal stays fourth.", []),
    ("The light curve is shown in Fig. 2. The fitted model is given in Eq. 3. We find a period of 3.2 days.", []),
    ("Reasons:1. Cost. 2. Time. 3. Space.", []),
    # one number is no run; a number inside a sentence is no sentence number
    ("She was born in 1990. 2. That was a good year.", []),
    ("He scored 2. 5 points in the final, a record.", []),
]


@pytest.mark.parametrize("text, numbers", GOLDEN)
def test_find_sentence_numbers_golden(text, numbers):
    spans = find_sentence_numbers(text)
    assert [s.n for s in spans] == numbers
    assert all(text[s.start: s.end].strip() == f"{s.n}." for s in spans)


def test_the_numbers_are_cut_recorded_and_undone():
    text = "Here is a 4 sentence story: 1. Mia was excited. 2. Today she turned five. 3. It rained. 4. She laughed."
    r = clean([TextRecord(id="t", text=text, label="llm")], load_library(), config=CleanConfig(edges="auto"))
    assert r.texts[0].text == "Mia was excited. Today she turned five. It rained. She laughed."
    assert (r.edits["pattern_id"] == RULE_ID).sum() == 3
    assert undo(r.texts[0].text, r.edits) == text


@pytest.mark.parametrize("text, cut", [
    # a short run in a text whose head nothing cut stays; a long run, or one after a cut head, goes
    ("Mia was excited. 2. Today she turned five. 3. It rained.", False),
    ("Mia was excited. 2. Today she turned five. 3. It rained. 4. She laughed. 5. Then she slept.", True),
    ("Here is a 3 sentence story: Mia was excited. 2. Today she turned five. 3. It rained.", True),
])
def test_the_rule_applies_after_a_cut_head_or_to_a_long_run(text, cut):
    r = clean([TextRecord(id="t", text=text, label="llm")], load_library(), config=CleanConfig(edges="auto"))
    assert ((r.edits["pattern_id"] == RULE_ID) & r.edits["applied"]).any() == cut
    assert undo(r.texts[0].text, r.edits) == text


def test_no_human_text_of_detectrl_has_a_run(detectrl_humans):
    """Human texts are never edited by the patterns, so their original is what the rule sees."""
    hits = [where for where, t in detectrl_humans.items() if find_sentence_numbers(t)]
    assert len(detectrl_humans) == 6035 and hits == []
