"""A title glued to a text that says it again is cut at the head, recorded like an edit, and never touches a human
text of DetectRL."""

from __future__ import annotations

import pytest

from zcp_core.artifacts import CleanConfig, clean, load_library
from zcp_core.artifacts.edits import undo
from zcp_core.artifacts.titles import RULE_ID, find_title
from zcp_core.schema import TextRecord

# (text, the title cut, its form); None: nothing is cut
GOLDEN = [
    # a news headline, then a story that opens with its first words again
    ("Harbour Town Council Approves New Ferry Timetable Harbour Town Council has approved a timetable that adds "
     "two crossings a day.", "Harbour Town Council Approves New Ferry Timetable", "restart"),
    ("Local Bakery Wins National Bread Award The local bakery on Mill Street was named the best in the country "
     "on Monday.", "Local Bakery Wins National Bread Award", "restart"),
    # a paper title glued to its abstract, which restates it
    ("Spectral properties of the eclipsing binary XY CygniXY Cygni is an eclipsing binary whose spectral "
     "properties we measure from new observations.", "Spectral properties of the eclipsing binary XY Cygni", "glue"),
    ("Bistability of coupled lasers with delayed feedbackThe bistability of two coupled lasers with delayed "
     "feedback is studied numerically.", "Bistability of coupled lasers with delayed feedback", "glue"),
    # a capital an attack put before the body's first word does not hide the glue
    ("Local Radio Station Faces Complaints Over Rogue BroadcastsMIn a surprising turn, a local radio station faces "
     "complaints over rogue broadcasts.", "Local Radio Station Faces Complaints Over Rogue Broadcasts", "glue"),
    # the body's own words before the restated name stay: the cut ends at the title
    ("Riverside Mill Fails in Bid to Reopen Weir Local textile firm Riverside Mill has lost its appeal against "
     "the closure.", "Riverside Mill Fails in Bid to Reopen Weir", "restart"),
    # a double space (a lost line break) ends the title
    ("Coastal Council Faces Questions Over Flood Spending  Wales's Coastal Council has been asked to explain its "
     "budget.", "Coastal Council Faces Questions Over Flood Spending", "restart"),
    # a letter an attack put in a word is no end of the title; a sentence opener glued after it is
    ("Town council approves new budget for harbour roVds in WalesThe town council has approved a budget of £2m.",
     "Town council approves new budget for harbour roVds in Wales", "restart"),
    ("Harbour Boss Calls Ferry Timetable \"Chaos\"In a recent interview, dHarbour Boss Anna Reed criticised the "
     "timetable.", None, None),
    # human openings that repeat a name are no title: a sentence, a half clause, a lede the story goes on from
    ("Oxford City Council said Oxford City Council tenants would be moved by March.", None, None),
    ("Today marks one year since Wales football manager Gary Hill died. Gary Hill was 42.", None, None),
    ("A lollipop man has been suspended after he stopped a fire engine. The lollipop man has not been named.",
     None, None),
    ("In a world of quiet machines, the robot waited. In a world where robots dream, it dreamt of rain.", None, None),
    ("We study the relaxation of electron spins in quantum wells. We study it by solving kinetic equations.",
     None, None),
    # a glued sentence is no title (it has a verb and a pronoun), nor is a word split by an attack
    ("The driver was hit outside the club in West Bromwich.The driver was taken to hospital.", None, None),
    ("Iteration of closed geodesics in statioNary Lorentzian manifolds is an important topic.", None, None),
    # words split by a capital inside them are no glue of a title ("GaAs", "MnAs", "LinkedIn")
    ("Electron spin relaxation in GaAs quantum wells is studied by solving kinetic equations. We find that the "
     "electron spin relaxation time is long.", None, None),
    ("Spin injection from ferromagnetic MnAs into GaAs is demonstrated at room temperature using spin LEDs.",
     None, None),
    ("Recruiters increasingly screen candidates on LinkedIn before an interview, and recruiters say candidates "
     "should update LinkedIn profiles.", None, None),
    # a short title line a reviewer then opens with word for word is the reviewer's own
    ("Great little phone Great little phone for the price, it works well.", None, None),
    # a headline in headline case keeps its comma and its "Says" ("…Austria Drew, Says O'Neill"): the glue and three
    # of its words said again are enough; a restart is cut the same way
    ("Mining Town Sets Deadline for Mine Reopening, Introduces Penalties for DelaysThe council of Mining Town has set "
     "a deadline for the mine reopening and penalties for delays.",
     "Mining Town Sets Deadline for Mine Reopening, Introduces Penalties for Delays", "headline"),
    ("Harbour Ferry Cancelled in Storm Chaos, Says Skipper Tom ReedHarbour ferry skipper Tom Reed said the storm "
     "chaos cancelled the crossings.", "Harbour Ferry Cancelled in Storm Chaos, Says Skipper Tom Reed", "restart"),
    # human openings: a sentence writes its verbs in lower case; a name glued inside ("Mc|Guckien", "Jet|Propulsion")
    ("Parish Priest Fr McGuckien told mourners of the man's deep faith. Fr McGuckien said the parish mourned.",
     None, None),
    ("Cornell University, the California Institute for Technology, and the JetPropulsion Laboratory are jointly "
     "studying the Jet Propulsion Laboratory's plan.", None, None),
    ("Lance Corporal Jonathan McKinlay, of Gloucestershire-based 1st Battalion, died. Corporal McKinlay was 33.",
     None, None),
    # human sentences and names an independent review built against the first headline form: none is cut (-4)
    ("Harry Potter and the Deathly Hallows is Harry Potter's darkest adventure yet, and the film does it justice.",
     None, None),
    ("Lionel Messi of Inter Miami was Lionel Messi again on Saturday, scoring twice.", None, None),
    ("Manchester City Manager Pep Guardiola has Manchester City top of the table again this week.", None, None),
    ("Senator Bernie Sanders of Vermont was on NowThis News on Tuesday, where Sanders, the Vermont senator, spoke.",
     None, None),
    ("Jackie Collins, Joan Collins and HarperCollins chief executive Brian Murray were among those at the launch. "
     "Jackie Collins, Joan Collins and Brian Murray posed together.", None, None),
    ("The Google Pixel 8 Pro Phone and the Apple iPhone 15 both have excellent cameras. The Google Pixel camera "
     "wins in low light.", None, None),
    ("Microsoft AI Chief Mustafa Suleyman and Sam Altman of OpenAI met in Seattle. Microsoft AI and OpenAI said "
     "the chief and Altman talked.", None, None),
    ("Microsoft AI Chief Mustafa Suleyman and Sam Altman of OpenAI met in Seattle on Tuesday. Suleyman, who joined "
     "Microsoft in March, said Altman had been generous.", None, None),
    ("This Is The Best Blender I Have Ever Owned This is the best blender I have ever owned, and it is quiet.",
     None, None),
    ("My Husband And I Had The Best Time At This Hotel My husband and I stayed three nights and had the best time.",
     None, None),
    # a title that the text does not say again stays (the learned detector decides on it)
    ("Cool Beans.A great coffee shop with friendly staff and good pastries.", None, None),
]


@pytest.mark.parametrize("text, title, form", GOLDEN)
def test_find_title_golden(text, title, form):
    found = find_title(text)
    if title is None:
        assert found is None, text[: found.at]
        return
    assert found is not None and (text[: found.at].rstrip(), found.form) == (title, form)


def test_a_restated_title_is_cut_recorded_and_undone():
    text = GOLDEN[0][0]
    r = clean([TextRecord(id="t", text=text, label="llm")], load_library(), config=CleanConfig(edges="auto"))
    e = r.edits[r.edits["pattern_id"] == RULE_ID]
    assert len(e) == 1 and bool(e["applied"].iloc[0]) and e["original"].iloc[0].strip() == GOLDEN[0][1]
    assert r.texts[0].text.startswith("Harbour Town Council has approved")
    assert undo(r.texts[0].text, r.edits) == text
    off = clean([TextRecord(id="t", text=text, label="llm")], load_library(), config=CleanConfig(edges="none"))
    assert off.texts[0].text == text  # the rule belongs to the edge stage


def test_no_human_text_of_detectrl_has_a_restated_title(detectrl_humans):
    """Human texts are never edited by the patterns, so their original is what the rule sees."""
    hits = [where for where, t in detectrl_humans.items() if find_title(t) is not None]
    assert len(detectrl_humans) == 6035 and hits == []


def test_the_card_counts_the_rule_apart_from_the_detector():
    from zcp_core.artifacts.report import edges_facts

    old = {"edges": {"name": "detectrl-edges-x", "cut": 3, "review": 5}}  # a run made before the rule
    assert [k for k, _ in edges_facts(old)] == ["Learned edge detector"]
    new = {"edges": {**old["edges"], "rules": {RULE_ID: 2, "rule:sentence-numbers-2": 1}}}
    facts = dict(edges_facts(new))
    assert facts[f"Texts cut by {RULE_ID}"] == "2" and facts["Texts cut by rule:sentence-numbers-2"] == "1"


def test_a_rejected_title_cut_is_recorded_and_not_applied():
    text = GOLDEN[0][0]
    lib = load_library()
    first = clean([TextRecord(id="t", text=text, label="llm")], lib, config=CleanConfig(edges="auto"))
    eid = first.edits.loc[first.edits["pattern_id"] == RULE_ID, "edit_id"].iloc[0]
    again = clean([TextRecord(id="t", text=text, label="llm")], lib, decisions={eid: "reject"},
                  config=CleanConfig(edges="auto"))
    row = again.edits.set_index("edit_id").loc[eid]
    assert not row["accepted"] and not row["applied"] and again.texts[0].text == text


def test_a_title_too_long_to_cut_leaves_the_text_and_the_models_decision(tmp_path):
    """A cut that would leave less than MIN_KEPT of the text is not made, and the detector still decides on the head
    (here a copy of the bundled model that sends every head to review)."""
    from dataclasses import replace

    from zcp_core.artifacts.edges import load_model, save_model
    from zcp_core.artifacts.edges_apply import MIN_KEPT

    text = "Harbour Town Council Approves New Ferry Timetable Harbour Town Council agreed."
    found = find_title(text)
    assert found is not None and len(text) - found.at < MIN_KEPT * len(text)
    shipped = load_model()
    path = save_model(replace(shipped, review={**shipped.review, "head": 0.0}), tmp_path / "edges.npz")
    r = clean([TextRecord(id="t", text=text, label="llm")], load_library(), config=CleanConfig(edges=str(path)))
    assert r.texts[0].text == text and not (r.edits["pattern_id"] == RULE_ID).any()
    assert "edges_review:head" in set(r.flags["kind"])


def test_the_run_summary_counts_each_rule():
    from zcp_core.artifacts.leadin import QUOTE_RULE_ID as QUOTE
    from zcp_core.artifacts.leadin import RULE_ID as LEAD_IN
    from zcp_core.artifacts.markup import RULE_ID as BOLD
    from zcp_core.artifacts.numbering import LEFT_RULE_ID as LEFT
    from zcp_core.artifacts.numbering import RULE_ID as NUMBERS
    from zcp_core.artifacts.release import _edges_summary

    texts = [TextRecord(id="a", text=GOLDEN[0][0], label="llm"),
             TextRecord(id="b", text="Here is a 4 sentence story: 1. Mia was excited. 2. Today she turned five. "
                                     "3. It rained. 4. She laughed.", label="llm"),
             TextRecord(id="c", text="We present a study of tides.", label="human"),
             TextRecord(id="d", text="Here is a 3 sentence news article: Harbour ferry returns after winter break "
                                     "The ferry resumed its crossings on Monday. Passengers welcomed the ferry back. "
                                     "The harbour master said the crossings would run daily.", label="llm"),
             TextRecord(id="e", text="Here is a 6 sentence story: The signs were everywhere.2. The sky went dark. "
                                     "3. People despaired.4. Leaders tried. 5. The day came.6. It ended.",
                        label="llm"),
             TextRecord(id="f", text="**Harbour Ferry Returns**London** - The ferry is back after the winter, the "
                                     "council said on Monday.", label="llm"),
             TextRecord(id="g", text='Here is an 8 sentence abstract for the article title "Dyons with potentials: '
                                     'duality and black hole thermodynamics":We study dyons in classical '
                                     'electrodynamics. Dyons carry both charges.', label="llm")]
    r = clean(texts, load_library(), config=CleanConfig(edges="auto"))
    assert _edges_summary(r, "auto")["rules"] == {RULE_ID: 1, LEAD_IN: 1, QUOTE: 1, NUMBERS: 1, LEFT: 1, BOLD: 1}


@pytest.mark.parametrize(("text", "at", "shaped"), [
    # a glued title: the gated threshold applies
    ("Manchester Downtown Council Announces 160 Employed Cuts in a Solicitation to Save £75mManchester City Council "
     "has unveiled a plan.", 86, True),
    ("Bispectrality of multivariable Racah-Wilson polynomialsThe bispectrality of these polynomials is reviewed.", 55,
     True),
    # inside a name, after a sentence end, after a comma, before a lower-case word: not the shape
    ("Original stars Ewan McGregor, Jonny Lee Miller and Robert Carlyle are back.", 22, False),
    ("The horse won June's Hardwicke Stakes at Royal Ascot.Earlier, the favourite was ruled out.", 53, False),
    ("The mission, known today as SIMPlanetQuest, detects planets.", 38, False),
    # a human opening can have the shape too ("…on BaCu|Si2O6"): there the detector's score decides
    ("Motivated by recent experiments on BaCuSi2O6, we investigate magnetic excitations.", 39, True),
    ("Peter Robinson said we must resettle themThe first group will come.", 41, False),
    ("Multiple parton scattering in nuclei playFs a crucial role in collisions.", 41, False),
    # camel-case names a human writes (an independent review's reproducers): no glued title
    ("The chief executive of LinkedIn stepped down after a row over bonuses.", 29, False),
    ("Photoluminescence of InGaAs quantum wells grown on GaAs substrates.", 23, False),
    ("Growth of InGaAs nanowires on silicon by metal-organic vapour phase epitaxy.", 12, False),
    ("Fans of the popular messaging app WhatsApp reported outages across Europe on Tuesday evening.", 39, False),
    # "In" after a glue opens a sentence only before a determiner
    ("Council Unveils New Cycle Lanes for the CentreIn a bid to cut traffic, the council will act.", 46, True),
])
def test_glued_title_shape_golden(text, at, shaped):
    from zcp_core.artifacts.edges import Candidate, candidates
    from zcp_core.artifacts.titles import glued_title

    assert glued_title(text, Candidate("head", at, "glue")) is shaped
    assert not glued_title(text, Candidate("head", at, "space"))  # only a glue has the shape
    if shaped:
        assert any(c.at == at and c.kind == "glue" for c in candidates(text, "head"))


@pytest.mark.parametrize("text", [
    "The Washington Post and HuffPost both reported on Monday that the senator would resign. The Washington Post "
    "cited three aides.",
    "Sony Interactive Entertainment Chief Jim Ryan and the PlayStation Studios Team are at Gamescom this week. Sony "
    "said Ryan would present the PlayStation roadmap to Entertainment press.",
    "Warner Bros Discovery and WarnerMedia veteran Jason Kilar were at odds over the merger. Warner Bros Discovery "
    "said Kilar had not been consulted.",
])
def test_no_pattern_rule_or_model_cut_splits_a_camel_case_name(text):
    """Human news openings an independent review wrote: a headline pattern and the restated-title rule read the
    camel-case name as a headline glued to its story; the library's names, or the name written again, keep them."""
    r = clean([TextRecord(id="t", text=text, label="human")], load_library(), config=CleanConfig(edges="auto"))
    assert [t.text for t in r.texts] == [text] and not r.edits["applied"].any()
