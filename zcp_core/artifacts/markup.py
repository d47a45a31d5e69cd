"""Markdown bold markers left after a pattern cut the ones around a headline or a role tag.

A model that answers in markdown wraps its headline, its dateline and its labels in ``**``. The patterns cut the
markers they match (a bold headline, "**Assistant**:", a glued "**"), and the ones they do not match stay:
"London** - For a bold move…", "In a heart-wrenching incident**, four lives…", "…stopped.\"****The move has been
welcomed…". A reader takes them for what they are, markup the release should not carry.

The rule runs only in a text where a pattern's applied edit removed ``**``: that cut is the evidence the text was
written in markdown by a model, so a human text that uses bold for emphasis ("rise when the other **fell**") or
a row of asterisks as a scene break is never touched unless a pattern cut its markup first. Then every run of
two asterisks or more is cut, with one space beside it where it stood between two spaces (so "habits. ** ** She"
reads "habits. She"). Only the markers go: the words they wrapped stay.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

RULE_ID = "rule:bold-left"
_RUN = re.compile(r"\*{2,}")


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


def find_left_bold(text: str, applied: Sequence[Mapping[str, Any]]) -> list[MarkerCut]:
    """The bold markers left in a cleaned ``text``, given the pattern edits applied to it (see the module
    docstring); none without the evidence."""
    if not bold_evidence(applied):
        return []
    out: list[MarkerCut] = []
    for m in _RUN.finditer(text):
        s, e = m.start(), m.end()
        before = s == 0 or text[s - 1].isspace()
        if e < len(text) and text[e] == " " and before:
            e += 1  # the space after a free-standing run: "habits. ** She" -> "habits. She"
        elif e == len(text):
            while s > 0 and text[s - 1] == " ":
                s -= 1  # a run closing the text takes the space before it
        if out and s < out[-1].end:
            continue
        out.append(MarkerCut(s, e))
    return out
