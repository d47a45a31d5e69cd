"""A numeric twin's worked solution, re-derived from its original and its own question.

Twins stored without a solution (made by runs that kept only the question and gold) can still be released
with one: the original's solution is traced, the twin's question numbers replace the original's position by
position, the chain is recomputed and the solution rewritten, exactly as the generator does. The result is
accepted only when :func:`zcp_core.reference.verify.reexecute` passes on it (same numbers in the question,
every annotation re-executed, the final line the twin's gold), under the first tracing rule that gives one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from zcp_core.reference.annotate import annotate_visible
from zcp_core.reference.cues import cued_constants
from zcp_core.reference.numbers import find_numbers, render
from zcp_core.reference.rewrite import rewrite_solution, value_mapping
from zcp_core.reference.search import _evaluate
from zcp_core.reference.trace import Ambiguity, Untraceable, trace_item
from zcp_core.reference.verify import reexecute
from zcp_core.schema import Item

#: Tracing rules tried in order: the lab's (v5) first, since stored twins are older than ties.
RULES: tuple[Ambiguity, ...] = ("hold", "tie")


@dataclass(frozen=True)
class Retraced:
    """The outcome of :func:`twin_solution`.

    Attributes:
        item: The twin with its re-derived solution, or None when none passed re-execution.
        reason: Why not (the last rule's failure), or ``""``.
        rule: The tracing rule that gave it (``hold`` or ``tie``), or ``""``.
    """

    item: Item | None
    reason: str
    rule: str


def twin_solution(original: Item, twin: Item) -> Retraced:
    """Re-derive ``twin``'s solution from ``original`` (a GSM8K-style item with annotations).

    Args:
        original: The original item, with its worked solution.
        twin: Its numeric twin: the original's question with other numbers, and its gold.

    Returns:
        A :class:`Retraced`; its item is ``twin`` with ``solution`` set, verified by re-execution.
    """
    if not original.solution:
        return Retraced(None, "the original has no solution to trace", "")
    base = annotate_visible(original)
    reason = ""
    for rule in RULES:
        try:
            trace = trace_item(base, rule)
        except Untraceable as e:
            reason = f"the original does not trace: {e}"
            continue
        toks = find_numbers(twin.question)
        if len(toks) != len(trace.tokens):
            reason = f"the twin question has {len(toks)} numbers, the original {len(trace.tokens)}"
            continue
        changed = {i: new.value for i, (old, new) in enumerate(zip(trace.tokens, toks, strict=True))
                   if new.value != old.value}
        chain = _evaluate(trace, changed)
        if chain is None:
            reason = "the original's chain breaks a constraint on the twin's numbers"
            continue
        cued = cued_constants(base.question + (base.solution or ""))
        new = rewrite_solution(base.solution or "", trace, chain, value_mapping(trace, changed, chain, cued))
        answer = render(chain[trace.answer_step].value)
        text = new.text + f" {answer}" if new.text.endswith("####") else new.text.rstrip()
        made = replace(twin, solution=text)
        verdict = reexecute(made, trace, changed, rule)
        if verdict.ok:
            return Retraced(made, "", rule)
        reason = verdict.reason
    return Retraced(None, reason, "")
