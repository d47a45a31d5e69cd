"""A title glued to the text it heads, found by the text repeating it.

The learned edge detector (:mod:`zcp_core.artifacts.edges`) cuts a headline only when it scores above every
development human text, and a few human openings ("Oxford City Council said Evenlode and Windrush towers…")
look as much like a headline as a generated one does. What tells a generated title apart is the text after it:
it *says the title again*. A news story restates its headline ("Aston Villa eyeing summer signings Aston Villa
chief executive Keith Wyness…"), an abstract restates its paper's title ("Absolute properties of the binary
system BB PegasiBB Pegasi is an eclipsing binary…"). A human text does not open by repeating itself.

Three forms are cut, each only at a head candidate of the edge detector (a glue such as "PegasiBB" or a space
before a capital) within the first :data:`MAX_AT` characters, and only when the segment before it holds 3 to 20
words, holds no sentence end but at its end, and does not open with a quote or bracket:

* ``restart``: the text after the cut opens with the same two leading words as the text itself (articles and a
  title's small words skipped, compared on their first four letters), and the segment does not end in a word
  that needs a continuation ("since", "that", "of"…), nor is a title line of five words or fewer that the text
  then opens with word for word (a review's own title: "Great little phone Great little phone for the price");
* ``glue``: the cut is a glue (a capital with no space before it, after a letter, a digit or a closing mark), the
  segment reads as a title (no comma or sentence punctuation, no auxiliary, pronoun or reporting verb), at least
  half of its content words, and at least two, come back in the next :data:`ECHO_CHARS` characters, and the
  text after the glue opens like a sentence (an article, a pronoun, a section label such as "Context", one of
  the title's own words, or "In", "As", "On", "At" before a determiner, so "GaAs quantum wells" and "LinkedIn
  before an interview" stay whole).

* ``headline``: as ``glue``, for a segment in headline case (five words or more, every word capitalised but a
  title's small words, at most two commas): a comma and a capitalised "Says" or "Said" are allowed ("…Wed,
  Introduces Legal Consequences for NoncomplianceBurundi's government…"), and three of its content words said
  again are enough; the body must open a sentence or say the title again from its first word, and the glue must
  not follow a name prefix ("Fr Mc|Guckien"). A ``restart`` in headline case may hold "Says" too ("…Uncertain
  Future, Says Chairman Peter MastersTruro City Football Club's…"). A human sentence writes its verbs in lower
  case ("…the Deathly Hallows is Harry Potter's darkest…"); a reviewer's own title holds a pronoun ("This Is
  The Best Blender I Have Ever Owned").

Neither glue form cuts inside a name written in camel case: after a lower case piece of one or two letters
("Apple i|Phone"), or where the two halves are written together again later ("…of Open|AI", then "OpenAI").

A third predicate, :func:`glued_title`, cuts nothing itself: it marks the head candidates shaped like a glued
title (a glue after 3 to 20 words with no sentence end, comma, auxiliary or pronoun, brackets balanced, not
inside a name such as "Mc|Gregor", and after it a capitalised word of four letters or more, or a short word a
sentence opens with, "In", "As", "On" and "At" only before a determiner; so not an attacked word's tail as in
"…nuclei playFs a crucial role", nor a camel-case name as in "LinkedIn stepped down" or "InGaAs quantum wells"). The edge detector cuts such a candidate
at a lower threshold of its own, set on the development texts known to be clean that have one
(:data:`GATE_ID` names the predicate in the model file, so a changed predicate cannot meet an old threshold).

The forms were checked on the 6,035 human texts of DetectRL's test splits: none fires on any of them (a test
asserts it), and the human examples an independent code review built outside DetectRL are golden rows. A cut is recorded like a pattern edit with the rule's id, :data:`RULE_ID`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from zcp_core.artifacts.edges import _TITLE_SMALL, Candidate, candidates

RULE_ID = "rule:title-restated-4"
GATE_ID = "gate:glued-title-2"
MAX_AT = 220
MIN_WORDS, MAX_WORDS = 3, 20
ECHO_CHARS = 300
_CONTENT = re.compile(r"[^\W\d_]{4,}")
_WORD = re.compile(r"[^\W_]+")
_SENTENCE_PUNCT = re.compile(r"[.!?;]")
_AUX = re.compile(r"\b(?:is|are|was|were|be|been|being|has|have|had|do|does|did|will|would|can|could|should|"
                  r"shall|may|might|must|said|says|i|we|you|he|she|they|it|my|our|your|his|her|their|its|this|"
                  r"that|these|those|there|here)\b", re.IGNORECASE)
# words a sentence opens with after a title, and the section labels an abstract opens with
_STARTERS = frozenset("the this these those we in a an our here it its there on at for with after as according "
                      "context background abstract summary today".split())
# short starters that also end words ("GaAs", "LinkedIn", "MnAs"): after a glue they open a sentence only when a
# determiner follows ("…ContractIn an exciting development…")
_PREPOSITIONS = frozenset("in as on at".split())
_DETERMINERS = frozenset("a an the this these those its our his her their recent".split())
# a segment ending in one of these is half a clause, not a title ("Today marks one year since | Gary Speed…")
_OPEN_ENDS = _TITLE_SMALL | frozenset("since that when while because after before about than like which who whom "
                                      "whose where if then said says another former his her their its our my your".split())
# a glue right after one of these is inside a name ("Ewan Mc|Gregor", "Kimberley Mac|Kenzie"), not after a title
_NAME_PREFIX = re.compile(r"(?:^|\s)(?:Mc|Mac|De|Di|Da|Du|Le|La|O|Van|Von)$")
_REPORTING = re.compile(r"\b(?:Says|Said)\b")  # a headline's reporting verb, capitalised
_SHORT_OPENERS = frozenset("A An It We If Of To By No So The Our Its His Her For But And One Two Six Ten New".split())
Form = Literal["restart", "glue", "headline", "opener", "name"]


@dataclass(frozen=True)
class TitleCut:
    """A title found at a text's head.

    Attributes:
        at: The cut point: the title is ``text[:at]``.
        form: ``restart`` (the text opens again with the title's first words), ``glue`` or ``headline``.
        echo: The share of the title's content words found again in the text after it.
    """

    at: int
    form: Form
    echo: float


def _lead(text: str) -> list[str]:
    """The first two words that are not articles or a title's small words, cut to four letters, lower case."""
    words = [w.lower() for w in _WORD.findall(text[:120])]
    return [w[:4] for w in words if w not in _TITLE_SMALL][:2]


def _echo(seg: str, after: str) -> tuple[int, float]:
    """How many of the segment's content words (four letters or more) start, on their first five letters, a word
    of ``after``; and their share."""
    words = [w.lower() for w in _CONTENT.findall(seg) if w.lower() not in _TITLE_SMALL]
    if not words:
        return 0, 0.0
    stems = {w.lower()[:5] for w in _CONTENT.findall(after)}
    k = sum(w[:5] in stems for w in words)
    return k, k / len(words)


def _body_words(body: str) -> tuple[str, list[str]]:
    """The first word of the text after a glue, a capital an attack put before it taken off ("BroadcastsMIn a
    shocking…" opens with "In"), and its first words; ``("", [])`` when it has none."""
    words = _WORD.findall(body[:80])
    if not words:
        return "", []
    word = words[0]
    return (word[1:] if len(word) >= 3 and word[:2].isupper() and word[2:3].islower() else word), words


def _opens_like_a_sentence(body: str, seg: str) -> bool:
    """Whether the text after a glue opens a sentence: an article, a pronoun, a preposition that a determiner
    follows, a section label, or one of the title's words; not the second half of a word ("GaAs quantum wells",
    "LinkedIn before an interview")."""
    word, words = _body_words(body)
    if not words:
        return False
    stems = {w.lower()[:5] for w in _CONTENT.findall(seg)}
    if word.lower() in _PREPOSITIONS:
        return len(words) > 1 and words[1].lower() in _DETERMINERS
    # an acronym of the title opens the body only with the title's next word after it ("…CygniXY Cygni is"), not
    # as the tail of a name ("…of OpenAI met")
    return (word.lower() in _STARTERS or (len(word) >= 4 and word.lower()[:5] in stems)
            or (word.isupper() and word in seg.split() and len(words) > 1 and words[1] in seg.split()))


def _starts_sentence(text: str, at: int) -> bool:
    """Whether the word at ``at`` is one a sentence opens with ("…\"Rubbish\"In a recent interview…"), not a
    letter an attack put in a word ("broaVdband")."""
    m = _WORD.match(text, at)
    return m is not None and m.group(0).lower() in _STARTERS


def _title_start_of_run(text: str, q: int, points: list[int]) -> int:
    """Where a restart's title really ends: a run "Cap lower…" of at most five words just before the restart is
    the body's own noun phrase ("…Gas Bills Major energy provider | Firmus Energy has…"), so the cut moves to its
    start; a double space (a lost line break) inside the title moves it there too."""
    seg = text[:q].rstrip()
    gap = seg.find("  ")
    if gap > 0 and len(seg[:gap].split()) >= MIN_WORDS:
        return gap
    for p in points:
        run = text[p:q].split()
        if (p < q and 2 <= len(run) <= 5 and re.match(r"[A-Z]", run[0]) and run[-1] not in _OPEN_ENDS
                and all(w[:1].islower() and not _AUX.fullmatch(w.strip(",")) for w in run[1:])):
            return p
    return q


def find_title(text: str) -> TitleCut | None:
    """The title glued to the head of ``text`` that the text restates, or None (see the module docstring)."""
    cands = [c for c in candidates(text, "head") if c.at <= MAX_AT and c.kind in ("glue", "space")]
    for c in cands:
        seg, after = text[: c.at].rstrip(), text[c.at:]
        body = after.lstrip(" ")
        first = _WORD.match(body)
        if first is None or not re.match(r"[A-Z][A-Za-z]", body):
            continue
        lead = _lead(seg)
        if len(lead) == 2 and lead == _lead(body):
            if not _title_like(seg, allow_end=True) or (len(seg.split()) <= 5 and body.lower().startswith(seg.lower())):
                continue  # a short title line the writer then opens with word for word ("Great little phone Great
                # little phone for the price…") is the writer's own, as a human review may carry one
            # after a glue the title ends where it is glued, unless an earlier glue already ended it (the body's
            # words between are not title); after a space, the body's own words may come first
            earlier = [d for d in cands if d.at < c.at]
            if c.kind == "glue" and any(d.kind == "glue" and _starts_sentence(text, d.at) for d in earlier):
                continue
            at = c.at if c.kind == "glue" else _title_start_of_run(text, c.at, [d.at for d in earlier])
            seg = text[:at].rstrip()
            k, share = _echo(seg, text[at: at + ECHO_CHARS])
            # a whole first sentence said twice is an echo; a lede sentence the story then goes on from is not
            said_twice = seg[-1:] not in ".!?" or share >= 0.8
            if _title_like(seg, allow_end=True) and (not _AUX.search(seg) or _headline(seg)) and said_twice:
                return TitleCut(at, "restart", round(share, 3))
            continue
        k, share = _echo(seg, after[:ECHO_CHARS])
        if (c.kind == "glue" and k >= 2 and _title_like(seg, allow_end=False) and seg.count("(") == seg.count(")")
                and _opens_like_a_sentence(body, seg) and not _inside_a_name(text, seg, c.at)):
            if share >= 0.5 and "," not in seg and not _AUX.search(seg):
                return TitleCut(c.at, "glue", round(share, 3))
            # headline case is evidence of its own, so three of its words said again are enough; the body must
            # open a sentence or say the title again from its first word ("…NoncomplianceBurundi's government")
            if ((share >= 0.5 or k >= 3) and _headline(seg) and not _NAME_PREFIX.search(seg)
                    and _opens_after_headline(body, seg)):
                return TitleCut(c.at, "headline", round(share, 3))
    return None


def _headline_case(seg: str) -> bool:
    """Whether a segment is written in headline case: five words or more, three of them of four letters or more,
    every word capitalised but a title's small words ("of", "to", "the"…), at most two commas ("…Austria Drew,
    Says O'Neill"). A human sentence names people and places in capitals but writes its verbs in lower case
    ("Parish Priest Fr McGuckien told mourners…", "…the Deathly Hallows is Harry Potter's darkest…")."""
    words = [w.strip("\"'‘’“”()") for w in seg.replace(",", " ").split()]
    words = [w for w in words if re.search(r"[A-Za-z]", w)]
    long = [w for w in words if len(re.sub(r"[^A-Za-z]", "", w)) >= 4]
    return len(words) >= 5 and seg.count(",") <= 2 and len(long) >= 3 and title_case(" ".join(words))


def title_case(seg: str, least: int = 0) -> bool:
    """Every word with a letter that is not a title's small word is capitalised, and there are at least ``least``
    of them."""
    words = [w for w in seg.split() if any(ch.isalpha() for ch in w) and w.lower() not in _TITLE_SMALL]
    return len(words) >= least and all(w[:1].isupper() or not w[:1].isalpha() for w in words)


def _headline(seg: str) -> bool:
    """Headline case, with no auxiliary or pronoun but a headline's capitalised "Says" or "Said" (so "This Is
    The Best Blender I Have Ever Owned", a reviewer's own title, is none)."""
    return _headline_case(seg) and not _AUX.search(_REPORTING.sub(" ", seg))


def _opens_after_headline(body: str, seg: str) -> bool:
    """Whether the text after a headline's glue opens a sentence, or says the headline again from its first word
    (not from a later one: "…Joan Collins and Harper|Collins chief executive…" is a name, not a glue)."""
    word, words = _body_words(body)
    first = _WORD.findall(seg)
    if not words or not first:
        return False
    if word.lower() in _PREPOSITIONS:
        return len(words) > 1 and words[1].lower() in _DETERMINERS
    return word.lower() in _STARTERS or (len(word) >= 4 and word.lower()[:5] == first[0].lower()[:5])


def _inside_a_name(text: str, seg: str, at: int) -> bool:
    """Whether a glue splits a name written in camel case: the title's last word is a lower case piece of one or
    two letters ("Apple i|Phone"), or it and the word after the glue are written together again later in the text
    ("…of Open|AI met…" with "OpenAI" later)."""
    last = seg.split()[-1] if seg.split() else ""
    m = _WORD.match(text, at)
    if re.fullmatch(r"[a-z]{1,2}", last) or m is None:
        return True
    joined = re.sub(r"^\W+", "", last) + m.group(0)
    return joined in text[at + len(m.group(0)):]


def _title_like(seg: str, allow_end: bool) -> bool:
    """3 to 20 words, no opening quote or bracket, no sentence end inside (at its end only if ``allow_end``),
    and no last word that needs a continuation."""
    words = seg.split()
    if not MIN_WORDS <= len(words) <= MAX_WORDS or seg[:1] in "\"“'(*[":
        return False
    if words[-1].lower().strip("'’") in _OPEN_ENDS or seg[-1:] in ",;:\"“'-":
        return False
    return not _SENTENCE_PUNCT.search(seg if not allow_end else seg[:-1])


def glued_title(text: str, c: Candidate) -> bool:
    """Whether a head candidate of ``text`` has a glued title's shape (see the module docstring); the edge
    detector cuts such a candidate at its gated threshold."""
    if c.edge != "head" or c.kind != "glue" or c.at > MAX_AT:
        return False
    seg = text[: c.at].rstrip()
    return (_opens_after_glue(text, c.at) and _title_like(seg, allow_end=False) and "," not in seg
            and seg.count("(") == seg.count(")") and seg.count("$") % 2 == 0
            and not _AUX.search(seg) and not _NAME_PREFIX.search(seg))


def _opens_after_glue(text: str, at: int) -> bool:
    """Whether the word after a glue can open a sentence: a capitalised word of four letters or more, or a short
    word a sentence opens with; "In", "As", "On" and "At" only before a determiner. A short piece is the tail of an
    attacked word ("…nuclei playFs a crucial role") or of a name written in camel case ("LinkedIn stepped down",
    "InGaAs quantum wells", "WhatsApp reported")."""
    words = _WORD.findall(text[at: at + 80])
    if not words or not re.match(r"[A-Z][A-Za-z]", text[at:]):
        return False
    word = words[0]
    if word.lower() in _PREPOSITIONS:
        return len(words) > 1 and words[1].lower() in _DETERMINERS
    return len(word) >= 4 or word in _SHORT_OPENERS
