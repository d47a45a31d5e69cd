"""``zcp scan`` and ``zcp clean``: artifact counts and curated cleaned releases.

Examples:
    zcp scan ../shared/data/detectrl/Multi_LLM/*.json --out runs/scan-multi-llm
    zcp clean data/detectrl_sample/*.json --out runs/clean-sample --decisions decisions.json
"""

from __future__ import annotations

import argparse
import datetime as _dt
import shlex
import sys
from pathlib import Path
from typing import Any

from zcp_core.cli.common import add_common, add_overwrite, claim_out, emit, log
from zcp_core.cli.data import add_fields, fields_from_args


def _add_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="DetectRL JSON, or JSONL/CSV/parquet with --text-field")
    p.add_argument("--patterns", default=None, help="pattern library YAML (default: the bundled DetectRL library)")
    p.add_argument("--extend", action="append", default=[], metavar="FILE", help="extra library file (repeatable)")
    p.add_argument("--regex-engine", default="re2", choices=["re2", "re"],
                   help="re2 (linear time, default) or re (opt-in for patterns RE2 rejects, per-text time limit)")
    p.add_argument("--engine", default="local", choices=["local", "ray"], help="local processes or Ray Data")
    add_fields(p)
    add_common(p)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``scan`` and ``clean`` commands."""
    p = sub.add_parser("scan", help="count generation artifacts (openers, refusals, prompt echoes, role tags)")
    _add_inputs(p)
    p.add_argument("--mode", default="all", choices=["first", "all"],
                   help="first: one match per text, first family wins; all: every match with spans")
    p.add_argument("--out", default=None, help="run folder to write (default runs/scan-<time>)")
    add_overwrite(p)
    p.set_defaults(func=run_scan)
    c = sub.add_parser("clean", help="remove artifacts and write a curated release with edits and an audit card")
    _add_inputs(c)
    c.add_argument("--out", required=True, help="run folder to write")
    add_overwrite(c)
    c.add_argument("--decisions", default=None, help='JSON {edit_id: "accept"|"reject"} to respect')
    c.add_argument("--scorer", default="auto", metavar="DETECTOR",
                   help="what scores edited texts for the under-cleaning flag: a detector run or folder (`zcp "
                        "detector`), 'auto' (default: a TF-IDF detector fitted on the inputs' human and LLM texts) "
                        "or 'none'")
    under = c.add_mutually_exclusive_group()
    under.add_argument("--under-top", type=float, default=0.10, metavar="SHARE",
                       help="under-cleaning: mark the top SHARE of residual scores (default 0.10: the top 10%%)")
    under.add_argument("--under-threshold", type=float, default=None, metavar="SCORE",
                       help="under-cleaning: mark residual scores above SCORE instead of a top share")
    c.add_argument("--edges", default="auto", metavar="MODEL",
                   help="the learned edge detector run after the patterns, for glued headlines and titles, task "
                        "echoes and labels they miss: 'auto' (default: the bundled DetectRL model), 'none', or a "
                        "model file built by benchmarks/edge_detector.py. Each cut is an edit you can reject; where "
                        "it is unsure the text is flagged for review instead. The same stage cuts a title glued to a "
                        "text that says it again (rule:title-restated-4) or left after a lead-in the patterns cut "
                        "(rule:title-after-lead-in-2), sentence numbers left after a cut '1.' "
                        "(rule:sentence-numbers-2) or among numbers the patterns cut (rule:numbers-left-2), and bold "
                        "markers left after the patterns cut some (rule:bold-left-2); 'none' switches the stage off")
    c.add_argument("--held-back", choices=["drop", "keep"], default="drop",
                   help="a text that cannot be repaired by cutting (an unfilled placeholder, an assistant's "
                        "self-description, a refusal inside the text): drop (default) takes it out of the release "
                        "with its reason; keep leaves it in, flagged. A reviewer can put a held-back text back")
    c.add_argument("--license", default=None,
                   help=("SPDX id (mit, cc-by-nc-4.0...) or licence file, given by someone who holds permission; "
                         "overrides the source's own (default: identified from its LICENSE or SOURCES.md entry)"))
    c.add_argument("--allow-unlicensed", action="store_true",
                   help=("release data whose source has no identifiable licence (the card says so); never overrides "
                         "'All rights reserved'"))
    c.set_defaults(func=run_clean)


def _load(args: argparse.Namespace) -> tuple[list[Any], Any]:
    from zcp_core.artifacts import load_library
    from zcp_core.data import load_texts

    lib = load_library(args.patterns, extend=args.extend, engine=args.regex_engine)
    texts = load_texts(args.paths, fmt=args.format, fields=fields_from_args(args))
    log(f"{len(texts)} input texts from {len(args.paths)} file(s); library {lib.version} ({len(lib.patterns)} patterns)")
    return texts, lib


def _inputs(args: argparse.Namespace) -> Any:
    from zcp_core.artifacts import RunInputs

    return RunInputs(tuple(str(p) for p in args.paths), command="zcp " + " ".join(map(shlex.quote, sys.argv[1:])),
                     config={"text_field": args.text_field, "format": args.format})


def scan_text(run: Any) -> str:
    """The scan run as text: its report, then the counts by data type and by label."""
    from zcp_core.artifacts.report import breakdown, report
    from zcp_core.report import text_table

    lines = [report(run).to_text()]
    for by, what in (("data_type", "By data type"), ("label", "By label")):
        lines += ["", f"{what}:", *text_table(*breakdown(run.table(f"by_{by}"), by))]
    return "\n".join(lines)


def run_scan(args: argparse.Namespace) -> int:
    """Scan texts and write a ``scan`` run."""
    from zcp_core.artifacts import write_scan_run
    from zcp_core.runs import load_run

    texts, lib = _load(args)
    out = claim_out(args, args.out or str(Path("runs") / f"scan-{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}"),
                    "scan")
    folder, summary = write_scan_run(out, texts, lib, _inputs(args), mode=args.mode, engine=args.engine)
    summary = {**summary, "run": str(folder)}
    emit(args, summary, scan_text(load_run(folder)) + f"\nrun: {folder}")
    return 0


def flags_text(flags: dict[str, int]) -> str:
    """``Flags to review: 97 matches of review-only patterns (left in place); 3 ….``, or that there are none."""
    from zcp_core.artifacts.report import flags_sentence

    return flags_sentence(flags)


def _residual_scorer(spec: str, texts: list[Any]) -> tuple[Any, str]:
    """The under-cleaning scorer ``--scorer`` names, and how the cards describe it.

    ``auto`` fits a TF-IDF detector on the input texts (human against LLM), so the flag runs by default;
    inputs with only one label cannot fit one, and the card says so.
    """
    from zcp_core.detector import detector_scorer

    if spec == "none":
        return None, "switched off with --scorer none"
    if spec != "auto":
        return detector_scorer(spec), f"the detector `{spec}`"
    labels = {t.label for t in texts}
    if not {"human", "llm"} <= labels:
        return None, "--scorer auto needs human and LLM texts in the inputs to fit its detector"
    from zcp_core.detector import train_detector

    n = len(texts)
    return (detector_scorer(train_detector(texts, "tfidf")),
            f"P(LLM) from a TF-IDF detector fitted on the {n} input texts (human against LLM; `--scorer auto`)")


def run_clean(args: argparse.Namespace) -> int:
    """Clean texts and write a ``clean`` run with the release."""
    from zcp_core.artifacts import CleanConfig, RunInputs, load_decisions, write_clean_run
    from zcp_core.errors import DataError

    if args.edges not in ("auto", "none") and not Path(args.edges).is_file():
        raise DataError(args.edges, None, "--edges", "no such model file (use 'auto', 'none' or a .npz file)")
    cfg = (CleanConfig(residual_rule="threshold", residual_threshold=args.under_threshold, held_back=args.held_back,
                       edges=args.edges)
           if args.under_threshold is not None
           else CleanConfig(residual_top_share=args.under_top, held_back=args.held_back, edges=args.edges))
    from zcp_core.publish import find_license, require_license

    require_license(find_license(args.paths, args.license), args.allow_unlicensed)  # refuse before loading
    texts, lib = _load(args)
    claim_out(args, args.out, "clean")
    scorer, note = _residual_scorer(args.scorer, texts)
    decisions = load_decisions(args.decisions) if args.decisions else None
    inputs = _inputs(args)
    # the manifest and the cards name the scorer, not just its function
    inputs = RunInputs(inputs.paths, inputs.command,
                       {**dict(inputs.config or {}), "scorer": str(args.scorer), "scorer_note": note},
                       args.license, args.allow_unlicensed)
    folder, summary = write_clean_run(args.out, texts, lib, inputs, decisions=decisions, scorer=scorer,
                                      engine=args.engine, config=cfg)
    from zcp_core.artifacts.report import report
    from zcp_core.runs import load_run

    summary = {**summary, "run": str(folder)}
    text = (report(load_run(folder)).to_text() +
            f"\n\nrelease: {folder / 'cleaned'}  audit card: {folder / 'README.md'}")
    emit(args, summary, text)
    return 0
