"""Reference sets: deterministic numeric perturbation of GSM8K items.

A reference twin keeps an item's logic and wording but changes its input
numbers, so a model that memorised the original answer cannot reuse it.
GSM8K solutions carry calculator annotations ``<<expr=result>>``; they let us
trace which numbers of the question feed the computation, draw new values of
the same type and magnitude, recompute the chain exactly, and rewrite the
question, the solution (new annotations, ``#### N``) and the answer.

Which number plays which role (input, earlier result, unit constant) is
decided in :mod:`zcp_core.reference.trace`. New values keep each input's sign,
digit count, decimals and roundness; a draw is rejected when any intermediate
(every operation of every annotation) turns non-integer, negative or zero
where the original did not, when the answer does not change, or when a
calculation written without annotations ("7 - 3 = 4") stops adding up. The
solution text is rewritten by position where it mirrors an annotation, else by
value; a number that could stand for two values is a conflict, not a guess.

Items that cannot be traced safely are never guessed: they go to
``ReferenceSet.failures`` with a reason whose prefix (``untraced:``,
``ambiguous:``, ``bad_annotation:``, ``no_annotations:``, ``answer:``,
``no_valid_draw:``, ``no_input:``) counts them by kind.
The LLM pipeline (the paper's) lives in :mod:`zcp_core.reference.llm`.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from zcp_core.reference.numbers import (
    ExprError,
    decimals_of,
    eval_steps,
    expr_literals,
    find_numbers,
    render,
    render_like,
    safe_eval,
)
from zcp_core.reference.trace import (
    CALC,
    CUES,
    Step,
    Trace,
    Untraceable,
    close_enough,
    has_cue,
    stated_value,
    trace_item,
)
from zcp_core.schema import Item

METHOD_NUMERIC = "numeric-perturbation-v1"


@dataclass(frozen=True)
class ReferenceFailure:
    """An item that got no reference (or paraphrase) twin, and why.

    Attributes:
        id: The original's id (``<orig>-para<k>`` for a paraphrase version).
        reason: ``kind: explanation``; :func:`failure_kind` gives the kind.
        attempts: For LLM pipelines, every attempt with its parse result and verdicts.
    """

    id: str
    reason: str
    attempts: tuple[Mapping[str, Any], ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class ReferenceSet:
    """Reference twins and the items that could not be given one.

    Attributes:
        items: Twins (id ``<orig>-ref``, ``original_id`` set), in input order.
        failures: Items left out, with a reason.
        method: How the twins were made.
    """

    items: tuple[Item, ...]
    failures: tuple[ReferenceFailure, ...]
    method: str


def _draw(v: Fraction, percent: bool, rng: random.Random) -> Fraction:
    """A new value of the same kind: same sign, digit count, decimals and roundness."""
    k = decimals_of(v) or 0
    m = int(v * 10**k)
    digits = len(str(m))
    step = 1
    while m % (step * 10) == 0 and step * 10 < m:
        step *= 10
    if step == 1 and m % 5 == 0 and m > 5:
        step = 5
    lo = max(2 if digits == 1 else 10 ** (digits - 1), step)
    hi = 10**digits - 1
    if percent and k == 0:
        hi = min(hi, 99 if m < 100 else 100)
    choices = range(-(-lo // step), hi // step + 1)
    if len(choices) <= 1:
        return v
    for _ in range(20):
        new = Fraction(rng.choice(choices) * step, 10**k)
        if new != v:
            return new
    return v


_NUM = r"\$?(?:\d[\d,]*(?:\.\d+)?|\.\d+)%?"
VISIBLE_EQ = re.compile(rf"(?<![\w.])({_NUM}(?:\s*[-+*/x\u00d7]\s*{_NUM})+)\s*=\s*({_NUM})")


def _visible_equations(solution: str) -> list[bool]:
    """Whether each written calculation outside the annotations ("7 - 3 = 4") is arithmetically right."""
    out = []
    for m in VISIBLE_EQ.finditer(CALC.sub(" ", solution)):
        lhs = re.sub(r"[x\u00d7]", "*", m.group(1)).replace("$", "").replace(",", "").replace("%", "")
        try:
            out.append(close_enough(safe_eval(lhs), stated_value(m.group(2).replace("%", ""))))
        except (ExprError, Untraceable):
            out.append(False)
    return out


@dataclass(frozen=True)
class _NewStep:
    expr: str
    value: Fraction
    literals: tuple[Fraction, ...]  # new value of each literal, left to right


def _evaluate(trace: Trace, new_inputs: dict[Fraction, Fraction]) -> list[_NewStep] | None:
    """Recompute the chain; None when a step breaks a constraint the original met."""
    out: list[_NewStep] = []
    for s in trace.steps:
        expr = s.expr
        lits: list[Fraction] = []
        for start, end, role in sorted(s.roles, key=lambda r: r[0], reverse=True):
            if role.kind == "derived":
                val = out[int(role.ref)].value
            elif role.kind == "input":
                val = new_inputs[Fraction(role.ref)] * role.scale + role.offset
            else:
                lits.append(Fraction(role.ref))
                continue
            lits.append(val)
            txt = render(val) if decimals_of(val) is not None else f"({val.numerator}/{val.denominator})"
            expr = expr[:start] + (f"({txt})" if val < 0 else txt) + expr[end:]
        try:
            value = safe_eval(expr)
            parts, old_parts = eval_steps(expr), eval_steps(s.expr)
        except ExprError:
            return None
        # Every intermediate of the expression keeps the original's kind: "(80 - 98) + 49" is refused
        # because 80 - 98 is negative where 48 - 8 was not, even though the step's result is positive.
        for old, new in zip(old_parts, parts, strict=True):
            if (old.denominator == 1 and new.denominator != 1) or old >= 0 > new or (old != 0 and new == 0):
                return None
        new_dec = decimals_of(value, 6)
        if new_dec is None or new_dec > max(decimals_of(s.result) or 0, 2):
            return None
        out.append(_NewStep(expr, value, tuple(reversed(lits))))
    return out


def _seed_for(seed: int, item_id: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{item_id}".encode()).digest()[:8], "big")


def _free_mapping(trace: Trace, new_inputs: dict[Fraction, Fraction], chain: list[_NewStep],
                  text: str) -> dict[Fraction, set[Fraction]]:
    """Old value -> every new value it may stand for in running text (inputs and step results)."""
    cand: dict[Fraction, set[Fraction]] = {}
    for old, new in new_inputs.items():
        cand.setdefault(old, set()).add(new)
    for s, ns in zip(trace.steps, chain, strict=True):
        for old in {s.result, stated_value(s.result_text)}:
            cand.setdefault(old, set()).add(ns.value)
    # Numbers that keep their value (unit constants, unperturbed question numbers) stay candidates for
    # themselves, so "7 days" cannot silently become a step's new result that used to be 7.
    keep = {Fraction(r.ref) for s in trace.steps for _, _, r in s.roles if r.kind == "const"}
    keep |= {t.value for t in trace.tokens if t.value not in new_inputs} | {Fraction(0), Fraction(1)}
    keep |= {v for v in CUES if has_cue(v, text)}  # "60 minutes in an hour" keeps its 60
    for v in keep:
        if v in cand:
            cand[v].add(v)
    return cand


class _Conflict(Exception):
    pass


def _rewrite_segment(text: str, cand: dict[Fraction, set[Fraction]], fixed: dict[int, Fraction],
                     solution: bool = True) -> str:
    """Rewrite numbers in ``text``: positions in ``fixed`` get their value, the rest go by ``cand``."""
    parts, last = [], 0
    for t in find_numbers(text, fractions=not solution):
        if t.start in fixed:
            new = fixed[t.start]
        elif t.kind == "fraction" or t.value not in cand:
            continue
        elif len(cand[t.value]) > 1:
            raise _Conflict(f"{t.text!r} in the solution text could stand for several numbers")
        else:
            new = next(iter(cand[t.value]))
        parts += [text[last:t.start], render_like(new, t)]
        last = t.end
    return "".join(parts) + text[last:]


def _rewrite_solution(solution: str, trace: Trace, chain: list[_NewStep],
                      cand: dict[Fraction, set[Fraction]]) -> str:
    """New solution text. Numbers are placed by position where the text mirrors an annotation
    ("16 - 3 - 4 = <<16-3-4=9>>9"): the echo after ``>>`` is that step's result, and the numbers just
    before ``<<`` that repeat the expression's literals (right to left) or its result take their new
    values. Any other number goes by value, and one that could stand for two numbers is a conflict."""
    spans = list(CALC.finditer(solution))
    out, last = [], 0
    for i in range(len(spans) + 1):
        end = spans[i].start() if i < len(spans) else len(solution)
        seg = solution[last:end]
        toks = find_numbers(seg, fractions=False)
        fixed: dict[int, Fraction] = {}
        if i > 0 and toks and toks[0].start <= 2 and toks[0].value == stated_value(trace.steps[i - 1].result_text):
            fixed[toks[0].start] = chain[i - 1].value  # the echo of the previous annotation
        if i < len(spans):
            old_lits = [v for _, _, v in _old_literals(trace.steps[i])]
            j = len(old_lits) - 1
            for t in reversed(toks):
                if t.start in fixed:
                    break
                if j >= 0 and t.value == old_lits[j]:
                    fixed[t.start] = chain[i].literals[j]
                    j -= 1
                elif t.value in (trace.steps[i].result, stated_value(trace.steps[i].result_text)):
                    fixed[t.start] = chain[i].value
        out.append(_rewrite_segment(seg, cand, fixed))
        if i < len(spans):
            out.append(f"<<{chain[i].expr}={render(chain[i].value)}>>")
            last = spans[i].end()
    return "".join(out)


def _old_literals(step: Step) -> list[tuple[int, int, Fraction]]:
    return [(lit.start, lit.end, lit.value) for lit in expr_literals(step.expr)]


def perturb_item(item: Item, seed: int = 0, max_tries: int = 50) -> Item:
    """One item's numeric twin; raises ``ValueError`` with the reason when it cannot be built."""
    try:
        trace = trace_item(item)
    except Untraceable as e:
        raise ValueError(str(e)) from e
    rng = random.Random(_seed_for(seed, item.id))
    pct = {t.value for t in trace.tokens if t.percent}
    gold = stated_value(item.answer)
    conflict, unannotated = "", False
    old_eqs = _visible_equations(item.solution or "")
    kept = {t.value for t in trace.tokens if t.value not in trace.inputs}
    for _ in range(max_tries):
        new_inputs = {v: _draw(v, v in pct, rng) for v in trace.inputs}
        news = set(new_inputs.values())
        if all(new_inputs[v] == v for v in trace.inputs) or len(news) < len(new_inputs) or news & kept:
            continue  # two inputs sharing a value, or one equal to a kept number, would blur the text
        chain = _evaluate(trace, new_inputs)
        if chain is None or chain[trace.answer_step].value == gold:
            continue
        try:
            solution = _rewrite_solution(item.solution or "", trace, chain, _free_mapping(trace, new_inputs, chain,
                                                                                       item.question + (item.solution or "")))
        except _Conflict as e:
            conflict = str(e)
            continue
        if [ok for ok, was in zip(_visible_equations(solution), old_eqs, strict=False) if was] != \
                [True] * sum(old_eqs) or len(_visible_equations(solution)) != len(old_eqs):
            unannotated = True  # a calculation written without <<>> no longer adds up: redraw
            continue
        return _build(item, trace, chain, new_inputs, solution, seed)
    if conflict:
        raise ValueError(f"ambiguous: {conflict}")
    if unannotated:
        raise ValueError("untraced: a calculation written without <<>> annotations stops adding up "
                         "for every draw")
    raise ValueError(f"no_valid_draw: {max_tries} draws all broke an integer/sign/decimal constraint "
                     "or left the answer unchanged")


def _build(item: Item, trace: Trace, chain: list[_NewStep], new_inputs: dict[Fraction, Fraction],
           solution: str, seed: int) -> Item:
    new_answer = render(chain[trace.answer_step].value)
    solution = re.sub(r"####\s*.*$", f"#### {new_answer}", solution.rstrip())
    question = fix_articles(_rewrite_segment(item.question, {k: {v} for k, v in new_inputs.items()}, {},
                                             solution=False))
    solution = fix_articles(solution)
    meta = {
        "substitutions": {render(k): render(v) for k, v in new_inputs.items() if k != v},
        "seed": seed,
        "method": METHOD_NUMERIC,
        "calculations": [{"expr": s.expr, "result": render(s.value)} for s in chain],
        "original_answer": item.answer,
    }
    return Item(id=f"{item.id}-ref", question=question, answer=new_answer, solution=solution,
                source=f"{item.source}-numeric-ref", original_id=item.id, metadata=meta)


_ARTICLE = re.compile(r"\b([Aa])(n?) (?=(\d[\d,]*|eight|eleven|eighteen|eighty|[a-z]+)\b)")


def fix_articles(text: str) -> str:
    """Make "a"/"an" agree with a following number ("an 8 hour day", "a 5 hour day") after substitution."""

    def repl(m: re.Match[str]) -> str:
        nxt = m.group(3)
        if nxt[0].isdigit():
            digits = nxt.replace(",", "")
            group = len(digits) % 3 or 3  # "11,000" is read "eleven thousand"
            vowel = digits[0] == "8" or digits[:group] in ("11", "18")
        elif nxt in ("eight", "eleven", "eighteen", "eighty"):
            vowel = True
        else:
            return m.group(0)  # a word: leave the original article alone
        return f"{m.group(1)}{'n' if vowel else ''} "

    return _ARTICLE.sub(repl, text)


def perturb_gsm8k(items: Sequence[Item], seed: int = 0, max_tries: int = 50) -> ReferenceSet:
    """Numeric reference twins of GSM8K items (deterministic per ``(seed, item id)``).

    Args:
        items: GSM8K items with ``metadata["calculations"]`` and a solution.
        seed: Global seed; each item's draws are seeded by a hash of (seed, id),
            so a twin does not depend on which other items are in the batch.
        max_tries: Draws per item before it is reported as a failure.

    Returns:
        A :class:`ReferenceSet`; untraceable items are in ``failures`` with a reason.
    """
    twins, failures = [], []
    for it in items:
        try:
            twins.append(perturb_item(it, seed=seed, max_tries=max_tries))
        except ValueError as e:
            failures.append(ReferenceFailure(it.id, str(e)))
    return ReferenceSet(tuple(twins), tuple(failures), METHOD_NUMERIC)


def failure_kind(reason: str) -> str:
    """The category prefix of a failure reason (``untraced``, ``ambiguous``...)."""
    return reason.split(":", 1)[0] if ":" in reason else "other"
