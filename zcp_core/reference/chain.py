"""What a traced GSM8K item is: each annotation literal's role, the chain's steps, and the numbers that move.

:mod:`zcp_core.reference.trace` builds a :class:`Trace`; the draw search, the rewrite and the re-execution
read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from zcp_core.reference.numbers import NumberToken


@dataclass(frozen=True)
class Role:
    """What one annotation literal stands for.

    Attributes:
        kind: ``derived`` (an earlier step), ``input`` (a question number), ``const`` (a fixed constant).
        ref: The step index (derived), the question token index (input), or the value (const).
        scale: An input literal is ``value * scale + offset`` (a percent p also appears as p/100...).
        offset: See ``scale``.
    """

    kind: Literal["derived", "input", "const"]
    ref: Fraction | int
    scale: Fraction = Fraction(1)
    offset: Fraction = Fraction(0)


@dataclass(frozen=True)
class Step:
    """One annotation: its expression, exact and stated results, and a role per literal."""

    expr: str
    result: Fraction
    result_text: str
    roles: tuple[tuple[int, int, Role], ...]  # (start, end, role) per literal, left to right


@dataclass(frozen=True)
class Trace:
    """How an item's annotations use its question.

    Attributes:
        steps: The annotations with their literals' roles.
        tokens: Every number of the question (:func:`find_numbers`), by position.
        inputs: Indices into ``tokens`` of the numbers drawn anew, in order of first use (a tie's other members
            and bound numbers change with them, through ``ties`` and ``bound``).
        held: ``(value, why)`` for every quantity held fixed although the chain uses it.
        answer_step: The step whose result is the gold answer.
        ties: Groups of question numbers of one value and form that a literal could each stand for ("3
            families ... each calls 3 other families"), read by the chain at least as often as written; the
            first of a group is its input, and every member takes the input's new value, so the twin is right
            whichever the chain reads.
        bound: ``(token, step)`` for a question number that a literal could read as well as an earlier
            step's result of the same value ("24 tiles per square foot" and the 24 square feet step 2
            computes): the number takes the step's new value, so the twin is right whichever the chain reads.
    """

    steps: tuple[Step, ...]
    tokens: tuple[NumberToken, ...]
    inputs: tuple[int, ...]
    held: tuple[tuple[str, str], ...]
    answer_step: int
    ties: tuple[tuple[int, ...], ...] = ()
    bound: tuple[tuple[int, int], ...] = ()

    def tied(self, changed: Mapping[int, Fraction]) -> dict[int, Fraction]:
        """``changed`` (token index -> new value) with every tied number given its group's new value."""
        out = dict(changed)
        for group in self.ties:
            if group[0] in changed:
                out.update({ti: changed[group[0]] for ti in group})
        return out


class Untraceable(Exception):
    """The item cannot be traced safely; the message is ``kind: explanation``."""


def stated_value(s: str) -> Fraction:
    """The value of a stated result ("1,200", "$5"); raises :class:`Untraceable` when it is not a number."""
    try:
        return Fraction(s.replace(",", "").replace("$", "").strip())
    except (ValueError, ZeroDivisionError) as e:
        raise Untraceable(f"bad_annotation: result {s!r} is not a number") from e


def close_enough(a: Fraction, b: Fraction) -> bool:
    """Stated results are sometimes rounded (33.33 for 100/3): a 0.5% or 0.01 slack."""
    return abs(a - b) <= max(Fraction(1, 100), abs(b) / 200)
