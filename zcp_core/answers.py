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

GradeStatus = Literal["ok", "no_answer", "parse_error", "not_a_number"]
MAX_GRADE_CHARS = 600
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*")


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
#: ``final``: only a ``\\boxed{}`` or an explicit final-answer phrase counts (a full CoT, which may be cut
#: off mid-calculation). ``lenient``: also the last number (a short zero-CoT completion).
ExtractPolicy = Literal["final", "lenient"]
# "the answer is", "final answer:", "**Answer:**", "answer would be"...; the connector is required.
_ANSWER_IS = re.compile(
    r"(?:final\s+answer|\banswer)\s*[*_]*\s*(?:is\b|:|=|(?:would|will|should)\s+be\b)\s*[*_]*\s*:?[ \t]*",
    re.I)
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_MATH_SPANS = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
_OPEN, _CLOSE = "([{", ")]}"


@dataclass(frozen=True)
class Extracted:
    """An extracted final answer and how it was found."""

    answer: str | None
    source: AnswerSource


def _cut_sentence(tail: str) -> str:
    """``tail`` up to the end of its sentence, outside brackets: a full stop that is not a decimal point,
    ``;``, ``!``, ``?``, or a comma that does not separate thousands ("1,234.56" stays whole)."""
    depth = 0
    for k, ch in enumerate(tail):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
        elif depth == 0 and (ch in ";!?" or (ch == "." and not tail[k + 1:k + 2].isdigit())
                             or (ch == "," and not re.match(r",\d{3}(?!\d)", tail[k:]))):
            return tail[:k]
    return tail


def _phrase_answer(tail: str) -> str | None:
    """The answer right after a final-answer phrase: a math span, or the rest of the sentence."""
    tail = tail.split("\n", 1)[0].strip()
    for left, right in _MATH_SPANS:
        if tail.startswith(left):
            close = tail.find(right, len(left))
            if close > len(left):
                tail = tail[len(left):close]
                break
            if left == "$":  # "$15" with no closing "$" is money, not math
                tail = tail[1:]
    ans = _cut_sentence(tail).strip().strip("*_").strip()
    # Prose such as "not clear" is no answer; a number or a LaTeX command is.
    return ans if re.search(r"\d|\\[A-Za-z]", ans) else None


def extract_answer(text: str, policy: ExtractPolicy = "final") -> Extracted:
    """The last ``\\boxed{}``; else the answer after the last final-answer phrase; else (``lenient``) the last number.

    The phrase's answer keeps decimals, thousands separators, signs, units and
    LaTeX (``\\frac{1}{2}``) and stops at the end of its sentence, so "The
    answer is: 12." gives ``12`` and "answer is 3.5 hours." gives ``3.5 hours``
    (:func:`grade` reads the number in it).

    Args:
        text: Model output (for a prefilled ``\\boxed``, pass prefill + output).
        policy: ``final`` (a full CoT: no answer means none) or ``lenient`` (also the last number).
    """
    b = last_boxed(text)
    if b:
        return Extracted(b, "boxed")
    for m in reversed(list(_ANSWER_IS.finditer(text))):
        ans = _phrase_answer(text[m.end():])
        if ans is not None:
            return Extracted(ans, "answer_is")
    if policy == "lenient":
        nums = _NUMBER.findall(text)
        if nums:
            return Extracted(nums[-1].replace(",", ""), "last_number")
    return Extracted(None, "none")


_TEXT_CMD = re.compile(r"\\(?:text|textbf|textrm|mathrm|mbox|textnormal)\s*\{([^{}]*)\}")
# A number with optional money sign, percent and unit words: "$1,234.56", "3.5 hours", "-5 degrees", "20%".
_NUMBER_WITH_UNITS = re.compile(
    r"^(?:\\?\$\s*)?(-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)\s*(\\?%)?"
    r"(?:\s+[A-Za-z]{2,}\.?(?:[\s/-]+[A-Za-z]+\.?)*)?$")


def normalize_answer(expr: str) -> str:
    """A number written with units or money as the bare number; anything else unchanged.

    ``\\text{3.5 hours}`` -> ``3.5``, ``$1,234.56`` -> ``1234.56``, ``12.`` -> ``12``,
    ``-5 degrees`` -> ``-5``, ``20%`` -> ``20%``. LaTeX (``\\frac{1}{2}``), sets
    (``1,2``), expressions (``3x``) and single-letter units are left to math-verify.
    """
    s = _TEXT_CMD.sub(lambda m: " " + m.group(1) + " ", expr).strip()
    s = re.sub(r"^\$(.*)\$$", r"\1", s).strip().rstrip(".").strip()
    m = _NUMBER_WITH_UNITS.match(s)
    if not m:
        return expr
    return m.group(1).replace(",", "") + ("%" if m.group(2) else "")


@dataclass(frozen=True)
class Grade:
    """A grading verdict with both parsed forms, for the record."""

    correct: bool
    status: GradeStatus
    pred_parsed: str
    gold_parsed: str


# A gold that is a number: integer, decimal, fraction, percentage, LaTeX fraction (``\frac{1}{2}``).
_NUMERIC_GOLD = re.compile(r"^-?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:/\d+)?%?$|^-?\\d?frac\{\d+\}\{\d+\}$")


def numeric_gold(gold: str) -> bool:
    """Whether a gold answer is a number (integer, decimal, fraction, percentage, ``\\frac{a}{b}``)."""
    return bool(_NUMERIC_GOLD.match(normalize_answer(gold).strip()))


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
    """Whether ``pred`` equals ``gold`` under math-verify, after :func:`normalize_answer` on both.

    A missing or unparseable prediction is incorrect and says so in
    ``status``; it is never dropped. A prediction with no digit at all against a numeric gold (the word
    ``answer`` in the box) is ``not_a_number``: the model wrote no number, so it was not graded; math-verify
    would otherwise read ``answer`` as the product ``E*a*n*r*s*w`` and call it a wrong answer.
    """
    from math_verify import verify

    if pred is None or not pred.strip():
        return Grade(False, "no_answer", "", "")
    if len(pred) > MAX_GRADE_CHARS or len(gold) > MAX_GRADE_CHARS:
        return Grade(False, "parse_error", "", "")
    pred, gold = normalize_answer(pred), normalize_answer(gold)
    if numeric_gold(gold) and not any(ch.isnumeric() for ch in pred):  # "½" is a number
        return Grade(False, "not_a_number", pred.strip()[:80], gold.strip())
    g = _parse(gold, "gold")
    p = _parse(pred, "pred")
    if not p or not g:
        return Grade(False, "parse_error", str(p[0]) if p else "", str(g[0]) if g else "")
    timeout = _timeout()
    ok = bool(verify(g, p, timeout_seconds=timeout))
    return Grade(ok, "ok", str(p[0]), str(g[0]))


def chain_final_answer(text: str) -> str | None:
    """The final answer of a full chain of thought: after GSM8K's ``####`` (raw-text style), else boxed /
    "the answer is" (:func:`extract_answer` in ``final`` mode)."""
    if "####" in text:
        tail = text.split("####", 1)[1].strip().split("\n", 1)[0].strip()
        return tail or None
    return extract_answer(text, "final").answer
