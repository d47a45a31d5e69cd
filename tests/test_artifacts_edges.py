"""Texts that cannot be repaired are held back; the learned edge detector cuts what patterns leave, reversibly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zcp_core.artifacts import CleanConfig, clean, dedupe_texts, load_library, undo
from zcp_core.artifacts.edges import DEFAULT_MODEL, Candidate, candidates, load_model
from zcp_core.artifacts.edges_apply import gate_for
from zcp_core.schema import TextRecord

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = sorted((ROOT / "data" / "detectrl_sample").glob("*.json"))
GOLDEN = ROOT / "tests" / "data" / "edges_golden.jsonl"


@pytest.fixture(scope="module")
def lib():
    return load_library()


def rec(text: str, rid: str = "t", label: str = "llm") -> TextRecord:
    return TextRecord(id=rid, text=text, label=label, llm_type="Llama-2-70b", data_type="direct_prompt")


@pytest.mark.parametrize(("text", "edge", "points"), [
    ("A New Spinfoam Vertex for Quantum Gravity We propose a vertex.",
     "head", [("space", 5), ("space", 14), ("space", 25), ("space", 33), ("space", 41)]),
    ("Rogue BroadcastsMIn a shocking turn, it ended.", "head", [("glue", 16)]),
    ("Owl Art Auction\n\nThe owl sold. It was big.", "head", [("space", 7), ("newline", 15), ("sentence", 30)]),
    ('"Hello," she said. "I am here."', "head", [("sentence", 18), ("glue", 20)]),
    ("The owl sold. It was big.\nDo you want me to change anything?", "tail", [("sentence", 13), ("newline", 26)]),
])
def test_candidates_golden(text, edge, points):
    assert [(c.kind, c.at) for c in candidates(text, edge)] == points
    assert all(isinstance(c, Candidate) and c.edge == edge for c in candidates(text, edge))


@pytest.mark.parametrize(("text", "pattern"), [
    ("Dear [Ex's Name], I have been thinking about us.", "asst-placeholder"),
    ("We stayed at the hotel in [location] for a week.", "asst-placeholder-lower"),
    ("Leicester, [Date] - Former All Blacks center Aaron Mauger spoke.", "asst-placeholder-field"),
    ("We stayed at the XYZ Hotel downtown.", "asst-placeholder-xyz"),
    ("The observations were obtained using the XYZ telescope equipped with a spectropolarimeter.",
     "asst-placeholder-xyz"),
    ('She whispered: "[The name of the friend you chose], your journey has not ended."', "asst-placeholder"),
    ("This was my second year attending Convention X and it was better.", "asst-placeholder-x"),
    ("Our analysis reveals a total of X YSO candidates in the cloud.", "asst-placeholder-x"),
    ("The planet has a minimum mass of [X] Jupiter masses.", "asst-placeholder-bracket"),
    ("She found magic in the seemingly\u5e73\u51e1 moments of the day.", "asst-foreign-script"),
    ("I'm not able to provide a news article on this topic as it goes against my policy.", "rej-refusal-inside"),
    ("I'm a helpful AI assistant, and I'm here to assist you with your story. Once upon a time...",
     "asst-self-description"),
    ("The abstract should be short. [user]: rewite the following sentences with better wording: 1. We study.",
     "asst-rewrite-request"),
    ("Hello! I am Claude, an AI assistant created by Anthropic. The story begins.", "asst-self-description"),
    ("As a helpful AI assistant, I have learned to avoid asking writers what they think.", "asst-self-description"),
    ("I cannot fulfi ll your request. I'm just an AI, it's not within my programimng to do so.", "rej-refusal-inside"),
    ("Did the stylist listen?I'm just an AI, I don't have personal opinions, but I want to help you.",
     "asst-no-opinions"),
])
def test_a_text_that_cannot_be_repaired_is_held_back_with_its_reason(lib, text, pattern):
    r = clean([rec(text), rec("We present a study of tides.", "h", "human")], lib)
    assert [t.id for t in r.texts] == ["h"]
    d = r.dropped.iloc[0]
    assert (d["id"], d["pattern_id"], d["kind"]) == ("t", pattern, "held_back")
    assert d["reason"].startswith("held back: ") and d["original_text"] == text
    assert undo(None, r.edits[r.edits["id"] == "t"]) == text


def test_held_back_keep_leaves_the_text_in_flagged_and_a_reviewer_puts_it_back(lib):
    text = "Dear [Your Name], the season was long."
    kept = clean([rec(text)], lib, config=CleanConfig(held_back="keep"))
    assert [t.text for t in kept.texts] == [text] and kept.dropped.empty
    assert "pattern:asst-placeholder" in set(kept.flags["kind"])
    dropped = clean([rec(text)], lib)
    eid = dropped.edits.loc[dropped.edits["action"] == "hold_back", "edit_id"].iloc[0]
    back = clean([rec(text)], lib, decisions={eid: "reject"})
    assert [t.text for t in back.texts] == [text] and back.dropped.empty
    with pytest.raises(ValueError, match="held_back"):
        CleanConfig(held_back="maybe")  # type: ignore[arg-type]


def test_a_text_every_character_of_which_is_cut_is_held_back_and_put_back(lib):
    """An answer that is only a lead-in leaves nothing to release: it is held back with its reason (an empty text
    is no repair), kept and flagged under ``--held-back keep``, and back in full once one of its edits is
    rejected."""
    from zcp_core.artifacts.cleaner import EMPTIED
    from zcp_core.artifacts.release import held_back_ids

    text = "Sure, here is a 5 sentence story:"
    r = clean([rec(text), rec("We present a study of tides.", "h", "human")], lib)
    assert [t.id for t in r.texts] == ["h"] and held_back_ids(r, lib) == {"t"}
    d = r.dropped.iloc[0]
    assert (d["id"], d["pattern_id"], d["kind"]) == ("t", EMPTIED, "held_back")
    assert d["reason"].startswith("held back: nothing is left") and d["original_text"] == text
    assert undo("", r.edits[(r.edits["id"] == "t") & r.edits["applied"]]) == text
    kept = clean([rec(text)], lib, config=CleanConfig(held_back="keep"))
    assert [t.text for t in kept.texts] == [""] and EMPTIED in set(kept.flags["kind"])
    assert held_back_ids(kept, lib) == {"t"}
    eid = r.edits.loc[(r.edits["id"] == "t") & r.edits["applied"], "edit_id"].iloc[0]
    back = clean([rec(text)], lib, decisions={eid: "reject"})
    assert [t.text for t in back.texts] == [text] and back.dropped.empty


def test_held_back_patterns_spare_human_writing(lib):
    """Human texts say "[link]", "I am an engineer", "I cannot write this fast enough": none is held back."""
    texts = [rec("See [link] for the photos.", "a", "human"), rec("I am an engineer and I cannot write fast.", "b",
                                                                      "human"),
             rec("She said she cannot write the request down. It's not within my reach.", "c", "human")]
    r = clean(texts, lib)
    assert r.dropped.empty
    # near misses of the newer held-back patterns: a refusal-like aside, a human assistant (twice), a rewrite, and a bare
    # "X" a human writes (a name, an X-ray, a particle, a space in mathematics, a TV show)
    xs = ["I'm not able to sleep; it goes against my nature.", "He was a helpful assistant to the mayor.",
          "Rewrite the rules, she said.", "As a helpful assistant, I fetched the mayor's coat.", "Malcolm X spoke in Harlem.", "We took an X-ray of the hand.",
          "The decays B to X(3872) K were seen.", "Let L be a line bundle over a compact manifold X. Then it is ample.",
          "The X Factor final aired.", "As a helpful AI tool, the spell checker caught every typo.",
          "\"I'm just an AI,\" the robot said, \"I don't have a heart.\"", "I'm an AI researcher, and I have personal opinions.",
          "I don't have personal opinions on the mayor, I'm just an AI student.",
          "Recently [Y] introduced a novel technique.", "We extend the work of [X] and argue further.",
          "We show that the class of [X] is divisible by the Lefschetz motive.",
          "The image of [X] equals zero in the Chow group.", "The weight is exp(-S_P[X]) for the action."]
    assert clean([rec(t, f"x{i}", "human") for i, t in enumerate(xs)], lib).dropped.empty


@pytest.mark.skipif(not DEFAULT_MODEL.exists(), reason="the edge model is built by benchmarks/edge_detector.py")
def test_edge_cuts_are_recorded_like_edits_and_undo_exactly(lib, tmp_path):
    from dataclasses import replace

    from zcp_core.artifacts.edges import save_model
    from zcp_core.data import load_texts

    texts, _ = dedupe_texts(load_texts(SAMPLE))
    # the bundled model with its head cut lowered to its review threshold, so that the sample has cuts to check
    # whatever the bundled cut is (the recording does not depend on where the threshold sits)
    shipped = load_model()
    model = replace(shipped, cut={**shipped.cut, "head": shipped.review["head"]})
    path = save_model(model, tmp_path / "edges.npz")
    r = clean(texts, lib, config=CleanConfig(edges=str(path)))
    learned = r.edits[r.edits["pattern_id"].str.startswith(model.pattern_id)]
    assert len(learned) and learned["score"].notna().all()
    assert (learned.loc[learned["applied"], "score"] >= min(model.cut.values())).all()
    assert r.edits.loc[~r.edits["pattern_id"].str.startswith("learned:"), "score"].isna().all()
    cleaned = {t.id: t.text for t in r.texts}
    for rid, g in r.edits.groupby("id"):
        orig = next(t.text for t in texts if t.id == rid)
        assert undo(cleaned.get(rid), g) == orig
    # a rejected cut is recorded and not applied
    eid = learned.loc[learned["applied"], "edit_id"].iloc[0]
    again = clean(texts, lib, decisions={eid: "reject"}, config=CleanConfig(edges=str(path)))
    row = again.edits.set_index("edit_id").loc[eid]
    assert not row["accepted"] and not row["applied"]


@pytest.mark.skipif(not DEFAULT_MODEL.exists(), reason="the edge model is built by benchmarks/edge_detector.py")
def test_edge_decisions_golden():
    """The bundled model's decisions on 50 fixed texts (made by benchmarks/edge_golden.py when the model was built)."""
    rows = [json.loads(line) for line in GOLDEN.read_text().splitlines()]
    assert len(rows) == 50
    model = load_model()
    got = model.decide([r["text"] for r in rows], [r["domain"] for r in rows], gate_for(model))
    for r, ds in zip(rows, got):
        assert [(d.edge, d.start, d.end, d.action) for d in ds] == [tuple(x) for x in r["decisions"]], r["text"][:80]
        assert [round(d.score, 4) for d in ds] == pytest.approx(r["scores"], abs=1e-3)


SHARED = ROOT.parent / "shared" / "data" / "detectrl"
# Leftovers a residual review quoted word for word: each must be gone from the cleaned splits, or held back.
QUOTED = ("A New Spinfoam Vertex for Quantum Gravity", "Rogue Broadcasts",
          "will be written according to the [WRITING PROMPT] below",
          "Do you want me to make any specific instructions or amendments to this draft?", "[Company Name]",
          "(7 sentences)", "Key Highlights:**", "I am Claude, an AI assistant created by Anthropic",
          "Here are some additional tips", "is the assistant")


def test_quoted_leftovers_are_gone_from_the_cleaned_detectrl_splits(detectrl_cleaned):
    texts, r = detectrl_cleaned
    cleaned = {t.id: t.text for t in r.texts}
    held = set(r.dropped["id"])
    for q in QUOTED:
        found = [t.id for t in texts if q in t.text]
        assert found, q
        assert not [i for i in found if q in cleaned.get(i, "")], q
        assert all(i in cleaned or i in held for i in found)
    human = {t.id for t in texts if t.label == "human"}
    assert not human & set(r.dropped.loc[r.dropped["kind"] == "held_back", "id"])
    # the edge stage (ordinary and gated cuts, rules) cuts no human text and sends none to review
    assert r.edits[r.edits["id"].isin(human)].empty
    assert not human & set(r.flags.loc[r.flags["kind"].str.startswith("edges_review"), "id"])


GLUED = "Bispectrality of multivariable Racah-Wilson polynomialsThe bispectrality of them is reviewed here."


def flat_model(cut: float = 1.01, review: float = 1.01, gate_cut: float | None = 0.4, gate: str = "gate:glued-title-2"):
    """A model that scores every candidate 0.5 (zero weights), with the thresholds given."""
    import numpy as np

    from zcp_core.artifacts.edges import HASH_FEATURES, EdgeModel

    flat = {e: np.zeros(HASH_FEATURES) for e in ("head", "tail")}
    return EdgeModel("t", "0", flat, {"head": 0.0, "tail": 0.0}, {"head": cut, "tail": 1.01},
                     {"head": review, "tail": 1.01}, {"gate": gate},
                     gate_cut={"head": gate_cut} if gate_cut is not None else {})


def test_a_gated_candidate_is_cut_at_the_gated_threshold_and_only_with_the_gate():
    """decide(): below cut and review, a candidate the gate admits is cut at gate_cut; without the gate, or a model
    with no gate_cut, nothing is decided (a flat model scores every candidate 0.5)."""
    from zcp_core.artifacts.titles import glued_title

    model = flat_model()
    [got] = model.decide([GLUED], None, glued_title)
    assert [(d.edge, d.start, d.end, d.action) for d in got] == [("head", 0, 55, "cut")]
    assert model.decide([GLUED]) == [[]]
    assert flat_model(gate_cut=None).decide([GLUED], None, glued_title) == [[]]
    assert model.decide(["We study the polynomials of Racah and Wilson. They are bispectral."], None, glued_title) == [[]]
    # a text the model would send to review is cut at its gated candidate instead
    [rev] = flat_model(review=0.4).decide([GLUED], None, glued_title)
    assert [(d.end, d.action) for d in rev] == [(55, "cut")]
    assert [(d.end, d.action) for d in flat_model(review=0.4).decide([GLUED])[0]] == [(30, "review")]
    # the ordinary cut goes first, at its own best candidate (the earliest of equal scores), not the gated one
    [cut] = flat_model(cut=0.4).decide([GLUED], None, glued_title)
    assert [(d.end, d.action) for d in cut] == [(30, "cut")]
    # several shaped candidates: the best, earliest on a tie
    two = "Council Unveils New Cycle LanesThe Centre Gets Them at LastThe council will act on Monday."
    [both] = model.decide([two], None, glued_title)
    assert [(d.end, d.action) for d in both] == [(31, "cut")]


def test_the_gate_applies_only_to_a_model_built_for_it():
    from zcp_core.artifacts.titles import GATE_ID, glued_title

    assert gate_for(flat_model(gate=GATE_ID)) is glued_title
    assert gate_for(flat_model(gate="gate:glued-title-1")) is None  # built for an older shape: its threshold is stale
    assert gate_for(flat_model(gate=GATE_ID, gate_cut=None)) is None
    assert gate_for(load_model()) is (glued_title if load_model().gate_cut else None)
    assert load_model().meta.get("gate") == GATE_ID  # the bundled model was built for the shape in the code


def test_a_gated_cut_through_clean_is_an_edit_undone_like_any_other(tmp_path, lib):
    from zcp_core.artifacts.edges import save_model
    from zcp_core.artifacts.titles import GATE_ID

    path = save_model(flat_model(gate=GATE_ID), tmp_path / "m.npz")
    r = clean([rec(GLUED)], lib, config=CleanConfig(edges=str(path)))
    assert [t.text for t in r.texts] == ["The bispectrality of them is reviewed here."]
    assert list(r.edits["pattern_id"]) == ["learned:t-0:head"] and undo(r.texts[0].text, r.edits) == GLUED
    short = "Racah-Wilson polynomials of many variablesThe end."  # a cut would leave too little: review instead
    r = clean([rec(short)], lib, config=CleanConfig(edges=str(path)))
    assert [t.text for t in r.texts] == [short]
    flag = r.flags[r.flags["kind"] == "edges_review:head"].iloc[0]
    assert (flag["value"], flag["threshold"]) == (0.5, 0.4)  # the gated threshold it reached, not review's


def test_the_bundled_gate_threshold_was_set_on_the_shape_in_the_code(detectrl_cleaned):
    """The development human texts with a shaped candidate now are those the bundled gated cut was set on: a
    change to the shape (or a helper it uses) without a rebuild fails here."""
    from zcp_core.artifacts.titles import glued_title

    model = load_model()
    if not model.gate_cut:
        pytest.skip("the bundled model has no gated cut")
    texts, _ = detectrl_cleaned
    dev = [t for t in texts if t.label == "human" and t.id.startswith(("direct_prompt", "multi_domains"))]
    shaped = sum(any(glued_title(t.text, c) for c in candidates(t.text, "head")) for t in dev)
    assert shaped == model.meta["figures"]["head"]["gate"]["clean_texts_with_a_gated_candidate"]["human"]


def replace_gate(model, gate_cut):
    from dataclasses import replace

    return replace(model, gate_cut=gate_cut)
