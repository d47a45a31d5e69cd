"""Writing a twin's question and solution from a trace and a recomputed chain.

The question is rewritten by *occurrence*: only the question numbers the trace
names as inputs change; every other number (held values, fractions, words such
as "three months" that feed nothing) stays as written. The solution is
rewritten by position where it mirrors an annotation ("16 - 3 - 4 =
<<16-3-4=9>>9"); any other number in its prose goes by value, and one that
could stand for two values is a conflict, never a guess: that line keeps only
its calculations. A fraction the question writes ("1/6") is never touched in
the solution either.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Set
from dataclasses import dataclass
from fractions import Fraction

from zcp_core.reference.numbers import (
    ExprError,
    NumberToken,
    expr_literals,
    find_numbers,
    render,
    render_like,
    safe_eval,
)
from zcp_core.reference.trace import CALC, Trace, close_enough, fraction_parts, stated_value


@dataclass(frozen=True)
class NewStep:
    """One recomputed annotation: the expression with new literals, its value, each literal's new value."""

    expr: str
    value: Fraction
    literals: tuple[Fraction, ...]  # left to right


class Conflict(Exception):
    """A number in the solution's prose could stand for several new values."""


_NUM = r"\$?(?:\d[\d,]*(?:\.\d+)?|\.\d+)%?"
VISIBLE_EQ = re.compile(rf"(?<![\w.])({_NUM}(?:\s*[-+*/x\u00d7%]\s*{_NUM})+)\s*=\s*({_NUM})")


def visible_equations(solution: str) -> list[bool]:
    """Whether each written calculation outside the annotations ("7 - 3 = 4") is arithmetically right."""
    out = []
    for m in VISIBLE_EQ.finditer(CALC.sub(" ", solution)):
        # "30/100%1000" and "20% 50" read "% of": a percent sign before an operand multiplies.
        lhs = re.sub(r"%\s*(?=[\d$(])", "*", re.sub(r"[x\u00d7]", "*", m.group(1)))
        lhs = lhs.replace("$", "").replace(",", "").replace("%", "")
        try:
            out.append(close_enough(safe_eval(lhs), stated_value(m.group(2).replace("%", ""))))
        except (ExprError, ValueError):
            out.append(False)
    return out


def rewrite_question(question: str, trace: Trace, new_values: Mapping[int, Fraction]) -> str:
    """The question with each input occurrence (token index -> new value) rewritten, nothing else."""
    parts, last = [], 0
    for i, t in enumerate(trace.tokens):
        if i in new_values and new_values[i] != t.value:
            parts += [question[last:t.start], render_like(new_values[i], t)]
            last = t.end
    return fix_articles("".join(parts) + question[last:])


def value_mapping(trace: Trace, new_values: Mapping[int, Fraction], chain: list[NewStep],
                  cued: Set[Fraction]) -> dict[Fraction, set[Fraction]]:
    """Old value -> every new value it may stand for in running text (inputs and step results).

    ``cued`` holds the constants the item's wording implies (:func:`zcp_core.reference.cues.cued_constants`).
    """
    cand: dict[Fraction, set[Fraction]] = {}
    for i, new in new_values.items():
        cand.setdefault(trace.tokens[i].value, set()).add(new)
    for s, ns in zip(trace.steps, chain, strict=True):
        for old in {s.result, stated_value(s.result_text)}:
            cand.setdefault(old, set()).add(ns.value)
    # Numbers that keep their value (constants, held or unused question numbers) stay candidates for
    # themselves, so "7 days" cannot silently become a step's new result that used to be 7.
    keep = {Fraction(r.ref) for s in trace.steps for _, _, r in s.roles if r.kind == "const"}
    keep |= {t.value for i, t in enumerate(trace.tokens) if i not in new_values} | {Fraction(0), Fraction(1)}
    keep |= cued  # "60 minutes in an hour" keeps its 60
    for v in keep:
        if v in cand:
            cand[v].add(v)
    return cand


def _protected(text: str, pairs: set[tuple[Fraction, Fraction]]) -> list[tuple[int, int]]:
    """Spans of the question's own fractions ("1/6") written in ``text``."""
    return [(t.start, t.end) for t in find_numbers(text) if t.kind == "fraction" and "/" in t.text
            and fraction_parts(t) in pairs]


def _rewrite_segment(text: str, cand: Mapping[Fraction, set[Fraction]], fixed: Mapping[int, Fraction],
                     pairs: set[tuple[Fraction, Fraction]]) -> str:
    """Rewrite numbers in ``text``: positions in ``fixed`` get their value, the rest go by ``cand``."""
    keep = _protected(text, pairs)
    parts, last = [], 0
    for t in find_numbers(text, fractions=False):
        if any(a <= t.start < b for a, b in keep):
            continue
        if t.start in fixed:
            new = fixed[t.start]
        elif t.kind == "fraction" or t.value not in cand:
            continue
        elif len(cand[t.value]) > 1:
            raise Conflict(f"{t.text!r} in the solution text could stand for several numbers")
        else:
            new = next(iter(cand[t.value]))
        parts += [text[last:t.start], render_like(new, t)]
        last = t.end
    return "".join(parts) + text[last:]


def _rewrite_line(line: str, first: int, trace: Trace, chain: list[NewStep],
                  cand: Mapping[Fraction, set[Fraction]], pairs: set[tuple[Fraction, Fraction]]) -> str:
    """One solution line whose first annotation is step ``first``; raises :class:`Conflict`."""
    spans = list(CALC.finditer(line))
    out, last = [], 0
    for k in range(len(spans) + 1):
        i = first + k
        end = spans[k].start() if k < len(spans) else len(line)
        seg = line[last:end]
        toks: list[NumberToken] = find_numbers(seg, fractions=False)
        fixed: dict[int, Fraction] = {}
        if k > 0 and toks and toks[0].start <= 2 and toks[0].value == stated_value(trace.steps[i - 1].result_text):
            fixed[toks[0].start] = chain[i - 1].value  # the echo of the previous annotation
        if k < len(spans):
            # "16 - 3 - 4 = <<16-3-4=9>>": the numbers right before an annotation that repeat its literals
            # (read right to left, without a gap) take the literals' new values
            old_lits = [lit.value for lit in expr_literals(trace.steps[i].expr)]
            j = len(old_lits) - 1
            for t in reversed(toks):
                if t.start in fixed or j < 0 or t.value != old_lits[j]:
                    break
                fixed[t.start] = chain[i].literals[j]
                j -= 1
        out.append(_rewrite_segment(seg, cand, fixed, pairs))
        if k < len(spans):
            out.append(f"<<{chain[i].expr}={render(chain[i].value)}>>")
            last = spans[k].end()
    return "".join(out)


@dataclass(frozen=True)
class NewSolution:
    """A rewritten solution (ending in ``####``) and how many prose lines became bare calculations."""

    text: str
    lines_replaced: int


def rewrite_solution(solution: str, trace: Trace, chain: list[NewStep],
                     cand: Mapping[Fraction, set[Fraction]]) -> NewSolution:
    """New solution text, new annotations included (see the module doc).

    A line whose prose holds a number that could stand for several new values
    is replaced by its calculations alone ("8-6=<<8-6=2>>2"), or dropped when it
    has none: the solution stays right, at the cost of its wording there. (Such
    clashes once flagged values the tracer mistook, 5 wrong golds in 34; after
    the tracer's fixes, all 30 such GSM8K test twins, solved by hand, had right
    golds, and one question stated an unused sum, which is now held.)
    The text ends with ``####``; the caller writes the new answer after it.
    """
    pairs = {fraction_parts(t) for t in trace.tokens if t.kind == "fraction"}
    body, sep, _ = solution.rpartition("####") if "####" in solution else (solution, "", "")
    out: list[str] = []
    step = replaced = 0
    for line in body.split("\n"):
        n = len(CALC.findall(line))
        try:
            out.append(_rewrite_line(line, step, trace, chain, cand, pairs))
        except Conflict:
            bare = [f"{chain[i].expr}=<<{chain[i].expr}={render(chain[i].value)}>>{render(chain[i].value)}"
                    for i in range(step, step + n)]
            if bare:
                out.append(" and ".join(bare))
            replaced += 1
        step += n
    return NewSolution(fix_articles("\n".join(out)) + sep, replaced)


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
