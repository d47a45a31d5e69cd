"""``zcp baselines``: Min-K% Prob and the zlib ratio of a benchmark's questions.

Example::

    zcp baselines --model smollm2 --dataset data/gsm8k/test.jsonl --limit 50 --out runs/baselines-gsm8k50 --json
"""

from __future__ import annotations

import argparse
from typing import Any

from zcp_core.cli.common import add_common, add_model, add_overwrite, claim_out, emit, log, positive_int
from zcp_core.cli.data import add_fields, fields_from_args


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``baselines`` command."""
    p = sub.add_parser("baselines", help="membership-inference baselines (Min-K%% Prob, zlib ratio) per question")
    add_model(p)
    p.add_argument("--dataset", required=True, help="benchmark file whose questions are scored")
    p.add_argument("--limit", type=positive_int, default=None, help="first N items")
    p.add_argument("--k", type=float, default=0.2, help="Min-K%% Prob fraction, in (0, 1] (default %(default)s)")
    p.add_argument("--out", required=True, help="run folder to write")
    add_overwrite(p)
    add_fields(p)
    add_common(p)
    p.set_defaults(func=run)


def _text(summary: dict[str, Any], folder: Any) -> str:
    def f(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.4f}"

    k = summary["config"]["k"]
    lines = [f"run written to {folder}",
             f"{summary['n_scored']}/{summary['n']} questions scored; "
             f"mean Min-{k:.0%} Prob {f(summary['min_k_mean'])}, "
             f"mean zlib ratio {f(summary['zlib_mean'])} (higher = more likely seen in training; compare against "
             "known non-members, these are not verdicts)"]
    lines += [f"unavailable ({n}): {why}" for why, n in summary["unavailable_reasons"].items()]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Score the questions, write the run and print the summary."""
    from zcp_core.baselines import BaselineConfig, score_items, write_baselines_run
    from zcp_core.cli.common import backend_from_args
    from zcp_core.data import load_items
    from zcp_core.errors import ZcpError
    from zcp_core.runs import RunSpec, load_run

    try:
        config = BaselineConfig(k=args.k)
    except ValueError as e:
        raise ZcpError(str(e)) from e
    items = load_items(args.dataset, fmt=args.format, fields=fields_from_args(args))
    if args.limit:
        items = items[: args.limit]
    claim_out(args, args.out, "baselines")
    log(f"scoring {len(items)} questions on {args.model} (Min-{config.k:.0%} Prob, zlib ratio)")
    backend = backend_from_args(args)
    records = score_items(backend, items, config, progress=True)
    cfg = {k: v for k, v in vars(args).items() if k != "func"}
    spec = RunSpec(kind="baselines", config=cfg, model=args.model, model_revision=getattr(backend, "revision", None),
                   dataset=(args.dataset,))
    folder = write_baselines_run(args.out, spec, records, config)
    summary = dict(load_run(folder).summary)
    emit(args, summary, _text(summary, folder))
    return 0
