"""A title left after a lead-in the patterns cut is cut at the body's first sentence, only in a text whose head a
pattern cut, and recorded like an edit; sentence numbers the number patterns left among the ones they cut go too."""

from __future__ import annotations

import pytest

from zcp_core.artifacts import CleanConfig, clean, load_library
from zcp_core.artifacts.edits import undo
from zcp_core.artifacts.leadin import QUOTE_RULE_ID, RULE_ID, find_lead_in_title, find_quoted_tail
from zcp_core.artifacts.numbering import LEFT_RULE_ID, cut_numbers, find_left_numbers
from zcp_core.schema import TextRecord

# (text after the lead-in was cut, the title cut, its form); None: nothing is cut
GOLDEN = [
    # a sentence opener no title has in the middle: an article, a preposition, a pronoun after a title's last word
    ("Harbour ferry returns after winter break The ferry resumed its crossings on Monday after the harbour "
     "reopened.", "Harbour ferry returns after winter break", "opener"),
    ("Tidal Modes of Slowly Rotating Stars In this paper we compute the tidal modes of rotating stars.",
     "Tidal Modes of Slowly Rotating Stars", "opener"),
    ("On the Roof of the World I climbed for days until the roof of the world lay below me.",
     "On the Roof of the World", "opener"),
    ("Village bakery wins bread award A village bakery has won a national award for its bread.",
     "Village bakery wins bread award", "opener"),
    # a Title Case title, then a two-word name the text names again by its surname
    ("Veteran Keeper Questions Club Over Contract Snub Tom Hadley said on Friday he was hurt. Hadley, 38, has "
     "played for the club for years.", "Veteran Keeper Questions Club Over Contract Snub", "name"),
    # a pronoun is no name: the cut is at the pronoun
    ("Disorder and Peak Effects in Polydisperse Particle Systems We employ simulations of particle systems.",
     "Disorder and Peak Effects in Polydisperse Particle Systems", "opener"),
    # a Title Case title capitalises its own prepositions and pronouns: those go on the title
    ("Swimmers at Risk After Storm Pollution Swimmers in the bay were warned after the storm.", None, None),
    ("Painter Forced to Hang Up His Brush After Accident The painter said his brush was done.", None, None),
    # "A" after a capital is a name's ("Serie A"); a number word may be too ("League Two")
    ("Club Faces Bankruptcy as Season Nears End Serie A side Parma have been declared bankrupt by a court.",
     None, None),
    # prose: a pronoun after a lower case word, a sentence with a verb before the name, a short title-case phrase
    ("From the moment I walked in, the moment felt right and the staff were kind.", None, None),
    ("England and Manchester City Captain Steph Houghton questioned the decision. Houghton said it was unfair.",
     None, None),
    # the name's first word written after the title's last word elsewhere: a longer name, not cut there
    ("Cardiff to Host the Cup Final in Boost for Welsh Football Wales has been chosen to host. Welsh football "
     "welcomed it, and Wales is ready.", None, None),
    # a title ending in a word it already used: the body's rank before the name says it again
    ("Police Commander Calls on Residents to Report Crime as Local Commander Jan Reed spoke on Monday. Reed said "
     "crime fell.", None, None),
    # an independent code review's reproducers: a name after the opener ("The Guardian", "Her Majesty"), a pair the
    # text writes again ("vitamin A"), "I" after prose, a quote left open
    ("Scientists working with NASA told The Guardian on Monday that scientists had found water.", None, None),
    ("Crowds gathered to greet Her Majesty as the crowds cheered along the road.", None, None),
    ("Deficiency of vitamin A is a leading cause of blindness in children. Vitamin A supplementation helps.",
     None, None),
    ("Last summer in Paris I discovered a tiny bakery. Paris had many bakeries, but this was summer magic.",
     None, None),
    ("Every Christmas Eve I sit by the window. Christmas Eve is quiet.", None, None),
    ('Printed in 1611 and known as the "Great She Bible" it was printed in a great hurry.', None, None),
    # no content word of the title comes back: no title of this body
    ("Quiet Evening The lake was calm and nobody spoke until dawn.", None, None),
    # a comma, an auxiliary or a sentence end before the opener: a sentence, not a title
    ("Everyone knows how good it is, so I will not tell you how good it is.", None, None),
    ("The council has agreed a plan The plan was agreed on Monday.", None, None),
]


@pytest.mark.parametrize(("text", "title", "form"), GOLDEN)
def test_find_lead_in_title_golden(text, title, form):
    found = find_lead_in_title(text)
    if title is None:
        assert found is None
    else:
        assert found is not None and text[: found.at].strip() == title and found.form == form


LEAD_IN = "Here is a 3 sentence news article: "
ARTICLE = ("Harbour ferry returns after winter break The ferry resumed its crossings on Monday. Passengers "
           "welcomed the ferry back. The harbour master said the crossings would run daily.")


def test_the_title_after_a_cut_lead_in_is_cut_recorded_and_undone():
    text = LEAD_IN + ARTICLE
    r = clean([TextRecord(id="t", text=text, label="llm")], load_library(), config=CleanConfig(edges="auto"))
    assert r.texts[0].text.startswith("The ferry resumed its crossings on Monday.")
    row = r.edits[r.edits["pattern_id"] == RULE_ID]
    assert len(row) == 1 and row["applied"].all() and row["original"].iloc[0].strip() == ARTICLE[:40]
    assert undo(r.texts[0].text, r.edits) == text


def test_without_a_cut_lead_in_the_rule_does_not_run():
    """The same opening in a text whose head no pattern cut stays: the lead-in is the rule's evidence."""
    r = clean([TextRecord(id="t", text=ARTICLE, label="llm")], load_library(), config=CleanConfig(edges="auto"))
    assert not (r.edits["pattern_id"] == RULE_ID).any()


def test_a_rejected_lead_in_cut_is_recorded_and_not_applied():
    text, lib = LEAD_IN + ARTICLE, load_library()
    first = clean([TextRecord(id="t", text=text, label="llm")], lib, config=CleanConfig(edges="auto"))
    eid = first.edits.loc[first.edits["pattern_id"] == RULE_ID, "edit_id"].iloc[0]
    again = clean([TextRecord(id="t", text=text, label="llm")], lib, decisions={eid: "reject"},
                  config=CleanConfig(edges="auto"))
    assert not again.edits.set_index("edit_id").loc[eid, "accepted"]
    assert again.texts[0].text.startswith("Harbour ferry returns")


# (text the patterns left, what they cut before it, the quoted tail cut); None: nothing is cut
QUOTED_TAILS = [
    ('duality and black hole thermodynamics":We study dyons.', 'Here is an abstract for the article title "Dyons: ',
     'duality and black hole thermodynamics":'),
    ('What is the biggest obstacle you\' ve overcome in your writing?": In the city of Newhaven, it rained.',
     'Sure, here\'s a story based on the prompt "SatChat: ', 'What is the biggest obstacle you\' ve overcome in your '
     'writing?": '),
    ("A 10-Myr-Old Transition Disk\u201d:HD 98800 is a young star.", "Here is an abstract titled \u201cHD 98800: ",
     "A 10-Myr-Old Transition Disk\u201d:"),
    # the cut lead-in closed its quote, or opened none: the text's own quote stays
    ('A giant," she said: "we were tiny.', 'Here is a story titled "Giants": ', None),
    ('A giant," she said: "we were tiny.', "Here is a story: ", None),
    # a quote the lead-in opens but names as no title: an inch mark, a review of a film, dialogue (an independent
    # review's probes against the first version)
    ('compared with my old 24": it is brighter.', 'Hi! Here\'s my review of the 27" monitor ', None),
    ('The Last Jedi": it was long.', 'Here is my review of "Star Wars: ', None),
    ('nobody saw anything": he said.', '"Fine! Here\'s the story: ', None),
    ("Le cas d'une montagne m\u00e9diterran\u00e9enne\":Cette \u00e9tude pr\u00e9sente un mod\u00e8le.",
     "Voici un abstract pour l'article dont le titre est \"Mod\u00e9lisations prospectives. ",
     "Le cas d'une montagne m\u00e9diterran\u00e9enne\":"),
    # a closed quote after "title" opens no title ("…of the \"Title\" exhibit: ")
    ('it was, as the critics put it, a flop": I disagree.', 'Here\'s my review of the "Title" exhibit: ', None),
    # a sentence ends before the quote closes: no title's tail
    ('The rain stopped. Then "silence": nothing moved.', 'Here is a story titled "Rain: ', None),
]


@pytest.mark.parametrize(("text", "lead_in", "tail"), QUOTED_TAILS)
def test_find_quoted_tail_golden(text, lead_in, tail):
    at = find_quoted_tail(text, lead_in)
    assert (text[:at] if at is not None else None) == tail


def test_the_quoted_tail_after_a_cut_lead_in_is_cut_recorded_and_undone():
    text = ('Here is an 8 sentence abstract for the article title "Dyons with potentials: duality and black hole '
            'thermodynamics":We study dyons in classical electrodynamics. Dyons carry both charges.')
    r = clean([TextRecord(id="t", text=text, label="llm")], load_library(), config=CleanConfig(edges="auto"))
    assert r.texts[0].text == "We study dyons in classical electrodynamics. Dyons carry both charges."
    row = r.edits[r.edits["pattern_id"] == QUOTE_RULE_ID]
    assert len(row) == 1 and row["applied"].all() and row["original"].iloc[0] == 'duality and black hole thermodynamics":'
    assert undo(r.texts[0].text, r.edits) == text


def test_rule_cuts_reads_edits_by_start_pattern_and_original_only():
    """A review sample stores each edit's start, pattern and removed text, not its end: the head cut is read from
    those alone."""
    from zcp_core.artifacts.edges_apply import rule_cuts

    applied = [{"start": 0, "pattern_id": "beg-sentence-count",
                "original": 'Here is an 8 sentence abstract for the article title "Dyons: '}]
    cuts = rule_cuts('duality and black hole thermodynamics":We study dyons.', applied)
    assert [(c.rule, c.start, c.end) for c in cuts] == [(QUOTE_RULE_ID, 0, 39)]


def test_the_quoted_tail_is_read_across_joined_head_cuts_and_a_rejection_keeps_it():
    """Two pattern cuts at the head (a role tag, then the lead-in) together open the quote; a rejected tail cut is
    recorded and not applied."""
    text = ('[assistant]: Here is an abstract for the article title "Dyons with potentials: duality and black '
            'hole thermodynamics":We study dyons in classical electrodynamics. Dyons carry both charges.')
    lib = load_library()
    r = clean([TextRecord(id="t", text=text, label="llm")], lib, config=CleanConfig(edges="auto"))
    assert r.texts[0].text == "We study dyons in classical electrodynamics. Dyons carry both charges."
    eid = r.edits.loc[r.edits["pattern_id"] == QUOTE_RULE_ID, "edit_id"].iloc[0]
    again = clean([TextRecord(id="t", text=text, label="llm")], lib, decisions={eid: "reject"},
                  config=CleanConfig(edges="auto"))
    assert not again.edits.set_index("edit_id").loc[eid, "accepted"]
    assert again.texts[0].text.startswith('duality and black hole thermodynamics":We study')


def test_a_quoted_tail_that_would_leave_too_little_is_not_cut():
    from zcp_core.artifacts.edges_apply import MIN_KEPT, rule_cuts

    tail = 'with potentials and the long road to the duality of black hole thermodynamics in four dimensions":'
    text = tail + "We study."
    assert len(text) - len(tail) < MIN_KEPT * len(text)
    assert rule_cuts(text, [{"start": 0, "pattern_id": "beg-here-is", "original": 'Here is a story titled "'}])
    r = clean([TextRecord(id="t", text='Here is an abstract for the article title "Dyons: ' + text, label="llm")],
              load_library(), config=CleanConfig(edges="auto"))
    assert r.texts[0].text == text and not (r.edits["pattern_id"] == QUOTE_RULE_ID).any()


# (text as the patterns left it, the numbers they cut, the numbers cut now)
LEFT = [
    # numbers after a space stay when their neighbours were glued and cut: with the cut ones they make a run
    ("1. The signs were everywhere. The sky went dark. 3. People despaired. Leaders tried. 5. The day came. "
     "6. It ended.", {2, 4}, [1, 3, 5, 6]),
    # a number glued after a capital's sentence end ("MIA.5.")
    ("1. The food is uneven. Service varies. Staff are MIA.5. The room is nice. It is cozy.", {2, 3, 4, 6}, [1, 5]),
    # nothing cut by the number patterns: no evidence, nothing here
    ("1. Preheat the oven. 3. Mix the flour. 4. Bake.", set(), []),
    # a run too short with the cut ones
    ("She ran. 3. She won.", {2}, []),
    # numbers after a colon are a list's, not the run's
    ("The trip was fine.Suggestions:1. Use active voice. 2. Cut words.", {3, 4, 5, 6}, []),
    # a number ending the text
    ("Mia woke. Tea was cold. 4. She left. The end came.6.", {2, 3, 5}, [4, 6]),
    # a number after an abbreviation is no sentence number, glued or at the end
    ("The trend held. Sales grew as in Fig.3. Costs fell. Margins rose.", {1, 2, 4}, []),
]


@pytest.mark.parametrize(("text", "cut", "numbers"), LEFT)
def test_find_left_numbers_golden(text, cut, numbers):
    spans = find_left_numbers(text, cut)
    assert [s.n for s in spans] == numbers
    assert all(text[s.start: s.end].strip() == f"{s.n}." for s in spans)


def test_cut_numbers_reads_the_number_patterns_only():
    edits = [{"pattern_id": "beg-numbered-glued", "original": "3. "}, {"pattern_id": "beg-numbered-first",
             "original": " 1. "}, {"pattern_id": "beg-sentence-count", "original": "7 sentences: "}]
    assert cut_numbers(edits) == {1, 3}


def test_left_numbers_are_cut_recorded_and_undone():
    text = ("Here is a 6 sentence story: The signs were everywhere.2. The sky went dark. 3. People despaired.4. "
            "Leaders tried. 5. The day came.6. It ended.")
    r = clean([TextRecord(id="t", text=text, label="llm")], load_library(), config=CleanConfig(edges="auto"))
    assert r.texts[0].text == ("The signs were everywhere.The sky went dark. People despaired.Leaders tried. "
                               "The day came.It ended.")
    assert ((r.edits["pattern_id"] == LEFT_RULE_ID) & r.edits["applied"]).sum() == 2
    assert undo(r.texts[0].text, r.edits) == text


@pytest.mark.parametrize("text", [
    '"Village bakery wins bread award A village bakery has won a national award for its bread."',
    "...Village bakery wins bread award A village bakery has won a national award for its bread.",
])
def test_a_cut_that_is_no_lead_in_is_no_evidence(text):
    """An enclosing quote or a leading ellipsis cut at the head says nothing of a lead-in: no title is cut after
    it, though the finder alone would cut one there."""
    r = clean([TextRecord(id="t", text=text, label="llm")], load_library(), config=CleanConfig(edges="auto"))
    assert r.edits["applied"].any() and int(r.edits.loc[r.edits["applied"], "start"].min()) == 0  # a head cut
    assert find_lead_in_title(r.texts[0].text) is not None
    assert not (r.edits["pattern_id"] == RULE_ID).any()


def test_lead_in_evidence_golden():
    from zcp_core.artifacts.edges_apply import lead_in

    assert lead_in("beg-sentence-count") and lead_in("prompt-sico-style") and lead_in("beg-heading")
    assert not any(lead_in(p) for p in ("beg-enclosing-quote", "beg-numbered-first", "beg-leading-ellipsis",
                                         "asst-placeholder-xyz", "rule:title-restated-2", "learned:x-1:head"))


def test_no_detectrl_human_text_has_a_head_cut_or_a_rule_cut(detectrl_cleaned):
    """The lead-in rule's evidence is a pattern's cut at offset 0, the left-numbers rule's a number pattern's cut:
    no human text of DetectRL has either, so neither rule can touch one."""
    texts, r = detectrl_cleaned
    human = {t.id for t in texts if t.label == "human"}
    applied = r.edits[r.edits["applied"] & r.edits["id"].isin(human)]
    assert applied.empty
    mine = r.edits[r.edits["pattern_id"].isin([RULE_ID, LEFT_RULE_ID])]
    assert not mine.empty and not mine["id"].isin(human).any()
