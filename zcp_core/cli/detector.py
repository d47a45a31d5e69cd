"""``zcp detector``: train generated-text detectors, explain them, attack them.

Examples:
    zcp detector compare --data ../shared/data/detectrl/Multi_LLM/multi_llms_Claude-instant_test.json \\
        --out runs/detector-claude
    zcp detector train --data data/detectrl_sample/*.json --cleaned --out runs/det-cleaned
    zcp detector crossdomain --data ../shared/data/detectrl/Multi_Domain/*.json --out runs/det-cross
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from zcp_core.cli.common import add_common, add_overwrite, claim_out, emit, log
from zcp_core.cli.data import add_fields, fields_from_args


def _add_detector(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", nargs="+", required=True, metavar="FILE", help="labelled texts (DetectRL JSON, JSONL...)")
    p.add_argument("--patterns", default=None, help="artifact pattern library YAML (default: the bundled one)")
    p.add_argument("--kind", default="tfidf", choices=["tfidf", "transformer"],
                   help="tfidf: word+char TF-IDF + logistic regression (CPU, seconds); transformer: frozen "
                        "checkpoint + trained head (minutes)")
    p.add_argument("--checkpoint", default="smollm2",
                   help="transformer backbone: smollm2, hf:PATH, lab:NAME or a locally cached hub name")
    p.add_argument("--max-length", type=int, default=128, help="transformer: tokens kept per text")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--test-size", type=float, default=0.3, help="held-out share of each label")
    p.add_argument("--out", required=True, help="run folder to write")
    add_overwrite(p)
    add_fields(p)
    add_common(p)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``detector train|compare|crossdomain``."""
    p = sub.add_parser("detector", help="train, explain (SHAP) and attack generated-text detectors")
    dsub = p.add_subparsers(dest="detector_command", metavar="SUBCOMMAND")
    dsub.required = True
    t = dsub.add_parser("train", help="train one detector on original or cleaned texts and evaluate it")
    _add_detector(t)
    t.add_argument("--cleaned", action="store_true", help="scan and clean the texts first, then train on them")
    t.set_defaults(func=run_train)
    c = dsub.add_parser("compare", help="closed loop: scan -> clean -> train both -> attack -> SHAP, one report run")
    _add_detector(c)
    c.add_argument("--prefix", default=None, help="attack phrase (default the paper's 7-sentence-abstract opener)")
    c.add_argument("--explain-n", type=int, default=200, help="test texts explained per detector")
    c.add_argument("--max-evals", type=int, default=200, help="SHAP evaluations per text (transformer)")
    c.add_argument("--cross-domain", nargs="+", default=None, metavar="FILE",
                   help="also run the cross-domain table on these per-domain files")
    c.set_defaults(func=run_compare)
    x = dsub.add_parser("crossdomain", help="train on one domain (original/cleaned), evaluate on the others")
    _add_detector(x)
    x.set_defaults(func=run_crossdomain)


def _config(args: argparse.Namespace) -> Any:
    if args.kind == "tfidf":
        from zcp_core.detector import TfidfConfig

        return TfidfConfig(seed=args.seed)
    from zcp_core.detector import TransformerConfig

    return TransformerConfig(checkpoint=args.checkpoint, max_length=args.max_length, seed=args.seed)


def _library(args: argparse.Namespace) -> Any:
    from zcp_core.artifacts import load_library

    return load_library(args.patterns)


def _command() -> str:
    return "zcp " + " ".join(map(shlex.quote, sys.argv[1:]))


def _report_text(folder: Any) -> str:
    """A detector run as text: its report (``zcp_core.detector.report``), numbers in the shared rules."""
    from zcp_core.detector.report import report
    from zcp_core.runs import load_run

    return report(load_run(folder)).to_text()


def _records(args: argparse.Namespace) -> list:
    from zcp_core.detector import load_texts_for_detector

    recs = load_texts_for_detector(args.data, fmt=args.format, fields=fields_from_args(args))
    log(f"{len(recs)} texts from {len(args.data)} file(s)")
    return recs


def run_train(args: argparse.Namespace) -> int:
    """Train one detector and write a run."""
    from zcp_core.detector import train_run

    records = _records(args)
    claim_out(args, args.out, "detector")
    folder, summary = train_run(records, args.out, paths=args.data, kind=args.kind,
                                detector_config=_config(args), library=_library(args) if args.cleaned else None,
                                test_size=args.test_size, seed=args.seed)
    text = _report_text(folder) + f"\nrun: {folder}"
    emit(args, {**summary, "run": str(folder)}, text)
    return 0


def run_compare(args: argparse.Namespace) -> int:
    """The closed loop; prints the attack table and artifact attribution shares."""
    from zcp_core.detector import (
        DEFAULT_PREFIX,
        CompareConfig,
        compare,
        cross_domain,
        format_cross_domain,
        write_compare_run,
    )

    lib = _library(args)
    cfg = CompareConfig(kind=args.kind, detector_config=_config(args), test_size=args.test_size, seed=args.seed,
                        prefix=args.prefix or DEFAULT_PREFIX, explain_n=args.explain_n, max_evals=args.max_evals)
    records = _records(args)
    claim_out(args, args.out, "detector")
    res = compare(records, lib, cfg)
    cross = None
    if args.cross_domain:
        cross = cross_domain(args.cross_domain, lib, args.kind, _config(args), args.test_size, args.seed)
    folder = write_compare_run(args.out, res, {
        "command": _command(), "dataset": list(args.data), "config": {"patterns": lib.path, "sha256": lib.sha256},
        "model": args.checkpoint if args.kind == "transformer" else None}, cross)
    from zcp_core.detector.report import ATTACK_COLUMNS, attack_rows
    from zcp_core.report import text_table
    from zcp_core.runs import load_run

    run = load_run(folder)
    summary = dict(run.summary)
    lines = [_report_text(folder), "", "Prefix attack:", *text_table(ATTACK_COLUMNS, attack_rows(run.table("attack")))]
    if cross is not None:
        lines += ["", format_cross_domain(cross)]
    lines.append(f"run: {folder}")
    emit(args, {**summary, "run": str(folder)}, "\n".join(lines))
    return 0


def run_crossdomain(args: argparse.Namespace) -> int:
    """The cross-domain table as its own run."""
    from zcp_core.detector import cross_domain_run

    claim_out(args, args.out, "detector")
    folder, df, summary = cross_domain_run(args.data, _library(args), args.out, args.kind, _config(args),
                                           args.test_size, args.seed)
    emit(args, {**summary, "run": str(folder)}, _report_text(folder) + f"\nrun: {folder}")
    return 0
