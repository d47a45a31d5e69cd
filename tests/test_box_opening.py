"""The box-opening rule that the ``numeric_box`` stop and the zero-CoT grader share (golden tables)."""

from __future__ import annotations

import pytest

from zcp_core.backends import box_opening, word_stop


@pytest.mark.parametrize(("text", "opening"), [
    ("", "open"),
    ("\n  ", "open"),
    ("\n  \\te", "open"),  # the command may still become \text{
    ("\n  \\text{", "open"),
    ("\n  \\text{J", "open"),  # one letter: "x = 5" is an answer, "Janet" is not, yet
    ("\n  \\text{Ja", "word"),
    ("\n  \\text{Janet's ducks lay 16 eggs}\n}", "word"),
    ("The answer is 14.", "word"),
    (" answer}", "word"),
    ("\n  \\begin{align*}", "word"),
    ("\\begin", "open"),
    ("\\begin{", "word"),
    ("Éclair", "word"),
    ("18}", "answer"),
    ("\n  \\text{16 eggs}", "answer"),
    ("\\$18", "answer"),
    ("$18$", "answer"),
    ("-5", "answer"),
    (".5", "answer"),
    ("\\frac{1}{2}", "answer"),
    ("\\sqrt{2}", "answer"),
    ("\\pi", "open"),
    ("\\pi}", "answer"),
    ("x = 5", "answer"),
    ("x", "open"),
    ("}", "answer"),
    ("\\,5", "answer"),
    ("\\", "open"),
    ("(3, 4)", "answer"),
])
def test_box_opening_golden(text, opening):
    assert box_opening(text) == opening


@pytest.mark.parametrize("text", ["\n  \\text{Janet", "\n  \\begin{align*}", "\\text{16 eggs", "18", "x = 5"])
def test_a_decided_opening_never_changes(text):
    """Once a box is ``word`` or ``answer``, every continuation of it is too: the stop is safe to take early."""
    decided = box_opening(text)
    assert decided != "open"
    for tail in ("", " 16", "}", " and more words", "\\end{align*}}", "5"):
        assert box_opening(text + tail) == decided


@pytest.mark.parametrize(("pieces", "kept"), [
    (["\n", "  ", "\\", "text", "{", "Jan", "et", "'s"], 6),  # stops on the token that makes the word
    (["\n", "  ", "\\", "begin", "{", "align", "*}"], 5),
    (["\n", "  ", "\\", "text", "{", "1", "6", " eggs", "}"], None),  # a number first: never stops
    (["\n", "  "], None),  # undecided to the end: no stop
    (["Th", "e answer"], 1),
])
def test_word_stop_golden(pieces, kept):
    ids = list(range(len(pieces)))
    assert word_stop(ids, lambda xs: "".join(pieces[i] for i in xs)) == kept
