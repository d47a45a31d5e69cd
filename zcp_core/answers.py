"""Final-answer extraction and grading with math-verify (pinned at 0.9.0).

Grading never falls back to stripping non-digits (which would accept
``\\frac{1}{2}`` for ``12``). math-verify's default timeouts use signals,
which only work in the main thread; elsewhere (the app runs in threads)
grading runs without the signal timer and instead refuses over-long inputs.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Literal

GradeStatus = Literal["ok", "no_answer", "parse_error"]
MAX_GRADE_CHARS = 600
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*")
_ANSWER_IS = re.compile(r"(?:final answer|answer)\s*(?:is|:)\s*\$?\\?\(?\s*([^\n$]+?)\s*\$?\s*(?:\.|$)", re.I)
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def _balanced(text: str, open_at: int) -> str | None:
    """Content of the brace group opening at ``open_at``, or None if unbalanced."""
    depth = 0
    for k in range(open_at, len(text)):
        c = text[k]
        if c == "{" and (k == 0 or text[k - 1] != "\\"):
            depth += 1
        elif c == "}" and (k == 0 or text[k - 1] != "\\"):
            depth -= 1
            if depth == 0:
                return text[open_at + 1 : k]
    return None


def all_boxed(text: str) -> list[tuple[int, int, str]]:
    """Every ``\\boxed{...}`` with balanced braces: (start, end, content)."""
    out = []
    for m in _BOXED.finditer(text):
        k = m.end()
        if k < len(text) and text[k] == "{":
            inner = _balanced(text, k)
            if inner is not None:
                out.append((m.start(), k + len(inner) + 2, inner))
        elif k < len(text) and m.group(0).endswith(" "):
            # "\boxed 5" form: one token after the space.
            tok = re.match(r"[^\s$]+", text[k:])
            if tok:
                out.append((m.start(), k + tok.end(), tok.group(0)))
    return out


def last_boxed(text: str) -> str | None:
    """Content of the last balanced ``\\boxed{}``, or None."""
    found = all_boxed(text)
    return found[-1][2].strip() if found else None


AnswerSource = Literal["boxed", "answer_is", "last_number", "none"]


@dataclass(frozen=True)
class Extracted:
    """An extracted final answer and how it was found."""

    answer: str | None
    source: AnswerSource


def extract_answer(text: str, fallbacks: bool = True) -> Extracted:
    """The last ``\\boxed{}``; else "the answer is X"; else the last number.

    Args:
        text: Model output (for a prefilled ``\\boxed``, pass prefill + output).
        fallbacks: Whether to try the non-boxed fallbacks.
    """
    b = last_boxed(text)
    if b:
        return Extracted(b, "boxed")
    if not fallbacks:
        return Extracted(None, "none")
    m = list(_ANSWER_IS.finditer(text))
    if m:
        return Extracted(m[-1].group(1).strip(), "answer_is")
    nums = _NUMBER.findall(text)
    if nums:
        return Extracted(nums[-1].replace(",", ""), "last_number")
    return Extracted(None, "none")


@dataclass(frozen=True)
class Grade:
    """A grading verdict with both parsed forms, for the record."""

    correct: bool
    status: GradeStatus
    pred_parsed: str
    gold_parsed: str


def _timeout() -> int | None:
    """Signal-based timeouts only work in the main thread; elsewhere disable them quietly."""
    if threading.current_thread() is threading.main_thread():
        return 5
    import logging

    logging.getLogger("math_verify").setLevel(logging.ERROR)
    return None


def _parse(expr: str, kind: Literal["pred", "gold"]) -> list[object]:
    from math_verify import parse

    timeout = _timeout()
    text = f"\\boxed{{{expr}}}" if kind == "pred" else f"${expr}$"
    out = parse(text, parsing_timeout=timeout)  # type: ignore[arg-type]
    if not out and kind == "gold":
        out = parse(expr, parsing_timeout=timeout)  # type: ignore[arg-type]
    return list(out)


def grade(pred: str | None, gold: str) -> Grade:
    """Whether ``pred`` equals ``gold`` under math-verify.

    A missing or unparseable prediction is incorrect and says so in
    ``status``; it is never dropped.
    """
    from math_verify import verify

    if pred is None or not pred.strip():
        return Grade(False, "no_answer", "", "")
    if len(pred) > MAX_GRADE_CHARS or len(gold) > MAX_GRADE_CHARS:
        return Grade(False, "parse_error", "", "")
    g = _parse(gold, "gold")
    p = _parse(pred, "pred")
    if not p or not g:
        return Grade(False, "parse_error", str(p[0]) if p else "", str(g[0]) if g else "")
    timeout = _timeout()
    ok = bool(verify(g, p, timeout_seconds=timeout))
    return Grade(ok, "ok", str(p[0]), str(g[0]))
