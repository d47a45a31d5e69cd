"""Artifact patterns, scanner and cleaner: golden tables, modes, spans, edits, undo, decisions, ReDoS."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from zcp_core.artifacts import (
    FAMILY_ORDER,
    CleanConfig,
    PatternError,
    PatternTimeout,
    Span,
    artifact_spans,
    clean,
    dedupe_texts,
    load_library,
    scan,
    summarize,
    under_cleaning_marks,
    undo,
)
from zcp_core.schema import TextRecord

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = sorted((ROOT / "data" / "detectrl_sample").glob("*.json"))


@pytest.fixture(scope="module")
def lib():
    return load_library()


def rec(text: str, rid: str = "t", label: str = "llm", llm: str = "Claude-instant", dt: str = "direct_prompt"):
    return TextRecord(id=rid, text=text, label=label, llm_type=llm, data_type=dt)


# text, expected first-match-wins family ("" = no match), expected pattern id, high-precision flagged
GOLDEN = [
    ("Here is a 6 sentence abstract for the given academic article title:This article studies X.",
     "beginning", "beg-sentence-count", True),
    ("Here is my attempt at a story based on the prompt:The night was cold.", "beginning", "beg-here-is", True),
    ("Sure, here's a story based on the writing prompt:In the midst of chaos, you held a hand.",
     "beginning", "beg-sure-here", True),
    ("Of course, this is a story: Caimed is a strange dog.", "beginning", "beg-sure-here", True),
    ("Hree is a 23 sentence story from the perspective of a monster:I never thought of myself as a monster.",
     "beginning", "beg-sentence-count", True),
    ("This is 5 sentences of the title of the article. Abstract: Usually we use approximations.",
     "beginning", "beg-sentence-count", True),
    ("**Abstract:**This paper presents a novel damage identification method.", "beginning", "beg-heading", True),
    ("I apologize, upon further reflection I do not feel comfortable generating lengthy fictional reviews.",
     "rejection", "rej-upon-reflection", True),
    ("As an AI language model, I am unable to engage with content that may violate my usage guidelines.",
     "rejection", "rej-language-model", True),
    ("NEVER GO HERE! I'm not able to help with that, as I'm only a language model.",
     "rejection", "rej-language-model", True),
    ("Here are 10 additional sentences continuing the review in a more casual, conversational human style:Great.",
     "prompt", "prompt-sico-style", True),
    ("Sure, here's a polished version with improved grammar and spelling:The results hold.",
     "prompt", "prompt-polish", True),
    ("[assistant]: In a time capsule from the distant future, a remarkable story unfolded.",
     "assistant", "asst-role-tag", True),
    ("**Assistant**: The service was slow but friendly.", "assistant", "asst-bold-role", True),
    # a refusal followed by a substitute text (Claude-instant, DetectRL Multi_LLM)
    ("Thank you for the prompts, but I think generating fiction that depicts violence or harmful acts would not be "
     "appropriate. Here is a 17 sentence speech instead focusing on lawful and ethical themes:My fellow citizens.",
     "substitute", "sub-instead", True),
    ("I won't write that review. Here's my summary of the menu instead:The soup was hot.",
     "substitute", "sub-instead", True),
    # the prompt echoed as a chat transcript (Google-PaLM), with DetectRL's character noise too
    ("[System]: - [User] Input is: Given News Abstract, write a news article, 9 sentences above: News Abstract: "
     "George North said he hopes to play on. News article: - [Assistant] Output as: George North talked.",
     "transcript", "tr-input-output", True),
    ("[SYYSTEM]:    - [user] input is: Given the news osummary, write a news Warticle with 9 sentences:news summary: "
     "North says he wants to continue. news article:    - [assistant] oYtput is:Northampton wing George North spoke.",
     "transcript", "tr-input-output", True),
    ("The food was great and the staff were kind. I hope this helps!", "ending", "end-hope-helps", True),
    # human-like sentences: domain words are flagged by the domain family only
    ("We present a review of recent results on neutrino masses. We discuss open problems.",
     "domain", "dom-review", False),
    ("This abstract summarizes our approach to lattice QCD. We find agreement.", "domain", "dom-abstract", False),
    ("The article in the local paper was wrong. I was there.", "domain", "dom-article", False),
    ("Here's why: the menu is surprisingly upscale! Lots of choices.", "", "", False),
    # human-like: a refusal word, or "instead", without a substitute text; "input" without a transcript
    ("They would not be appropriate for kids. Here is a tip: go early instead.", "", "", False),
    ("I cannot believe the wait. Instead of pasta we had pizza.", "", "", False),
    ("The user input is: slow. The assistant was friendly.", "", "", False),
    ("Here are my reviews. Venue - the ambiance is like being in Japan.", "", "", False),
    ("It was a dark and stormy night. I walked home alone.", "", "", False),
    ("We study the sentence structure of Old English poetry.", "", "", False),
]


@pytest.mark.parametrize(("text", "family", "pattern_id", "flagged"), GOLDEN)
def test_golden_first_match(lib, text, family, pattern_id, flagged):
    m = scan([rec(text)], lib, mode="first")
    assert list(m["family"]) == ([family] if family else [])
    assert list(m["pattern_id"]) == ([pattern_id] if pattern_id else [])
    s = summarize([rec(text)], scan([rec(text)], lib, mode="all"))
    assert s["flagged"] == int(flagged)


def test_first_vs_all_modes(lib):
    text = "[assistant]: Here is a 5 sentence story based on the prompt:Once upon a time. [user]: more."
    first = scan([rec(text)], lib, mode="first")
    full = scan([rec(text)], lib, mode="all")
    assert len(first) == 1 and first["family"].iloc[0] == "assistant"  # assistant precedes beginning in order
    assert {"assistant", "beginning"} <= set(full["family"])
    assert (full["pattern_id"] == "asst-role-tag").sum() == 2  # both role tags, with their own spans
    for r in full.itertuples():
        assert text[r.start:r.end] == r.match


def test_spans(lib):
    text = "[assistant]: Here is a 5 sentence story:Once upon a time."
    spans = artifact_spans(text, lib)
    assert all(isinstance(s, Span) for s in spans)
    tag = next(s for s in spans if s.pattern_id == "asst-role-tag")
    assert (tag.start, text[tag.start:tag.end]) == (0, "[assistant]: ")
    beg = next(s for s in spans if s.family == "beginning")
    assert text[beg.start:beg.end] == "[assistant]: Here is a 5 sentence story:"
    assert artifact_spans(rec("It was a dark night."), lib) == []


def test_summary_shape_and_dedupe(lib):
    texts = [rec("Here is a 5 sentence story:Once.", "a"), rec("Here is a 5 sentence story:Once.", "b"),
             rec("We walked home. It rained.", "c", label="human", llm="Claude-instant", dt="story"),
             rec("I walked. It rained.", "d", llm="ChatGPT")]
    s = summarize(texts, scan(texts, lib))
    assert {"texts", "flagged", "by_family", "by_llm_type", "by_label", "headline"} <= set(s)
    assert s["texts"] == 3 and s["flagged"] == 1  # the duplicate text is counted once
    assert s["by_llm_type"]["Claude-instant"] == {"texts": 1, "flagged": 1, "rate": 1.0, "domain_flagged": 0}
    assert s["by_llm_type"]["ChatGPT"]["flagged"] == 0
    assert "human" not in s["by_llm_type"] and s["by_label"]["human"]["texts"] == 1
    assert sum(s["by_family"][f] for f in FAMILY_ORDER if f != "domain") == s["flagged"]
    kept, dropped = dedupe_texts(texts)
    assert [t.id for t in kept] == ["a", "c", "d"] and dropped.to_dict("records") == [
        {"id": "b", "kept_id": "a", "reason": "duplicate text"}]


CLEAN_CASES = [
    ("Here is a 6 sentence abstract for the title:This article studies X. It ends.", "This article studies X. It ends."),
    ("The plan worked. [assistant]: The end came.", "The plan worked. The end came."),
    ("The food was great. I hope this helps!", "The food was great."),
    ("**Abstract:**This paper presents a method.", "This paper presents a method."),
    ("We present a review of neutrino masses. We discuss.", "We present a review of neutrino masses. We discuss."),
    ("It was a dark night.", "It was a dark night."),
]


@pytest.mark.parametrize(("text", "cleaned"), CLEAN_CASES)
def test_cleaning_actions(lib, text, cleaned):
    r = clean([rec(text)], lib)
    assert [t.text for t in r.texts] == [cleaned]
    assert undo(r.texts[0].text, r.edits[r.edits["id"] == "t"]) == text


def test_rejection_drops_with_reason_and_domain_only_flags(lib):
    texts = [rec("I apologize, upon further reflection I do not feel comfortable. Here is a short one:Ok.", "r"),
             rec("We present a review of neutrino masses. We discuss.", "h", label="human", dt="abstract")]
    r = clean(texts, lib)
    assert [t.id for t in r.texts] == ["h"]
    d = r.dropped.iloc[0]
    assert d["id"] == "r" and d["pattern_id"] == "rej-upon-reflection" and "rejection" in d["reason"]
    assert d["original_text"] == texts[0].text
    assert undo(None, r.edits[r.edits["id"] == "r"]) == texts[0].text
    assert "pattern:dom-review" in set(r.flags.loc[r.flags["id"] == "h", "kind"])
    assert (r.edits["family"] == "domain").sum() == 0  # domain never edits


def test_decisions_respected(lib):
    texts = [rec("Here is a 6 sentence abstract for the title:This article studies X.", "a"),
             rec("As an AI language model, I cannot. [assistant]: Fine text here.", "b")]
    base = clean(texts, lib)
    beg = base.edits.loc[(base.edits["id"] == "a"), "edit_id"].iloc[0]
    drop = base.edits.loc[(base.edits["id"] == "b") & (base.edits["action"] == "drop_text"), "edit_id"].iloc[0]
    r = clean(texts, lib, decisions={beg: "reject", drop: "reject"})
    out = {t.id: t.text for t in r.texts}
    assert out["a"] == texts[0].text  # rejected edit not applied
    assert out["b"] == "As an AI language model, I cannot. Fine text here."  # not dropped; the tag edit still applies
    assert not r.edits.set_index("edit_id").loc[beg, "accepted"]
    with pytest.raises(ValueError):
        clean(texts, lib, decisions={beg: "maybe"})  # type: ignore[dict-item]


def test_undo_round_trip_on_sample(lib):
    from zcp_core.data import load_texts

    texts, _ = dedupe_texts(load_texts(SAMPLE))
    r = clean(texts, lib)
    cleaned = {t.id: t.text for t in r.texts}
    edited = r.edits[r.edits["applied"]]
    assert edited["id"].nunique() > 50
    for rid, g in r.edits.groupby("id"):
        orig = next(t.text for t in texts if t.id == rid)
        assert undo(cleaned.get(rid), g) == orig
        if rid in cleaned and g["applied"].any():
            assert cleaned[rid] != orig


def test_over_and_under_cleaning_flags(lib):
    long_opener = "Here is a 3 sentence story based on the " + "very " * 40 + "long prompt given to me by you:"
    texts = [rec(long_opener + "Short.", "x", llm="ChatGPT", dt="direct_prompt"),
             *(rec(f"Human text number {i}. " * 8, f"h{i}", label="human", dt="story") for i in range(5))]
    r = clean(texts, lib, scorer=lambda xs: [0.9] * len(xs), config=CleanConfig())
    kinds = set(r.flags.loc[r.flags["id"] == "x", "kind"])
    assert {"shrunk", "residual_score"} <= kinds
    row = r.flags[(r.flags["id"] == "x") & (r.flags["kind"] == "shrunk")].iloc[0]
    assert row["value"] < row["threshold"] == 0.5


# scores, rule, top share or threshold, expected marks (the top share marks ceil(share x n) and ties with the last)
UNDER_GOLDEN = [
    ([0.9, 0.1, 0.5, 0.7, 0.3, 0.2, 0.4, 0.6, 0.8, 0.55], "top_share", 0.1, [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
    ([0.9, 0.1, 0.5, 0.7, 0.3, 0.2, 0.4, 0.6, 0.8, 0.55], "top_share", 0.3, [1, 0, 0, 1, 0, 0, 0, 0, 1, 0]),
    ([0.2, 0.6, 0.4, 0.8, 0.1], "top_share", 0.1, [0, 0, 0, 1, 0]),  # ceil(0.5) = 1
    ([0.9, 0.9, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], "top_share", 0.1, [1, 1, 0, 0, 0, 0, 0, 0, 0, 0]),  # a tie
    ([0.99, 0.98, 0.97, 0.2], "top_share", 1.0, [1, 1, 1, 1]),
    ([0.4, 0.5, 0.6, 0.99], "threshold", 0.5, [0, 0, 1, 1]),
    ([], "top_share", 0.1, []),
]


@pytest.mark.parametrize(("scores", "rule", "value", "expected"), UNDER_GOLDEN)
def test_under_cleaning_marks_golden(scores, rule, value, expected):
    cfg = (CleanConfig(residual_rule="threshold", residual_threshold=value) if rule == "threshold"
           else CleanConfig(residual_top_share=value))
    marks, _ = under_cleaning_marks(scores, cfg)
    assert [int(m) for m in marks] == expected


def test_under_cleaning_top_share_is_exact_despite_float_rounding():
    scores = [i / 100 for i in range(30)]  # 0.1 * 30 is 3.0000000000000004 in floating point
    marks, cut = under_cleaning_marks(scores, CleanConfig())
    assert sum(marks) == 3 and cut == 0.27
    with pytest.raises(ValueError, match="residual_top_share"):
        CleanConfig(residual_top_share=0.0)


def _tales(n: int) -> list:
    return [rec(f"Here is a 5 sentence story:Tale number {i} ends well.", f"x{i:02d}") for i in range(n)]


def _score(texts: list[str]) -> list[float]:
    """Residual scores that all exceed 0.5 (the old fixed cut would mark every text); higher for later tales."""
    import re

    return [0.5 + int(re.search(r"number (\d+)", t).group(1)) / 100 for t in texts]


@pytest.mark.parametrize(("cfg", "n_marked"), [
    (CleanConfig(), 4),  # default: top 10% of 40
    (CleanConfig(residual_top_share=0.25), 10),
    (CleanConfig(residual_rule="threshold", residual_threshold=0.85), 4),  # 0.86 .. 0.89
])
def test_under_cleaning_flag_marks_the_share_the_rule_says(lib, cfg, n_marked):
    texts = _tales(40)
    r = clean(texts, lib, scorer=_score, config=cfg)
    flagged = r.flags[r.flags["kind"] == "residual_score"]
    assert len(flagged) == n_marked
    if cfg.residual_rule == "top_share":
        assert len(flagged) / 40 == pytest.approx(cfg.residual_top_share)  # the share marked is the rule's share
    assert set(flagged["id"]) == {f"x{i:02d}" for i in range(40 - n_marked, 40)}  # the most AI-like ones
    assert (flagged["value"] >= flagged["threshold"]).all()
    u = r.under_cleaning
    assert (u["rule"], u["assessed"], u["scored"], u["marked"]) == (cfg.residual_rule, True, 40, n_marked)


def test_audit_card_states_the_under_cleaning_rule_and_count(lib, tmp_path):
    from zcp_core.artifacts import RunInputs, write_clean_run
    from zcp_core.runs import load_run

    folder, summary = write_clean_run(tmp_path / "c", _tales(40), lib, RunInputs(("tales",), license="apache-2.0"), scorer=_score)
    card = (folder / "README.md").read_text()
    assert "## Under-cleaning flag" in card
    assert "- Rule: top 10% of residual scores among the scored (edited) texts" in card
    assert "- Marked 4 of 40 scored (edited) texts (10.0%)." in card and "- Cut: residual score ≥ 0.860." in card
    assert summary["under_cleaning"]["marked"] == 4 and summary["flags"]["residual_score"] == 4
    assert load_run(folder).manifest["config"]["under_cleaning_rule"] == "top_share"
    folder2, _ = write_clean_run(tmp_path / "d", _tales(3), lib, RunInputs(("tales",), license="apache-2.0"))
    assert "- Not assessed: no residual scorer was given" in (folder2 / "README.md").read_text()


def test_user_library_extend_and_errors(tmp_path, lib):
    ext = tmp_path / "ext.yaml"
    ext.write_text("version: '1'\npatterns:\n  - {id: my-sig, family: ending, regex: '{{NUM}} words total',"
                   " flags: [IGNORECASE], scope: anywhere, action: strip_match}\n")
    lib2 = load_library(extend=[ext])
    assert lib2.sha256 != lib.sha256 and "my-sig" in lib2.by_id()
    assert scan([rec("Done. Five words total")], lib2)["pattern_id"].tolist() == ["my-sig"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: '1'\npatterns:\n  - {id: dom-edit, family: domain, regex: 'x', scope: start,"
                   " action: strip_match}\n")
    with pytest.raises(PatternError, match="dom-edit"):
        load_library(bad)


def test_redos_harmless_under_re2_and_handled_under_re(tmp_path):
    lib_file = tmp_path / "redos.yaml"
    lib_file.write_text("version: '1'\npatterns:\n  - {id: evil, family: ending, regex: '(a+)+$', scope: anywhere,"
                        " action: flag}\n")
    evil = rec("a" * 50_000 + "b")
    assert scan([evil], load_library(lib_file)).empty  # linear time: returns, no match
    slow = load_library(lib_file, engine="re", re_timeout_s=0.2)
    with pytest.raises(PatternTimeout, match="evil"):
        scan([rec("a" * 40 + "b")], slow)


def test_re2_rejection_names_pattern_and_re_opt_in(tmp_path):
    f = tmp_path / "look.yaml"
    f.write_text("version: '1'\npatterns:\n  - {id: needs-lookbehind, family: beginning, regex: '(?<=Here )is',"
                 " scope: anywhere, action: strip_match}\n")
    with pytest.raises(PatternError, match="needs-lookbehind.*RE2"):
        load_library(f)
    lib_re = load_library(f, engine="re")
    assert scan([rec("Here is it.")], lib_re)["match"].tolist() == ["is"]


def test_parallel_local_matches_serial(lib):
    from zcp_core.data import load_texts

    texts, _ = dedupe_texts(load_texts(SAMPLE))
    serial = scan(texts, lib, workers=1)
    parallel = scan(texts, lib, workers=2, shard_size=100)
    assert serial.equals(parallel) and len(serial) > 100


def test_import_is_light():
    code = ("import zcp_core.artifacts, zcp_core.artifacts.scanner, zcp_core.artifacts.cleaner, "
            "zcp_core.artifacts.release, zcp_core.artifacts.viz, zcp_core.cli.artifacts; import sys; "
            "print([m for m in ('torch','transformers','shap','sklearn','streamlit','ray','pandas','scipy','re2',"
            "'plotly') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# Issue 27: the two texts that survived cleaning before the substitute and transcript families; what is left.
CLEANED_GOLDEN = [
    ("[System]: - [User] Input is: Given News Abstract, write a news article, 9 sentences above: News Abstract: "
     "George North, North Anton, said, although his head was injured The latest, but he still hopes to continue the "
     "game for many years. News article: - [Assistant] Output as: George North, North Anton, talked about his hopes.",
     "George North, North Anton, talked about his hopes."),
    ("Thank you for the prompts, but I think generating fiction that depicts violence or harmful acts would not be "
     "appropriate. Here is a 17 sentence speech instead focusing on lawful and ethical themes:My fellow citizens, "
     "while change is needed, unrest helps no one.", None),  # dropped
]


@pytest.mark.parametrize(("text", "cleaned"), CLEANED_GOLDEN)
def test_golden_cleaning_of_transcripts_and_substitutes(lib, text, cleaned):
    res = clean([rec(text)], lib)
    if cleaned is None:
        assert not res.texts and list(res.dropped["pattern_id"]) == ["sub-instead"]
    else:
        assert [t.text for t in res.texts] == [cleaned]
        assert "Input is" not in res.texts[0].text and "Output as" not in res.texts[0].text
