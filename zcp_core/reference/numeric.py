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
(:mod:`zcp_core.reference.verify`). v4 (issue 23): a seeded coin per item says
whether the twin's answer is larger or smaller; new values are drawn on a log
scale; among the draws on the side, one within a factor 2 is preferred, then
one moving the answer by a seeded size (alike for both sides), then one keeping
its number of digits and the order of same-sized question numbers. v5 (issue
23, second pass): the coin is a hard rule with no fallback, and an item gets a
twin only when *both* sides have a valid twin (``one_side:`` failures
otherwise), so whether an item gets a twin never depends on its coin and the
larger share is the coin's, 1/2 in expectation (v4 flipped to the other side,
which small answers that cannot shrink pushed toward larger); and the twin's
answer keeps the original's trailing zeros and its being a multiple of 5, on
both sides (``roundness:`` failures otherwise): a hard rule, because the
neutral prior of an answer follows its roundness (v4 only preferred it). The
draws are aimed at each side in turn. Every twin records its substitutions,
what was held and why, and the re-execution record, which ``zcp release``
reads before it publishes a twin::

    metadata["verification"] = {"method": "numeric-perturbation-v5", "reexecuted": True, "gold_check": "pass",
                                "recomputed_answer": ..., "question_numbers_checked": ...,
                                "annotations_checked": ..., "retrace": "traced" | "ambiguous" | "no_input",
                                "check": "reexecute-v1"}

Items that cannot be traced safely are never guessed: they go to
``ReferenceSet.failures`` with a reason whose prefix (``untraced:``,
``ambiguous:``, ``bad_annotation:``, ``no_annotations:``, ``answer:``,
``no_valid_draw:``, ``no_input:``, ``reexecution:``, ``one_side:``, ``roundness:``) counts them by kind.
The LLM pipeline (the paper's) lives in :mod:`zcp_core.reference.llm`.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from zcp_core.reference.annotate import annotate_visible
from zcp_core.reference.cues import cued_constants
from zcp_core.reference.draw import answer_digits, log_uniform, pick, roundness, sides, trailing_zeros, unit_cap
from zcp_core.reference.numbers import ExprError, decimals_of, eval_steps, render, render_literal
from zcp_core.reference.rewrite import (
    NewSolution,
    NewStep,
    rewrite_question,
    rewrite_solution,
    value_mapping,
    visible_equations,
)
from zcp_core.reference.stated import scale_fits
from zcp_core.reference.trace import Trace, Untraceable, stated_value, trace_item
from zcp_core.reference.verify import reexecute
from zcp_core.schema import Item

METHOD_NUMERIC = "numeric-perturbation-v5"
MAX_MOVE = math.log(1.5)  # the target move of an answer is drawn uniformly in [0, log 1.5]
MOVE_STEP = 0.15  # moves within this of each other count as one size when ranking draws


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


Side = Literal["larger", "smaller"]


@dataclass(frozen=True)
class _Draw:
    """A draw that passed the cheap checks: its changed inputs, recomputed chain and answer."""

    changed: Mapping[int, Fraction]
    chain: list[NewStep]
    answer: Fraction


def _preference(trace: Trace, gold: Fraction, d: _Draw, size: float) -> tuple[int, int, int, int, int, float]:
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


def _draws(item: Item, trace: Trace, gold: Fraction, rng: random.Random, max_tries: int, coin: Side,
           fails: dict[str, str]) -> list[_Draw]:
    """Every distinct draw that passes the cheap checks (chain, sign, integrality, percentages, scale).

    Every other draw is aimed at the coin's side: each input whose effect on the answer is known
    (:func:`_effects`) is drawn on the side that moves the answer there, so a side that few undirected draws
    reach (an answer whose inputs can only grow: 2 never becomes 1) is still found when it exists.
    """
    cands = _sides(trace, item.question)
    sign = 1 if coin == "larger" else -1
    toward = {ti: e * sign for ti, e in _effects(trace, cands, gold).items()}
    out: dict[tuple[tuple[int, Fraction], ...], _Draw] = {}

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
        changed = {ti: v for ti, v in new_values.items() if v != trace.tokens[ti].value}
        key = tuple(sorted(changed.items()))
        if not changed or key in out or not _percents_fit(trace, changed):
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
        out[key] = _Draw(changed, chain, answer)
    return list(out.values())


def perturb_item(item: Item, seed: int = 0, max_tries: int = 50, twin: int = 1) -> Item:
    """One item's numeric twin; raises ``ValueError`` with the reason when it cannot be built.

    A seeded coin first says whether the twin's answer is larger or smaller than the original's: a hard rule,
    recorded in ``metadata["side"]`` (v5: never a fallback). The item gets a twin only when both sides have a
    valid twin whose answer keeps the original's roundness (as many trailing zeros, a multiple of 5 or not);
    the twin is the one on the coin's side, so whether an item gets a twin does not depend on its coin.
    New input values are drawn on a log scale (:mod:`zcp_core.reference.draw`), in rounds aimed at each side.
    The first half of a round's draws change every input; the second half change a random subset (at least
    one), which rescues items whose every-input draws all break integrality. Among the draws on a side, one
    within a factor 2 is preferred, then one moving by the seeded size, then one keeping the answer's number
    of digits, then one keeping the order of the question's same-sized numbers; the first (in draw order) of
    the best that passes the costly checks (prose equations, re-execution) is the twin.

    Args:
        item: A GSM8K-style item (calculator annotations in its solution).
        seed: The seed; the draw depends on ``(seed, item.id)`` only.
        max_tries: Draws before giving up.
        twin: Its number among an item's twins (``zcp reference build --twins``): id ``<id>-ref`` for 1,
            ``<id>-ref<k>`` for k > 1; recorded in ``metadata["twin"]``.
    """
    item = annotate_visible(item)
    try:
        trace = trace_item(item)
    except Untraceable as e:
        raise ValueError(str(e)) from e
    rng = random.Random(_seed_for(seed, item.id))
    coin: Side = "larger" if rng.random() < 0.5 else "smaller"  # the side this twin's answer must move to
    size = rng.uniform(0.0, MAX_MOVE)  # how far (log scale) the answer should move, whichever the side
    gold = stated_value(item.answer)
    old_eqs = visible_equations(item.solution or "")
    cued = cued_constants(item.question + (item.solution or ""))
    fails: dict[str, str] = {}
    other: Side = "smaller" if coin == "larger" else "larger"
    # Draws aimed at each side in turn, so the side the coin did not draw is searched as hard as the drawn one.
    draws = [*_draws(item, trace, gold, rng, max_tries, coin, fails), *_draws(item, trace, gold, rng, max_tries, other, fails)]
    ctx = _Ctx(seed, twin, old_eqs, cued, max_tries)
    why_not: dict[str, str] = {}
    found = {side: _best_on_side(item, trace, gold, draws, side, size, ctx, fails, why_not, keep=keeps_roundness)
             for side in (coin, other)}
    got = found[coin]
    if got is not None and found[other] is not None:
        made, record = got
        return _with_verification(made, record, {"coin": coin, "side": coin, "target_move": round(size, 4),
                                                 "fallback": False, "fallback_reason": "", "both_sides": True})
    # Why not: a side with no valid twin at all (the side rule), else a side whose valid twins all lose the
    # answer's roundness (the roundness rule); the v4 kinds when no draw on either side survives the checks.
    why_plain: dict[str, str] = {}
    plain = {side: found[side] is not None or _best_on_side(item, trace, gold, draws, side, size, ctx, fails,
                                                            why_plain) is not None for side in (coin, other)}
    if plain[coin] or plain[other]:
        lacking = next(side for side in (coin, other) if not plain[side]) if not all(plain.values()) else None
        if lacking is not None:
            raise ValueError(f"one_side: no valid twin with a {lacking} answer ({why_plain[lacking]}); an item gets a "
                             "twin only when both sides have one, so that whether it gets one never follows its coin")
        lacking = next(side for side in (coin, other) if found[side] is None)
        raise ValueError(f"roundness: every valid twin with a {lacking} answer loses the answer's trailing zeros "
                         "or its being a multiple of 5")
    for kind in ("reexecution", "untraced", "scale"):
        if kind in fails:
            raise ValueError(f"{kind}: {fails[kind]} (every draw of {max_tries})")
    raise ValueError(f"no_valid_draw: {max_tries} draws all broke an integer/sign/decimal constraint "
                     "or left the answer unchanged")


@dataclass(frozen=True)
class _Ctx:
    """What the costly checks of one item need besides the draw."""

    seed: int
    twin: int
    old_eqs: list[bool]
    cued: frozenset[Fraction]
    max_tries: int


def _best_on_side(item: Item, trace: Trace, gold: Fraction, draws: Sequence[_Draw], side: Side, size: float,
                  ctx: _Ctx, fails: dict[str, str], why_not: dict[str, str],
                  keep: Callable[[Fraction, Fraction], bool] | None = None) -> tuple[Item, Mapping[str, Any]] | None:
    """The most preferred draw on ``side`` that passes the costly checks, as a twin and its re-execution record.

    None when there is none; ``why_not[side]`` then says why.
    """
    on_side = sorted((d for d in draws if (d.answer > gold) == (side == "larger")
                      and (keep is None or keep(d.answer, gold))),
                     key=lambda d: _preference(trace, gold, d, size))  # stable: draw order breaks ties
    why_not[side] = (f"no_draw: no draw moved the answer {side}{' keeping its roundness' if keep else ''} and passed "
                     "the cheap checks")
    for d in on_side:
        solution = rewrite_solution(item.solution or "", trace, d.chain, value_mapping(trace, d.changed, d.chain, ctx.cued))
        if visible_equations(solution.text).count(False) > ctx.old_eqs.count(False):
            fails.setdefault("untraced", "a calculation written without <<>> annotations stops adding up")
            why_not[side] = f"untraced: every {side} draw broke a calculation written without annotations"
            continue
        made = _build(item, trace, d.chain, d.changed, solution, ctx.seed, ctx.twin)
        verdict = reexecute(made, trace, d.changed)
        if not verdict.ok:
            fails.setdefault("reexecution", verdict.reason)
            why_not[side] = f"reexecution: every {side} draw failed re-execution ({verdict.reason})"
            continue
        return made, verdict.record
    return None


def keeps_roundness(answer: Fraction, gold: Fraction) -> bool:
    """Whether ``answer`` ends in as many zeros as ``gold`` and is a multiple of 5 exactly when it is."""
    return trailing_zeros(answer) == trailing_zeros(gold) and roundness(answer)[1] == roundness(gold)[1]


def _build(item: Item, trace: Trace, chain: list[NewStep], changed: Mapping[int, Fraction],
           new: NewSolution, seed: int, twin: int = 1) -> Item:
    new_answer = render(chain[trace.answer_step].value)
    solution = new.text + f" {new_answer}" if new.text.endswith("####") else new.text.rstrip()
    meta = {
        "substitutions": {render(trace.tokens[ti].value): render(v) for ti, v in changed.items()},
        "inputs_changed": [len(changed), len(trace.inputs)],
        "held": [list(h) for h in trace.held],
        "annotated_in_prose": int(item.metadata.get("annotated_in_prose", 0)),
        "prose_lines_replaced": new.lines_replaced,
        "seed": seed,
        "twin": twin,
        "method": METHOD_NUMERIC,
        "calculations": [{"expr": s.expr, "result": render(s.value)} for s in chain],
        "original_answer": item.answer,
    }
    return Item(id=twin_id(item.id, twin), question=rewrite_question(item.question, trace, changed), answer=new_answer,
                solution=solution, source=f"{item.source}-numeric-ref", original_id=item.id, metadata=meta)


def twin_id(original_id: str, twin: int = 1) -> str:
    """The id of an item's twin number ``twin``: ``<id>-ref``, then ``<id>-ref2``, ``<id>-ref3``..."""
    return f"{original_id}-ref" if twin == 1 else f"{original_id}-ref{twin}"


def _with_verification(twin: Item, record: Mapping[str, Any], side: Mapping[str, Any]) -> Item:
    meta = dict(twin.metadata)
    meta["side"] = dict(side)
    meta["verification"] = {"method": METHOD_NUMERIC, **record}
    return Item(id=twin.id, question=twin.question, answer=twin.answer, solution=twin.solution, source=twin.source,
                original_id=twin.original_id, metadata=meta)


def perturb_gsm8k(items: Sequence[Item], seed: int = 0, max_tries: int = 50, twin: int = 1) -> ReferenceSet:
    """Numeric reference twins of GSM8K items (deterministic per ``(seed, item id)``).

    Args:
        items: GSM8K items with ``metadata["calculations"]`` and a solution.
        seed: Global seed; each item's draws are seeded by a hash of (seed, id),
            so a twin does not depend on which other items are in the batch.
        max_tries: Draws per item before it is reported as a failure.
        twin: The twins' number (:func:`perturb_item`).

    Returns:
        A :class:`ReferenceSet`; untraceable items are in ``failures`` with a reason.
    """
    twins, failures = [], []
    for it in items:
        try:
            twins.append(perturb_item(it, seed=seed, max_tries=max_tries, twin=twin))
        except ValueError as e:
            failures.append(ReferenceFailure(it.id, str(e)))
    return ReferenceSet(tuple(twins), tuple(failures), METHOD_NUMERIC)


def failure_kind(reason: str) -> str:
    """The category prefix of a failure reason (``untraced``, ``ambiguous``...)."""
    return reason.split(":", 1)[0] if ":" in reason else "other"
