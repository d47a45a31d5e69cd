"""Reference sets: deterministic numeric perturbation of GSM8K items.

A reference twin keeps an item's logic and wording but changes its input
numbers, so a model that memorised the original answer cannot reuse it.
GSM8K solutions carry calculator annotations ``<<expr=result>>``; they let us
trace which numbers of the question feed the computation, draw new values of
the same type and magnitude, recompute the chain exactly, and rewrite the
question, the solution (new annotations, ``#### N``) and the answer. A
calculation the solution writes without an annotation ("99 + 5 = $104") is
annotated first (:mod:`zcp_core.reference.annotate`).

Which number plays which role (input, earlier result, unit constant) is
decided in :mod:`zcp_core.reference.trace`, which holds fixed whatever it cannot
tell apart. New values look like the old ones (:mod:`zcp_core.reference.draw`:
same digits and roundness, within a factor of 2). A draw is rejected when any
intermediate (every operation of every annotation) turns non-integer, negative
or zero where the original did not, when the answer does not change, when
percentages of one whole stop fitting in 100, when ranked test scores leave
their 0-100 scale or the answer passes one of them (:func:`scale_fits`), when
a calculation written without annotations stops adding up, or when
re-executing the twin from its own question does not give its gold
(:mod:`zcp_core.reference.verify`). Among
the draws that pass, one whose answer keeps its number of digits is preferred,
then one keeping the order of same-sized question numbers, then one whose
answer moves to a side drawn by coin. Every twin records its substitutions,
what was held and why, and the re-execution record, which ``zcp release``
reads before it publishes a twin::

    metadata["verification"] = {"method": "numeric-perturbation-v3", "reexecuted": True, "gold_check": "pass",
                                "recomputed_answer": ..., "question_numbers_checked": ...,
                                "annotations_checked": ..., "retrace": "traced" | "ambiguous" | "no_input",
                                "check": "reexecute-v1"}

Items that cannot be traced safely are never guessed: they go to
``ReferenceSet.failures`` with a reason whose prefix (``untraced:``,
``ambiguous:``, ``bad_annotation:``, ``no_annotations:``, ``answer:``,
``no_valid_draw:``, ``no_input:``, ``reexecution:``) counts them by kind.
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

from zcp_core.reference.annotate import annotate_visible
from zcp_core.reference.cues import cued_constants
from zcp_core.reference.draw import answer_digits, pick, sides, unit_cap
from zcp_core.reference.numbers import ExprError, decimals_of, eval_steps, render, render_literal
from zcp_core.reference.rewrite import (
    NewSolution,
    NewStep,
    rewrite_question,
    rewrite_solution,
    value_mapping,
    visible_equations,
)
from zcp_core.reference.trace import Trace, Untraceable, stated_value, trace_item
from zcp_core.reference.verify import reexecute
from zcp_core.schema import Item

METHOD_NUMERIC = "numeric-perturbation-v3"


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


def _evaluate(trace: Trace, values: Mapping[int, Fraction]) -> list[NewStep] | None:
    """Recompute the chain; None when a step breaks a constraint the original met."""
    out: list[NewStep] = []
    for s in trace.steps:
        expr = s.expr
        lits: list[Fraction] = []
        for start, end, role in sorted(s.roles, key=lambda r: r[0], reverse=True):
            if role.kind == "derived":
                val = out[int(role.ref)].value
            elif role.kind == "input":
                ti = int(role.ref)
                val = values.get(ti, trace.tokens[ti].value) * role.scale + role.offset
            else:
                lits.append(Fraction(role.ref))
                continue
            lits.append(val)
            expr = expr[:start] + render_literal(val) + expr[end:]
        try:
            parts, old_parts = eval_steps(expr), eval_steps(s.expr)
        except ExprError:
            return None
        value = parts[-1]
        # Every intermediate of the expression keeps the original's kind: "(80 - 98) + 49" is refused
        # because 80 - 98 is negative where 48 - 8 was not, even though the step's result is positive.
        for old, new in zip(old_parts, parts, strict=True):
            if (old.denominator == 1 and new.denominator != 1) or old >= 0 > new or (old != 0 and new == 0):
                return None
        new_dec = decimals_of(value, 6)
        if new_dec is None or new_dec > max(decimals_of(s.result) or 0, 2):
            return None
        out.append(NewStep(expr, value, tuple(reversed(lits))))
    return out


def _seed_for(seed: int, item_id: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{item_id}".encode()).digest()[:8], "big")


def _sides(trace: Trace, question: str) -> dict[int, tuple[list[Fraction], list[Fraction]]]:
    """Each input's possible new values, below and above it (see :mod:`zcp_core.reference.draw`)."""
    out = {}
    for ti in trace.inputs:
        t = trace.tokens[ti]
        out[ti] = sides(t.value, t.percent, unit_cap(question[t.end:t.end + 40]))
    return out


def _draw(trace: Trace, cands: Mapping[int, tuple[list[Fraction], list[Fraction]]], rng: random.Random,
          partial: bool) -> dict[int, Fraction]:
    """New values for the trace's inputs; with ``partial`` each input changes with probability 1/2."""
    new = {}
    for ti in trace.inputs:
        v = pick(*cands[ti], rng)
        new[ti] = trace.tokens[ti].value if v is None else v
    if partial and len(new) > 1:
        keep = [ti for ti in trace.inputs if rng.random() < 0.5]
        for ti in keep[: len(new) - 1]:
            new[ti] = trace.tokens[ti].value
    return new


def _percents_fit(trace: Trace, changed: Mapping[int, Fraction]) -> bool:
    """Percentages that fit in one whole stay so ("50% of the time ... 40% sightseeing" may not become
    50% and 60%)."""
    pct = [(t.value, changed.get(i, t.value)) for i, t in enumerate(trace.tokens) if t.percent]
    return len(pct) < 2 or sum(a for a, _ in pct) > 100 or sum(b for _, b in pct) <= 100


_SCORES = re.compile(r"\b(?:tests?|exams?|quiz(?:zes)?)\b", re.IGNORECASE)
_RANKS = re.compile(r"\b(?:lowest|highest|best|worst|drop(?:s|ped)?|remove[sd]?)\b", re.IGNORECASE)


def ranked_scores(question: str, old: Sequence[Fraction], gold: Fraction) -> bool:
    """Whether a question ranks test, exam or quiz scores ("remove the lowest score") with every number
    (``old``) and its answer in [0, 100]."""
    return (bool(_SCORES.search(question)) and bool(_RANKS.search(question))
            and all(0 <= v <= 100 for v in (*old, gold)))


def scale_fits(question: str, old: Sequence[Fraction], new: Sequence[Fraction], gold: Fraction,
               answer: Fraction) -> bool:
    """Ranked scores stay on their scale (:func:`ranked_scores`): the twin's numbers (``new``, token for
    token) and answer lie in [0, 100], and its answer stays above (below) each question number the
    original's was above (below). "Remove the lowest score" must remove the same one, and a needed score
    of 143 is no score. (Unranked scores off the scale, a mean of quiz scores with one of 200, stay
    answerable and are left alone.)"""
    if not ranked_scores(question, old, gold):
        return True
    if not all(0 <= v <= 100 for v in (*new, answer)):
        return False
    return all((gold <= a or answer > b) and (gold >= a or answer < b) for a, b in zip(old, new))


def _keeps_order(trace: Trace, changed: Mapping[int, Fraction]) -> bool:
    """Whether every two question numbers of one size (2 digits or more) compare as before ("starts at 47 WPM,
    increased to 52" stays an increase): the story's words often rest on that order without any step using
    it. A preference, not a rule: as a rule, even for numbers of one size only, it cost 24 GSM8K test twins."""
    toks = [(i, t.value, changed.get(i, t.value), answer_digits(t.value)) for i, t in enumerate(trace.tokens)
            if t.kind != "fraction"]
    for i, a, a2, da in toks:
        for j, b, b2, db in toks:
            if (i in changed or j in changed) and da == db > 1 and a < b and not a2 < b2:
                return False
    return True


def perturb_item(item: Item, seed: int = 0, max_tries: int = 50) -> Item:
    """One item's numeric twin; raises ``ValueError`` with the reason when it cannot be built.

    The first half of the draws change every input; the second half change a
    random subset (at least one), which rescues items whose every-input draws
    all break integrality. The first twin that passes every check, keeps the
    answer's number of digits, keeps the order of the question's numbers of one
    size, and moves the answer to a side drawn by coin (larger or smaller) is
    returned; failing that, the best seen (in that order of importance).
    """
    item = annotate_visible(item)
    try:
        trace = trace_item(item)
    except Untraceable as e:
        raise ValueError(str(e)) from e
    rng = random.Random(_seed_for(seed, item.id))
    gold = stated_value(item.answer)
    old_eqs = visible_equations(item.solution or "")
    text = item.question + (item.solution or "")
    fails: dict[str, str] = {}
    cands = _sides(trace, item.question)
    cued = cued_constants(text)
    best: tuple[int, Item] | None = None
    larger = rng.random() < 0.5  # the side this twin's answer should move to, so twins are as often larger
    for attempt in range(max_tries):
        new_values = _draw(trace, cands, rng, partial=attempt >= max_tries // 2)
        changed = {ti: v for ti, v in new_values.items() if v != trace.tokens[ti].value}
        if not changed or not _percents_fit(trace, changed):
            continue
        chain = _evaluate(trace, changed)
        if chain is None or chain[trace.answer_step].value == gold:
            continue
        answer = chain[trace.answer_step].value
        if not scale_fits(item.question, [t.value for t in trace.tokens],
                          [changed.get(i, t.value) for i, t in enumerate(trace.tokens)], gold, answer):
            fails.setdefault("scale", "every draw left the 0-100 scale of its scores or moved the answer "
                                      "past a score it was above or below")
            continue
        rank = ((answer_digits(answer) != answer_digits(gold)) * 4 + (not _keeps_order(trace, changed)) * 2
                + ((answer > gold) != larger))
        if best is not None and rank >= best[0]:
            continue  # no better than a twin already checked: skip the costly checks
        solution = rewrite_solution(item.solution or "", trace, chain, value_mapping(trace, changed, chain, cued))
        if visible_equations(solution.text).count(False) > old_eqs.count(False):
            fails.setdefault("untraced", "a calculation written without <<>> annotations stops adding up")
            continue
        twin = _build(item, trace, chain, changed, solution, seed)
        verdict = reexecute(twin, trace, changed)
        if not verdict.ok:
            fails.setdefault("reexecution", verdict.reason)
            continue
        twin = _with_verification(twin, verdict.record)
        if rank == 0:
            return twin
        best = (rank, twin)
    if best is not None:
        return best[1]
    for kind in ("reexecution", "untraced", "scale"):
        if kind in fails:
            raise ValueError(f"{kind}: {fails[kind]} (every draw of {max_tries})")
    raise ValueError(f"no_valid_draw: {max_tries} draws all broke an integer/sign/decimal constraint "
                     "or left the answer unchanged")


def _build(item: Item, trace: Trace, chain: list[NewStep], changed: Mapping[int, Fraction],
           new: NewSolution, seed: int) -> Item:
    new_answer = render(chain[trace.answer_step].value)
    solution = new.text + f" {new_answer}" if new.text.endswith("####") else new.text.rstrip()
    meta = {
        "substitutions": {render(trace.tokens[ti].value): render(v) for ti, v in changed.items()},
        "inputs_changed": [len(changed), len(trace.inputs)],
        "held": [list(h) for h in trace.held],
        "annotated_in_prose": int(item.metadata.get("annotated_in_prose", 0)),
        "prose_lines_replaced": new.lines_replaced,
        "seed": seed,
        "method": METHOD_NUMERIC,
        "calculations": [{"expr": s.expr, "result": render(s.value)} for s in chain],
        "original_answer": item.answer,
    }
    return Item(id=f"{item.id}-ref", question=rewrite_question(item.question, trace, changed), answer=new_answer,
                solution=solution, source=f"{item.source}-numeric-ref", original_id=item.id, metadata=meta)


def _with_verification(twin: Item, record: Mapping[str, Any]) -> Item:
    meta = dict(twin.metadata)
    meta["verification"] = {"method": METHOD_NUMERIC, **record}
    return Item(id=twin.id, question=twin.question, answer=twin.answer, solution=twin.solution, source=twin.source,
                original_id=twin.original_id, metadata=meta)


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
