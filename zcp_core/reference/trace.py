"""Tracing GSM8K calculator annotations back to the question's numbers.

Each literal of each ``<<expr=result>>`` annotation gets the set of things it
could stand for:

* an earlier step's result;
* one *occurrence* of a number in the question (digits, number word or money;
  a percent p also matches p/100, 1 + p/100, 1 - p/100 and 100 - p);
* a constant: a part of a fraction the question writes ("1/6"; when the
  literal pair ``1/6`` itself is written, that is the whole answer), or a unit
  constant the wording implies (:mod:`zcp_core.reference.cues`);
* a value made from question numbers that no step writes: 100/p for a percent
  p ("25% off" divides by 4), a number times a cued unit ("two weeks" is 14),
  and, for a literal nothing else explains, a sum, difference or product of two;
* an unwritten number, when a question number matches by value only: added to
  or taken from a time constant ("7-2" open days of a week), a literal is in
  that constant's inner unit, so the question's "in 2 weeks" is not it.

One candidate gives the literal its role. Several (the value 3 is written
twice, or the medicine's $100 equals an earlier step's 25*4) can not be told
apart, so nothing is guessed. Under ``ambiguity="tie"`` (v6, v7) two such cases are
settled so that every reading stays true: numbers written alike that the chain
reads as often as they are written move together (a *tie*), and a question
number equal to an earlier step's result, read by no step up to it, follows
that step (a *bind*). v7 also knows counts the story's things have unwritten
(the 4 legs of a cow the question names, :func:`~zcp_core.reference.cues.world_constants`):
a literal of that value may be the constant, so written numbers equal to it are
held, never tied or moved ("4 cows and 4 chickens" with ``4*4 + 4*2``: the
cows' legs are not written), and so is a tie group whose value the chain uses
as a constant anywhere. Otherwise (and always under ``"hold"``, v5) the literal is *held*, and so is every quantity
it could stand for (the question numbers are not rewritten, and the steps it
could be are made to keep their value by holding their inputs). The twin is
then right whichever reading is meant. Relations the question states without a
step are held the same way: a number the chain never reads but derives, one
that is the sum of its neighbours ("7 fish: 3 orange and 4 white") or of a pair
making a cued whole ("5 days and two other days" of a week), an unread number
made of two others ("for 6 hours" after two and four hours), a small count
of a set the story has ("the three months"), and a whole whose parts the words
name ("3 groups such that 2 of them ... the last one";
:mod:`zcp_core.reference.stated`). A bare annotation (``<<15=15>>``)
may only be an earlier step. When holding leaves no question number to change,
the item is refused as ``ambiguous``; every hold is recorded with its reason.

Anything that cannot be assigned raises :class:`Untraceable` with a reason
whose prefix names its kind.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from zcp_core.reference.chain import Role, Step, Trace, Untraceable, close_enough, stated_value
from zcp_core.reference.cues import INNER_UNIT, UNIT_CONSTANTS, cued_constants, foreign_unit, world_constants
from zcp_core.reference.numbers import ExprError, Literal_, NumberToken, expr_literals, find_numbers, render, safe_eval
from zcp_core.reference.stated import count_holds, ordinal_holds, part_holds, range_holds, sum_holds, unread_holds
from zcp_core.schema import Item

CALC = re.compile(r"<<([^<>=]*)=([^<>]*)>>")
Ambiguity = Literal["tie", "hold"]
"""How a literal that could stand for several things is settled. ``tie`` (generator v7, v6 before it): when
those are question numbers of one value and form, they are tied and move together (``Trace.ties``); when they
are an earlier step's result and one question number no step up to it reads, the number follows the step
(``Trace.bound``); anything else is held (v7: a number equal to a count the story's things have unwritten is
held too). ``hold`` (v5): every such literal is held."""


def fraction_parts(tok: NumberToken) -> tuple[Fraction, Fraction]:
    """Numerator and denominator as written ("2/4" gives 2 and 4, "two-thirds" 2 and 3)."""
    if "/" in tok.text:
        a, b = tok.text.lower().rstrip("abcdefghijklmnopqrstuvwxyz").split("/")  # "2/3rd" is 2 and 3
        return Fraction(int(a)), Fraction(int(b))
    return Fraction(tok.value.numerator), Fraction(tok.value.denominator)


def input_forms(tokens: Sequence[NumberToken]) -> dict[Fraction, list[tuple[int, Fraction, Fraction]]]:
    """Literal value -> every (question token index, scale, offset) it may stand for."""
    forms: dict[Fraction, list[tuple[int, Fraction, Fraction]]] = {}
    for i, t in enumerate(tokens):
        if t.kind == "fraction" or t.value in (0, 1):
            continue  # written fractions and 0/1 keep their meaning; never perturbed
        forms.setdefault(t.value, []).append((i, Fraction(1), Fraction(0)))
        if t.percent:
            p = t.value
            for lit, scale, off in ((p / 100, Fraction(1, 100), 0), (1 + p / 100, Fraction(1, 100), 1),
                                    (1 - p / 100, Fraction(-1, 100), 1), (100 - p, Fraction(-1), 100),
                                    (100 + p, Fraction(1), 100)):
                forms.setdefault(lit, []).append((i, scale, Fraction(off)))
    return forms


@dataclass(frozen=True)
class _Cand:
    kind: Literal["derived", "input", "const", "hidden", "unwritten"]
    ref: Fraction | int
    scale: Fraction = Fraction(1)
    offset: Fraction = Fraction(0)
    note: str = ""  # for ``unwritten``: what the literal may count instead


def _additive_pair(expr: str, a: Literal_, b: Literal_) -> bool:
    """Whether the neighbouring literals ``a`` and ``b`` are added or subtracted as bare terms ("7-2", not
    "3*7-2" or "7-2*4", where a product is the term)."""
    before, after = expr[:a.start].rstrip(), expr[b.end:].lstrip()
    return (expr[a.end:b.start].strip() in ("+", "-") and not before.endswith(("*", "/"))
            and not after.startswith(("*", "/")))


class _Tracer:
    """Assigns candidates to literals and holds what cannot be told apart (one item)."""

    def __init__(self, item: Item, ambiguity: Ambiguity = "tie") -> None:
        self.ambiguity = ambiguity
        self.q = item.question
        self.cued = cued_constants(item.question)
        # v7: counts the story's things have unwritten (the legs of its cows); v5 does not know them
        self.world = world_constants(item.question) if ambiguity == "tie" else frozenset()
        self.tokens = tuple(find_numbers(item.question))
        self.forms = input_forms(self.tokens)
        fracs = [t for t in self.tokens if t.kind == "fraction"]
        self.frac_pairs = {fraction_parts(t) for t in fracs}
        self.frac_consts = {t.value for t in fracs} | {v for t in fracs for v in fraction_parts(t)}
        self.steps: list[Step] = []
        self.held_tokens: dict[int, str] = {}  # question token index -> why it is held
        self.fixed_steps: dict[int, str] = {}  # step index -> why it must keep its value
        self.ties: dict[int, tuple[int, ...]] = {}  # first token of a group -> the group (see ``Trace.ties``)
        self.tie_reads: dict[tuple[int, ...], int] = {}  # a group -> how many literals read it
        self.bound: dict[int, int] = {}  # question token -> the step whose new value it takes (``Trace.bound``)

    def _structural(self, expr: str, lits: list[Literal_]) -> set[int]:
        """Starts of literals written as a fraction of the question ("24*1/6" with "1/6 of the 24 liters")."""
        out = set()
        for a, b in zip(lits, lits[1:], strict=False):
            if expr[a.end:b.start].strip() == "/" and (a.value, b.value) in self.frac_pairs:
                before = expr[:a.start].rstrip()
                if not before.endswith("/"):  # "x/2/5" is not the fraction 2/5
                    out |= {a.start, b.start}
        return out

    def _candidates(self, v: Fraction) -> list[_Cand]:
        cands: list[_Cand] = []
        for j, s in enumerate(self.steps):
            if s.result == v or stated_value(s.result_text) == v:
                cands.append(_Cand("derived", j))
        for ti, scale, off in self.forms.get(v, ()):
            cands.append(_Cand("input", ti, scale, off))
        if v in self.frac_consts or v in self.cued or v in self.world:
            cands.append(_Cand("const", v))
        if not any(c.kind == "derived" for c in cands):
            cands += [_Cand("hidden", ti) for ti in self._hidden(v, pairs=not cands)]
        return cands

    def _hidden(self, v: Fraction, pairs: bool) -> set[int]:
        """Question numbers that make ``v`` without any step writing it: 100/p for a percent p ("25% off" is
        "/4"), n + 1 for "n times as much" (x + 4x = 5x) or "another n", one of them times a unit constant
        ("two weeks" is 14 days), and with ``pairs`` (for a literal
        nothing else explains) a sum, difference or product of two of them ("2 hours and 1 hour" is "/3").
        Pairs coincide too often to be weighed against a question number: measured on GSM8K test, they
        would hold 90 more items whole, and a sample of 20 such coincidences held no real relation."""
        out: set[int] = set()
        paired: set[int] = set()
        toks = [(i, t.value) for i, t in enumerate(self.tokens) if t.kind != "fraction" and t.value > 0]
        for i, a in toks:
            t = self.tokens[i]
            if t.percent and 100 / a == v:
                out.add(i)
            # "4 times as much": a whole of 5 parts (x + 4x), or 3 more; "joined by another 2": groups of 3
            times = re.match(r"\s*-?\s*times\s+(?:as|more|less|the|that|what|his|her|their|its)\b",
                             self.q[t.end:t.end + 24], re.IGNORECASE)
            another = re.search(r"\banother\s+$", self.q[max(0, t.start - 10):t.start], re.IGNORECASE)
            if (times and v in (a + 1, a - 1)) or (another and v == a + 1):
                out.add(i)
            if any(a * c == v for c in UNIT_CONSTANTS if c in self.cued):
                out.add(i)
            for j, b in toks:
                if pairs and i < j and (a + b == v or a * b == v or abs(a - b) == v) and v not in (a, b):
                    paired |= {i, j}
        if paired and not self._from_steps(v, [a for _, a in toks]):
            out |= paired  # (when an earlier result could make it too, it is a computation the prose hides)
        return out

    def _from_steps(self, v: Fraction, values: list[Fraction]) -> bool:
        """Whether ``v`` is an earlier step's result plus, minus or times a question number or another result."""
        results = [s.result for s in self.steps]
        for r in results:
            for b in values + results:
                if v in (r + b, r - b, b - r, r * b) or (b and v == r / b):
                    return True
        return False

    def add_step(self, i: int, expr: str, res_text: str) -> None:
        try:
            lits = expr_literals(expr)
            value = safe_eval(expr)
        except ExprError as e:
            raise Untraceable(f"bad_annotation: step {i + 1}: {e}") from e
        if not close_enough(value, stated_value(res_text)):
            raise Untraceable(f"bad_annotation: step {i + 1} {expr}={res_text} evaluates to {render(value)}")
        structural = self._structural(expr, lits)
        bare = len(lits) == 1 and expr.strip().lstrip("(").rstrip(")").strip() == expr[lits[0].start:lits[0].end]
        every = [[_Cand("const", lit.value)] if lit.start in structural else self._candidates(lit.value)
                 for lit in lits]
        roles = []
        for k, lit in enumerate(lits):
            v = lit.value
            cands = every[k] + self._unwritten(expr, lits, every, k)
            if bare:  # "<<15=15>>" states a number computed elsewhere: only an earlier step may be it
                cands = [c for c in cands if c.kind == "derived"]
            if not cands:
                raise Untraceable(f"untraced: {render(v)} in step {i + 1} ({expr}) is neither in the question, "
                                  "nor an earlier result, nor a constant its wording implies")
            if self._tie(cands) or self._bind(cands):
                cands = cands[:1]
            if len(cands) == 1 and cands[0].kind != "hidden":
                c = cands[0]
                kind: Literal["derived", "input", "const"] = (
                    "derived" if c.kind == "derived" else "input" if c.kind == "input" else "const")
                roles.append((lit.start, lit.end, Role(kind, c.ref, c.scale, c.offset)))
                continue
            why = f"{render(v)} in step {i + 1} could be " + ", ".join(self._describe(c) for c in cands)
            for c in cands:
                if c.kind in ("input", "hidden"):
                    self.held_tokens.setdefault(int(c.ref), why)
                elif c.kind == "derived":
                    self.fixed_steps.setdefault(int(c.ref), why)
            roles.append((lit.start, lit.end, Role("const", v)))
        self.steps.append(Step(expr, value, res_text, tuple(roles)))

    def _tie(self, cands: list[_Cand]) -> bool:
        """Whether ``cands`` are only question numbers written alike in value, form and kind (two "3"s, not a
        "40%" and a "40"): a literal that could be any of them is tied to all, which then move together."""
        if self.ambiguity == "hold" or len(cands) < 2 or any(c.kind != "input" for c in cands):
            return False
        if len({(c.scale, c.offset) for c in cands}) > 1:
            return False
        toks = [self.tokens[int(c.ref)] for c in cands]
        if len({(t.value, t.kind, t.percent) for t in toks}) > 1:
            return False
        group = tuple(sorted(int(c.ref) for c in cands))
        if any(set(g) & set(group) and g != group for g in self.ties.values()):
            return False  # overlapping groups would tie different sets: leave it to the holds
        self.ties[group[0]] = group
        self.tie_reads[group] = self.tie_reads.get(group, 0) + 1
        cands.sort(key=lambda c: int(c.ref))
        return True

    def _bind(self, cands: list[_Cand]) -> bool:
        """Whether ``cands`` are one earlier step's result and one plain question number that no step up to it
        reads: the number is then bound to the step (``Trace.bound``) and the literal reads the step."""
        if self.ambiguity == "hold" or len(cands) != 2 or sorted(c.kind for c in cands) != ["derived", "input"]:
            return False
        step, inp = sorted(cands, key=lambda c: c.kind)
        ti, j = int(inp.ref), int(step.ref)
        t = self.tokens[ti]
        if (inp.scale, inp.offset) != (1, 0) or t.percent or ti in self.held_tokens or self.bound.get(ti, j) != j:
            return False
        if any(ti in g for g in self.ties.values()) or any(t.value == u.value for k, u in enumerate(self.tokens)
                                                            if k != ti):
            return False  # a value written twice is the ties' (or the holds') to settle
        if any(r.kind == "input" and int(r.ref) == ti for s in self.steps[:j + 1] for _, _, r in s.roles):
            return False  # the step (or one before it) reads the number: it can not follow the step
        self.bound[ti] = j
        cands.sort(key=lambda c: c.kind)  # "derived" first: the literal reads the step
        return True

    def _unwritten(self, expr: str, lits: list[Literal_], every: list[list[_Cand]], k: int) -> list[_Cand]:
        """An unwritten count the literal ``k`` may be instead of the question number it equals: added to or
        taken from a time constant ("7-2" open days of a week), it is in that constant's inner unit, so a
        question number written in another time unit ("in 2 weeks") is a match by value only. The literal is
        then held (the question's "2 weeks" with it), never tied to the wrong quantity."""
        pairs = [(lits[k - 1], lits[k], k - 1)] if k > 0 else []
        pairs += [(lits[k], lits[k + 1], k + 1)] if k + 1 < len(lits) else []
        for a, b, other in pairs:
            c = lits[other].value
            if not _additive_pair(expr, a, b) or c not in self.cued or every[other] != [_Cand("const", c)]:
                continue
            for cand in every[k]:
                if cand.kind != "input" or cand.scale != 1:
                    continue
                t = self.tokens[int(cand.ref)]
                unit = foreign_unit(c, self.q[t.end:t.end + 24])
                if unit is not None:
                    inner = " or ".join(f"{u}s" for u in sorted(INNER_UNIT[c]))
                    return [_Cand("unwritten", lits[k].value, note=(
                        f"a number of {inner} the question does not write ({expr[a.start:b.end]} works in the "
                        f"{inner} of {render(c)}; the question's {t.text!r} counts {unit}s)"))]
        return []

    def _describe(self, c: _Cand) -> str:
        if c.kind == "unwritten":
            return c.note
        if c.kind == "derived":
            return f"step {int(c.ref) + 1}'s result"
        if c.kind == "input":
            return f"the question's {self.tokens[int(c.ref)].text!r}"
        if c.kind == "hidden":
            return f"made from the question's {self.tokens[int(c.ref)].text!r}"
        return "a constant"

    def finish(self, gold: Fraction) -> Trace:
        used = [int(r.ref) for s in self.steps for _, _, r in s.roles if r.kind == "input"]
        used += [ti for u in list(used) for ti in self.ties.get(u, ())[1:]]  # a tied number is read with its group
        for ti, j in list(self.bound.items()):
            # a bound number that another step also computes could be stated for that step: hold it (v5's rule)
            v = self.tokens[ti].value
            if any(k != j and v in (s.result, stated_value(s.result_text)) for k, s in enumerate(self.steps)):
                del self.bound[ti]
                why = f"the question's {self.tokens[ti].text!r} equals more than one step's result"
                self.held_tokens.setdefault(ti, why)
                self.fixed_steps.setdefault(j, why)
        read = set(used) | set(self.bound)  # a bound number is read through its step
        results = {x: j for j, s in enumerate(self.steps) for x in (s.result, stated_value(s.result_text))}
        for ti, t in enumerate(self.tokens):
            # A number the chain never reads but derives is stated by the question: it must stay true.
            # (One the chain reads is an input; if a step also derives it and a later literal uses it,
            # that literal has two candidates and is held, or under tie bound, above.)
            if t.kind != "fraction" and ti not in read and t.value in results and t.value not in (0, 1):
                j = results[t.value]  # keep the written number and the step that computes it equal
                why = f"the question's {t.text!r} equals step {j + 1}'s result"
                self.held_tokens.setdefault(ti, why)
                self.fixed_steps.setdefault(j, why)
        for ti, why in (sum_holds(self.tokens, self.cued) + unread_holds(self.tokens, read)
                        + count_holds(self.q, self.tokens) + part_holds(self.q, self.tokens)
                        + range_holds(self.q, self.tokens) + ordinal_holds(self.q, self.tokens)):
            self.held_tokens.setdefault(ti, why)
        for group, reads in self.tie_reads.items():
            # "2 cases ... 2 bottles for each guest" with one literal 2 and "70+70": a number written more often
            # than the chain reads it may be used unwritten, so the group is held rather than moved
            if reads < len(group):
                why = (f"{self.tokens[group[0]].text} is written {len(group)} times but read {reads} times: "
                       "the chain may use the others unwritten")
                for ti in group:
                    self.held_tokens.setdefault(ti, why)
        consts = {Fraction(r.ref) for s in self.steps for _, _, r in s.roles if r.kind == "const"} | self.world
        for group in self.ties.values():
            # v7: "4 cows and 4 chickens" with "4*4 + 4*2" reads the cows' 4 legs unwritten; a group whose value
            # the chain also uses as a constant may stand for it, so it is held rather than moved
            if self.tokens[group[0]].value in consts:
                why = (f"{self.tokens[group[0]].text} equals a constant the chain uses unwritten: a literal of "
                       "that value may be the constant rather than a written number")
                for ti in group:
                    self.held_tokens.setdefault(ti, why)
        for ti, j in self.bound.items():  # a held bound number keeps its step's value too
            if ti in self.held_tokens:
                self.fixed_steps.setdefault(j, self.held_tokens[ti])
        self._close()
        hits = [j for j, s in enumerate(self.steps) if close_enough(s.result, gold) or stated_value(s.result_text) == gold]
        if not hits:
            raise Untraceable(f"answer: the gold answer {render(gold)} is not the result of any annotation")
        ties = tuple(g for g in self.ties.values() if not any(ti in self.held_tokens for ti in g))
        members = {ti for g in ties for ti in g[1:]}
        inputs = list(dict.fromkeys(ti for ti in used if ti not in self.held_tokens and ti not in members))
        held = tuple((self.tokens[ti].text, why) for ti, why in sorted(self.held_tokens.items()))
        if not inputs:
            if held:
                raise Untraceable("ambiguous: every question number the chain uses is held fixed; "
                                  + "; ".join(list(dict.fromkeys(w for _, w in held))[:3]))
            raise Untraceable("no_input: no question number feeds the annotations, so there is nothing to perturb")
        bound = tuple((ti, j) for ti, j in sorted(self.bound.items())
                      if ti not in self.held_tokens and j not in self.fixed_steps)
        return Trace(tuple(self.steps), self.tokens, tuple(inputs), held, hits[-1], ties, bound)

    def _close(self) -> None:
        """Hold every input of every step that must keep its value, through earlier steps."""
        todo = list(self.fixed_steps)
        while todo:
            j = todo.pop()
            for _, _, r in self.steps[j].roles:
                if r.kind == "input" and int(r.ref) not in self.held_tokens:
                    self.held_tokens[int(r.ref)] = self.fixed_steps[j]
                elif r.kind == "derived" and int(r.ref) not in self.fixed_steps:
                    self.fixed_steps[int(r.ref)] = self.fixed_steps[j]
                    todo.append(int(r.ref))
        # a value written twice is held as a whole: the occurrence that feeds the chain is unknown
        for ti in list(self.held_tokens):
            for tj, t in enumerate(self.tokens):
                if t.value == self.tokens[ti].value and tj not in self.held_tokens:
                    self.held_tokens[tj] = self.held_tokens[ti]


def trace_item(item: Item, ambiguity: Ambiguity = "tie") -> Trace:
    """Assign a role to every annotation literal; raises ``Untraceable`` with a reason.

    ``ambiguity`` says how a literal with several readings is settled (:data:`Ambiguity`).
    """
    calcs = list(item.metadata.get("calculations") or [])
    if not calcs:
        raise Untraceable("no_annotations: the solution has no <<expr=result>> calculator annotations")
    tr = _Tracer(item, ambiguity)
    for i, c in enumerate(calcs):
        tr.add_step(i, str(c["expr"]).strip(), str(c["result"]).strip())
    return tr.finish(stated_value(item.answer))
