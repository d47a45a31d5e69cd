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
    from zcp_core.cli.common import ShortErrorParser

    # subcommands inherit the parser class, so every command's flag errors are short
    parser = ShortErrorParser(prog="zcp", description="Audit LLM benchmarks and training data for contamination.")
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


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _check_models(args: argparse.Namespace) -> None:
    """Fail on a model spec that names nothing usable before the command prints or loads anything."""
    spec = getattr(args, "model", None)
    if isinstance(spec, str) and spec:
        from zcp_core.backends.spec import check_model

        check_model(spec)


def main(argv: list[str] | None = None) -> int:
    """Run a command and return its exit code (0 ok, 1 user error, 2 usage)."""
    import datetime as dt
    import json
    import os
    import signal

    from zcp_core.errors import ZcpError
    from zcp_core.outdir import OPTIONS_ENV, command_options
    from zcp_core.runs import STARTED_ENV, STOPPED_BY_USER

    args = build_parser().parse_args(argv)
    _log_to_stderr()
    # A stop from the app or the demo (SIGTERM) ends the command like Ctrl-C does: one line, no trace.
    try:
        previous_term = signal.signal(signal.SIGTERM, _interrupt)
    except ValueError:  # not the main thread (an embedding caller): keep its handler
        previous_term = None
    # Runs written by this command record when it started; the variable lives only as long as the command.
    previous = os.environ.get(STARTED_ENV)
    os.environ[STARTED_ENV] = dt.datetime.now(dt.timezone.utc).isoformat()
    # ... and the options it was given, so a rerun into the same folder is known for a resume (zcp_core.outdir)
    previous_options = os.environ.get(OPTIONS_ENV)
    os.environ[OPTIONS_ENV] = json.dumps(command_options(vars(args)))
    try:
        _check_models(args)
        return int(args.func(args) or 0)
    except ZcpError as e:
        print(f"zcp {args.command}: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        # An unreadable or missing file is a user error too: one line naming it, no trace.
        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        print(f"zcp {args.command}: error: {where}{e.strerror or e}", file=sys.stderr)
        return 1
    except UnicodeDecodeError as e:
        print(f"zcp {args.command}: error: a file is not valid UTF-8 ({e.reason} at byte {e.start})", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"zcp {args.command}: {STOPPED_BY_USER}", file=sys.stderr, flush=True)
        return 130
    finally:
        if previous_term is not None:
            signal.signal(signal.SIGTERM, previous_term)
        for name, value in ((STARTED_ENV, previous), (OPTIONS_ENV, previous_options)):
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


if __name__ == "__main__":
    raise SystemExit(main())
