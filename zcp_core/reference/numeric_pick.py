"""A numeric twin's pick and record: the best draw on one side that passes the costly checks, and the twin item.

:func:`~zcp_core.reference.numeric.perturb_item` draws (:mod:`zcp_core.reference.search`), then asks
:func:`best_on_side` for each side's most preferred draw that is new against the item's earlier twins and
passes the costly checks (the solution's comparisons, prose equations, re-execution); :func:`with_verification`
adds the side and re-execution records.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from zcp_core.reference.compare import flipped
from zcp_core.reference.distinct import Avoid
from zcp_core.reference.numbers import render
from zcp_core.reference.rewrite import (
    NewSolution,
    NewStep,
    rewrite_question,
    rewrite_solution,
    value_mapping,
    visible_equations,
)
from zcp_core.reference.search import Draw, Side, preference
from zcp_core.reference.trace import Ambiguity, Trace
from zcp_core.reference.verify import reexecute
from zcp_core.schema import Item


def side_record(coin: Side, size: float, round_kept: bool | None = None) -> dict[str, Any]:
    """``metadata["side"]`` of a twin: its coin (the side it moved to), its target move and, under ``preferred``
    only (``required`` always keeps it, and its twins stay byte-identical), whether it kept the roundness."""
    rec: dict[str, Any] = {"coin": coin, "side": coin, "target_move": round(size, 4), "fallback": False,
                           "fallback_reason": "", "both_sides": True}
    return rec if round_kept is None else {**rec, "roundness_kept": round_kept}


@dataclass(frozen=True)
class Ctx:
    """What the costly checks of one item need besides the draw."""

    seed: int
    twin: int
    old_eqs: list[bool]
    cued: frozenset[Fraction]
    max_tries: int
    method: str
    ambiguity: Ambiguity
    avoid: Avoid = Avoid()
    redraw: int = 0


def best_on_side(item: Item, trace: Trace, gold: Fraction, draws: Sequence[Draw], side: Side, size: float,
                 ctx: Ctx, fails: dict[str, str], why_not: dict[str, str],
                 keep: Callable[[Fraction, Fraction], bool] | None = None) -> tuple[Item, Mapping[str, Any]] | None:
    """The most preferred draw on ``side`` that passes the costly checks, as a twin and its re-execution record.

    None when there is none; ``why_not[side]`` then says why.
    """
    on_side = sorted((d for d in draws if (d.answer > gold) == (side == "larger")
                      and (keep is None or keep(d.answer, gold))),
                     key=lambda d: preference(trace, gold, d, size))  # stable: draw order breaks ties
    why_not[side] = (f"no_draw: no draw moved the answer {side}{' keeping its roundness' if keep else ''} and passed "
                     "the cheap checks")
    for d in on_side:
        if ctx.avoid.taken(rewrite_question(item.question, trace, d.changed), substitutions(trace, d.changed)):
            fails.setdefault("repeat", "every draw that passes the checks repeats an earlier twin of the item")
            why_not[side] = f"repeat: every {side} draw that passes the checks repeats an earlier twin of the item"
            continue
        cand = value_mapping(trace, d.changed, d.chain, ctx.cued)
        checked, flips = flipped(item.solution or "", cand) if ctx.ambiguity == "tie" else (0, [])
        if flips:  # v7: the chain keeps the original's choice, which the new values may no longer make
            fails.setdefault("comparison", f"the solution's comparison {flips[0]!r} is false for the new values, "
                             "and the chain keeps the choice it made")
            why_not[side] = f"comparison: every {side} draw makes the solution's comparison {flips[0]!r} false"
            continue
        solution = rewrite_solution(item.solution or "", trace, d.chain, cand)
        if visible_equations(solution.text).count(False) > ctx.old_eqs.count(False):
            fails.setdefault("untraced", "a calculation written without <<>> annotations stops adding up")
            why_not[side] = f"untraced: every {side} draw broke a calculation written without annotations"
            continue
        made = _build(item, trace, d.chain, d.changed, solution, ctx, checked)
        verdict = reexecute(made, trace, d.changed, ctx.ambiguity)
        if not verdict.ok:
            fails.setdefault("reexecution", verdict.reason)
            why_not[side] = f"reexecution: every {side} draw failed re-execution ({verdict.reason})"
            continue
        return made, verdict.record
    return None


def _build(item: Item, trace: Trace, chain: list[NewStep], changed: Mapping[int, Fraction],
           new: NewSolution, ctx: Ctx, comparisons: int = 0) -> Item:
    new_answer = render(chain[trace.answer_step].value)
    solution = new.text + f" {new_answer}" if new.text.endswith("####") else new.text.rstrip()
    meta = {
        "substitutions": substitutions(trace, changed),
        # inputs only: a tied group is one input, and a bound number follows its step
        "inputs_changed": [len(set(changed) & set(trace.inputs)), len(trace.inputs)],
        "held": [list(h) for h in trace.held],
        "annotated_in_prose": int(item.metadata.get("annotated_in_prose", 0)),
        "prose_lines_replaced": new.lines_replaced,
        "seed": ctx.seed,
        "twin": ctx.twin,
        "method": ctx.method,
        "calculations": [{"expr": s.expr, "result": render(s.value)} for s in chain],
        "original_answer": item.answer,
    }
    # v6 on only (v5 traces have neither, and their twins stay byte-identical): what moved together, and why
    if trace.ties:
        meta["tied"] = [[trace.tokens[ti].text for ti in g] for g in trace.ties]
    if trace.bound:
        meta["bound"] = [[trace.tokens[ti].text, j + 1] for ti, j in trace.bound]
    if comparisons:  # v7: the original's comparisons of chain numbers this twin keeps true
        meta["comparisons"] = comparisons
    if ctx.redraw:  # a later twin whose own seed's draws were all taken by earlier twins
        meta["redraw"] = ctx.redraw
    return Item(id=twin_id(item.id, ctx.twin), question=rewrite_question(item.question, trace, changed), answer=new_answer,
                solution=solution, source=f"{item.source}-numeric-ref", original_id=item.id, metadata=meta)


def substitutions(trace: Trace, changed: Mapping[int, Fraction]) -> dict[str, str]:
    """``metadata["substitutions"]`` of a twin: each changed question number, old -> new, as written."""
    return {render(trace.tokens[ti].value): render(v) for ti, v in changed.items()}


def twin_id(original_id: str, twin: int = 1) -> str:
    """The id of an item's twin number ``twin``: ``<id>-ref``, then ``<id>-ref2``, ``<id>-ref3``..."""
    return f"{original_id}-ref" if twin == 1 else f"{original_id}-ref{twin}"


def with_verification(twin: Item, record: Mapping[str, Any], side: Mapping[str, Any], method: str) -> Item:
    """``twin`` with its side record and its re-execution record under ``method``."""
    meta = dict(twin.metadata)
    meta["side"] = dict(side)
    meta["verification"] = {"method": method, **record}
    return Item(id=twin.id, question=twin.question, answer=twin.answer, solution=twin.solution, source=twin.source,
                original_id=twin.original_id, metadata=meta)
