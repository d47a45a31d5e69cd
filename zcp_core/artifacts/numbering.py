"""Sentence numbers left inside a text after the patterns cut its "1.".

A model asked for "a 26 sentence story" often numbers its sentences: "1. Awakening is excited for her birthday.
2. Today is the day she started talking. 3. However, …". The patterns cut the announcement and the leading
"1." (``beg-numbered-first``) but cannot take out the rest: RE2 has no look-around, and a regex per number
would also cut a human list written inline ("…capacity. 3. Electrostatic tower … 4. …").

What tells them apart is where the run starts: the numbers left by a cut "1." start at **2**, after the text's
first sentence, and go up by one. A human inline list in DetectRL starts where its list starts (here at
3, after an earlier "1." and "2."), or at the text's head. So a run is cut only when

* the first inline number of the text (``N.`` after a sentence end, not after an abbreviation) is ``2.``, and
  no ``1.`` precedes it;
* at least :data:`MIN_RUN` numbers follow one another from 2 (2, 3, …), each after a sentence end;

and then each number of the run is cut with the space after it, as an edit with pattern id :data:`RULE_ID`.
The edge stage applies it (:func:`applies`) only to a text whose head the patterns already cut (an announcement,
a "1.") or to a run of at least :data:`LONG_RUN` numbers, so a short run in a text the patterns left alone stays;
a number after an abbreviation ("Fig. 2.", "No. 3.") is never a sentence number. No human text of DetectRL
has such a run (a test asserts it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Collection, Iterable, Mapping, Sequence

RULE_ID = "rule:sentence-numbers-2"
LEFT_RULE_ID = "rule:numbers-left-2"
# the patterns that cut a sentence number ("1. " at the head, "rooms.2. " glued): their cuts are the evidence
# :func:`find_left_numbers` needs
NUMBER_PATTERNS = frozenset({"beg-numbered-first", "beg-numbered-glued"})
MIN_RUN = 2
LONG_RUN = 4
_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3})\.(?=\s)")
_AFTER_SENTENCE = re.compile(r"[.!?][\"'”’)]?\s*$")
_ONE = re.compile(r"(?:^|[\s:])1\.\s")
_GLUED = re.compile(r"(?<=[A-Za-z][.!?])(\d{1,2})\.(?=[ \t])")  # "…they're MIA.5. The atmosphere"
_HEAD_ONE = re.compile(r"\s*(1)\.[ \t]")
_LAST = re.compile(r"(?<=[.!?\"”])[ \t]*(\d{1,3})\.[ \t]*$")  # "…so long ago.22." ending the text
_LIST_ONE = re.compile(r":[ \t]*1\.\s")
# abbreviations a number follows in running text: "Fig. 2.", "No. 3.", "Eq. 4."
_ABBREV = re.compile(r"\b(?:No|Nos|Fig|Figs|Eq|Eqs|Ref|Refs|Sec|Secs|Vol|Ch|Chap|Art|Tab|Table|Figure|Section|"
                     r"Chapter|p|pp|vs|Nr|St)\.\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class NumberSpan:
    """One sentence number to cut.

    Attributes:
        start: Its first character.
        end: One past the whitespace after it.
        n: The number.
    """

    start: int
    end: int
    n: int


def applies(spans: Sequence[NumberSpan], head_starts: Iterable[int]) -> bool:
    """Whether a found run is cut: the text's applied edits (their ``start`` offsets in the original) cut its head,
    or the run holds at least :data:`LONG_RUN` numbers."""
    return bool(spans) and (0 in set(head_starts) or len(spans) >= LONG_RUN)


def _after_sentences(text: str) -> list[tuple[int, int]]:
    """Each number ``N.`` after a sentence end (not after an abbreviation): its offset and value."""
    return [(m.start(), int(m.group(1))) for m in _NUMBER.finditer(text)
            if _AFTER_SENTENCE.search(text[max(0, m.start() - 8): m.start()])
            and not _ABBREV.search(text[max(0, m.start() - 12): m.start()])]


def _span(text: str, at: int, n: int) -> NumberSpan:
    end = at + len(str(n)) + 1
    while end < len(text) and text[end] in " \t":
        end += 1
    return NumberSpan(at, end, n)


def cut_numbers(edits: Iterable[Mapping[str, Any]]) -> set[int]:
    """The sentence numbers the number patterns (:data:`NUMBER_PATTERNS`) cut, from a text's applied edits."""
    out = set()
    for e in edits:
        m = re.match(r"\s*(\d{1,3})\.", str(e.get("original", "")))
        if e.get("pattern_id") in NUMBER_PATTERNS and m:
            out.add(int(m.group(1)))
    return out


def find_left_numbers(text: str, cut: Collection[int]) -> list[NumberSpan]:
    """The sentence numbers the patterns left in a text whose other sentence numbers they cut, or ``[]``.

    The patterns cut a number glued to the sentence before it ("rooms.2. The beds") and a "1." they can tie to a
    "2." right after the first sentence; a number after a space (". 3. People went…"), a "1." whose "2." they
    cut, or a number glued after a capital ("MIA.5. The") stays, and the run is then too broken for
    :func:`find_sentence_numbers`. Here the cut numbers (``cut``, from :func:`cut_numbers`) are the evidence:
    the numbers left (after a sentence end, glued after a letter's sentence end, a "1." opening the text, or one
    ending it)
    are cut when, with the cut ones, they make a run 1 (or 2), 2, 3, … of at least :data:`LONG_RUN` numbers;
    the ones left are taken in text order, each larger than the one before. A text with a "1." after a colon
    has a list of its own and is left alone.
    """
    if not cut or _LIST_ONE.search(text):
        return []  # a "1." after a colon opens a list ("Suggestions:1. Use…"): its numbers are the list's
    found = dict(_after_sentences(text))
    found.update((m.start(1), int(m.group(1))) for m in (*_GLUED.finditer(text), *_LAST.finditer(text))
                 if not _ABBREV.search(text[max(0, m.start(1) - 12): m.start(1)]))  # "…as in Fig.3." is no number
    if (head := _HEAD_ONE.match(text)) is not None:
        found[head.start(1)] = 1
    every = set(cut) | set(found.values())
    first = 1 if 1 in every else 2
    top = first
    while top + 1 in every:
        top += 1
    if first not in every or top - first + 1 < LONG_RUN:
        return []
    run, last = [], 0
    for at in sorted(found):
        n = found[at]
        if first <= n <= top and n > last and n not in cut:
            run.append(_span(text, at, n))
            last = n
    return run


def find_sentence_numbers(text: str) -> list[NumberSpan]:
    """The run of sentence numbers 2, 3, … left after a cut "1." (see the module docstring), or ``[]``."""
    found = _after_sentences(text)
    if not found or found[0][1] != 2 or _ONE.search(text[: found[0][0]]):
        return []
    run, want = [], 2
    for at, n in found:
        if n != want:
            continue  # a stray number ("in 3. place") does not break the run; the next number goes on with it
        run.append(_span(text, at, n))
        want += 1
    return run if len(run) >= MIN_RUN else []
