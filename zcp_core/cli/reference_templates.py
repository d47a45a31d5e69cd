"""``zcp reference check-templates``: run checks 1-3 on a templates file against its dataset."""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from zcp_core.cli.common import add_common, emit


def register(rsub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``reference check-templates``."""
    c = rsub.add_parser("check-templates", help="check program templates against their original items")
    c.add_argument("--templates", required=True, help="templates file (one JSON object per line)")
    c.add_argument("--dataset", required=True, help="the benchmark the templates' source_id values come from")
    c.add_argument("--seed", type=int, default=0)
    add_common(c)
    c.set_defaults(func=check)


def check(args: argparse.Namespace) -> int:
    """Checks 1-3 of every template; one line per refused template, then the counts."""
    from zcp_core.data import load_items
    from zcp_core.errors import DataError
    from zcp_core.reference.runner import Runner
    from zcp_core.reference.template import load_templates
    from zcp_core.reference.template_build import check_template

    items = {it.id: it for it in load_items(args.dataset)}
    templates = load_templates(args.templates)
    rows: list[dict[str, Any]] = []
    with Runner() as runner:
        for sid, t in templates.items():
            if sid not in items:
                raise DataError(args.templates, t.line, "source_id", f"{sid} is not an item of {args.dataset}")
            c = check_template(t, items[sid], runner, args.seed)
            rows.append({"source_id": sid, "line": t.line, "passed": c.passed, "reason": c.reason,
                         "change_share": round(c.change_share, 3), "subject": items[sid].metadata.get("subject")})
    kinds = Counter(r["reason"].split(":", 1)[0] for r in rows if not r["passed"])
    passed = sum(r["passed"] for r in rows)
    summary = {"templates": len(rows), "passed": passed, "refused": dict(kinds), "rows": rows}
    text = [f"line {r['line']} ({r['source_id']}): {r['reason']}" for r in rows if not r["passed"]]
    text.append(f"{passed} of {len(rows)} templates pass checks 1-3"
                + (f"; refused: {', '.join(f'{k} {v}' for k, v in kinds.most_common())}" if kinds else ""))
    emit(args, summary, "\n".join(text))
    return 0 if passed == len(rows) else 1
