"""Golden tables for final-answer extraction and grading (zcp_core.answers), math-verify style."""

from __future__ import annotations

import pytest

from zcp_core.answers import all_boxed, extract_answer, grade, last_boxed, normalize_answer

# text -> (answer, source) under the "final" policy (a full CoT: boxed or an explicit final-answer phrase only)
FINAL = [
    # decimals, thousands separators and trailing full stops
    ("The answer is 3.5.", "3.5", "answer_is"),
    ("So the answer is 1,234.56.", "1,234.56", "answer_is"),
    ("The answer is: 12.", "12", "answer_is"),
    ("the answer is 10,000 exactly", "10,000 exactly", "answer_is"),
    # LaTeX keeps its backslash
    ("The answer is \\frac{1}{2}.", "\\frac{1}{2}", "answer_is"),
    ("Final answer: $\\frac{3}{4}$", "\\frac{3}{4}", "answer_is"),
    ("The final answer is \\(x = 5\\).", "x = 5", "answer_is"),
    ("The answer is \\[ 2\\sqrt{3} \\]", "2\\sqrt{3}", "answer_is"),
    # negatives and units
    ("the answer is -0.5.", "-0.5", "answer_is"),
    ("answer is -7 dollars.", "-7 dollars", "answer_is"),
    ("The answer is 3.5 hours.", "3.5 hours", "answer_is"),
    ("The answer is $15.", "15", "answer_is"),  # a lone "$" is money, not a math span
    ("The answer is 20%.", "20%", "answer_is"),
    # phrase forms
    ("**Final Answer:** 42", "42", "answer_is"),
    ("Thus the answer would be 8; done", "8", "answer_is"),
    ("The answer is 5, because 2+3=5.", "5", "answer_is"),
    ("The answer is (1, 2).", "(1, 2)", "answer_is"),  # a comma inside brackets does not end the answer
    ("First the answer is 4.\nWait, the answer is 6.", "6", "answer_is"),  # the last phrase wins
    ("The answer is not clear yet.", None, "none"),  # no number, no LaTeX: not an answer
    # boxed wins, balanced braces
    ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}", "boxed"),
    ("The answer is 8. Check: \\boxed{9}", "9", "boxed"),
    ("$\\boxed{\\text{3.5 hours}}$", "\\text{3.5 hours}", "boxed"),
    # no final answer: a capped CoT mid-calculation gives none, never its last number
    ("First, 48 / 2 = 24. Then 24 + 48 = 72. So she", None, "none"),
    ("I answered 5 of them", None, "none"),
    ("", None, "none"),
]


@pytest.mark.parametrize(("text", "answer", "source"), FINAL)
def test_extract_final_golden(text: str, answer: str | None, source: str) -> None:
    ex = extract_answer(text, "final")
    assert (ex.answer, ex.source) == (answer, source)
    assert extract_answer(text) == ex  # "final" is the default


@pytest.mark.parametrize(("text", "answer", "source"), [
    ("First, 48 / 2 = 24. Then 24 + 48 = 72. So she", "72", "last_number"),
    ("It costs 1,234 in all", "1234", "last_number"),
    ("The answer is: 12.", "12", "answer_is"),
    ("no digits at all", None, "none"),
])
def test_extract_lenient_golden(text: str, answer: str | None, source: str) -> None:
    ex = extract_answer(text, "lenient")
    assert (ex.answer, ex.source) == (answer, source)


@pytest.mark.parametrize(("expr", "normal"), [
    ("\\text{3.5 hours}", "3.5"),
    ("3.5 hours", "3.5"),
    ("\\$1,234.56", "1234.56"),
    ("$1,234.56", "1234.56"),
    ("12.", "12"),
    ("-5 degrees", "-5"),
    ("15 dollars per week", "15"),
    ("3.5 km/h", "3.5"),
    ("20%", "20%"),
    ("$7$", "7"),
    # left to math-verify, unchanged
    ("\\frac{1}{2}", "\\frac{1}{2}"),
    ("1,2", "1,2"),
    ("3x", "3x"),
    ("5 m", "5 m"),
    ("\\text{(C)}", "\\text{(C)}"),
    ("12 apples and 3 pears", "12 apples and 3 pears"),
])
def test_normalize_answer_golden(expr: str, normal: str) -> None:
    assert normalize_answer(expr) == normal


@pytest.mark.parametrize(("pred", "gold", "correct"), [
    ("\\text{3.5 hours}", "3.5", True),  # graded wrong before the unit rule
    ("3.5", "3", False),
    ("3", "3.5", False),
    ("1,234.56", "1234.56", True),
    ("1,234", "1234", True),
    ("12.", "12", True),
    ("\\frac{1}{2}", "0.5", True),
    ("\\frac{1}{2}", "12", False),  # never digit-stripped into 12
    ("-7 dollars", "-7", True),
    ("-7", "7", False),
    ("15 dollars", "15", True),
    ("\\$15.00", "15", True),
    ("20%", "20", True),
    ("x = 5", "5", True),
    ("\\text{(C)}", "C", True),
])
def test_grade_golden(pred: str, gold: str, correct: bool) -> None:
    g = grade(pred, gold)
    assert g.correct is correct and g.status == "ok"


@pytest.mark.parametrize(("pred", "status"), [(None, "no_answer"), ("  ", "no_answer"), ("1" * 700, "parse_error")])
def test_grade_missing_or_oversized(pred: str | None, status: str) -> None:
    g = grade(pred, "1")
    assert (g.correct, g.status) == (False, status)


def test_extracted_then_graded_end_to_end() -> None:
    # The examples, from CoT text to verdict.
    cases = [("So the answer is 3.5 hours.", "3.5", True), ("The answer is 1,234.56.", "1234.56", True),
             ("The answer is: 12.", "12", True), ("The answer is \\frac{1}{2}.", "1/2", True),
             ("The answer is -4 degrees.", "-4", True), ("Then 3 + 4 = 7 and so", "7", False)]
    for text, gold, correct in cases:
        assert grade(extract_answer(text).answer, gold).correct is correct, text


def test_boxed_helpers() -> None:
    assert last_boxed("\\boxed{1} and \\boxed{\\frac{2}{3}}") == "\\frac{2}{3}"
    assert last_boxed("\\boxed{unbalanced") is None
    assert [b[2] for b in all_boxed("\\boxed 5 then \\fbox{6}")] == ["5", "6"]
