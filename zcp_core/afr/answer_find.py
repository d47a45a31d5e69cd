"""Finding where a text states a given answer, more carefully than substring search.

``"4" in text`` finds the 4 of ``14``, ``4.5``, ``x^4`` and ``$4$0``; answer-first
rates built on it are noise. Here a numeric answer is compared by *value*
against whole number tokens of the text, with boundary rules:

* a token is taken whole (``14``, ``4.5``, ``1,000``, ``\\frac{1}{2}``, ``1/2``),
  so the 4 inside ``14`` or ``4.5`` is never a token of its own;
* exponents and subscripts (``x^4``, ``10^{4}``, ``a_4``) and numbers glued to
  other digits across ``$`` (``$4$0`` renders as 40) or to letters (``4x``) are
  not mentions;
* ``1,000`` = ``1000``, ``\\frac{1}{2}`` = ``\\dfrac12`` = ``1/2`` = ``0.5``,
  ``4.0`` = ``4``; a fraction token matches only a non-integer answer (so the
  ``10/2`` of a calculation is not a mention of 5);
* a minus sign that starts a number makes it negative (``= -4`` is not 4); a
  minus between operands (``10-4``) is subtraction and leaves 4 positive.

Non-numeric answers (``2\\sqrt{3}``, ``(1,2)``, ``p - q``, ``\\text{(C)}``) are
matched on a canonical form of text and answer (no spaces, ``$``, ``\\left``,
``\\right``, thin spaces; ``\\dfrac`` → ``\\frac``; ``\\text{}`` wrappers dropped)
with the same no-glued-alphanumerics rule, and positions mapped back to the
original text. Number words ("four") are not recognised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

_SEP = r"(?:,|\{,\}|\\,)"
_INT = rf"\d{{1,3}}(?:{_SEP}\d{{3}})+|\d+"
_NUM = rf"(?:{_INT})(?:\.\d+)?|\.\d+"
_FRAC_ARG = r"(?:\{\s*(\d+)\s*\}|(\d))"
_TOKEN = re.compile(
    rf"\\[dt]?frac\s*{_FRAC_ARG}\s*{_FRAC_ARG}"  # \frac{1}{2}, \dfrac12
    rf"|(\d+)\s*/\s*(\d+)(?![\d.])"  # 1/2
    rf"|({_NUM})"  # 1,000  4.5  .5
)
_WRAPPERS = re.compile(r"\\(?:boxed|fbox|text|textbf|mathrm|mbox|mathbf)\s*\{")
_DROP = ("\\left", "\\right", "\\displaystyle", "\\!", "\\,", "\\;", "\\:", "\\quad", "\\ ")
_FORMAT_CMDS = frozenset({"boxed", "fbox", "text", "textbf", "mathrm", "mbox", "mathbf", "textit", "emph", "left",
                          "right", "displaystyle", "color", "underline"})
_COEFFICIENT = re.compile(r"\s*\\(?:sqrt|pi|frac|dfrac|tfrac|sin|cos|tan|log|ln)\b")
_GOLD_UNITS = re.compile(r"\^\s*\{?\\circ\}?|\\degree|°|\\%|%|^\\\$|^\$")


@dataclass(frozen=True)
class AnswerPattern:
    """A gold answer prepared for searching.

    Attributes:
        raw: The answer as given.
        kind: ``number`` (compared by value) or ``string`` (canonical match).
        value: The numeric value, for numbers.
        canon: The canonical string form, for strings.
    """

    raw: str
    kind: Literal["number", "string"]
    value: Fraction | None
    canon: str


@dataclass(frozen=True)
class Mention:
    """One statement of the answer in a text: ``text[start:end]``."""

    start: int
    end: int
    text: str


def _strip_wrappers(s: str) -> str:
    """Drop ``\\boxed{}``/``\\text{}``-style wrappers and ``$``/``\\(…\\)`` around an answer."""
    s = s.strip()
    for _ in range(4):
        s = s.strip().strip("$").strip()
        if s.startswith("\\(") and s.endswith("\\)"):
            s = s[2:-2]
        m = _WRAPPERS.match(s)
        if m and s.endswith("}"):
            s = s[m.end() : -1]
    return s.strip()


def _int_value(s: str) -> int:
    return int(re.sub(_SEP, "", s))


def _num_value(s: str) -> Fraction:
    return Fraction(re.sub(_SEP, "", s))


def parse_number(s: str) -> Fraction | None:
    """The value of a plain numeric answer (``-1,000``, ``4.0``, ``\\frac{1}{2}``, ``3/4``), else None."""
    t = _GOLD_UNITS.sub("", _strip_wrappers(s)).strip()
    for d in _DROP:
        t = t.replace(d, "")
    t = t.replace(" ", "").replace("−", "-")
    sign = 1
    if t.startswith("-"):
        sign, t = -1, t[1:]
    m = _TOKEN.fullmatch(t)
    value = _token_value(m) if m else None
    return None if value is None else sign * value


def _token_value(m: re.Match[str]) -> Fraction | None:
    """Value of a token (None for a zero denominator): groups 1-4 are ``\\frac`` arguments, 5-6 ``a/b``, 7 a number."""
    if m.group(7) is not None:
        return _num_value(m.group(7))
    if m.group(5) is not None:
        num, den = int(m.group(5)), int(m.group(6))
    else:
        num, den = int(m.group(1) or m.group(2)), int(m.group(3) or m.group(4))
    return Fraction(num, den) if den else None


def _canon(s: str) -> tuple[str, list[int]]:
    """Canonical form of ``s`` and, for each of its characters, the index in ``s``."""
    out: list[str] = []
    pos: list[int] = []
    i = 0
    while i < len(s):
        if s.startswith(("\\dfrac", "\\tfrac"), i):
            out += list("\\frac")
            pos += [i] * 5
            i += 6
            continue
        w = _WRAPPERS.match(s, i)
        if w and not s.startswith(("\\boxed", "\\fbox"), i):
            i = w.end()
            continue
        drop = next((d for d in _DROP if s.startswith(d, i)), None)
        if drop:
            i += len(drop)
            continue
        c = s[i]
        if not (c.isspace() or c == "$" or s.startswith(("\\(", "\\)"), i)):
            out.append("-" if c == "−" else c)
            pos.append(i)
        i += 2 if s.startswith(("\\(", "\\)"), i) else 1
    return "".join(out), pos


def answer_pattern(answer: str) -> AnswerPattern:
    """Prepare a gold answer for :func:`find_all`."""
    value = parse_number(answer)
    if value is not None:
        return AnswerPattern(answer, "number", value, "")
    canon, _ = _canon(_strip_wrappers(_GOLD_UNITS.sub("", answer.strip()) if answer.strip() else ""))
    return AnswerPattern(answer, "string", None, canon)


def _brace_context_ok(text: str, brace: int) -> bool | None:
    """For a number right after ``{``: True inside a formatting command (``\\boxed{4}``), False as an
    exponent, subscript, second argument or argument of ``\\frac``/``\\sqrt``-like commands, None otherwise."""
    before = text[:brace].rstrip()
    if before[-1:] in ("^", "_", "}"):
        return False
    cmd = re.search(r"\\([A-Za-z]+)$", before)
    if cmd:
        return cmd.group(1) in _FORMAT_CMDS
    return None


def _left_ok(text: str, s: int) -> tuple[bool, int]:
    """Whether the token at ``s`` is not glued to something on its left; also the index of its sign."""
    j = s
    while j > 0 and text[j - 1] in "${ ":
        if text[j - 1] == "{":
            verdict = _brace_context_ok(text, j - 1)
            if verdict is not None:
                return verdict, s
        if text[j - 1] == " " and not (j >= 2 and text[j - 2] in "-−"):
            break  # a space only matters between a minus sign and its number
        j -= 1
    if j == 0:
        return True, s
    c = text[j - 1]
    if c.isdigit() or c.isalpha() or c in "^_.":
        return False, s
    if c in "-−":
        k = j - 1
        while k > 0 and text[k - 1] == " ":
            k -= 1
        operand_before = k > 0 and (text[k - 1].isalnum() or text[k - 1] in ")}]")
        return True, s if operand_before else j - 1
    return True, s


def _list_marker(text: str, s: int, e: int) -> bool:
    """Whether the token is an enumeration label such as ``1.`` or ``2)`` at the start of a line."""
    line_start = text.rfind("\n", 0, s) + 1
    return (not text[line_start:s].strip(" \t*#>-")) and bool(re.match(r"[.)](?:\s|\*|$)", text[e : e + 2]))


def _right_ok(text: str, e: int) -> bool:
    """Whether the token ending at ``e`` is not glued to a digit, letter or exponent."""
    j = e
    while j < len(text) and text[j] in "$}":
        j += 1
    if j >= len(text):
        return True
    c = text[j]
    if c.isdigit():
        return False
    if j == e:
        if c == "^":
            return bool(re.match(r"\^\s*\{?\\circ", text[j:]))
        if c.isalpha() or c in "_":
            return False
    # A coefficient (2\\sqrt{3}, 2\\pi) is not the number itself.
    return not _COEFFICIENT.match(text, j)


def _find_numbers(text: str, pat: AnswerPattern) -> list[Mention]:
    out = []
    want = pat.value
    assert want is not None
    for m in _TOKEN.finditer(text):
        is_fraction = m.group(7) is None
        if is_fraction and want.denominator == 1:
            continue
        ok, sign_at = _left_ok(text, m.start())
        if not ok or not _right_ok(text, m.end()) or _list_marker(text, m.start(), m.end()):
            continue
        value = _token_value(m)
        if value is None:
            continue
        if sign_at < m.start():
            value = -value
        if value == want:
            out.append(Mention(sign_at, m.end(), text[sign_at : m.end()]))
    return out


def _find_string(text: str, pat: AnswerPattern) -> list[Mention]:
    if not pat.canon:
        return []
    canon, pos = _canon(text)
    out = []
    start = 0
    n = len(pat.canon)
    while (k := canon.find(pat.canon, start)) >= 0:
        start = k + 1
        # Boundaries are judged on the original text, where spaces still separate words.
        s, e = pos[k], pos[k + n - 1] + 1
        before = text[:s].rstrip("$")[-1:]
        after = text[e:].lstrip("$")[:1]
        if (pat.canon[0].isalnum() or pat.canon[0] == "\\") and (before.isalnum() or (pat.canon[0].isdigit() and before != "" and before in ".^_")):
            continue
        if pat.canon[-1].isalnum() and (after.isalnum() or (pat.canon[-1].isdigit() and after == "." and text[e + 1 : e + 2].isdigit())):
            continue
        out.append(Mention(s, e, text[s:e]))
    return out


def find_all(text: str, answer: str | AnswerPattern) -> list[Mention]:
    """Every statement of ``answer`` in ``text``, in order."""
    pat = answer if isinstance(answer, AnswerPattern) else answer_pattern(answer)
    if not text:
        return []
    return _find_numbers(text, pat) if pat.kind == "number" else _find_string(text, pat)


def find_answer(text: str, answer: str | AnswerPattern, start: int = 0, end: int | None = None) -> Mention | None:
    """The first statement of ``answer`` in ``text[start:end]`` (positions in ``text``), or None."""
    stop = len(text) if end is None else end
    return next((m for m in find_all(text, answer) if m.start >= start and m.end <= stop), None)


def mentions_answer(text: str, answer: str | AnswerPattern) -> bool:
    """Whether ``text`` states ``answer`` anywhere."""
    return bool(find_all(text, answer))
