"""A title left at a text's head after the patterns cut the lead-in before it.

A model asked for a news article, an abstract or a story often answers "Here is a 7 sentence news article:" or
"Sure! Here's a story:", then a title, then the body. The patterns cut the lead-in; the title stays, joined to the
body by a space: "Ryder Cup Hero Questions Hall of Fame Snub Ian Woosnam led Europe…", "On the Shores of the Sky I
walked along the shore…". Of the residual titles the reviews of rounds 9 to 13 found, most sit in a text whose
lead-in a pattern had cut, and the edge detector scores a space-joined title far below its cut.

The lead-in is the evidence: no human text of DetectRL has its head cut by a pattern (0 of 6,035; a test asserts
it), so this rule runs only on a text whose head a pattern cut at offset 0, and a cut that says nothing of a
lead-in (an enclosing quote, a sentence number, an ellipsis, a placeholder:
:data:`zcp_core.artifacts.edges_apply.NOT_LEAD_INS`) does not count; :func:`find_lead_in_title` is told so by its
caller. It cuts at a head candidate of the edge detector within :data:`~zcp_core.artifacts.titles.MAX_AT`
characters when the segment before it reads as a title (3 to 20 words; no sentence end, comma, auxiliary or
pronoun; brackets and quotes balanced; no last word that needs a continuation), at least one of its content words comes back
in the next :data:`~zcp_core.artifacts.titles.ECHO_CHARS` characters (a body restates its title), and the body
opens a sentence in one of two ways:

* ``opener``: with a capitalised word that prose capitalises only at a sentence's start, followed by a lower
  case word ("…endless hole When I fell…", "…caused safety issues According to Network Rail…"), and not a pair
  the text writes again ("vitamin A"); "A" not after a capitalised word ("Serie A side"); "I" only after a Title
  Case segment of four words or more ("…On the Shores of the Sky I walked…"), since prose has "From the moment I
  walked" and "Last summer in Paris I discovered";
* ``name``: the title is in Title Case (every content word capitalised, at least six) and the body opens with a
  two-word name and a lower case word ("…Snub Ian Woosnam led…"), whose second word comes back later in the
  text and whose first word the text never writes after the title's last word, in any case (so "…in Boost for
  Welsh Football Wales has…" with "Welsh football" later is not cut there), and whose last word the title has
  not used before (a rank the body opens with: "…Commander Calls … as Islamic Commander John Smith of…").

The earliest candidate that qualifies is cut, as an edit with pattern id :data:`RULE_ID`.

A lead-in that quotes its title may hold a colon inside the quote ("Here is an abstract for the article title
\"Dyons with potentials: duality and black hole thermodynamics\":We study…"); the patterns end the lead-in at the
first colon, and the quote's tail is left at the head. :func:`find_quoted_tail` finds that tail, only where the
cut lead-in names a title or prompt and opens its quote without closing it, and it is cut as an edit with pattern
id :data:`QUOTE_RULE_ID`.
"""

from __future__ import annotations

import re

from zcp_core.artifacts.edges import _TITLE_SMALL, candidates
from zcp_core.artifacts.titles import _AUX, _CONTENT, ECHO_CHARS, MAX_AT, TitleCut, _title_like, title_case

RULE_ID = "rule:title-after-lead-in-2"
QUOTE_RULE_ID = "rule:quoted-title-left-1"
MAX_TAIL_WORDS = 25
# a lead-in that names a title and opens its quote ("…for the article title \"Dyons: ", "…based on the prompt
# \"SatChat: ", "…le titre est \"…"); not an inch mark ("the 27\" monitor"), dialogue, or "my review of \"Star Wars: "
_TITLE_QUOTE_OPEN = re.compile(r"\b(?:title|titled|entitled|titre(?: est)?|prompt)(?:\s*:\s*|\s+)[\"“][^\"”]*\Z",
                               re.IGNORECASE)
# the tail of a quoted title and the colon after it: no quote, line break, period or "!" before the closing quote (a
# title may ask a question: "…overcome in your writing?\":")
_QUOTED_TAIL = re.compile(r"[^\"“”\n.!]{1,200}?[\"”]:[ \t]*")
MIN_TITLE_CASE = 6
MIN_I_WORDS = 4  # a Title Case segment before "I": "On the Shores of the Sky I walked…"
# capitalised only where a sentence starts: after a title's last word they open the body
_OPENERS = frozenset("The A An This These Those When While In On At As After Before During Following According "
                     "Despite For With Over It We He She They Our His Her Their There Today Yesterday Last Once If "
                     "Although Since What How".split())
_NAME = re.compile(r"([A-Z][a-z]+)[ ]([A-Z][a-z'’-]+)[ ]+[a-z]")


def find_lead_in_title(text: str) -> TitleCut | None:
    """The title left at the head of ``text``, a text whose lead-in a pattern cut, or None (see the module
    docstring)."""
    for c in candidates(text, "head"):
        if c.kind not in ("space", "glue") or c.at > MAX_AT:
            continue
        seg, body = text[: c.at].rstrip(), text[c.at:].lstrip(" ")
        if not (_title_like(seg, allow_end=False) and "," not in seg and seg.count("(") == seg.count(")")
                and seg.count('"') % 2 == 0 and seg.count("“") == seg.count("”")
                and not _AUX.search(seg) and _echoed(seg, body[:ECHO_CHARS])):
            continue
        words = body.split(" ", 2)
        first, after = words[0], (words[1:] or [""])[0]
        # the title's last word, its quotes, brackets and bold markers taken off ("…Lap Record **" ends in "Record")
        prev = next((w.strip("\"“”'‘’()[]*") for w in reversed(seg.split()) if any(ch.isalpha() for ch in w)), "")
        again = re.search(rf"\b{re.escape(prev)} {re.escape(first)}\b", text[c.at + len(first):], re.IGNORECASE)
        if _opens(first, after, prev, seg) and again is None:  # "vitamin A … Vitamin A": a pair, not a boundary
            return TitleCut(c.at, "opener", 1.0)
        if _title_case(seg) and _named(text, c.at, body, prev):
            return TitleCut(c.at, "name", 1.0)
    return None


def _opens(first: str, after: str, prev: str, seg: str) -> bool:
    """Whether ``first`` opens the body after a title ``seg`` ending in ``prev``. The opener must be followed by a
    lower case word (or "I"): "The Guardian", "Today FM" and "Her Majesty" are names a sentence names mid-way
    ("…told The Guardian on Monday"), and in a Title Case title "After", "Over", "His" are its own words
    ("Swimmers at Risk After Storm…"). "A" after a capitalised word is a name's ("Serie A side Parma"); "I" only
    after a Title Case segment of :data:`MIN_I_WORDS` words or more (prose has "Last summer in Paris I…")."""
    if first == "I":
        return prev[:1].isupper() and len(seg.split()) >= MIN_I_WORDS and _title_case(seg, 2)
    if first not in _OPENERS or not (after[:1].islower() or after == "I"):
        return False
    return not (first == "A" and prev[:1].isupper())


def _echoed(seg: str, after: str) -> bool:
    """Whether a content word of the segment starts, on its first five letters, a word of ``after``."""
    stems = {w.lower()[:5] for w in _CONTENT.findall(after)}
    return any(w.lower()[:5] in stems for w in _CONTENT.findall(seg) if w.lower() not in _TITLE_SMALL)


def _title_case(seg: str, least: int = MIN_TITLE_CASE) -> bool:
    """:func:`~zcp_core.artifacts.titles.title_case` with at least ``least`` capitalised words."""
    return title_case(seg, least)


def _named(text: str, at: int, body: str, prev: str) -> bool:
    """Whether the body opens with a two-word name that the text names again by its second word, and whose first
    word the text never writes after the title's last word (a longer name: "Manchester City Council")."""
    m = _NAME.match(body)
    if m is None or {m.group(1), m.group(2)} & (_OPENERS | {"I"}):
        return False  # "…Particle Systems We employ…": a pronoun opens a sentence, it names no one
    if prev in text[: at].split()[:-1]:
        return False  # a title ending in a word it already used ("…Police Commander … Islamic Commander John
        # Smith…"): the body's first word, a rank before the name, says it again
    rest = text[at + m.end(2):]
    return (re.search(rf"\b{re.escape(m.group(2))}\b", rest) is not None
            and f"{prev} {m.group(1)}".lower() not in rest.lower())


def find_quoted_tail(text: str, lead_in: str) -> int | None:
    """Where the tail of a quoted title left at the head of ``text`` ends (its colon and the spaces after it
    included), or None. ``lead_in`` is what the patterns cut before it; it must name a title or prompt and open
    its quote without closing it ("…article title \"Dyons with potentials: "), so a text that opens with a quote of
    its own, an inch mark ("my old 24\":") or a review of a quoted film is never cut."""
    if _TITLE_QUOTE_OPEN.search(lead_in) is None:
        return None
    m = _QUOTED_TAIL.match(text)
    return m.end() if m is not None and len(m.group(0).split()) <= MAX_TAIL_WORDS else None
