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
from typing import Iterable, Sequence

RULE_ID = "rule:sentence-numbers-2"
MIN_RUN = 2
LONG_RUN = 4
_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3})\.(?=\s)")
_AFTER_SENTENCE = re.compile(r"[.!?][\"'”’)]?\s*$")
_ONE = re.compile(r"(?:^|[\s:])1\.\s")
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


def find_sentence_numbers(text: str) -> list[NumberSpan]:
    """The run of sentence numbers 2, 3, … left after a cut "1." (see the module docstring), or ``[]``."""
    found = [(m.start(), int(m.group(1))) for m in _NUMBER.finditer(text)
             if _AFTER_SENTENCE.search(text[max(0, m.start() - 8): m.start()])
             and not _ABBREV.search(text[max(0, m.start() - 12): m.start()])]
    if not found or found[0][1] != 2 or _ONE.search(text[: found[0][0]]):
        return []
    run, want = [], 2
    for at, n in found:
        if n != want:
            continue  # a stray number ("in 3. place") does not break the run; the next number goes on with it
        end = at + len(str(n)) + 1
        while end < len(text) and text[end] in " \t":
            end += 1
        run.append(NumberSpan(at, end, n))
        want += 1
    return run if len(run) >= MIN_RUN else []
