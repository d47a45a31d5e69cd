"""Helpers shared by subcommands: ``--json`` output, errors, run paths."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Mapping


def add_common(p: argparse.ArgumentParser) -> None:
    """Flags every subcommand accepts."""
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object on stdout")


def add_model(p: argparse.ArgumentParser, default: str = "smollm2") -> None:
    """The ``--model`` flag (a model spec) and local-backend options."""
    p.add_argument("--model", default=default,
                   help="model spec: smollm2, hf:PATH, lab:NAME, openai:BASE_URL#MODEL, vllm:NAME (default %(default)s)")
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"], help="device for local backends")
    p.add_argument("--batch-size", type=int, default=16, help="requests per batch for local backends")
    p.add_argument("--no-cache", action="store_true", help="bypass the response cache")


def backend_from_args(args: argparse.Namespace, spec: str | None = None) -> Any:
    """Build the backend that ``--model`` (or another spec, e.g. ``--judge``) names, with the local-backend flags."""
    from zcp_core.backends import load_backend

    return load_backend(spec or args.model, cache=None if args.no_cache else "default", device=args.device,
                        batch_size=args.batch_size)


def emit(args: argparse.Namespace, summary: Mapping[str, Any], text: str) -> None:
    """Print ``summary`` as JSON under ``--json``, else the human ``text``."""
    if getattr(args, "json", False):
        print(json.dumps(summary, default=_json_default, sort_keys=True))
    else:
        print(text)


def _json_default(o: Any) -> Any:
    import math

    if hasattr(o, "item"):
        o = o.item()
    if isinstance(o, float) and math.isnan(o):
        return None
    return str(o)


def log(msg: str) -> None:
    """Progress and notes go to stderr, so stdout stays machine-readable."""
    print(msg, file=sys.stderr)
