"""``zcp reference check-templates``: run checks 1-3 on a templates file against its dataset."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
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


def templates_path(args: argparse.Namespace) -> Path:
    """``--templates``, else ``data/templates/<dataset folder>.jsonl`` (``math500`` for ``data/math500/test.jsonl``)."""
    from zcp_core.errors import ZcpError
    from zcp_core.reference.template import shipped_templates

    if args.templates:
        return Path(args.templates)
    path = shipped_templates(args.dataset)
    if path is None:
        raise ZcpError(f"no shipped templates for {args.dataset} (data/templates/<its folder>.jsonl); pass "
                       "--templates FILE")
    return path


def build_sets(args: argparse.Namespace, items: list[Any], config: dict[str, Any]) -> list[Any]:
    """K reference sets for ``--method template`` or ``auto`` (numeric where it holds, else a template).

    Under ``auto`` each set is the union, in input order; ``config["shares"]`` counts twin 1 by method.
    """
    from zcp_core.reference.numeric import ReferenceSet, perturb_gsm8k
    from zcp_core.reference.template import load_templates
    from zcp_core.reference.template_build import METHOD_TEMPLATE, solver_records, template_twins

    path = templates_path(args)
    templates = load_templates(path)
    k = max(args.twins, 1)
    config.update(templates=str(path), twins=k)
    if args.method == "template":
        return template_twins(items, templates, seed=args.seed, twins=k, solved=solver_records(path))
    numeric = [perturb_gsm8k(items, seed=args.seed + j - 1, max_tries=args.max_tries, twin=j,
                             round_rule=args.round_rule, ambiguity=args.ambiguity) for j in range(1, k + 1)]
    config.update(max_tries=args.max_tries, round_rule=args.round_rule, ambiguity=args.ambiguity)
    # an item numeric tracing refused at twin 1 goes to its template for all K twins, so one item's twins
    # come from one method
    refused = {f.id for f in numeric[0].failures}
    rest = [it for it in items if it.id in refused]
    tpl = template_twins(rest, templates, seed=args.seed, twins=k, solved=solver_records(path))
    sets = []
    for num, tp in zip(numeric, tpl, strict=True):
        made = {t.original_id: t for t in (*[t for t in num.items if t.original_id not in refused], *tp.items)}
        why = {f.id: f for f in (*num.failures, *tp.failures)}
        sets.append(ReferenceSet(tuple(made[it.id] for it in items if it.id in made),
                                 tuple(why[it.id] for it in items if it.id not in made and it.id in why),
                                 f"auto ({numeric[0].method} + {METHOD_TEMPLATE})"))
    config["shares"] = {"numeric": sum(t.original_id not in refused for t in sets[0].items),
                        "template": sum(t.original_id in refused for t in sets[0].items), "items": len(items)}
    return sets
