"""Explicit comparisons in a GSM8K solution, and whether a twin's numbers keep them true.

A solution sometimes chooses by comparing two of its numbers: "since $125 > $96, he will choose to purchase
jewelry, thereby making a profit of $<<125=125>>125". The chain records only the choice (the bare ``125``
reads the jewelry step), so a twin whose new values make the other number larger keeps the old choice and a
wrong gold, while its text reads "$105 > $136". Generator v7 (:mod:`zcp_core.reference.numeric`) finds such
comparisons in the original solution, maps their numbers to the twin's values and refuses a draw that makes
one false; the re-execution check (:mod:`zcp_core.reference.verify`) checks every inequality the twin's own
solution writes.

Two forms count as explicit:

* symbolic: ``a > b``, ``a < b``, ``a >= b``, ``a <= b``, ``a ≥ b``, ``a ≤ b``, with a number (or a plain
  calculation of numbers, "3000 - 20") on both sides;
* in words, a number, a verb of being and a comparative, then ``than`` and a number: "1.76 is less than 2",
  "$125 is more than $96", "which is cheaper than $30", "20 exceeds 18". A number between the verb and the
  comparative ("Tom has 30 points less than Betty", "it is $5 more than") states a difference, not a
  comparison, and does not count.
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Callable, Mapping, Set
from dataclasses import dataclass
from fractions import Fraction

from zcp_core.reference.chain import stated_value
from zcp_core.reference.numbers import ExprError, safe_eval

_NUM = r"\$?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)%?"
_EXPR = rf"{_NUM}(?:\s*[-+*/\u00d7]\s*{_NUM})*"
_CALC = re.compile(r"<<[^<>=]*=[^<>]*>>")
_SYMBOLIC = re.compile(rf"(?<![\w.$,])({_EXPR})\s*(>=|<=|\u2265|\u2264|>|<)\s*({_EXPR})(?!\w|\.\d|,\d)")
_MORE = (r"more|greater|larger|bigger|higher|longer|taller|heavier|older|further|farther|pricier|costlier"
         r"|more expensive")
_LESS = r"less|fewer|smaller|lower|shorter|lighter|younger|cheaper|less expensive"
_WORDS = re.compile(
    rf"(?<![\w.$,])({_NUM})(?:\s+[A-Za-z]+){{0,3}}?\s+(?:is|are|was|were|'s|being|which is|that is)\s+"
    rf"(?:(?:much|still|even|far|a lot|a bit|slightly|strictly)\s+)?({_MORE}|{_LESS})\s+than\s+(?:the\s+)?"
    rf"({_NUM})(?!\w|\.\d|,\d)", re.IGNORECASE)
_EXCEEDS = re.compile(rf"(?<![\w.$,])({_NUM})(?:\s+[A-Za-z]+){{0,3}}?\s+(exceeds|exceeded|is above|is below)\s+"
                      rf"(?:the\s+)?({_NUM})(?!\w|\.\d|,\d)", re.IGNORECASE)
_OPS: dict[str, Callable[[Fraction, Fraction], bool]] = {
    ">": operator.gt, "<": operator.lt, ">=": operator.ge, "<=": operator.le, "\u2265": operator.ge,
    "\u2264": operator.le}
_NUMBER = re.compile(_NUM)


@dataclass(frozen=True)
class Comparison:
    """One explicit comparison: its text, its two sides (each a list of numbers and the calculation joining
    them), the relation and whether it holds as written."""

    text: str
    left: str
    op: str  # one of ``> < >= <=``
    right: str

    def sides(self) -> tuple[list[Fraction], list[Fraction]]:
        """The numbers each side writes, left to right."""
        return _numbers(self.left), _numbers(self.right)

    def holds(self, left: list[Fraction] | None = None, right: list[Fraction] | None = None) -> bool | None:
        """Whether the comparison is true, with its sides' numbers replaced by ``left``/``right`` when given;
        None when a side does not evaluate."""
        a, b = _value(self.left, left), _value(self.right, right)
        return None if a is None or b is None else _OPS[self.op](a, b)


def _clean(num: str) -> str:
    return num.replace("$", "").replace(",", "").replace("%", "")


def _numbers(side: str) -> list[Fraction]:
    return [stated_value(_clean(m.group(0))) for m in _NUMBER.finditer(side)]


def _value(side: str, values: list[Fraction] | None) -> Fraction | None:
    nums = list(_NUMBER.finditer(side))
    if values is not None and len(values) != len(nums):
        return None
    expr, last = [], 0
    for k, m in enumerate(nums):
        v = values[k] if values is not None else stated_value(_clean(m.group(0)))
        expr += [side[last:m.start()], f"({v.numerator}/{v.denominator})"]
        last = m.end()
    expr.append(side[last:])
    try:
        return safe_eval("".join(expr).replace("\u00d7", "*"))
    except (ExprError, ZeroDivisionError):
        return None


def comparisons(solution: str) -> list[Comparison]:
    """Every explicit comparison the solution writes outside its ``<<>>`` annotations (the echo after an
    annotation counts: "since <<125=125>>125 > 96")."""
    text = _CALC.sub(" ", solution)
    out = []
    for m in _SYMBOLIC.finditer(text):
        op = {"\u2265": ">=", "\u2264": "<="}.get(m.group(2), m.group(2))
        out.append(Comparison(m.group(0), m.group(1), op, m.group(3)))
    for m in _WORDS.finditer(text):
        word = m.group(2).lower()
        op = ">" if re.fullmatch(_MORE, word) else "<"
        out.append(Comparison(m.group(0), m.group(1), op, m.group(3)))
    for m in _EXCEEDS.finditer(text):
        op = "<" if m.group(2).lower() == "is below" else ">"
        out.append(Comparison(m.group(0), m.group(1), op, m.group(3)))
    return out


def false_inequalities(solution: str) -> tuple[int, list[str]]:
    """How many explicit comparisons the solution writes, and the text of each one that is false."""
    found = comparisons(solution)
    return len(found), [c.text for c in found if c.holds() is False]


def flipped(solution: str, cand: Mapping[Fraction, Set[Fraction]]) -> tuple[int, list[str]]:
    """The comparisons of the original ``solution`` that involve a number the chain reads or computes, and the
    text of each one that a twin's values make false.

    ``cand`` maps each old value to every new value it may stand for in the twin
    (:func:`zcp_core.reference.rewrite.value_mapping`); a number it does not name keeps its value. A comparison
    counts when one of its numbers may change; it flips when it held in the original and fails for any of the
    new values its numbers may take (several candidates are a clash the rewrite settles by dropping the line,
    while the chain keeps the original's choice).
    """
    checked, out = 0, []
    for c in comparisons(solution):
        left, right = c.sides()
        news = [sorted(cand.get(v, {v})) for v in left + right]
        if c.holds() is not True or all(n == [v] for n, v in zip(news, left + right, strict=True)):
            continue
        checked += 1
        for combo in itertools.islice(itertools.product(*news), 256):
            if c.holds(list(combo[:len(left)]), list(combo[len(left):])) is not True:
                out.append(c.text)
                break
    return checked, out
