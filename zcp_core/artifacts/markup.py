"""Markdown bold markers left after a pattern cut the ones around a headline or a role tag.

A model that answers in markdown wraps its headline, its dateline and its labels in ``**``. The patterns cut the
markers they match (a bold headline, "**Assistant**:", a glued "**"), and the ones they do not match stay:
"London** - For a bold move…", "In a heart-wrenching incident**, four lives…", "…stopped.\"****The move has been
welcomed…". A reader takes them for what they are, markup the release should not carry.

The rule runs only in a text where a pattern's applied edit removed ``**``: that cut is the evidence the text was
written in markdown by a model. Even then it cuts only *stray* markers, since a human markdown document can have
its bold heading cut by a pattern too ("**Abstract**", "**Chapter One**"):

* a marker that is half of a bold span ("the **really** good part": an opener after a space or a bracket, a
  closer before a space or punctuation, on one line) stays, and so does a free-standing run of three asterisks or
  more (a scene break, a rating "*****");
* a run between two letters or digits ("f**k", "x**2"), between two operands ("2 ** 10") or inside backticks is
  not markup and stays;
* every other run of two asterisks or more is cut, with one space beside it where it stood between two (so
  "habits. ** ** She" reads "habits. She"; a run closing the text takes the space before it).

Only the markers go: the words they wrapped stay.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

RULE_ID = "rule:bold-left-2"
_RUN = re.compile(r"\*{2,}")
_OPEN_BEFORE = " \t\n([{\"'“‘"
_CLOSE_AFTER = " \t\n.,;:!?)]}\"'”’"
MAX_SPAN = 120  # a bold span longer than this, or across a line, is no span


@dataclass(frozen=True)
class MarkerCut:
    """A run of asterisks to cut.

    Attributes:
        start: First character cut.
        end: One past the last (a space beside the run included where it stood between two).
    """

    start: int
    end: int


def bold_evidence(applied: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a pattern's applied edit (not a rule's or the detector's) removed a ``**``."""
    return any("**" in str(e.get("original", "")) and not str(e["pattern_id"]).startswith(("rule:", "learned:"))
               for e in applied)


def _spans(text: str, runs: list[tuple[int, int]]) -> set[int]:
    """The indices of runs that open or close a bold span."""
    out: set[int] = set()
    for i in range(len(runs) - 1):
        (s1, e1), (s2, e2) = runs[i], runs[i + 1]
        if i in out or e1 - s1 != 2 or e2 - s2 != 2:
            continue
        opens = (s1 == 0 or text[s1 - 1] in _OPEN_BEFORE) and e1 < s2 and not text[e1].isspace()
        closes = not text[s2 - 1].isspace() and (e2 == len(text) or text[e2] in _CLOSE_AFTER)
        if opens and closes and s2 - e1 <= MAX_SPAN and "\n" not in text[e1:s2]:
            out |= {i, i + 1}
    return out


def _not_markup(text: str, s: int, e: int) -> bool:
    """A run that is no stray marker: inside a word or between two operands, inside backticks, or a free-standing
    scene break or rating of three asterisks or more."""
    before, after = text[:s].rstrip(" "), text[e:].lstrip(" ")
    if (s > 0 and e < len(text) and text[s - 1].isalnum() and text[e].isalnum()) or text[:s].count("`") % 2:
        return True
    if re.search(r"[\w)]$", before) and re.match(r"[\w(]", after) and text[s - 1: s] == " " and text[e: e + 1] == " ":
        return True  # "2 ** 10"
    free = (s == 0 or text[s - 1].isspace() or text[s - 1] in ":(") and (e == len(text) or text[e].isspace()
                                                                          or text[e] in ").")
    return e - s >= 3 and free


def find_left_bold(text: str, applied: Sequence[Mapping[str, Any]]) -> list[MarkerCut]:
    """The stray bold markers left in a cleaned ``text``, given the pattern edits applied to it (see the module
    docstring); none without the evidence."""
    if not bold_evidence(applied):
        return []
    runs = [(m.start(), m.end()) for m in _RUN.finditer(text)]
    kept = _spans(text, runs)
    out: list[MarkerCut] = []
    for i, (s, e) in enumerate(runs):
        if i in kept or _not_markup(text, s, e):
            continue
        before = s == 0 or text[s - 1].isspace()
        if e < len(text) and text[e] == " " and before:
            e += 1  # the space after a free-standing run: "habits. ** She" -> "habits. She"
        elif e == len(text):
            while s > 0 and text[s - 1] == " ":
                s -= 1  # a run closing the text takes the space before it
        if out and s <= out[-1].end:
            s = out.pop().start  # "The end. ** **": one cut
            if e == len(text):
                while s > 0 and text[s - 1] == " ":
                    s -= 1
        out.append(MarkerCut(s, e))
    return out
