"""Golden tables for answer finding: better than substring search, tolerant of formatting."""

from __future__ import annotations

from fractions import Fraction

import pytest

from zcp_core.afr import answer_pattern, find_all, find_answer, mentions_answer, parse_number

# (gold answer, text, whether the text states the answer)
FOUND = [
    # "4" is not inside 14, 4.5, x^4, $4$0 ...
    ("4", "I have 14 apples", False),
    ("4", "x = 4.5", False),
    ("4", "x^4 + 1", False),
    ("4", "$4$0", False),
    ("4", "10^{4}", False),
    ("4", "a_4 = 7", False),
    ("4", "4x = 8", False),
    ("4", "x = -4", False),
    ("4", "41", False),
    ("4", "0.4", False),
    ("1", "Steps:\n1. **Find g(16):**", False),  # an enumeration label
    ("2", "  2) then", False),
    ("16", "x^4 + \\frac{16}{x^2}", False),  # a numerator, not the number
    ("16", "\\frac{x}{16}", False),
    ("16", "\\sqrt{16} = 4", False),
    ("2", "x + y \\ge 2 \\sqrt{xy}", False),  # a coefficient
    ("2", "area 2\\pi", False),
    ("2", "so 2 \\times 3 = 6", True),
    ("4", "\\text{4 apples}", True),
    ("4", "$\\mathbf{4}$", True),
    # ... but is found as itself
    ("4", "the answer is 4.", True),
    ("4", "so $4$.", True),
    ("4", "\\boxed{4}", True),
    ("4", "10-4=6", True),
    ("4", "4.0", True),
    ("4", "(4)", True),
    ("-4", "x = -4", True),
    ("-4", "x = 4", False),
    # thousands separators
    ("1000", "1,000 dollars", True),
    ("1,000", "1000 dollars", True),
    ("1000", "1{,}000", True),
    ("1000", "1,0001", False),
    # fractions and decimals
    ("\\frac{1}{2}", "half is 1/2", True),
    ("\\frac{1}{2}", "it is 0.5", True),
    ("0.5", "\\dfrac{1}{2}", True),
    ("1/2", "\\frac12", True),
    ("\\dfrac{1}{2}", "\\frac{1}{2}", True),
    ("\\frac{1}{2}", "12", False),
    ("\\frac{1}{2}", "\\frac{1}{3}", False),
    ("5", "10/2 = 5", True),
    ("5", "10/2", False),
    ("1", "\\frac{1}{2}", False),
    # wrappers
    ("\\boxed{7}", "it is $7$", True),
    ("$7$", "it is 7", True),
    ("\\(7\\)", "it is 7", True),
    ("18", "\\$18", True),
    ("25\\%", "25%", True),
    ("30^\\circ", "angle 30^\\circ", True),
    ("12", "3 \\times 4 = 12", True),
    # non-numeric answers
    ("2\\sqrt{3}", "we get 2 \\sqrt{3}", True),
    ("2\\sqrt{3}", "we get 12\\sqrt{3}", False),
    ("(1,2)", "point (1, 2)", True),
    ("(1,2)", "point (11,2)", False),
    ("p - q", "as $p - q$.", True),
    ("\\text{(C)}", "answer (C)", True),
    ("C", "Consider it", False),
    ("\\left( 3, \\frac{\\pi}{2} \\right)", "is $\\left(3,\\dfrac{\\pi}{2}\\right)$", True),
    ("10^3", "10^3", True),
    ("\\pi", "period \\frac{2\\pi}{b}", False),
    ("\\pi", "period is $\\pi$", True),
    ("10^3", "103", False),
]


@pytest.mark.parametrize(("gold", "text", "expected"), FOUND)
def test_mentions_golden(gold: str, text: str, expected: bool) -> None:
    assert mentions_answer(text, gold) is expected


@pytest.mark.parametrize(("text", "value"), [
    ("4", Fraction(4)), ("-4", Fraction(-4)), ("1,000", Fraction(1000)), ("4.0", Fraction(4)),
    ("\\frac{1}{2}", Fraction(1, 2)), ("\\dfrac12", Fraction(1, 2)), ("3/4", Fraction(3, 4)),
    ("\\boxed{0.25}", Fraction(1, 4)), ("$-\\frac{3}{2}$", Fraction(-3, 2)), ("25\\%", Fraction(25)),
    ("2\\sqrt{3}", None), ("(1,2)", None), ("x", None), ("10^3", None),
])
def test_parse_number_golden(text: str, value: Fraction | None) -> None:
    assert parse_number(text) == value


def test_positions_point_at_the_answer() -> None:
    text = "We had 14 and 4.5, then x^4; finally the total is 4 apples and again 4."
    found = find_all(text, "4")
    assert [text[m.start:m.end] for m in found] == ["4", "4"]
    assert found[0].start == text.index("is 4") + 3
    first = find_answer(text, "4", start=found[0].end)
    assert first is not None and first.start == found[1].start


def test_negative_mention_includes_sign() -> None:
    text = "so x = -4 here"
    (m,) = find_all(text, "-4")
    assert m.text == "-4" and m.start == text.index("-4")


def test_string_positions_map_back_to_original() -> None:
    text = "Thus $\\left( 3, \\dfrac{\\pi}{2} \\right)$ is it."
    (m,) = find_all(text, "(3,\\frac{\\pi}{2})")
    assert text[m.start] == "(" and text[m.end - 1] == ")"


def test_pattern_kinds() -> None:
    assert answer_pattern("1,000").kind == "number"
    assert answer_pattern("p - q").kind == "string" and answer_pattern("p - q").canon == "p-q"
    assert find_all("", "4") == [] and find_all("some text", "") == []
