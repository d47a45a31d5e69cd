"""Entry point: ``zcp <command> ...``.

Subcommand modules each define ``register(subparsers)``; the handler they set
as ``func`` returns an exit code. Modules import their heavy dependencies
inside the handler, so ``zcp --help`` is fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# Each entry is a module in zcp_core.cli that registers one or more commands.
COMMAND_MODULES = (
    "models", "data", "serve", "probe", "reference", "lab", "artifacts", "detector", "afr", "guided", "baselines",
    "app",
)


def build_parser() -> argparse.ArgumentParser:
    """The full ``zcp`` argument parser."""
    parser = argparse.ArgumentParser(prog="zcp", description="Audit LLM benchmarks and training data for contamination.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"zcp_core.cli.{name}")
        except ModuleNotFoundError as e:
            # An optional command module missing from a partial install must not take
            # the whole CLI down; tests/test_cli.py asserts every module is present.
            if e.name != f"zcp_core.cli.{name}":
                raise
            continue
        module.register(sub)
    return parser


def _log_to_stderr() -> None:
    """Library progress notes (``logging`` under ``zcp_core``) go to stderr, so stdout stays machine-readable."""
    import logging

    root = logging.getLogger("zcp_core")
    if not any(getattr(h, "_zcp_cli", False) for h in root.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(message)s"))
        handler._zcp_cli = True  # type: ignore[attr-defined]
        root.addHandler(handler)
    root.setLevel(logging.INFO)


def main(argv: list[str] | None = None) -> int:
    """Run a command and return its exit code (0 ok, 1 user error, 2 usage)."""
    import datetime as dt
    import os

    from zcp_core.errors import ZcpError
    from zcp_core.runs import STARTED_ENV

    args = build_parser().parse_args(argv)
    _log_to_stderr()
    # Runs written by this command record when it started; the variable lives only as long as the command.
    previous = os.environ.get(STARTED_ENV)
    os.environ[STARTED_ENV] = dt.datetime.now(dt.timezone.utc).isoformat()
    try:
        return int(args.func(args) or 0)
    except ZcpError as e:
        print(f"zcp {args.command}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted; cached work is kept and a rerun resumes from it", file=sys.stderr)
        return 130
    finally:
        if previous is None:
            os.environ.pop(STARTED_ENV, None)
        else:
            os.environ[STARTED_ENV] = previous


if __name__ == "__main__":
    raise SystemExit(main())
