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

    metadata["verification"] = {"method": "numeric-perturbation-v8", "reexecuted": True, "gold_check": "pass",
                                "recomputed_answer": ..., "question_numbers_checked": ...,
                                "annotations_checked": ..., "retrace": "traced" | "ambiguous" | "no_input",
                                "check": "reexecute-v1", "inequalities_checked": ...}  # the last from v7

v8 keeps the original's order relations (:mod:`zcp_core.reference.order`): a draw where a step result crosses the
product or the sum of two question numbers no step writes ("31 of 4 * 8 = 32 slices" eaten become 71) is refused
(``order:`` failures when every draw is); ``order=None`` is v7. And an item's K twins never repeat
(:mod:`zcp_core.reference.distinct`): twin k > 1 avoids twins 1..k-1 (``distinct:`` failures say how many an
item got), while twin 1 is drawn exactly as before.

Items that cannot be traced safely are never guessed: they go to
``ReferenceSet.failures`` with a reason whose prefix (``untraced:``,
``ambiguous:``, ``bad_annotation:``, ``no_annotations:``, ``answer:``,
``no_valid_draw:``, ``no_input:``, ``reexecution:``, ``one_side:``, ``roundness:``, ``comparison:``, ``order:``,
``distinct:``) counts them by kind.
The LLM pipeline (the paper's) lives in :mod:`zcp_core.reference.llm`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from zcp_core.reference.annotate import annotate_visible
from zcp_core.reference.cues import cued_constants, world_constants
from zcp_core.reference.distinct import Avoid, next_distinct
from zcp_core.reference.numeric_pick import Ctx, best_on_side, side_record, with_verification
from zcp_core.reference.order import ORDER, OrderRule, order_of
from zcp_core.reference.rewrite import visible_equations
from zcp_core.reference.search import Side, keeps_roundness, side_draws
from zcp_core.reference.trace import Ambiguity, Untraceable, stated_value, trace_item
from zcp_core.schema import Item

METHOD_NUMERIC = "numeric-perturbation-v8"
METHOD_V7 = "numeric-perturbation-v7"  # v8 without the order rule (``order=None``)
METHODS = {"tie": METHOD_NUMERIC, "hold": "numeric-perturbation-v5"}  # generator version by ambiguity rule
RoundRule = Literal["required", "preferred"]
"""``required`` (the default): an item gets a twin only when both sides have one that keeps the answer's
roundness. ``preferred``: such a twin is chosen when the coin's side has one, else the best other valid twin
(coverage bought with roundness balance, ``benchmarks/results/twin_card_round_preferred.md``)."""


def method_for(round_rule: RoundRule = "required", ambiguity: Ambiguity = "tie",
               order: OrderRule | None = ORDER) -> str:
    """The method string (twin metadata, ``ReferenceSet.method``) of the generator under ``round_rule``,
    ``ambiguity`` (:data:`~zcp_core.reference.trace.Ambiguity`: ``tie`` is v8, ``hold`` v5) and ``order`` (v8's
    rule; None is v7; another rule is named after v8; ``hold`` never applies one, so v5 stays as it was)."""
    if round_rule not in ("required", "preferred"):
        raise ValueError(f"unknown round_rule {round_rule!r}; expected 'required' or 'preferred'")
    if ambiguity not in METHODS:
        raise ValueError(f"unknown ambiguity {ambiguity!r}; expected 'tie' or 'hold'")
    base = METHODS[ambiguity]
    if ambiguity == "tie" and order != ORDER:
        base = METHOD_V7 if order is None else f"{METHOD_NUMERIC}+{order.name}"
    return base if round_rule == "required" else f"{base}+round-preferred"
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


def _seed_for(seed: int, item_id: str, twin: int = 1, redraw: int = 0) -> int:
    key = f"{seed}:{item_id}" if not redraw else f"{seed}:{item_id}:twin{twin}:redraw{redraw}"
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")


def perturb_item(item: Item, seed: int = 0, max_tries: int = 50, twin: int = 1,
                 round_rule: RoundRule = "required", ambiguity: Ambiguity = "tie",
                 order: OrderRule | None = ORDER, avoid: Avoid | None = None, redraw: int = 0) -> Item:
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
            ``tie`` (v8, the default) or ``hold`` (v5, which the lab's builds were made with).
        order: The order relations a draw keeps (:mod:`zcp_core.reference.order`; under ``tie`` only); None: v7.
        avoid: Earlier twins of the item, whose questions and substitutions this one may not repeat.
        redraw: 0 for the twin's own seed; r > 0 draws anew from a seed of (seed, item, twin, r), recorded in
            ``metadata["redraw"]`` (:func:`~zcp_core.reference.distinct.next_distinct`).
    """
    item = annotate_visible(item)
    try:
        trace = trace_item(item, ambiguity)
    except Untraceable as e:
        raise ValueError(str(e)) from e
    rng = random.Random(_seed_for(seed, item.id, twin, redraw))
    rule = order if ambiguity == "tie" else None  # v5 stays as it was
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
    relations = order_of(trace, rule) if rule is not None else None
    draws = [*side_draws(item, trace, gold, rng, max_tries, coin, fails, relations),
             *side_draws(item, trace, gold, rng, max_tries, other, fails, relations)]
    ctx = Ctx(seed, twin, old_eqs, cued, max_tries, method_for(round_rule, ambiguity, order), ambiguity,
               avoid or Avoid(), redraw)
    why_not: dict[str, str] = {}
    # Only the twin itself (the coin's side) must be new: the other side's valid twin, which only says that both
    # sides have one, may be an earlier twin (measured: the coin side new, 716 GSM8K items with 2 or more distinct
    # twins at K = 4, larger share of twins 2-4 0.54; both sides new, 654 and 0.51; twin 1's is 0.535)
    ctxs = {coin: ctx, other: dataclasses.replace(ctx, avoid=Avoid())}
    found = {side: best_on_side(item, trace, gold, draws, side, size, ctxs[side], fails, why_not,
                                 keep=keeps_roundness) for side in (coin, other)}
    got = found[coin]
    if got is not None and found[other] is not None:
        made, record = got
        return with_verification(made, record, side_record(coin, size, True if round_rule == "preferred" else None), ctx.method)
    # Why not: a side with no valid twin at all (the side rule), else a side whose valid twins all lose the
    # answer's roundness (the roundness rule); the v4 kinds when no draw on either side survives the checks.
    why_plain: dict[str, str] = {}
    plain = {side: found[side] or best_on_side(item, trace, gold, draws, side, size, ctxs[side], fails, why_plain)
             for side in (coin, other)}
    best = plain[coin]
    if round_rule == "preferred" and best is not None and plain[other] is not None:
        return with_verification(best[0], best[1], side_record(coin, size, found[coin] is not None), ctx.method)
    if found[other] is not None and why_not[coin].startswith("repeat"):
        raise ValueError(f"repeat: every valid twin with a {coin} answer is an earlier twin of the item")
    if plain[coin] or plain[other]:
        lacking = next((side for side in (coin, other) if plain[side] is None), None)
        if lacking is not None:
            raise ValueError(f"one_side: no valid twin with a {lacking} answer ({why_plain[lacking]}); an item gets a "
                             "twin only when both sides have one, so that whether it gets one never follows its coin")
        lacking = next(side for side in (coin, other) if found[side] is None)
        raise ValueError(f"roundness: every valid twin with a {lacking} answer loses the answer's trailing zeros "
                         "or its being a multiple of 5")
    for kind in ("repeat", "order", "comparison", "reexecution", "untraced", "scale"):
        if kind in fails:
            raise ValueError(f"{kind}: {fails[kind]} (every draw of {max_tries})")
    raise ValueError(f"no_valid_draw: {max_tries} draws all broke an integer/sign/decimal constraint "
                     "or left the answer unchanged")


def perturb_gsm8k(items: Sequence[Item], seed: int = 0, max_tries: int = 50, twin: int = 1,
                  round_rule: RoundRule = "required", ambiguity: Ambiguity = "tie",
                  order: OrderRule | None = ORDER) -> ReferenceSet:
    """Numeric reference twins of GSM8K items: each item's twin number ``twin``, new against its earlier ones.

    Twin k of an item is drawn with ``seed`` and avoids twins 1..k-1, drawn with ``seed - k + 1 .. seed - 1``
    (the convention of ``--twins K``: twin k uses base seed + k - 1), so calling this for k = 1..K gives an
    item's K distinct twins (:mod:`zcp_core.reference.distinct`); the earlier twins are cached, so the loop
    costs K builds, not K(K+1)/2.

    Args:
        items: GSM8K items with ``metadata["calculations"]`` and a solution.
        seed: Global seed; each item's draws are seeded by a hash of (seed, id),
            so a twin does not depend on which other items are in the batch.
        max_tries: Draws per item before it is reported as a failure.
        twin: The twins' number (:func:`perturb_item`).
        round_rule: See :func:`perturb_item`.
        ambiguity: See :func:`perturb_item`.
        order: See :func:`perturb_item`.

    Returns:
        A :class:`ReferenceSet`; untraceable items, and items with fewer than ``twin`` distinct twins
        (``distinct:``), are in ``failures`` with a reason.
    """
    method = method_for(round_rule, ambiguity, order)  # an unknown rule fails here, not once per item
    twins, failures = [], []
    for it in items:
        blob = json.dumps(it.to_dict(), sort_keys=True, default=str)
        made, why = _series(blob, seed, twin, max_tries, round_rule, ambiguity, order)
        if len(made) >= twin:
            twins.append(made[twin - 1])
        else:
            failures.append(ReferenceFailure(it.id, why))
    return ReferenceSet(tuple(twins), tuple(failures), method)


@functools.lru_cache(maxsize=8192)  # a K = 4 build of GSM8K test holds 5,276
def _series(blob: str, seed: int, twin: int, max_tries: int, round_rule: RoundRule, ambiguity: Ambiguity,
            order: OrderRule | None) -> tuple[tuple[Item, ...], str]:
    """Twins 1..``twin`` of the item ``blob`` (its JSON), twin k with ``seed - twin + k``: as many as it has
    (they stop at the first it cannot make), and why not more (empty when it has them all)."""
    earlier, why = ((), "") if twin == 1 else _series(blob, seed - 1, twin - 1, max_tries, round_rule, ambiguity,
                                                      order)
    if why:
        return earlier, why
    item = Item(**json.loads(blob))

    def make(avoid: Avoid, redraw: int) -> Item:
        return perturb_item(item, seed=seed, max_tries=max_tries, twin=twin, round_rule=round_rule,
                            ambiguity=ambiguity, order=order, avoid=avoid, redraw=redraw)

    try:
        return (*earlier, next_distinct(make, earlier, twin)), ""
    except ValueError as e:
        return earlier, str(e)


def failure_kind(reason: str) -> str:
    """The category prefix of a failure reason (``untraced``, ``ambiguous``...)."""
    return reason.split(":", 1)[0] if ":" in reason else "other"
