"""Helpers shared by subcommands: ``--json`` output, errors, run paths, and argument checks.

The checks are argparse ``type=`` functions: a bad value stops the command before it reads or loads
anything, with argparse's one-line ``error: argument --limit: ...`` and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Mapping, NoReturn


def positive_int(text: str) -> int:
    """A count of at least 1 (``--limit``, ``--twins``); the flag's own hint says what leaving it out gives."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


#: One hint per flag, shown under a bad value's error (what the flag means, or what leaving it out gives).
FLAG_HINTS: dict[str, str] = {
    "--limit": "hint: leave --limit out to use every item",
    "--twins": "hint: leave --twins out for the default (4 twins and a spare per item)",
    "--twin": "hint: --twin N picks one twin by its number, 1 to K",
    "--as-original": "hint: --as-original N lets twin N (1 to K) stand as the original",
    "--replicates": "hint: leave --replicates out for one build per kind",
    "--check-items": "hint: the number of items to check, at least 1",
    "--fdr": "hint: the false-discovery level q, e.g. 0.1",
    "--prior": "hint: the prior probability of contamination, e.g. 0.5",
    "--min-confidence": "hint: a Contamination Confidence between 0 and 1, e.g. 0.95 (0 turns the gate off)",
    "--port": "hint: a free TCP port, e.g. 8600",
}


class ShortErrorParser(argparse.ArgumentParser):
    """An argument parser whose errors take at most three lines: the error naming the flag, its hint, and where
    the full usage is (argparse's default prints the whole usage first, which scrolls the error away)."""

    def error(self, message: str) -> NoReturn:  # noqa: D102 (argparse's own method)
        import re

        found = re.search(r"argument ((?:--?[\w-]+/?)+)", message)
        flag = found.group(1).split("/")[-1] if found else ""
        lines = [f"{self.prog}: error: {message}"]
        if flag in FLAG_HINTS:
            lines.append(FLAG_HINTS[flag])
        lines.append(f"see `{self.prog} --help`")
        self.exit(2, "\n".join(lines) + "\n")


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, not {text!r}") from None
    if value != value:  # NaN passes no range check below, so name it here
        raise argparse.ArgumentTypeError("must be a number, not NaN")
    return value


def probability(text: str) -> float:
    """A probability in [0, 1] (``--min-confidence``)."""
    value = _number(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must lie between 0 and 1, not {text}")
    return value


def open_probability(text: str) -> float:
    """A probability strictly between 0 and 1 (``--prior``, ``--fdr``): 0 or 1 would settle the answer in advance."""
    value = _number(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must lie strictly between 0 and 1, not {text}")
    return value


def port(text: str) -> int:
    """A TCP port, 1 to 65535 (``--port``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a port number from 1 to 65535, not {text!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 1 to 65535, not {value}")
    return value


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
    """Print ``summary`` as strict JSON under ``--json`` (``null`` for a missing number), else the human ``text``."""
    if getattr(args, "json", False):
        print(json.dumps(finite_json(summary), default=_json_default, sort_keys=True, allow_nan=False))
    else:
        print(text)


def finite_json(x: Any) -> Any:
    """``x`` with every non-finite float (NaN, inf; numpy ones too) as ``None``, so its JSON is strict."""
    import math

    if hasattr(x, "tolist") and not isinstance(x, (str, bytes)):
        x = x.tolist()  # a numpy scalar becomes its Python value, an array a list
    if isinstance(x, dict):
        return {k: finite_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [finite_json(v) for v in x]
    return None if isinstance(x, float) and not math.isfinite(x) else x


def _json_default(o: Any) -> Any:
    import math

    if hasattr(o, "item"):
        o = o.item()
    if isinstance(o, float) and not math.isfinite(o):
        return None
    return o if isinstance(o, (int, float, bool)) else str(o)


def log(msg: str) -> None:
    """Progress and notes go to stderr, so stdout stays machine-readable."""
    print(msg, file=sys.stderr)


def add_overwrite(p: argparse.ArgumentParser) -> None:
    """The ``--overwrite`` flag of a command that writes a folder."""
    p.add_argument("--overwrite", action="store_true",
                   help="replace the zcp output --out holds; without it a rerun with the same options resumes and "
                        "anything else is refused (a folder of your own files is never replaced)")


def claim_out(args: argparse.Namespace, out: Any, kind: str, resumable: bool = True) -> Any:
    """Claim the output folder before any work (:func:`zcp_core.outdir.claim_output`); returns its path.

    ``resumable=False`` is for a command whose output records no options (a release): a rerun into its own
    folder then needs ``--overwrite`` too.
    """
    from zcp_core.outdir import claim_output, command_options

    claim = claim_output(out, kind, command_options(vars(args)) if resumable else None,
                         bool(getattr(args, "overwrite", False)))
    if claim.action == "resume":
        log(f"{claim.path} holds this command's run (same options): resuming it; cached answers are reused")
    elif claim.action == "replace":
        log(f"{claim.path}: its old contents were removed (--overwrite)")
    return claim.path
