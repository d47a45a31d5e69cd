"""Tracing GSM8K calculator annotations back to the question's numbers.

Each literal of each ``<<expr=result>>`` annotation gets one role:

* ``derived``: equal to an earlier step's result (later steps use earlier results);
* ``input``: a number written in the question (digits or a number word; a
  percent p also matches p/100, 1 + p/100, 1 - p/100 and 100 - p);
* ``const``: a unit constant implied by the wording (2 for "half", 60, 100...).

Anything that cannot be assigned safely raises :class:`Untraceable` with a
reason whose prefix names its kind; nothing is guessed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from zcp_core.reference.numbers import ExprError, NumberToken, expr_literals, find_numbers, render, safe_eval
from zcp_core.schema import Item

CALC = re.compile(r"<<([^<>=]*)=([^<>]*)>>")
# Unit constants a solution may use without the question writing them as a number.
CONSTANTS = frozenset(Fraction(x) for x in ("0", "1", "2", "3", "4", "7", "10", "12", "24", "30", "52", "60", "100",
                                             "365", "1000", "0.5", "0.25", "0.75", "0.1", "0.01"))
# Wording that implies a constant: when the question also writes that number, an annotation's
# literal could be either, so the item is refused rather than guessed (e.g. "2 bolts ... half that much").
# Each cue is a list of patterns that must all occur (e.g. 60 only matters when minutes meet hours).
CUES: dict[Fraction, tuple[tuple[str, ...], ...]] = {
    Fraction(2): ((r"\bhalf\b|\bhalves\b|\btwice\b|\bdoubl|\bpairs?\b|\btwo times\b|\bhalf-",),),
    Fraction(3): ((r"\btripl|\bthirds\b|\ba third\b|\bthrice\b",),),
    Fraction(4): ((r"\bquarters?\b|\bfourths?\b|\bquadrupl",),),
    Fraction(7): ((r"\bweeks?\b", r"\bdays?\b"),),
    Fraction(12): ((r"\bdozens?\b",), (r"\bmonths?\b", r"\byears?\b"), (r"\binch", r"\bf(?:oo|ee)t\b")),
    Fraction(24): ((r"\bdays?\b", r"\bhours?\b"),),
    Fraction(30): ((r"\bmonths?\b", r"\bdays?\b"),),
    Fraction(52): ((r"\bweeks?\b", r"\byears?\b"),),
    Fraction(60): ((r"\bhours?\b", r"\bminutes?\b"), (r"\bminutes?\b", r"\bseconds?\b")),
    Fraction(100): ((r"%|\bpercent",), (r"\bcents?\b",)),
    Fraction(1000): ((r"\bthousand|\bkilo|\bmilli",),),
    Fraction(10): ((r"\btenths?\b|\bdimes?\b",),),
}


@dataclass(frozen=True)
class Role:
    kind: Literal["derived", "input", "const"]
    ref: Fraction | int  # step index (derived) or the input's original value (input/const)
    scale: Fraction = Fraction(1)  # input literal = value * scale + offset (a percent p also appears as
    offset: Fraction = Fraction(0)  # p/100, 1 + p/100, 1 - p/100, 100 - p)


@dataclass(frozen=True)
class Step:
    expr: str
    result: Fraction
    result_text: str
    roles: tuple[tuple[int, int, Role], ...]  # (start, end, role) per literal


@dataclass(frozen=True)
class Trace:
    steps: tuple[Step, ...]
    inputs: tuple[Fraction, ...]  # distinct input values, in order of first use
    tokens: tuple[NumberToken, ...]  # question numbers
    answer_step: int


class Untraceable(Exception):
    pass


def stated_value(s: str) -> Fraction:
    try:
        return Fraction(s.replace(",", "").replace("$", "").strip())
    except (ValueError, ZeroDivisionError) as e:
        raise Untraceable(f"bad_annotation: result {s!r} is not a number") from e


def close_enough(a: Fraction, b: Fraction) -> bool:
    # Stated results are sometimes rounded (33.33 for 100/3); accept a 0.5% or 0.01 slack.
    return abs(a - b) <= max(Fraction(1, 100), abs(b) / 200)


def has_cue(value: Fraction, question: str) -> bool:
    return any(all(re.search(pat, question, re.IGNORECASE) for pat in group) for group in CUES.get(value, ()))


def input_forms(tokens: Sequence[NumberToken]) -> dict[Fraction, set[tuple[Fraction, Fraction, Fraction]]]:
    """Literal value -> every (input value, scale, offset) it may stand for (several means ambiguous)."""
    forms: dict[Fraction, set[tuple[Fraction, Fraction, Fraction]]] = {}
    for t in tokens:
        if t.kind == "fraction" or t.value in (0, 1):
            continue  # written fractions and 0/1 keep their meaning; never perturbed
        forms.setdefault(t.value, set()).add((t.value, Fraction(1), Fraction(0)))
        if t.percent:
            p = t.value
            for lit, scale, off in ((p / 100, Fraction(1, 100), 0), (1 + p / 100, Fraction(1, 100), 1),
                                    (1 - p / 100, Fraction(-1, 100), 1), (100 - p, Fraction(-1), 100)):
                forms.setdefault(lit, set()).add((p, scale, Fraction(off)))
    return forms


def trace_item(item: Item) -> Trace:
    """Assign a role to every annotation literal; raises ``Untraceable`` with a reason."""
    calcs = list(item.metadata.get("calculations") or [])
    if not calcs:
        raise Untraceable("no_annotations: the solution has no <<expr=result>> calculator annotations")
    tokens = tuple(find_numbers(item.question))
    forms = input_forms(tokens)
    allowed = {t.value for t in tokens} | CONSTANTS
    for t in tokens:
        if t.kind == "fraction":  # "2/5 of" lets 2 and 5 appear as constants
            allowed |= {Fraction(t.value.numerator), Fraction(t.value.denominator)}
    steps: list[Step] = []
    used: list[Fraction] = []
    derived_values: dict[Fraction, int] = {}
    for i, c in enumerate(calcs):
        expr, res_text = str(c["expr"]).strip(), str(c["result"]).strip()
        try:
            lits = expr_literals(expr)
            value = safe_eval(expr)
        except ExprError as e:
            raise Untraceable(f"bad_annotation: step {i + 1}: {e}") from e
        stated = stated_value(res_text)
        if not close_enough(value, stated):
            raise Untraceable(f"bad_annotation: step {i + 1} {expr}={res_text} evaluates to {render(value)}")
        roles = []
        for lit in lits:
            v = lit.value
            earlier = [j for j, s in enumerate(steps) if s.result == v or stated_value(s.result_text) == v]
            if earlier:
                if len({steps[j].result for j in earlier}) > 1 or len(earlier) > 1:
                    raise Untraceable(f"ambiguous: {render(v)} in step {i + 1} is the result of steps "
                                       f"{', '.join(str(j + 1) for j in earlier)}")
                role = Role("derived", earlier[-1])
                derived_values[v] = i
            elif v in forms:
                if len(forms[v]) > 1:
                    raise Untraceable(f"ambiguous: {render(v)} in step {i + 1} matches several question numbers")
                base, scale, off = next(iter(forms[v]))
                if has_cue(base, item.question):
                    raise Untraceable(f"ambiguous: {render(base)} is in the question, and its wording also "
                                       f"implies the constant {render(base)}")
                role = Role("input", base, scale, off)
                if base not in used:
                    used.append(base)
            elif v in allowed:
                role = Role("const", v)
            else:
                raise Untraceable(f"untraced: {render(v)} in step {i + 1} ({expr}) is neither in the question "
                                   "nor an earlier result")
            roles.append((lit.start, lit.end, role))
        steps.append(Step(expr, value, res_text, tuple(roles)))
    clash = [v for v in derived_values if any(f[0] in used for f in forms.get(v, ()))]
    if clash:
        raise Untraceable(f"ambiguous: {render(clash[0])} is both a question number the chain uses and the "
                           f"result of an earlier step (used in step {derived_values[clash[0]] + 1})")
    gold = stated_value(item.answer)
    hits = [j for j, s in enumerate(steps) if close_enough(s.result, gold) or stated_value(s.result_text) == gold]
    if not hits:
        raise Untraceable(f"answer: the gold answer {item.answer} is not the result of any annotation")
    results = {x for st in steps for x in (st.result, stated_value(st.result_text))}
    stale = [t for t in tokens if t.value not in used and t.value in results and t.value not in CONSTANTS]
    if stale:
        raise Untraceable(f"ambiguous: the question states {stale[0].text}, which the chain also derives; "
                           "it would go stale")
    if not used:
        raise Untraceable("no_input: no question number feeds the annotations, so there is nothing to perturb")
    return Trace(tuple(steps), tuple(used), tokens, hits[-1])
