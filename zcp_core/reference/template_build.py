"""Check templates against their originals, and draw twins from the ones that pass.

The checks (method ``template-v1``):

1. ``render_exact``: the template written with the original's values is the original question, byte for byte.
2. ``program_matches_gold``: the program on the original's values gives the original answer (math-verify), and
   the answer form writes it as the dataset does (whitespace aside), so both arms' golds share one format.
3. ``nontrivial``: some slot changes the answer; the program holds no literal equal to the gold; and at least
   :data:`MIN_CHANGE_SHARE` of :data:`CHECK_DRAWS` draws change both the question and the answer.
4. Every twin satisfies the constraints and its answer is the program's (by construction; recorded).
5. ``solver_agreed``: the template's first twin was solved from its question alone by an independent solver
   (``<templates>.solved.jsonl`` beside the templates, keyed by the twin question's sha256); None when unsolved.

A template failing 1-3 is refused with the reason. Every twin writes its answer in the original's form
(:func:`answer_shape`: a whole number stays whole, a fraction a fraction). Twins of a numeric answer follow the
numeric generator's balance rules: a seeded coin says whether the twin's answer is larger or smaller, an item gets
a twin only when both sides have a valid draw that keeps the answer's sign, form and roundness, and the twin is the
coin side's draw with as many digits per number as the original whose log ratio is nearest a seeded target move
(at a digit boundary such as 9 or 10, where only one side keeps the digits, that side, recorded as a fallback). Every twin, numeric
or not, writes each number of its answer with as many digits as the original's (:func:`digit_lengths`), so its
answer is a priori about as likely as the original's.

An item's K twins never repeat (:mod:`zcp_core.reference.distinct`): twin 1 is drawn as before; twin k > 1 leaves
out every draw whose question or substitution an earlier twin has (on the coin's side: the other side's valid draw,
which only says that both sides have one, may be an earlier twin), then tries fresh seeds; an item stops at the
first twin it cannot make (failure kind ``distinct``). A template may also name ``keep_order`` expressions
(:mod:`zcp_core.reference.template`): a draw where two of them compare otherwise than on the original's values is
left out, as the numeric generator's order rule does.
"""

from __future__ import annotations

import ast
import hashlib
import json
import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from zcp_core.reference.distinct import Avoid, next_distinct
from zcp_core.reference.numeric import MAX_MOVE, ReferenceFailure, ReferenceSet
from zcp_core.reference.numeric_pick import twin_id
from zcp_core.reference.runner import Outcome, Runner
from zcp_core.reference.search import keeps_roundness
from zcp_core.reference.template import Template
from zcp_core.schema import Item

METHOD_TEMPLATE = "template-v1"
CHECK_DRAWS = 50
MIN_CHANGE_SHARE = 0.9
POOL = 64  # valid draws a twin is chosen from
TRIES_PER_DRAW = 40  # raw draws per wanted valid draw before a template counts as too tight
MAX_RUNAWAYS = 3  # draws past the runner's limits before a template is refused as too slow


@dataclass(frozen=True)
class TemplateCheck:
    """Checks 1-3 of one template.

    Attributes:
        source_id: The item.
        passed: All of 1-3 hold.
        reason: ``kind: explanation`` when refused (kinds ``render``, ``program``, ``answer_form``,
            ``trivial``, ``constraints``, ``slow``: draws ran past the runner's limits), else empty.
        render_exact: Check 1.
        program_matches_gold: Check 2.
        nontrivial: Check 3.
        change_share: Share of the check's draws that changed both question and answer.
        changing_slots: Drawn variables that change the answer alone.
    """

    source_id: str
    passed: bool
    reason: str = ""
    render_exact: bool = False
    program_matches_gold: bool = False
    nontrivial: bool = False
    change_share: float = 0.0
    changing_slots: tuple[str, ...] = ()


def _seed(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "big")


def _first_difference(a: str, b: str) -> str:
    i = next((k for k, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    return f"at character {i}: template gives {a[i:i + 30]!r}, the question has {b[i:i + 30]!r}"


def _literals(program: str) -> list[Fraction]:
    return [Fraction(repr(n.value)) for n in ast.walk(ast.parse(program))
            if isinstance(n, ast.Constant) and isinstance(n.value, int | float) and not isinstance(n.value, bool)]


def _draws(t: Template, runner: Runner, rng: random.Random, want: int,
           only: str | None = None) -> list[tuple[dict[str, Fraction], Outcome]]:
    """Up to ``want`` draws that satisfy the constraints and can be written (only ``only`` moved, when given), in
    draw order."""
    base = t.original()
    out: list[tuple[dict[str, Fraction], Outcome]] = []
    runaway = 0
    for _ in range(TRIES_PER_DRAW):
        envs = [{v.name: (v.draw(rng) if only in (None, v.name) else base[v.name]) for v in t.drawn}
                for _ in range(want)]
        outcomes = runner.run([t.task(e) for e in envs])
        runaway += sum(_ran_away(o) for o in outcomes)
        if runaway >= MAX_RUNAWAYS:  # each costs seconds of CPU: a template this slow is refused, not waited on
            raise ValueError(f"slow: {runaway} draws ran past the runner's limits (CPU time, steps or memory)")
        # a draw its styles cannot write (a derived int that is not whole) is discarded like a broken constraint
        out += [(e, o) for e, o in zip(envs, outcomes, strict=True) if o.ok and _question(t, e, o) is not None]
        if len(out) >= want:
            return out[:want]
    return out


def answer_shape(answer: str) -> str:
    """An answer as written with every run of digits replaced by ``#`` (whitespace dropped): its form."""
    return re.sub(r"\d+", "#", "".join(answer.split()))


def digit_lengths(answer: str) -> tuple[int, ...]:
    """The lengths of the runs of digits in a written answer (``\\frac{14}{3}``: (2, 1))."""
    return tuple(len(m) for m in re.findall(r"\d+", answer))


def _ran_away(o: Outcome) -> bool:
    return o.failed == "killed" or any(w in o.detail for w in ("TimeoutError", "step budget", "MemoryError"))


def _question(t: Template, env: Mapping[str, Fraction], outcome: Outcome) -> str | None:
    try:
        return t.render({**env, **outcome.derived})
    except (ValueError, KeyError):
        return None  # a value its style cannot write (a word past twenty): not a usable draw


def check_template(t: Template, item: Item, runner: Runner, seed: int = 0) -> TemplateCheck:
    """Checks 1-3 of ``t`` against its original ``item`` (see the module docstring)."""
    from zcp_core.answers import grade

    orig = runner.run([t.task(t.original())])[0]
    if not orig.ok:
        kind = "constraints" if orig.failed == "constraint" else "program"
        return TemplateCheck(t.source_id, False, f"{kind}: on the original's values: {orig.failed} ({orig.detail})")
    question = _question(t, t.original(), orig)
    if question != item.question:
        return TemplateCheck(t.source_id, False, "render: " + _first_difference(question or "", item.question))
    same = "".join(orig.answer.split()) == "".join(item.answer.split())
    if not same and not grade(orig.answer, item.answer).correct:  # written alike is equal (math-verify misreads "9 i")
        return TemplateCheck(t.source_id, False, f"program: gives {orig.answer} on the original, the gold is "
                                                 f"{item.answer}", render_exact=True)
    if not same:
        return TemplateCheck(t.source_id, False, f"answer_form: writes {orig.answer!r}, the dataset has "
                                                 f"{item.answer!r}", render_exact=True)
    if orig.number is not None and orig.number in _literals(t.program):
        return TemplateCheck(t.source_id, False, f"trivial: the program holds the gold {orig.answer} as a literal",
                             render_exact=True, program_matches_gold=True)
    rng = random.Random(_seed("check", seed, t.source_id))
    try:
        moving = tuple(v.name for v in t.drawn
                       if any(o.answer != orig.answer for _, o in _draws(t, runner, rng, 8, only=v.name)))
        draws = _draws(t, runner, rng, CHECK_DRAWS) if moving else []
    except ValueError as e:
        return TemplateCheck(t.source_id, False, str(e), render_exact=True, program_matches_gold=True)
    if not moving:
        return TemplateCheck(t.source_id, False, "trivial: no slot changes the answer",
                             render_exact=True, program_matches_gold=True)
    if len(draws) < CHECK_DRAWS:
        return TemplateCheck(t.source_id, False, f"constraints: only {len(draws)} of {CHECK_DRAWS * TRIES_PER_DRAW} "
                             f"draws satisfy them", render_exact=True, program_matches_gold=True,
                             changing_slots=moving)
    changed = sum(o.answer != orig.answer and _question(t, e, o) not in (None, item.question) for e, o in draws)
    share = changed / len(draws)
    if share < MIN_CHANGE_SHARE:
        return TemplateCheck(t.source_id, False, f"trivial: {changed} of {len(draws)} draws change both the "
                             f"question and the answer (at least {MIN_CHANGE_SHARE:.0%} needed)", render_exact=True,
                             program_matches_gold=True, change_share=share, changing_slots=moving)
    return TemplateCheck(t.source_id, True, "", True, True, True, share, moving)


def solver_records(path: Path) -> dict[str, Mapping[str, Any]]:
    """The independent solver's records beside a templates file (``X.solved.jsonl``), by question sha256."""
    side = path.with_name(path.name.removesuffix(".jsonl") + ".solved.jsonl")
    if not side.exists():
        return {}
    recs = [json.loads(x) for x in side.read_text(encoding="utf-8").splitlines() if x.strip()]
    return {str(r["question_sha256"]): r for r in recs}


def question_sha(question: str) -> str:
    """The key of a twin question in the solver's records."""
    return hashlib.sha256(question.encode()).hexdigest()


@dataclass(frozen=True)
class _Pick:
    env: dict[str, Fraction]
    outcome: Outcome
    question: str
    side: Mapping[str, Any] | None


def _substitutions(t: Template, values: Mapping[str, Fraction]) -> dict[str, list[str]]:
    """``metadata["substitutions"]`` of a twin: each variable's original and new value."""
    return {v.name: [str(v.value), str(values[v.name])] for v in t.variables}


def _pick(t: Template, item: Item, orig: Outcome, runner: Runner, seed: int, twin: int,
          avoid: Avoid | None = None, redraw: int = 0) -> _Pick:
    """The twin's draw under the balance rules, none of whose question or substitution ``avoid`` holds (redraw r
    > 0: from a fresh seed); ``ValueError`` with the failure reason when there is none."""
    rng = random.Random(_seed(seed, twin, t.source_id) if not redraw else _seed(seed, twin, t.source_id, redraw))
    coin = "larger" if rng.random() < 0.5 else "smaller"
    size = rng.uniform(0.0, MAX_MOVE)
    pool = [_Pick(e, o, q, None) for e, o in _draws(t, runner, rng, POOL)
            if o.answer != orig.answer and (q := _question(t, e, o)) not in (None, item.question)]
    if not pool:
        raise ValueError("no_valid_draw: no draw satisfies the constraints and changes the question and answer")
    if t.keep_order:
        pool = [p for p in pool if _same_order(orig.order, p.outcome.order)]
        if not pool:
            raise ValueError("order: every valid draw compares two of the template's keep_order expressions "
                             "otherwise than the original")
    # the twin's answer is written in the original's form: a whole number stays whole, \frac{a}{b} stays a
    # fraction, a surd a surd. Otherwise twins are a priori less likely than their originals (MATH-500, before
    # this rule: +1.55 nats of neutral prior, most of it from whole answers turned into fractions)
    pool = [p for p in pool if answer_shape(p.outcome.answer) == answer_shape(orig.answer)]
    if not pool:
        raise ValueError("shape: no valid draw writes its answer in the original's form (a whole number stays "
                         "whole, a fraction a fraction)")
    def fresh(picks: list[_Pick], what: str) -> list[_Pick]:
        """The picks no earlier twin took; only the twin must be new (the other side may be an earlier twin)."""
        out = [p for p in picks if avoid is None or not avoid.taken(p.question, _substitutions(
            t, {**p.env, **p.outcome.derived}))]
        if not out:
            raise ValueError(f"repeat: every valid draw{what} is an earlier twin of the item")
        return out

    # a twin's answer has as many digits in each of its numbers as the original's: a priori a 3-digit answer is
    # less likely than a 2-digit one, so a twin that gains or loses a digit moves the neutral prior by itself
    digits = digit_lengths(orig.answer)
    gold = orig.number
    if gold is None or gold == 0:  # not a single rational answer: no side to balance
        kept_digits = [p for p in pool if digit_lengths(p.outcome.answer) == digits]
        if not kept_digits:
            raise ValueError("digits: no valid draw writes its answer with as many digits per number as the "
                             "original")
        return fresh(kept_digits, "")[0]
    sides: dict[str, list[_Pick]] = {"larger": [], "smaller": []}
    for p in pool:
        n = p.outcome.number
        if n is not None and n != 0 and (n > 0) == (gold > 0):
            sides["larger" if abs(n) > abs(gold) else "smaller"].append(p)
    other = "smaller" if coin == "larger" else "larger"
    for s in (coin, other):
        if not sides[s]:
            raise ValueError(f"one_side: no valid draw with a {s} answer; an item gets a twin only when both "
                             "sides have one")
    kept = {s: [p for p in sides[s] if p.outcome.number is not None and keeps_roundness(p.outcome.number, gold)]
            for s in sides}
    if not kept[coin] or not kept[other]:
        lacking = coin if not kept[coin] else other
        raise ValueError(f"roundness: every valid draw with a {lacking} answer loses the answer's trailing zeros "
                         "or its being a multiple of 5")
    same = {s: [p for p in kept[s] if digit_lengths(p.outcome.answer) == digits] for s in kept}
    # the coin decides the side where both sides keep the digits; at a digit boundary (9, 10, 99) only one side
    # can, and the twin takes it (recorded as a fallback) rather than the item losing its twins
    side = coin if same[coin] else other
    if not same[side]:
        raise ValueError("digits: no valid draw on either side writes its answer with as many digits per number "
                         "as the original")

    def preference(p: _Pick) -> float:
        """The move nearest the target."""
        assert p.outcome.number is not None
        return abs(abs(math.log(abs(p.outcome.number) / abs(gold))) - size)

    best = min(fresh(same[side], f" with a {side} answer"), key=preference)  # stable: draw order breaks ties
    fell = side != coin
    return _Pick(best.env, best.outcome, best.question, {
        "coin": coin, "side": side, "target_move": round(size, 4), "fallback": fell,
        "fallback_reason": f"digits: no {coin} answer keeps the original's digits" if fell else "",
        "both_sides": True})


def _same_order(orig: Sequence[Fraction | None], new: Sequence[Fraction | None]) -> bool:
    """Whether every two ``keep_order`` values compare alike (<, = or >) in ``new`` and ``orig``; a value that is
    not a rational number compares with nothing."""
    def sign(a: Fraction | None, b: Fraction | None) -> int | None:
        return None if a is None or b is None else (a > b) - (a < b)

    return all(sign(orig[i], orig[j]) == sign(new[i], new[j])
               for i in range(len(orig)) for j in range(i + 1, len(orig)))


def template_twins(items: Sequence[Item], templates: Mapping[str, Template], seed: int = 0, twins: int = 1,
                   solved: Mapping[str, Mapping[str, Any]] | None = None) -> list[ReferenceSet]:
    """K sets of template twins (twin k drawn with ``seed + k - 1``), one :class:`ReferenceSet` per k.

    An item's twins are distinct (:func:`~zcp_core.reference.distinct.next_distinct`) and numbered 1..n; set k
    records why an item has fewer than k (kind ``distinct``). Items with no template fail ``no_template``;
    templates failing checks 1-3 fail with their reason.
    """
    solved = solved or {}
    sets: list[tuple[list[Item], list[ReferenceFailure]]] = [([], []) for _ in range(max(twins, 1))]
    with Runner() as runner:
        for it in items:
            t = templates.get(it.id)
            if t is None:
                for _, fails in sets:
                    fails.append(ReferenceFailure(it.id, "no_template: no template for this item"))
                continue
            check = check_template(t, it, runner)  # a property of the template: the same at every build seed
            if not check.passed:
                for _, fails in sets:
                    fails.append(ReferenceFailure(it.id, check.reason))
                continue
            orig = runner.run([t.task(t.original())])[0]
            got, why = _series(it, t, check, orig, runner, seed, len(sets), solved)
            for k, (made, fails) in enumerate(sets, 1):
                if k <= len(got):
                    made.append(got[k - 1])
                else:  # this twin and every later one: an item's twins are numbered without gaps
                    fails.append(ReferenceFailure(it.id, why))
    return [ReferenceSet(tuple(m), tuple(f), METHOD_TEMPLATE) for m, f in sets]


def _series(item: Item, t: Template, check: TemplateCheck, orig: Outcome, runner: Runner, seed: int, twins: int,
            solved: Mapping[str, Mapping[str, Any]]) -> tuple[list[Item], str]:
    """An item's distinct twins 1..n (n <= ``twins``; twin k with ``seed + k - 1``) and why not more (empty when
    it has them all)."""
    got: list[Item] = []
    for k in range(1, twins + 1):
        def make(avoid: Avoid, redraw: int, k: int = k) -> Item:
            pick = _pick(t, item, orig, runner, seed + k - 1, k, avoid if k > 1 else None, redraw)
            return _twin(item, t, check, pick, seed + k - 1, k, solved, redraw)

        try:
            got.append(next_distinct(make, got, k))
        except ValueError as e:
            return got, str(e)
    return got, ""


def _twin(item: Item, t: Template, check: TemplateCheck, pick: _Pick, seed: int, k: int,
          solved: Mapping[str, Mapping[str, Any]], redraw: int = 0) -> Item:
    rec = solved.get(question_sha(pick.question))
    values = {**pick.env, **pick.outcome.derived}
    meta: dict[str, Any] = {
        "method": METHOD_TEMPLATE, "twin": k, "seed": seed, "template_line": t.line,
        "substitutions": _substitutions(t, values),
        "original_answer": item.answer,
        "verification": {"method": METHOD_TEMPLATE, "check": METHOD_TEMPLATE, "render_exact": check.render_exact,
                         "program_matches_gold": check.program_matches_gold, "nontrivial": check.nontrivial,
                         "change_share": round(check.change_share, 4), "constraints_hold": True,
                         "answer_from_program": True,
                         "solver_agreed": None if rec is None else bool(rec.get("agreed")),
                         "solver": None if rec is None else rec.get("solver")},
    }
    if pick.side is not None:
        meta["side"] = dict(pick.side)
    if redraw:  # a later twin whose own seed's draws were all taken by earlier twins
        meta["redraw"] = redraw
    for key in ("subject", "level"):
        if key in item.metadata:
            meta[key] = item.metadata[key]
    return Item(id=twin_id(item.id, k), question=pick.question, answer=pick.outcome.answer,
                solution=None, source=f"{item.source}-template-ref", original_id=item.id, metadata=meta)
