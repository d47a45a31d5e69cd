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
draws are aimed at each side in turn. v6 (issue 23, third pass): where v5 held
every literal with several readings, question numbers written alike (and read
as often as written) are tied and move together, and a question number that a
literal could read as well as an earlier step's equal result follows that step
(``metadata["tied"]``, ``metadata["bound"]``); ``ambiguity="hold"`` is v5. v7 fixes two errors of v6.
A solution that chooses by a comparison ("since $125 > $96 ... a profit of $<<125=125>>125") records only the
choice in its chain, so a draw that made the other number larger kept the old choice and a wrong gold while its
text read "$105 > $136": v7 maps every explicit comparison of the solution (``>``, ``<``, ``>=``, ``<=`` and
"is more/less/cheaper... than"; :mod:`zcp_core.reference.compare`) between numbers the chain reads or computes
to the draw's values and refuses a draw that makes one false (``comparison:`` failures when every draw does;
``metadata["comparisons"]`` counts those a twin keeps true), and re-execution checks every inequality the
twin's solution writes (``inequalities_checked``). And a written number equal to a count the story's things have
unwritten (the 4 legs of the cows in "4 cows and 4 chickens" with ``4*4 + 4*2``) is held, never tied or moved
(:mod:`zcp_core.reference.trace`). Every twin records its substitutions, what was held and why, and the
re-execution record, which ``zcp release`` reads before it publishes a twin::

    metadata["verification"] = {"method": "numeric-perturbation-v7", "reexecuted": True, "gold_check": "pass",
                                "recomputed_answer": ..., "question_numbers_checked": ...,
                                "annotations_checked": ..., "retrace": "traced" | "ambiguous" | "no_input",
                                "check": "reexecute-v1", "inequalities_checked": ...}  # the last from v7

Items that cannot be traced safely are never guessed: they go to
``ReferenceSet.failures`` with a reason whose prefix (``untraced:``,
``ambiguous:``, ``bad_annotation:``, ``no_annotations:``, ``answer:``,
``no_valid_draw:``, ``no_input:``, ``reexecution:``, ``one_side:``, ``roundness:``, ``comparison:``) counts them
by kind.
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
from zcp_core.reference.compare import flipped
from zcp_core.reference.cues import cued_constants, world_constants
from zcp_core.reference.numbers import render
from zcp_core.reference.rewrite import (
    NewSolution,
    NewStep,
    rewrite_question,
    rewrite_solution,
    value_mapping,
    visible_equations,
)
from zcp_core.reference.search import Draw, Side, keeps_roundness, preference, side_draws
from zcp_core.reference.trace import Ambiguity, Trace, Untraceable, stated_value, trace_item
from zcp_core.reference.verify import reexecute
from zcp_core.schema import Item

METHOD_NUMERIC = "numeric-perturbation-v7"
METHODS = {"tie": METHOD_NUMERIC, "hold": "numeric-perturbation-v5"}  # generator version by ambiguity rule
RoundRule = Literal["required", "preferred"]
"""``required`` (the default): an item gets a twin only when both sides have one that keeps the answer's
roundness. ``preferred``: such a twin is chosen when the coin's side has one, else the best other valid twin
(coverage bought with roundness balance, ``benchmarks/results/twin_card_round_preferred.md``)."""


def method_for(round_rule: RoundRule = "required", ambiguity: Ambiguity = "tie") -> str:
    """The method string (twin metadata, ``ReferenceSet.method``) of the generator under ``round_rule`` and
    ``ambiguity`` (:data:`~zcp_core.reference.trace.Ambiguity`: ``tie`` is v7, ``hold`` v5)."""
    if round_rule not in ("required", "preferred"):
        raise ValueError(f"unknown round_rule {round_rule!r}; expected 'required' or 'preferred'")
    if ambiguity not in METHODS:
        raise ValueError(f"unknown ambiguity {ambiguity!r}; expected 'tie' or 'hold'")
    return METHODS[ambiguity] if round_rule == "required" else f"{METHODS[ambiguity]}+round-preferred"
MAX_MOVE = math.log(1.5)  # the target move of an answer is drawn uniformly in [0, log 1.5]


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


def _seed_for(seed: int, item_id: str) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{item_id}".encode()).digest()[:8], "big")


def perturb_item(item: Item, seed: int = 0, max_tries: int = 50, twin: int = 1,
                 round_rule: RoundRule = "required", ambiguity: Ambiguity = "tie") -> Item:
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
        round_rule: ``required`` (the above) or ``preferred``: keeping roundness is only preferred, so an item
            whose both sides have a valid twin always gets one (:data:`RoundRule`); method ``...+round-preferred``.
        ambiguity: How a literal with several readings is settled (:data:`~zcp_core.reference.trace.Ambiguity`):
            ``tie`` (v7, the default) or ``hold`` (v5, which the lab's builds were made with).
    """
    item = annotate_visible(item)
    try:
        trace = trace_item(item, ambiguity)
    except Untraceable as e:
        raise ValueError(str(e)) from e
    rng = random.Random(_seed_for(seed, item.id))
    coin: Side = "larger" if rng.random() < 0.5 else "smaller"  # the side this twin's answer must move to
    size = rng.uniform(0.0, MAX_MOVE)  # how far (log scale) the answer should move, whichever the side
    gold = stated_value(item.answer)
    old_eqs = visible_equations(item.solution or "")
    cued = cued_constants(item.question + (item.solution or ""))
    if ambiguity == "tie":  # v7: "4 legs" of the cows the question names stays 4 in the solution's prose too
        cued |= world_constants(item.question)
    fails: dict[str, str] = {}
    other: Side = "smaller" if coin == "larger" else "larger"
    # Draws aimed at each side in turn, so the side the coin did not draw is searched as hard as the drawn one.
    draws = [*side_draws(item, trace, gold, rng, max_tries, coin, fails), *side_draws(item, trace, gold, rng, max_tries, other, fails)]
    ctx = _Ctx(seed, twin, old_eqs, cued, max_tries, method_for(round_rule, ambiguity), ambiguity)
    why_not: dict[str, str] = {}
    found = {side: _best_on_side(item, trace, gold, draws, side, size, ctx, fails, why_not, keep=keeps_roundness)
             for side in (coin, other)}
    got = found[coin]
    if got is not None and found[other] is not None:
        made, record = got
        return _with_verification(made, record, _side_record(coin, size, True if round_rule == "preferred" else None), ctx.method)
    # Why not: a side with no valid twin at all (the side rule), else a side whose valid twins all lose the
    # answer's roundness (the roundness rule); the v4 kinds when no draw on either side survives the checks.
    why_plain: dict[str, str] = {}
    plain = {side: found[side] or _best_on_side(item, trace, gold, draws, side, size, ctx, fails, why_plain)
             for side in (coin, other)}
    best = plain[coin]
    if round_rule == "preferred" and best is not None and plain[other] is not None:
        return _with_verification(best[0], best[1], _side_record(coin, size, found[coin] is not None), ctx.method)
    if plain[coin] or plain[other]:
        lacking = next((side for side in (coin, other) if plain[side] is None), None)
        if lacking is not None:
            raise ValueError(f"one_side: no valid twin with a {lacking} answer ({why_plain[lacking]}); an item gets a "
                             "twin only when both sides have one, so that whether it gets one never follows its coin")
        lacking = next(side for side in (coin, other) if found[side] is None)
        raise ValueError(f"roundness: every valid twin with a {lacking} answer loses the answer's trailing zeros "
                         "or its being a multiple of 5")
    for kind in ("comparison", "reexecution", "untraced", "scale"):
        if kind in fails:
            raise ValueError(f"{kind}: {fails[kind]} (every draw of {max_tries})")
    raise ValueError(f"no_valid_draw: {max_tries} draws all broke an integer/sign/decimal constraint "
                     "or left the answer unchanged")


def _side_record(coin: Side, size: float, round_kept: bool | None = None) -> dict[str, Any]:
    """``metadata["side"]`` of a twin: its coin (the side it moved to), its target move and, under ``preferred``
    only (``required`` always keeps it, and its twins stay byte-identical), whether it kept the roundness."""
    rec: dict[str, Any] = {"coin": coin, "side": coin, "target_move": round(size, 4), "fallback": False,
                           "fallback_reason": "", "both_sides": True}
    return rec if round_kept is None else {**rec, "roundness_kept": round_kept}


@dataclass(frozen=True)
class _Ctx:
    """What the costly checks of one item need besides the draw."""

    seed: int
    twin: int
    old_eqs: list[bool]
    cued: frozenset[Fraction]
    max_tries: int
    method: str
    ambiguity: Ambiguity


def _best_on_side(item: Item, trace: Trace, gold: Fraction, draws: Sequence[Draw], side: Side, size: float,
                  ctx: _Ctx, fails: dict[str, str], why_not: dict[str, str],
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
           new: NewSolution, ctx: _Ctx, comparisons: int = 0) -> Item:
    new_answer = render(chain[trace.answer_step].value)
    solution = new.text + f" {new_answer}" if new.text.endswith("####") else new.text.rstrip()
    meta = {
        "substitutions": {render(trace.tokens[ti].value): render(v) for ti, v in changed.items()},
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
    return Item(id=twin_id(item.id, ctx.twin), question=rewrite_question(item.question, trace, changed), answer=new_answer,
                solution=solution, source=f"{item.source}-numeric-ref", original_id=item.id, metadata=meta)


def twin_id(original_id: str, twin: int = 1) -> str:
    """The id of an item's twin number ``twin``: ``<id>-ref``, then ``<id>-ref2``, ``<id>-ref3``..."""
    return f"{original_id}-ref" if twin == 1 else f"{original_id}-ref{twin}"


def _with_verification(twin: Item, record: Mapping[str, Any], side: Mapping[str, Any], method: str) -> Item:
    meta = dict(twin.metadata)
    meta["side"] = dict(side)
    meta["verification"] = {"method": method, **record}
    return Item(id=twin.id, question=twin.question, answer=twin.answer, solution=twin.solution, source=twin.source,
                original_id=twin.original_id, metadata=meta)


def perturb_gsm8k(items: Sequence[Item], seed: int = 0, max_tries: int = 50, twin: int = 1,
                  round_rule: RoundRule = "required", ambiguity: Ambiguity = "tie") -> ReferenceSet:
    """Numeric reference twins of GSM8K items (deterministic per ``(seed, item id)``).

    Args:
        items: GSM8K items with ``metadata["calculations"]`` and a solution.
        seed: Global seed; each item's draws are seeded by a hash of (seed, id),
            so a twin does not depend on which other items are in the batch.
        max_tries: Draws per item before it is reported as a failure.
        twin: The twins' number (:func:`perturb_item`).
        round_rule: See :func:`perturb_item`.
        ambiguity: See :func:`perturb_item`.

    Returns:
        A :class:`ReferenceSet`; untraceable items are in ``failures`` with a reason.
    """
    method = method_for(round_rule, ambiguity)  # an unknown rule fails here, not once per item as a failure
    twins, failures = [], []
    for it in items:
        try:
            twins.append(perturb_item(it, seed=seed, max_tries=max_tries, twin=twin, round_rule=round_rule,
                                       ambiguity=ambiguity))
        except ValueError as e:
            failures.append(ReferenceFailure(it.id, str(e)))
    return ReferenceSet(tuple(twins), tuple(failures), method)


def failure_kind(reason: str) -> str:
    """The category prefix of a failure reason (``untraced``, ``ambiguous``...)."""
    return reason.split(":", 1)[0] if ":" in reason else "other"
