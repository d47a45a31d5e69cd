"""The lab matrix over replicate builds: median AUROC, range, replicates caught and the pooled exact test per cell.

Runs ``zcp lab matrix --kinds direct,evasive,verbatim,solution,paper,none --replicates 3 --single-build
evasive,paper --build-missing --json``: replicate r builds every kind with split and training seed r (evasive and
paper once: their single builds stand), evaluates each build and pools the replicates
(:mod:`zcp_core.lab.replicates`). Builds and model responses come from the cache where they exist, so an
interrupted run resumes; on an empty cache it needs about 4 hours of 2 CPU cores. It writes
``benchmarks/results/lab_matrix_replicates.md``: the builds of every replicate (made now or cached, build seconds,
final loss), then the pooled run's own report (the table the app and ``zcp lab report`` show, each replicate's
manipulation check in words).

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/lab_matrix_replicates.py
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from twin_probe_common import ROOT, Clock, write_result, zcp  # noqa: E402

KINDS = "direct,evasive,verbatim,solution,paper,none"
SINGLE = "evasive,paper"


def _lab_cache() -> Path:
    from zcp_core.lab.build import lab_root

    return lab_root()


def _cached_builds() -> set[str]:
    lab = _lab_cache()
    return {p.name for p in lab.iterdir() if (p / "build" / "manifest.json").exists()} if lab.is_dir() else set()


def _build_line(b: dict, made: set[str]) -> str:
    from zcp_core.report import fmt_count, fmt_num

    path = _lab_cache() / str(b.get("build")) / "build" / "manifest.json"
    s = json.loads(path.read_text())["summary"] if b.get("build") and path.exists() else {}
    origin = "this run" if b.get("build") in made else "cache"
    return (f"| {b['replicate']} | {b['kind']} | {b.get('build') or '(base model)'} | "
            f"{origin if b.get('build') else '-'} | {fmt_count(s.get('build_seconds'))} | "
            f"{fmt_count(s.get('n_train_texts'))} | {fmt_num(s.get('final_loss'))} | {b['n_c']}/{b['n_u']} | "
            f"{str(b.get('split_sha') or '-')[:12]} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kinds", default=KINDS)
    ap.add_argument("--replicates", type=int, default=3)
    ap.add_argument("--single-build", default=SINGLE)
    ap.add_argument("--out", default="runs/bench-lab-replicates")
    ap.add_argument("--result", default=str(ROOT / "benchmarks" / "results" / "lab_matrix_replicates.md"))
    args = ap.parse_args()
    cmd = ["lab", "matrix", "--kinds", args.kinds, "--replicates", str(args.replicates), "--single-build",
           args.single_build, "--build-missing", "--out", args.out, "--json"]
    before = _cached_builds()
    clock = Clock()
    zcp(*cmd)
    wall = clock()
    made = _cached_builds() - before

    from zcp_core.lab.report import report
    from zcp_core.runs import load_run

    run = load_run(ROOT / args.out)
    s = run.summary
    body = [f"`zcp {' '.join(cmd)}`; {wall:.0f} s wall in this invocation (builds and answers already in the cache "
            f"are not recomputed; builds made in it: {', '.join(sorted(made)) or 'none'}).", "",
            "## Builds", "",
            "| replicate | kind | build | made | build s | training texts | final loss | C/U items | split |",
            "|---|---|---|---|---|---|---|---|---|", *[_build_line(b, made) for b in s["builds"]], "",
            report(run).to_markdown(level=2)]
    from zcp_core.lab.config import LAB_AMBIGUITY
    from zcp_core.reference.numeric import method_for

    extra = "" if (args.kinds, args.replicates, args.single_build) == (KINDS, 3, SINGLE) else \
        f" --kinds {args.kinds} --replicates {args.replicates} --single-build {args.single_build}"
    write_result(Path(args.result), "Lab matrix over replicate builds: medians, ranges, caught counts, pooled "
                 "exact p", "python benchmarks/lab_matrix_replicates.py" + extra, body,
                 f"lab kinds {args.kinds} (profile default), base smollm2, twins {method_for(ambiguity=LAB_AMBIGUITY)}")
    print(Path(args.result).read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
