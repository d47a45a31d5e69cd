"""Edit mechanics shared by the cleaner and its re-scan passes: spans, applying, undoing.

An edit removes ``[start, end)`` of a text (``replacement`` is what goes in
its place, ``""`` for regex edits). Edits of ``stage`` 0 hold offsets into the
original text; a later stage (LLM re-cleaning) holds offsets into the result of
the stage before, and :func:`undo` unwinds the stages last first.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Mapping, Sequence

TERMINATORS = ".?!:"
#: The longest bold title a match can open (``Here's the article:**Title**Body``); a longer bold run is the body.
TITLE_MAX = 80
_SENTENCE_IN_BOLD = re.compile(r"[.?!][\"”’)]?\s+\S")
_TOKEN = re.compile(r"\S*")
#: Actions that take a whole text out: a rejection (the text is no text) and a hold-back (it cannot be repaired).
DROP_ACTIONS: tuple[str, ...] = ("drop_text", "hold_back")
__all__ = ["DROP_ACTIONS", "TERMINATORS", "apply_edits", "edit_span", "sentence_end", "undo"]


def sentence_end(text: str, pos: int) -> int:
    """Index just past the first ``.?!:`` at or after ``pos - 1`` (the text's end if none); a time's colon
    ("10:30") and anything inside a link ("https://example.com/a") end no sentence."""
    if pos > 0 and text[pos - 1] in TERMINATORS:
        return pos
    while True:
        idx = [i for i in (text.find(c, pos) for c in TERMINATORS) if i >= 0]
        if not idx:
            return len(text)
        end = min(idx)
        start = max(text.rfind(" ", 0, end), text.rfind("\n", 0, end)) + 1
        m = _TOKEN.match(text, start)
        token = m.group(0) if m else ""  # \S* always matches
        if "://" in token or token.startswith("www."):
            pos = start + len(token)  # a link's dots and colons: the sentence goes on after it
        elif text[end] == ":" and text[end - 1: end].isdigit() and text[end + 1: end + 2].isdigit():
            pos = end + 1
        else:
            return end + 1


def _trailing_bold(match: str) -> Literal["closes", "opens", ""]:
    """What a match's trailing ``**`` after a terminator does: ``closes`` its own bold (``**Here is the section:**``,
    the sentence is over at the match's end), ``opens`` a bold title (``Here's the article:**Title**``, ended by
    :func:`_bold_title_end`), or ``""`` (no such ``**``). It closes a bold only if one is open in the match: an
    earlier, closed pair (``**Note:** here's the article:**Title**``) leaves it opening."""
    body = match.rstrip("*")
    if len(match) - len(body) < 2 or body[-1:] not in tuple(TERMINATORS):
        return ""
    return "closes" if body.count("**") % 2 else "opens"


def _bold_title_end(text: str, end: int) -> int | None:
    """Index past the ``**`` closing the bold title a match opened at ``end`` (``…style:**Title**Body``).

    The sentence is over at that close: a title has no terminator of its own, and the next one is the body's
    first sentence, which is not the opener's to cut. None if the bold is no title: it does not close on its line
    within :data:`TITLE_MAX` characters, a sentence ends inside it, or the text after it goes on with a lower-case
    word or a comma (``**In a sad incident**, four died``).
    """
    close = text.find("**", end, end + TITLE_MAX + 2)
    if close < 0 or "\n" in text[end:close] or _SENTENCE_IN_BOLD.search(text, end, close):
        return None
    after = text[close + 2:].lstrip("*: \t")[:1]
    return None if after.islower() or after in (",", ";") else close + 2


def _bold_closes_on_line(text: str, end: int) -> bool:
    """Whether the bold run opened at ``end`` closes, or a sentence ends inside it, before its line ends."""
    line_end = text.find("\n", end)
    line = text[end:line_end if line_end >= 0 else len(text)]
    return "**" in line or _SENTENCE_IN_BOLD.search(line) is not None


def edit_span(text: str, start: int, end: int, action: str) -> tuple[int, int]:
    """The characters an action removes for a match at [start, end)."""
    if action in DROP_ACTIONS:
        return 0, len(text)
    bold = _trailing_bold(text[start:end]) if action == "strip_sentence" else ""
    title = _bold_title_end(text, end) if bold == "opens" else None
    if title is not None:
        end = title
    elif bold == "opens" and _bold_closes_on_line(text, end):
        # A bold first paragraph or phrase, not a title: the opener ends before its "**", and the body keeps its bold.
        end = start + len(text[start:end].rstrip("*"))
    elif action == "strip_sentence" and bold != "closes":
        end = sentence_end(text, end)
    # Take the following whitespace too, so no stray gap is left; at the text's end take the preceding one.
    while end < len(text) and text[end].isspace():
        end += 1
    if end == len(text):
        while start > 0 and text[start - 1].isspace():
            start -= 1
    return start, end


def apply_edits(text: str, edits: Sequence[Mapping[str, Any]]) -> str:
    """The text with the given (non-overlapping) edits applied."""
    out, cur = [], 0
    for e in sorted(edits, key=lambda x: x["start"]):
        out.append(text[cur:int(e["start"])])
        out.append(str(e["replacement"]))
        cur = int(e["end"])
    out.append(text[cur:])
    return "".join(out)


def undo(cleaned_text: str | None, edits: Any) -> str:
    """Restore the original text from a cleaned one and its applied edits.

    Args:
        cleaned_text: The cleaned text (None or ``""`` for a dropped text).
        edits: The text's edits (DataFrame or list of mappings); rows with
            ``applied`` False are ignored. Edits of a later ``stage`` (LLM
            re-cleaning, offsets into the stage-0 result) are undone first.
    """
    rows = edits.to_dict("records") if hasattr(edits, "to_dict") else list(edits)
    rows = [r for r in rows if r.get("applied", True)]
    text = cleaned_text or ""
    for stage in sorted({int(r.get("stage", 0)) for r in rows}, reverse=True):
        text = _undo_stage(text, sorted((r for r in rows if int(r.get("stage", 0)) == stage),
                                        key=lambda r: int(r["start"])))
    return text


def _undo_stage(cleaned: str, rows: list[Mapping[str, Any]]) -> str:
    out, cur, prev_end = [], 0, 0
    for r in rows:
        keep = int(r["start"]) - prev_end
        out.append(cleaned[cur:cur + keep])
        out.append(str(r["original"]))
        cur += keep + len(str(r["replacement"]))
        prev_end = int(r["end"])
    out.append(cleaned[cur:])
    return "".join(out)
