"""``zcp data inspect PATH``: the fields a dataset file holds (with types and counts), what it loads as, bad rows."""

from __future__ import annotations

import argparse
from collections import Counter
from typing import TYPE_CHECKING

from zcp_core.cli.common import add_common, emit

if TYPE_CHECKING:
    from zcp_core.schema import FieldCount


def add_fields(p: argparse.ArgumentParser) -> None:
    """Format and field-mapping flags shared by every command that reads data."""
    p.add_argument("--format", default="auto",
                   choices=["auto", "gsm8k", "math", "gsm1k", "detectrl", "jsonl", "csv", "parquet", "hf", "items"])
    p.add_argument("--id-field", default=None)
    p.add_argument("--question-field", default="question")
    p.add_argument("--answer-field", default="answer")
    p.add_argument("--text-field", default="text")
    p.add_argument("--label-field", default="label")


def fields_from_args(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    """A FieldMap from the flags of :func:`add_fields`."""
    from zcp_core.data import FieldMap

    return FieldMap(id=args.id_field, question=args.question_field, answer=args.answer_field,
                    text=args.text_field, label=args.label_field)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``data inspect``."""
    p = sub.add_parser("data", help="inspect datasets")
    dsub = p.add_subparsers(dest="data_command", metavar="SUBCOMMAND")
    dsub.required = True
    q = dsub.add_parser("inspect", help="fields (with types and counts), items and bad rows of a dataset file")
    q.add_argument("path")
    add_fields(q)
    q.add_argument("--strict", action="store_true", help="fail on the first bad row instead of reporting every one")
    q.add_argument("--skip-bad", action="store_true", help=argparse.SUPPRESS)  # the default now; kept for old scripts
    add_common(q)
    q.set_defaults(func=inspect)


def inspect(args: argparse.Namespace) -> int:
    """Load a dataset and describe it: its fields with their types and counts, what it loads as, its bad rows."""
    from zcp_core.data import iter_records, load_dataset
    from zcp_core.runs import sha256_file
    from zcp_core.schema import field_census

    ds = load_dataset(args.path, fmt=args.format, fields=fields_from_args(args),
                      on_error="raise" if args.strict else "skip")
    n_records, census = field_census(iter_records(ds.path, ds.format))
    summary: dict = {"path": ds.path, "format": ds.format, "kind": ds.kind, "n": len(ds),
                     "sha256": sha256_file(ds.path), "bad_rows": [b.__dict__ for b in ds.bad_rows],
                     "records": n_records,
                     "fields": [{"name": f.name, "records": f.present, "types": dict(f.types)} for f in census]}
    lines = [f"{ds.path}: {ds.format} format, {len(ds)} {'texts' if ds.kind == 'texts' else 'items'}",
             *field_table(n_records, census)]
    if ds.kind == "items":
        summary["record_fields"] = ["id", "question", "answer", "solution", "source", "original_id", "metadata"]
        summary["with_solution"] = sum(1 for it in ds.items if it.solution)
        summary["with_original_id"] = sum(1 for it in ds.items if it.original_id)
        if ds.items:
            lines.append(f"first id: {ds.items[0].id}   last id: {ds.items[-1].id}")
        lines.append(f"with solution: {summary['with_solution']}   with original_id: {summary['with_original_id']}")
    else:
        summary["record_fields"] = ["id", "text", "label", "llm_type", "data_type", "metadata"]
        for key, attr, name in (("by_label", "label", "labels"), ("by_llm_type", "llm_type", "LLM types"),
                                ("by_data_type", "data_type", "data types")):
            counts = Counter(getattr(t, attr) for t in ds.texts if getattr(t, attr))
            summary[key] = dict(counts)
            lines.append(f"{name}: {_counts(counts)}")
    lines.append(f"bad rows: {len(ds.bad_rows)}")
    lines += [f"  {_where(b.line, b.field)}: {b.message}" for b in ds.bad_rows]
    if ds.bad_rows:
        lines.append(f"{len(ds.bad_rows)} bad rows were skipped: fix them, or load the file knowing they are left out")
    summary["headline"] = {"label": ds.kind, "value": len(ds)}
    emit(args, summary, "\n".join(lines))
    return 1 if ds.bad_rows else 0


def field_table(n_records: int, census: list[FieldCount]) -> list[str]:
    """The fields a file's records hold, one row each: name, the types of its values, and in how many records."""
    rows = [(f.name, ", ".join(t if len(f.types) == 1 else f"{t} {k}" for t, k in f.types), str(f.present))
            for f in census]
    if not census:
        return [f"fields: none ({n_records} records hold none, or no record could be read)"]
    head = ("field", "type", "records")
    w = [max(len(r[i]) for r in [head, *rows]) for i in range(3)]
    out = [f"fields in {n_records} records:", f"  {head[0]:<{w[0]}}  {head[1]:<{w[1]}}  {head[2]:>{w[2]}}"]
    return out + [f"  {a:<{w[0]}}  {b:<{w[1]}}  {c:>{w[2]}}" for a, b, c in rows]


def _counts(counts: Counter[str]) -> str:
    """``human 1528, llm 6463`` (most common first); ``none`` when empty."""
    return ", ".join(f"{k} {v}" for k, v in counts.most_common()) or "none"


def _where(line: int | None, field: str | None) -> str:
    """``line 4, field 'answer'``; only the parts that are known (a malformed line has no field)."""
    parts = ([f"line {line}"] if line is not None else []) + ([f"field {field!r}"] if field else [])
    return ", ".join(parts) or "file"
