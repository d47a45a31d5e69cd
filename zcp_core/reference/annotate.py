"""Calculations a GSM8K solution writes without a calculator annotation.

Some solutions end "... so the boots cost 99 + 5 = $104." with no ``<<>>``,
so the gold answer is the result of no annotation; others compute an input
of a later step in prose ("1.5*8=12."). :func:`annotate_visible` turns every
such written calculation that is arithmetically right into an annotation
(``99 + 5 = <<99+5=104>>$104``), so the tracer sees it as a step and the twin
recomputes it. A written calculation that does not add up is left alone.
"""

from __future__ import annotations

import re

from zcp_core.reference.numbers import ExprError, safe_eval
from zcp_core.reference.rewrite import VISIBLE_EQ
from zcp_core.reference.trace import CALC, Untraceable, close_enough, stated_value
from zcp_core.schema import Item


def annotate_visible(item: Item) -> Item:
    """``item`` with each right, unannotated written calculation annotated (the item itself when none)."""
    sol = item.solution or ""
    body, sep, tail = sol.rpartition("####")
    if not sep:
        return item
    inserts: list[tuple[int, str]] = []
    # "7.5 / .5 = <<15=15>>15": an annotation that only states a number computed in the prose gets the
    # prose's calculation (else the tracer would take that 15 for the question's 15)
    edits: list[tuple[int, int, str]] = []
    for m in re.finditer(r"(?<![\w.])((?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:\s*[-+*/x\u00d7]\s*(?:\d[\d,]*(?:\.\d+)?|\.\d+))+)"
                         r"\s*=\s*<<([\d.,]+)=([^<>]*)>>", body):
        expr = _expr(m.group(1))
        if expr and _right(expr, m.group(3)) and stated_value(m.group(2)) == stated_value(m.group(3)):
            edits.append((m.start(2) - 2, m.end(), f"<<{expr}={m.group(3)}>>"))
    for a, b, ann in reversed(edits):
        body = body[:a] + ann + body[b:]
    masked = CALC.sub(lambda m: "#" * len(m.group(0)), body)
    for m in VISIBLE_EQ.finditer(masked):
        if re.match(r"\s*<<", body[m.end():]):
            continue
        expr = _expr(m.group(1))
        res = m.group(2).replace("$", "").replace("%", "").rstrip(",")
        if expr and _right(expr, res):
            at = m.start(2) + (1 if m.group(2).startswith("$") else 0)
            inserts.append((at, f"<<{expr}={res}>>"))
    if not inserts and not edits:
        return item
    for at, ann in reversed(inserts):
        body = body[:at] + ann + body[at:]
    solution = body + sep + tail
    meta = dict(item.metadata)
    meta["calculations"] = [{"expr": a.strip(), "result": b.strip()} for a, b in CALC.findall(solution)]
    meta["annotated_in_prose"] = len(inserts) + len(edits)
    return Item(id=item.id, question=item.question, answer=item.answer, solution=solution, source=item.source,
                original_id=item.original_id, metadata=meta)


def _expr(text: str) -> str:
    """A written calculation as an annotation expression ("" when it holds a percent sign)."""
    if "%" in text:
        return ""
    return re.sub(r"[x\u00d7]", "*", text).replace("$", "").replace(",", "").replace(" ", "")


def _right(expr: str, result: str) -> bool:
    try:
        return close_enough(safe_eval(expr), stated_value(result))
    except (ExprError, Untraceable):
        return False
