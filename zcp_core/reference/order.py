"""Order relations a numeric twin keeps: what is less than, equal to or more than what in the original.

"Becky, Jake, and Silvia shared 4 pizzas. Each pizza had 8 slices ... If Becky ate 10 slices, how many total
slices did they eat?" eats 10 + 7 + 14 = 31 of 4 * 8 = 32 slices; a twin with Becky at 20 eats 71, which the
story cannot hold, although every step computes. The chain's own checks (signs, integrality, comparisons the
solution writes) never see it: 32 is a product the solution never forms. So a twin keeps the original's order
(``<`` stays ``<``, ``=`` stays ``=``) between the *terms* its :class:`OrderRule` pairs:

* given: the question's numbers (written fractions, percentages, 0 and 1 aside: a rate or a unit, "1 Mb has
  1000 kb", is no amount to compare with);
* derived: every step's result (the annotations' intermediate values);
* combos: the product and the sum of every two question numbers (4 * 8 = 32 slices in all).

A rule names its *anchors* (``all`` terms, every ``derived`` step result, or the ``answer`` step's only) and
their *partners*: ``any`` term; the ``fixed`` ones (question numbers no draw moves, their products and sums); or
the ``unread`` ones, numbers no step writes (the pizza's 4 and 8) and their products and sums. Every anchor keeps
its order against every partner. The generator's rule, :data:`ORDER`, is the narrow one: every step result keeps
its side of the products and sums of two unread numbers, the totals the story states beside the chain, which a
twin never rewrites. The wide rules refuse far more twins, mostly for relations between quantities of unrelated
units ("4 pizzas" against Jake's 7 slices, "5 CDs" against a $6 discount); their cost on GSM8K test is in
``benchmarks/results/twin_coverage_distinct.md``.
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from zcp_core.reference.chain import Trace
from zcp_core.reference.numbers import render

Anchors = Literal["all", "derived", "answer"]
Partners = Literal["any", "fixed", "unread"]


@dataclass(frozen=True)
class OrderRule:
    """Which terms a twin keeps in the original's order (see the module doc).

    Attributes:
        anchors: ``all`` terms, every ``derived`` step result, or the ``answer`` step's result.
        partners: ``any`` term, the ``fixed`` ones (no draw moves them) or the ``unread`` ones (no step writes
            them: what the story states beside the chain), products and sums of two such numbers included.
        combos: Which combinations of every two question numbers are terms: ``*`` (products), ``+`` (sums).
        singles: Whether the question's numbers themselves are terms (beside their combinations).
        equal: Keep equalities too (``a = b`` stays ``a = b``), not only strict order.
        name: How method strings name the rule.
    """

    anchors: Anchors = "derived"
    partners: Partners = "unread"
    combos: tuple[str, ...] = ("*", "+")
    singles: bool = False
    equal: bool = True
    name: str = "order"


#: The generator's rule (v8): every step result keeps its order against the product and the sum of every two
#: question numbers no step writes (the pizza's 4 * 8 slices); equalities too. A single such number is no partner:
#: on GSM8K test every twin that rule alone refuses compares counts of unrelated units ("2 songs" against 3
#: minutes, "5 CDs" against a $6 discount).
ORDER = OrderRule()
#: The widest reading: every two terms, given numbers among themselves included.
ORDER_ALL = OrderRule(anchors="all", partners="any", singles=True, name="order-all")


@dataclass(frozen=True)
class Term:
    """One compared quantity: how reasons name it, what makes it, and its part in the rule."""

    label: str
    kind: Literal["given", "derived", "combo"]
    old: Fraction
    tokens: tuple[int, ...] = ()  # question tokens it is made of (given: one; combo: two)
    op: str = ""  # "*" or "+" for a combo
    step: int = -1  # the step, for a derived term
    anchor: bool = False
    partner: bool = False
    moves: bool = True  # False: no draw changes it (a held or unread number, and combos of two)

    def value(self, trace: Trace, changed: Mapping[int, Fraction], chain: Sequence[Fraction]) -> Fraction:
        """Its value in a draw (``changed``: token index -> new value; ``chain``: step results)."""
        if self.kind == "derived":
            return chain[self.step]
        if not self.moves:
            return self.old
        a, *b = (changed.get(ti, trace.tokens[ti].value) for ti in self.tokens)
        return a if not b else a * b[0] if self.op == "*" else a + b[0]


@dataclass(frozen=True)
class Order:
    """An item's anchors and partners, sorted by original value, ready to check draws against.

    Attributes:
        terms: Every anchor and partner, ascending by original value.
        equal: Whether equalities are kept.
    """

    terms: tuple[Term, ...]
    equal: bool = True

    def flip(self, trace: Trace, changed: Mapping[int, Fraction], chain: Sequence[Fraction]) -> str | None:
        """The first relation the draw breaks, as ``"a < b (now 71 > 32)"``; None when it keeps them all."""
        partners = [t for t in self.terms if t.partner]
        if all(not t.moves for t in partners):  # the narrow rules: one search per anchor
            return self._against_fixed(partners, trace, changed, chain)
        return self._against_moving(trace, changed, chain)

    def _against_fixed(self, partners: list[Term], trace: Trace, changed: Mapping[int, Fraction],
                       chain: Sequence[Fraction]) -> str | None:
        """An anchor keeps its order against partners no draw moves exactly when its new value falls in the same
        gap between their values as the old one (or, with ``equal``, on the same value)."""
        olds = [t.old for t in partners]
        for t in self.terms:
            if not t.anchor:
                continue
            new = t.value(trace, changed, chain)
            lo, hi = bisect.bisect_left(olds, t.old), bisect.bisect_right(olds, t.old)
            if lo and not olds[lo - 1] < new:
                return _broken(partners[lo - 1], t, partners[lo - 1].old, new)
            if hi < len(olds) and not new < olds[hi]:
                return _broken(t, partners[hi], new, partners[hi].old)
            if self.equal and lo < hi and new != t.old:
                return f"{t.label} = {partners[lo].label} (now {render(new)} and {render(partners[lo].old)})"
        return None

    def _against_moving(self, trace: Trace, changed: Mapping[int, Fraction], chain: Sequence[Fraction]
                        ) -> str | None:
        """One pass over the sorted terms: an anchor keeps its order against every partner exactly when its new
        value is above the largest new value of the partners originally below it and under the smallest of
        those originally above it (and, with ``equal``, equal to the partners originally equal to it)."""
        terms = self.terms
        new = [t.value(trace, changed, chain) for t in terms]
        below, above = self._extremes(new, ascending=True), self._extremes(new, ascending=False)
        for k, t in enumerate(terms):
            if not t.anchor:
                continue
            for lo, hi in ((below[k], k), (k, above[k])):
                if lo is not None and hi is not None and not new[lo] < new[hi]:
                    return _broken(terms[lo], terms[hi], new[lo], new[hi])
            if self.equal:
                for m in itertools.chain(range(k + 1, len(terms)), range(k - 1, -1, -1)):
                    if m != k and terms[m].old == t.old and terms[m].partner and new[m] != new[k]:
                        return f"{t.label} = {terms[m].label} (now {render(new[k])} and {render(new[m])})"
        return None

    def _extremes(self, new: Sequence[Fraction], ascending: bool) -> list[int | None]:
        """For each term, the partner with the largest new value among those of smaller old value (ascending),
        or the smallest among those of larger old value (descending); None when there is none."""
        terms, n = self.terms, len(self.terms)
        out: list[int | None] = [None] * n
        order = list(range(n)) if ascending else list(range(n - 1, -1, -1))
        best: int | None = None
        i = 0
        while i < n:  # groups of equal old value
            j = i
            while j < n and terms[order[j]].old == terms[order[i]].old:
                j += 1
            group = order[i:j]
            for k in group:
                out[k] = best
            for k in group:
                if terms[k].partner and (best is None or (new[k] > new[best] if ascending else new[k] < new[best])):
                    best = k
            i = j
        return out


def _broken(lo: Term, hi: Term, new_lo: Fraction, new_hi: Fraction) -> str:
    """A broken ``lo < hi``, with the new values."""
    return f"{lo.label} < {hi.label} (now {render(new_lo)} {'=' if new_lo == new_hi else '>'} {render(new_hi)})"


def order_of(trace: Trace, rule: OrderRule = ORDER) -> Order:
    """The anchors and partners of ``trace`` under ``rule``, sorted by original value (see the module doc)."""
    moving = set(trace.inputs) | {ti for g in trace.ties for ti in g} | {ti for ti, _ in trace.bound}
    written = {Fraction(r.ref) if r.kind == "const" else trace.tokens[int(r.ref)].value
               for s in trace.steps for _, _, r in s.roles if r.kind != "derived"}
    # a number some step writes (read, or held as a constant) is part of the chain, not beside it
    beside = {i for i, t in enumerate(trace.tokens) if i not in moving and t.value not in written}
    given = [i for i, t in enumerate(trace.tokens) if t.kind != "fraction" and not t.percent and t.value not in (0, 1)]

    def term(label: str, kind: Literal["given", "derived", "combo"], old: Fraction, tokens: tuple[int, ...] = (),
             op: str = "", step: int = -1) -> Term:
        anchor = rule.anchors == "all" or (kind == "derived" and (rule.anchors == "derived"
                                                                  or step == trace.answer_step))
        moves = kind == "derived" or bool(set(tokens) & moving)
        partner = (rule.partners == "any" or (rule.partners == "fixed" and not moves)
                   or (rule.partners == "unread" and kind != "derived" and set(tokens) <= beside))
        return Term(label, kind, old, tokens, op, step, anchor, partner, moves)

    terms = [term(f"the question's {trace.tokens[i].text}", "given", trace.tokens[i].value, (i,))
             for i in given if rule.singles]
    terms += [term(f"step {j + 1}'s {render(s.result)}", "derived", s.result, step=j)
              for j, s in enumerate(trace.steps)]
    for i, k in itertools.combinations(given, 2):
        a, b = trace.tokens[i], trace.tokens[k]
        if "*" in rule.combos:
            terms.append(term(f"{a.text} * {b.text}", "combo", a.value * b.value, (i, k), "*"))
        if "+" in rule.combos:
            terms.append(term(f"{a.text} + {b.text}", "combo", a.value + b.value, (i, k), "+"))
    return Order(tuple(sorted((t for t in terms if t.anchor or t.partner), key=lambda t: t.old)), rule.equal)
