"""The draw search of the numeric generator: candidate new inputs, the chain recomputed, and their ranking.

:mod:`zcp_core.reference.numeric` asks :func:`side_draws` for every draw aimed at one side of the answer
(larger or smaller) that passes the cheap checks (the chain computes with the original's integrality and
signs, percentages still fit, scores keep their scale), and ranks them with :func:`preference`; the costly
checks (prose equations, re-execution) stay there. From v8 a draw must also keep the original's order relations
(:mod:`zcp_core.reference.order`), checked here with the cheap checks so that a side whose draws all cross one
gets the search's further rounds.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from zcp_core.reference.draw import answer_digits, log_uniform, pick, roundness, sides, trailing_zeros, unit_cap
from zcp_core.reference.numbers import ExprError, decimals_of, eval_steps, render_literal
from zcp_core.reference.order import Order
from zcp_core.reference.rewrite import NewStep
from zcp_core.reference.stated import scale_fits
from zcp_core.reference.trace import Trace
from zcp_core.schema import Item

MOVE_STEP = 0.15  # moves within this of each other count as one size when ranking draws
Side = Literal["larger", "smaller"]


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


def _sides(trace: Trace, question: str) -> dict[int, tuple[list[Fraction], list[Fraction]]]:
    """Each input's possible new values, below and above it (see :mod:`zcp_core.reference.draw`)."""
    out = {}
    group = {g[0]: g for g in trace.ties}
    for ti in trace.inputs:
        below: list[Fraction] | None = None
        above: list[Fraction] = []
        for tj in group.get(ti, (ti,)):  # a tied group moves to values every member may take
            t = trace.tokens[tj]
            b, a = sides(t.value, t.percent, unit_cap(question[t.end:t.end + 40]))
            below, above = (b, a) if below is None else ([x for x in below if x in b], [x for x in above if x in a])
        out[ti] = (below or [], above)
    return out


def _draw(trace: Trace, cands: Mapping[int, tuple[list[Fraction], list[Fraction]]], rng: random.Random,
          partial: bool, toward: Mapping[int, int] | None = None) -> dict[int, Fraction]:
    """New values for the trace's inputs; with ``partial`` each input changes with probability 1/2.

    ``toward`` gives, for some inputs, the side to draw them on (+1 above, -1 below); an input whose side has no
    candidate keeps its value. The others pick a side by coin (:func:`~zcp_core.reference.draw.pick`).
    """
    new = {}
    for ti in trace.inputs:
        v0 = trace.tokens[ti].value
        below, above = cands[ti]
        way = (toward or {}).get(ti, 0)
        if way:
            side = above if way > 0 else below
            v = log_uniform(side, v0, rng) if side else None
        else:
            v = pick(below, above, rng, v0)
        new[ti] = v0 if v is None else v
    if partial and len(new) > 1:
        keep = [ti for ti in trace.inputs if rng.random() < 0.5]
        for ti in keep[: len(new) - 1]:
            new[ti] = trace.tokens[ti].value
    return new


def _effects(trace: Trace, cands: Mapping[int, tuple[list[Fraction], list[Fraction]]], gold: Fraction
             ) -> dict[int, int]:
    """How each input moves the answer alone: +1 (the same way), -1 (the other way), or absent when unknown.

    Found by moving the input alone to one of its nearest candidates (a few, until the chain computes) and
    recomputing the chain.
    """
    out = {}
    for ti in trace.inputs:
        below, above = cands[ti]
        v0 = trace.tokens[ti].value
        for probe in [*above[:3], *below[::-1][:3]]:
            chain = _evaluate(trace, {ti: probe})
            if chain is None or chain[trace.answer_step].value == gold:
                continue
            out[ti] = 1 if (chain[trace.answer_step].value > gold) == (probe > v0) else -1
            break
    return out


def _percents_fit(trace: Trace, changed: Mapping[int, Fraction]) -> bool:
    """Percentages that fit in one whole stay so ("50% of the time ... 40% sightseeing" may not become
    50% and 60%)."""
    pct = [(t.value, changed.get(i, t.value)) for i, t in enumerate(trace.tokens) if t.percent]
    return len(pct) < 2 or sum(a for a, _ in pct) > 100 or sum(b for _, b in pct) <= 100


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


@dataclass(frozen=True)
class Draw:
    """A draw that passed the cheap checks: its changed inputs, recomputed chain and answer."""

    changed: Mapping[int, Fraction]
    chain: list[NewStep]
    answer: Fraction


def preference(trace: Trace, gold: Fraction, d: Draw, size: float) -> tuple[int, int, int, int, int, float]:
    """Lower is better: the answer moves by at most a factor of 2, then keeps its roundness (as many trailing
    zeros, a multiple of 5 or not), then moves by a factor near ``exp(size)`` (in steps of 0.15), then keeps its
    number of digits, then the question keeps the order of its same-sized numbers, then the nearest move. The
    size is drawn alike for both sides, so moves up and down are of one size even where the chain amplifies
    one of them; the factor-2 bound comes first because a round answer that can only stay round by tripling
    (5 -> 15) would otherwise make moves up the larger."""
    round_miss = int(trailing_zeros(d.answer) != trailing_zeros(gold)) + int(roundness(d.answer)[1] != roundness(gold)[1])
    move = abs(math.log(abs(d.answer) / abs(gold))) if d.answer and gold else 0.0
    return (int(move > math.log(2) + 1e-9), round_miss, int(abs(move - size) / MOVE_STEP),
            int(answer_digits(d.answer) != answer_digits(gold)), int(not _keeps_order(trace, d.changed)),
            abs(move - size))


def side_draws(item: Item, trace: Trace, gold: Fraction, rng: random.Random, max_tries: int, coin: Side,
               fails: dict[str, str], order: Order | None = None) -> list[Draw]:
    """Every distinct draw that passes the cheap checks (chain, sign, integrality, percentages, scale and, with
    ``order``, the original's order relations).

    Every other draw is aimed at the coin's side: each input whose effect on the answer is known
    (:func:`_effects`) is drawn on the side that moves the answer there, so a side that few undirected draws
    reach (an answer whose inputs can only grow: 2 never becomes 1) is still found when it exists.
    """
    cands = _sides(trace, item.question)
    sign = 1 if coin == "larger" else -1
    toward = {ti: e * sign for ti, e in _effects(trace, cands, gold).items()}
    out: dict[tuple[tuple[int, Fraction], ...], Draw] = {}

    def on_side(round_too: bool) -> bool:
        return any((d.answer > gold) == (coin == "larger") and (not round_too or keeps_roundness(d.answer, gold))
                   for d in out.values())

    tries: list[dict[int, Fraction]] = [
        _draw(trace, cands, rng, partial=attempt >= max_tries // 2, toward=toward if attempt % 2 else None)
        for attempt in range(max_tries)]
    # A second round of draws aimed at the coin's side, only when the first found none there that keeps the
    # answer's roundness; then every move of one input alone, when still none reached the side (a side only
    # one input can reach, the others held, is found when it exists).
    more = [_draw(trace, cands, rng, partial=bool(attempt % 2), toward=toward) for attempt in range(max_tries)]
    singles = [{ti: v} for ti in trace.inputs for v in (*cands[ti][0], *cands[ti][1])]
    for k, new_values in enumerate([*tries, *more, *singles]):
        if (k == len(tries) and on_side(True)) or (k == len(tries) + len(more) and on_side(False)):
            break
        changed = trace.tied({ti: v for ti, v in new_values.items() if v != trace.tokens[ti].value})
        key = tuple(sorted(changed.items()))
        if not changed or key in out or not _percents_fit(trace, changed):
            continue
        chain = _evaluate(trace, changed)
        if chain is None or chain[trace.answer_step].value == gold:
            continue
        with_bound = _with_bound(trace, item.question, changed, chain)
        if with_bound is None:
            continue
        changed = with_bound  # keyed by the drawn values still: the bound numbers follow from them
        answer = chain[trace.answer_step].value
        if not scale_fits(item.question, [t.value for t in trace.tokens],
                          [changed.get(i, t.value) for i, t in enumerate(trace.tokens)], gold, answer):
            fails.setdefault("scale", "every draw left the 0-100 scale of its scores or moved the answer "
                                      "past a score it was above or below")
            continue
        crossed = order.flip(trace, changed, [s.value for s in chain]) if order is not None else None
        if crossed is not None:
            fails.setdefault("order", f"every draw breaks an order relation of the original, e.g. {crossed}")
            continue
        out[key] = Draw(changed, chain, answer)
    return list(out.values())


def _with_bound(trace: Trace, question: str, changed: dict[int, Fraction], chain: list[NewStep]
                ) -> dict[int, Fraction] | None:
    """``changed`` with each bound question number given its step's new value (``Trace.bound``); None when
    one would read wrong: not positive, a fraction where the question wrote a whole number, or past its unit's
    cap ("8 days a week")."""
    out = dict(changed)
    for ti, j in trace.bound:
        t, v = trace.tokens[ti], chain[j].value
        cap = unit_cap(question[t.end:t.end + 40])
        if v <= 0 or (t.value.denominator == 1 and v.denominator != 1) or (cap is not None and v > cap):
            return None
        if v != t.value:
            out[ti] = v
    return out


def keeps_roundness(answer: Fraction, gold: Fraction) -> bool:
    """Whether ``answer`` ends in as many zeros as ``gold`` and is a multiple of 5 exactly when it is."""
    return trailing_zeros(answer) == trailing_zeros(gold) and roundness(answer)[1] == roundness(gold)[1]
