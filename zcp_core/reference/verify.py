"""Re-execution check of a numeric twin, from the twin's own text.

The generator computes a twin's chain from the values it drew. This check does
not trust that: it reads the numbers back from the *twin question*, feeds each
annotation literal from the question occurrence the trace tied it to, evaluates
the chain again, and compares with the twin's gold. It also checks that every
other question number is unchanged, that the twin's written annotations are
exactly that chain and add up, and that the twin solution can be traced again
against the twin question. From v7 (``ambiguity="tie"``) it also checks every
explicit inequality the twin solution writes ("$105 > $136" fails;
:mod:`zcp_core.reference.compare`) and records how many it checked
(``inequalities_checked``; v5's records stay as they were). A twin that fails
any check is redrawn.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from zcp_core.reference.compare import false_inequalities
from zcp_core.reference.numbers import ExprError, eval_steps, find_numbers, render, render_literal
from zcp_core.reference.trace import CALC, Ambiguity, Trace, Untraceable, stated_value, trace_item
from zcp_core.schema import Item

VERIFY_VERSION = "reexecute-v1"


@dataclass(frozen=True)
class Verdict:
    """Outcome of :func:`reexecute`: ``ok`` and, when not, the first check that failed."""

    ok: bool
    reason: str
    record: Mapping[str, Any]


def _substitute(trace: Trace, values: list[Fraction]) -> list[tuple[str, Fraction]]:
    """Each step's expression with literals fed from ``values`` (question numbers by position)."""
    out: list[tuple[str, Fraction]] = []
    for s in trace.steps:
        expr = s.expr
        for start, end, role in sorted(s.roles, key=lambda r: r[0], reverse=True):
            if role.kind == "derived":
                v = out[int(role.ref)][1]
            elif role.kind == "input":
                v = values[int(role.ref)] * role.scale + role.offset
            else:
                continue
            expr = expr[:start] + render_literal(v) + expr[end:]
        out.append((expr, eval_steps(expr)[-1]))
    return out


def reexecute(twin: Item, trace: Trace, new_values: Mapping[int, Fraction], ambiguity: Ambiguity = "tie"
              ) -> Verdict:
    """Check ``twin`` against the original's ``trace`` and the drawn ``new_values`` (token index -> value).

    The twin is traced again against its own question under the ``ambiguity`` rule the original was traced by.
    """
    toks = find_numbers(twin.question)
    if len(toks) != len(trace.tokens):
        return Verdict(False, f"the twin question has {len(toks)} numbers, the original {len(trace.tokens)}", {})
    for i, (old, new) in enumerate(zip(trace.tokens, toks, strict=True)):
        want = new_values.get(i, old.value)
        if new.value != want:
            return Verdict(False, f"question number {i + 1} reads {new.text!r}, expected {render(want)}", {})
    try:
        chain = _substitute(trace, [t.value for t in toks])
    except ExprError as e:
        return Verdict(False, f"re-execution failed: {e}", {})
    gold = stated_value(twin.answer)
    recomputed = chain[trace.answer_step][1]
    if recomputed != gold:
        return Verdict(False, f"re-executed answer {render(recomputed)} differs from the twin gold {twin.answer}", {})
    written = CALC.findall(twin.solution or "")
    if len(written) != len(chain):
        return Verdict(False, "the twin solution lost or gained an annotation", {})
    for (expr, res), (want_expr, want_val) in zip(written, chain, strict=True):
        try:
            ok = eval_steps(expr)[-1] == want_val == stated_value(res)
        except (ExprError, Untraceable):
            ok = False
        if not ok or expr.replace(" ", "") != want_expr.replace(" ", ""):
            return Verdict(False, f"annotation <<{expr}={res}>> is not the re-executed {want_expr}", {})
    if not (twin.solution or "").rstrip().endswith(f"#### {twin.answer}"):
        return Verdict(False, "the solution's final line is not the twin gold", {})
    inequalities, false = false_inequalities(twin.solution or "") if ambiguity == "tie" else (0, [])
    if false:
        return Verdict(False, f"the twin solution writes a false inequality: {false[0]!r}", {})
    calcs = [{"expr": e, "result": r} for e, r in written]
    try:
        trace_item(Item(id=twin.id, question=twin.question, answer=twin.answer, solution=twin.solution,
                        metadata={"calculations": calcs}), ambiguity)
        retraced = "traced"
    except Untraceable as e:
        kind = str(e).split(":", 1)[0]
        if kind not in ("ambiguous", "no_input"):  # a new coincidence may hold numbers; a lost one may not
            return Verdict(False, f"the twin does not trace against its own question: {e}", {})
        retraced = kind
    record: dict[str, Any] = {"reexecuted": True, "gold_check": "pass", "recomputed_answer": render(recomputed),
              "question_numbers_checked": len(toks), "annotations_checked": len(chain), "retrace": retraced,
              "check": VERIFY_VERSION}
    if ambiguity == "tie":
        record["inequalities_checked"] = inequalities
    return Verdict(True, "", record)
