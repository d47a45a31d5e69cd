"""``zcp models``: the backends and models usable on this machine."""

from __future__ import annotations

import argparse

from zcp_core.cli.common import add_common, emit


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``models`` command."""
    p = sub.add_parser("models", help="list the backends and models available here")
    add_common(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """List model specs with their status."""
    from zcp_core.backends.spec import available_models

    rows = available_models()
    width = max(len(r["spec"]) for r in rows)
    text = "\n".join(f"{r['spec']:<{width}}  {r['backend']:<12}  {r['status']}" for r in rows)
    emit(args, {"models": rows, "headline": {"label": "models", "value": len(rows)}}, text)
    return 0
