"""Numbers in text and calculator expressions: find, evaluate safely, render.

Shared by the numeric reference builder and the paraphrase checks. Arithmetic
is exact (:class:`fractions.Fraction`) and goes through a whitelist of AST
nodes (``+ - * / **``, unary minus, parentheses, numeric literals); nothing
is ever passed to ``eval``.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30,
    "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}
_BY_VALUE = {v: k for k, v in WORDS.items()}
_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_UNITS = "one|two|three|four|five|six|seven|eight|nine"
_WORD_RE = rf"(?:(?:{_TENS})-(?:{_UNITS})|{'|'.join(sorted(WORDS, key=len, reverse=True))})"
# A digit number (optional thousands commas and decimals), or a number word; not part of a longer token
# ("3rd", "x2"), and a "1/2"-style fraction is matched as a whole so its parts are never perturbed alone.
_DENOMS = {"half": 2, "halves": 2, "third": 3, "quarter": 4, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
           "eighth": 8, "ninth": 9, "tenth": 10}
_DENOM_RE = r"(?:halves|half|thirds?|quarters?|fourths?|fifths?|sixths?|sevenths?|eighths?|ninths?|tenths?)"
# A digit number (optional thousands commas and decimals; units may follow: "300g", "30mph"), or a number
# word; never part of a longer token ("A1", "3rd"). "1/2" (also "2/3rd") and "two-thirds" are matched whole as
# fractions, so their parts are never perturbed on their own.
NUMBER = re.compile(
    rf"(?P<frac>(?<![\w.,/])\d+/\d+(?:st|nd|rd|th|s)?(?![\w/]))"
    rf"|(?P<fword>\b(?:{_UNITS}|a|an)[- ]{_DENOM_RE}\b)"
    rf"|(?P<num>(?<![\w.,/])\.?\d(?:\d{{0,2}}(?:,\d{{3}})+|\d*)(?:\.\d+)?"
    rf"(?![\d_/]|(?:st|nd|rd|th)\b|,\d{{3}}|\.\d))"
    rf"|(?P<word>\b{_WORD_RE}\b)",
    re.IGNORECASE,
)
NUMBER_NO_FRAC = re.compile(NUMBER.pattern.replace("(?P<frac>", "(?P<frac>(?!)", 1).replace(
    r"(?<![\w.,/])\.?\d", r"(?<![\w.,])\.?\d").replace(r"(?![\d_/]|", r"(?![\d_]|"), re.IGNORECASE)
MAX_POWER = 64  # exponents above this are refused: exact arithmetic would explode


class ExprError(ValueError):
    """An expression outside the safe arithmetic subset, or one that cannot be evaluated."""


@dataclass(frozen=True)
class NumberToken:
    """A number found in text.

    Attributes:
        start: Offset of its first character.
        end: Offset after its last character.
        text: The matched text.
        value: Its exact value.
        kind: ``digits``, ``word`` or ``fraction`` (``1/2`` written in the text).
        decimals: Digits after the decimal point (0 for integers and words).
        commas: Whether thousands separators were used.
        percent: Whether a ``%`` (or the word ``percent``) follows it.
    """

    start: int
    end: int
    text: str
    value: Fraction
    kind: Literal["digits", "word", "fraction"]
    decimals: int = 0
    commas: bool = False
    percent: bool = False


def _word_value(w: str) -> int:
    w = w.lower()
    if "-" in w:
        tens, units = w.split("-")
        return WORDS[tens] + WORDS[units]
    return WORDS[w]


def find_numbers(text: str, fractions: bool = True) -> list[NumberToken]:
    """Every number in ``text``: digits (``1,000``, ``2.50``, ``.5``), words (``three``) and ``a/b`` fractions.

    With ``fractions=False`` a written ``a/b`` gives two digit numbers (in worked solutions it is usually
    a calculation such as ``30/100*180``, not a quantity).
    """
    out = []
    for m in (NUMBER if fractions else NUMBER_NO_FRAC).finditer(text):
        after = text[m.end(): m.end() + 9].lower()
        pct = after.startswith("%") or after.lstrip().startswith("percent")
        if m.group("frac"):
            a, b = re.sub(r"[a-z]+$", "", m.group("frac").lower()).split("/")  # "2/3rd" is 2/3
            if int(b) == 0:
                continue
            out.append(NumberToken(m.start(), m.end(), m.group(0), Fraction(int(a), int(b)), "fraction"))
        elif m.group("fword"):
            num, den = re.split(r"[- ]", m.group("fword").lower())
            n = 1 if num in ("a", "an") else WORDS[num]
            d = _DENOMS.get(den, _DENOMS.get(den.rstrip("s"), 2))
            out.append(NumberToken(m.start(), m.end(), m.group(0), Fraction(n, d), "fraction"))
        elif m.group("num"):
            s = m.group("num")
            dec = len(s.split(".")[1]) if "." in s else 0
            out.append(NumberToken(m.start(), m.end(), s, Fraction(s.replace(",", "")), "digits", dec, "," in s, pct))
        else:
            out.append(NumberToken(m.start(), m.end(), m.group(0), Fraction(_word_value(m.group(0))), "word",
                                   percent=pct))
    return out


def number_values(text: str) -> list[Fraction]:
    """Values of the numbers in ``text`` (see :func:`find_numbers`), in order."""
    return [t.value for t in find_numbers(text)]


@dataclass(frozen=True)
class Literal_:
    """A numeric literal inside an expression: where it is and its exact value."""

    start: int
    end: int
    value: Fraction


def expr_literals(expr: str) -> list[Literal_]:
    """The numeric literals of a calculator expression, left to right (validated as safe)."""
    tree = _parse(expr)
    lits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant):
            lits.append(Literal_(node.col_offset, node.end_col_offset or node.col_offset,
                                 Fraction(expr[node.col_offset: node.end_col_offset])))
    return sorted(lits, key=lambda x: x.start)


def _parse(expr: str) -> ast.Expression:
    if "\n" in expr or len(expr) > 500:
        raise ExprError(f"expression too long or multi-line: {expr[:40]!r}")
    try:
        tree = ast.parse(expr.strip() and expr, mode="eval")
    except SyntaxError as e:
        raise ExprError(f"not an arithmetic expression: {expr!r}") from e
    for node in ast.walk(tree):
        ok = isinstance(node, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Add, ast.Sub, ast.Mult, ast.Div,
                               ast.Pow, ast.USub, ast.UAdd))
        if isinstance(node, ast.Constant):
            ok = isinstance(node.value, (int, float)) and not isinstance(node.value, bool)
        if not ok:
            raise ExprError(f"{type(node).__name__} is not allowed in {expr!r} (only + - * / ** and numbers)")
    return tree


def safe_eval(expr: str) -> Fraction:
    """Evaluate ``expr`` exactly; raises :class:`ExprError` for anything but plain arithmetic."""
    return eval_steps(expr)[-1]


def eval_steps(expr: str) -> list[Fraction]:
    """Exact value of every operation in ``expr``, in evaluation order (the last is the result)."""
    tree = _parse(expr)
    steps: list[Fraction] = []

    def ev(node: ast.AST) -> Fraction:
        v = _op(node)
        if not isinstance(node, (ast.Constant, ast.Expression)):
            steps.append(v)
        return v

    def _op(node: ast.AST) -> Fraction:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant):
            return Fraction(expr[node.col_offset: node.end_col_offset])
        if isinstance(node, ast.UnaryOp):
            v = ev(node.operand)
            return -v if isinstance(node.op, ast.USub) else v
        assert isinstance(node, ast.BinOp)
        a, b = ev(node.left), ev(node.right)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if isinstance(node.op, ast.Div):
            if b == 0:
                raise ExprError(f"division by zero in {expr!r}")
            return a / b
        if b.denominator != 1 or abs(b) > MAX_POWER:
            raise ExprError(f"exponent {b} not allowed in {expr!r} (small integers only)")
        return a ** int(b)

    result = ev(tree)
    return [*steps, result] if not steps or steps[-1] is not result else steps


def decimals_of(v: Fraction, limit: int = 6) -> int | None:
    """Digits after the point needed to write ``v`` exactly, or None if more than ``limit``."""
    for k in range(limit + 1):
        if (v * 10**k).denominator == 1:
            return k
    return None


def render(v: Fraction, decimals: int | None = None, commas: bool = False) -> str:
    """Write ``v`` in decimal: exactly when possible, else rounded to ``decimals`` (default 2)."""
    k = decimals_of(v)
    if k is None:
        k = 2 if decimals is None else decimals
    elif decimals is not None:
        k = max(k, decimals)
    s = f"{float(v):,.{k}f}" if commas else f"{float(v):.{k}f}"
    if k and v.denominator != 1 and decimals is None:
        s = s.rstrip("0").rstrip(".") if "." in s else s
    return s


def render_like(v: Fraction, token: NumberToken) -> str:
    """Write ``v`` in the style of ``token``: a word stays a word (up to 20), decimals and commas are kept."""
    if token.kind == "word" and v.denominator == 1 and int(v) in _BY_VALUE and int(v) <= 20:
        w = _BY_VALUE[int(v)]
        return w.capitalize() if token.text[:1].isupper() else w
    dec = token.decimals if token.decimals and decimals_of(v, token.decimals) is not None else None
    out = render(v, dec, commas=token.commas or (token.kind == "word" and v >= 10_000))
    if token.text.startswith(".") and out.startswith("0."):
        out = out[1:]  # ".5" style stays ".8", not "0.8"
    return out


def render_literal(v: Fraction) -> str:
    """``v`` as an expression literal: a decimal when exact, else ``(a/b)``; negatives in parentheses."""
    txt = render(v) if decimals_of(v) is not None else f"({v.numerator}/{v.denominator})"
    return f"({txt})" if v < 0 else txt
