"""How a template writes numbers: a variable in its question, and its answer.

Both arms of a probe are scored on the gold answer's tokens, so an original and its twins must write their
answers the same way. A template names one :class:`AnswerForm`; the build refuses a template whose form does not
give back the original's answer string (whitespace aside), so the original's gold and every twin's gold are
written by the same rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal, get_args

AnswerKind = Literal["integer", "fraction", "decimal", "latex"]
"""``integer`` (a whole number), ``fraction`` (reduced; whole numbers written plain), ``decimal`` (``places``
digits, half up), ``latex`` (sympy's LaTeX of an exact value: surds, pi)."""
VarType = Literal["int", "fraction", "decimal"]
Style = Literal["plain", "commas", "latex_commas", "word", "frac", "dfrac", "tfrac", "slash"]
WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty")
_FRAC = {"frac": "\\frac", "dfrac": "\\dfrac", "tfrac": "\\tfrac"}


@dataclass(frozen=True)
class AnswerForm:
    """How an answer is written.

    Attributes:
        kind: See :data:`AnswerKind`.
        style: ``plain``, ``commas`` (1,000), ``latex_commas`` (1{,}000) for whole numbers; ``frac``, ``dfrac``,
            ``tfrac`` or ``slash`` (a/b) for fractions.
        places: Decimal places (``decimal``).
        prefix: Written before the answer (``\\$``), or before a tuple's first element (``(``).
        suffix: Written after it (``^\\circ``, ``\\%``, ``)``).
        join: Between the elements when the program's answer is a tuple or list.
    """

    kind: AnswerKind = "integer"
    style: Style = "plain"
    places: int | None = None
    prefix: str = ""
    suffix: str = ""
    join: str = ", "


def parse_form(raw: Any) -> AnswerForm:
    """An :class:`AnswerForm` from its JSON (a kind string, or an object); ``ValueError`` names the bad key."""
    d = {"kind": raw} if isinstance(raw, str) else raw
    if not isinstance(d, Mapping):
        raise ValueError("answer_form: expected a kind or an object")
    unknown = set(d) - set(AnswerForm.__dataclass_fields__)
    if unknown:
        raise ValueError(f"answer_form: unknown key {sorted(unknown)[0]!r}")
    form = AnswerForm(**d)
    if form.kind not in get_args(AnswerKind):
        raise ValueError(f"answer_form.kind: {form.kind!r} is not one of {', '.join(get_args(AnswerKind))}")
    if form.style not in get_args(Style):
        raise ValueError(f"answer_form.style: {form.style!r} is not one of {', '.join(get_args(Style))}")
    if form.kind == "decimal" and not (isinstance(form.places, int) and 0 <= form.places <= 12):
        raise ValueError("answer_form.places: a decimal answer needs places from 0 to 12")
    return form


def exact(value: Any) -> Fraction | None:
    """``value`` as a Fraction when it is rational (int, Fraction, sympy Rational), else None."""
    if isinstance(value, bool):
        return Fraction(int(value))
    if isinstance(value, int | Fraction):
        return Fraction(value)
    if getattr(value, "is_Rational", False):
        return Fraction(int(value.p), int(value.q))
    return None


def write_int(n: int, style: Style = "plain") -> str:
    """A whole number in ``style``."""
    if style == "word":
        if not 0 <= n <= 20:
            raise ValueError(f"{n} has no word form (0 to 20 only)")
        return WORDS[n]
    if style == "commas":
        return f"{n:,}"
    if style == "latex_commas":
        return f"{n:,}".replace(",", "{,}")
    return str(n)


def write_fraction(v: Fraction, style: Style = "frac") -> str:
    """A reduced fraction (a whole number plain; the sign before ``\\frac``)."""
    if v.denominator == 1:
        return str(v.numerator)
    sign = "-" if v < 0 else ""
    a, b = abs(v.numerator), v.denominator
    return f"{sign}{a}/{b}" if style == "slash" else f"{sign}{_FRAC.get(style, chr(92) + 'frac')}{{{a}}}{{{b}}}"


def write_decimal(v: Fraction, places: int) -> str:
    """``v`` rounded half up (away from zero) to ``places`` decimals."""
    scaled = abs(v) * 10**places
    q = int(scaled) + (1 if scaled - int(scaled) >= Fraction(1, 2) else 0)
    sign = "-" if v < 0 and q else ""
    digits = str(q).rjust(places + 1, "0")
    return sign + (digits[:-places] + "." + digits[-places:] if places else digits)


def _one(value: Any, form: AnswerForm) -> str:
    v = exact(value)
    if form.kind == "latex":
        from sympy import latex, nsimplify

        if v is not None:
            return write_fraction(v, form.style if form.style in _FRAC else "frac")
        return str(latex(nsimplify(value) if getattr(value, "is_Float", False) else value))
    if v is None:
        raise ValueError(f"the answer {value} is not a rational number (answer_form {form.kind})")
    if form.kind == "integer":
        if v.denominator != 1:
            raise ValueError(f"the answer {v} is not a whole number")
        return write_int(v.numerator, form.style)
    if form.kind == "fraction":
        return write_fraction(v, form.style)
    assert form.places is not None
    return write_decimal(v, form.places)


def write_answer(value: Any, form: AnswerForm) -> str:
    """The answer ``value`` (a number, or a tuple of them) written by ``form``."""
    if isinstance(value, list | tuple):
        body = form.join.join(_one(x, form) for x in value)
    else:
        body = _one(value, form)
    return f"{form.prefix}{body}{form.suffix}"


def answer_number(value: Any) -> Fraction | None:
    """The answer's value for the balance rules (side, log ratio, roundness): rational single answers only."""
    return None if isinstance(value, list | tuple) else exact(value)
