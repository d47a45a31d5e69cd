"""How a box opens: the ``numeric_box`` stop and the grader read the same rule.

A zero-CoT answer to a question with a numeric gold must start with its
number. Once the text inside the box starts with a word (``Janet's ducks…``,
``The answer is…``) or a derivation (``\\begin{align*}``), no continuation can
make it a valid answer, so decoding stops there (``SamplingParams.stop_at =
"numeric_box"``) and the grader does not grade such a box, whether it closed
or not (:func:`zcp_core.probe.measure.grade_zero_cot`). Stopping early
therefore never changes a grade; it only saves the tokens that prose would
spend up to the budget.

Wrappers that may hold a number (``\\text{``, ``\\mathrm{``, ``$``, ``\\$``) and
whitespace are skipped; a single letter (``x = 5``) and any other LaTeX command
(``\\frac``, ``\\sqrt``) count as an answer, so the rule only stops what cannot be
one.
"""

from __future__ import annotations

import re
from typing import Callable, Literal, Sequence

BoxOpening = Literal["open", "answer", "word"]
# Skipped at the start of a box: whitespace, money and math delimiters, and text wrappers that may hold a number.
_WRAP = re.compile(r"\s+|\\\$|\$|\\\(|\\\[|\\(?:text|textbf|textrm|textit|textnormal|mathrm|mathbf|mbox|boxed)\s*\{")
_COMMAND = re.compile(r"\\([A-Za-z]+)")
_LETTERS = re.compile(r"[^\W\d_]+")
#: LaTeX commands that open a derivation, not a number.
DERIVATION_COMMANDS = ("begin",)


def box_opening(text: str) -> BoxOpening:
    """How the text inside a box opens: ``word`` (a word or derivation: never an answer to a numeric gold),
    ``answer`` (anything that may still be one) or ``open`` (too little text to tell).

    Once a text is ``word`` or ``answer`` every continuation of it is too.

    >>> box_opening("\\n  \\\\text{Janet"), box_opening("\\\\text{16 eggs}"), box_opening("\\n  \\\\te")
    ('word', 'answer', 'open')
    """
    s = text
    while (m := _WRAP.match(s)) is not None:
        s = s[m.end():]
    if not s:
        return "open"
    if s[0] == "\\":
        cmd = _COMMAND.match(s)
        if cmd is None:
            return "open" if len(s) == 1 else "answer"
        if cmd.end() == len(s):
            return "open"  # the command may still grow (``\te`` -> ``\text{``)
        return "word" if cmd.group(1) in DERIVATION_COMMANDS else "answer"
    letters = _LETTERS.match(s)
    if letters is None:
        return "answer"
    if letters.end() >= 2:
        return "word"
    return "open" if letters.end() == len(s) else "answer"


def word_stop(token_ids: Sequence[int], decode: Callable[[Sequence[int]], str]) -> int | None:
    """How many of ``token_ids`` a ``numeric_box`` stop keeps: up to and including the token after which the box
    opens with a word, or None when it never does (the token-level rule the transformers decoder applies live)."""
    for k in range(1, len(token_ids) + 1):
        v = box_opening(decode(token_ids[:k]))
        if v != "open":
            return k if v == "word" else None
    return None
