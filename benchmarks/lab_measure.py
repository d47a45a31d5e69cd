"""Measure the contamination lab end to end: build time, cached rebuild, evaluate time and the confidences.

For each mode (direct, evasive) it builds (or reuses) the lab model, builds it
again to time the cache hit (ratio against the first build, measured in the
same run when the first call really trained), evaluates it, and finally
evaluates the clean base model on the direct build's split. Results go to
``benchmarks/results/lab_measure.json``.

    .venv/bin/python benchmarks/lab_measure.py                       # the default profile (|C|=|U|=40)
    .venv/bin/python benchmarks/lab_measure.py --n-contaminated 12 --batch-size 4 --threads 1
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path


def main() -> None:
    """Run the measurements and write the JSON report."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from zcp_core.lab import EvalOptions, build_lab, evaluate_lab, profile_config
    from zcp_core.lab.report import report as lab_report
    from zcp_core.runs import load_run

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n-contaminated", type=int, default=None)
    ap.add_argument("--batch-size", type=int, default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--modes", default="direct,evasive")
    ap.add_argument("--runs", default="runs/lab-measure")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "lab_measure.json"))
    args = ap.parse_args()
    report: dict = {"args": vars(args), "modes": {}}
    first_name = None
    for mode in args.modes.split(","):
        cfg = profile_config("default", mode, n_contaminated=args.n_contaminated,  # type: ignore[arg-type]
                             batch_size=args.batch_size)
        t = time.time()
        b1 = build_lab(cfg, threads=args.threads)
        first = time.time() - t
        t = time.time()
        b2 = build_lab(cfg, threads=args.threads)
        second = time.time() - t
        t = time.time()
        ev = evaluate_lab(b1.name, EvalOptions(), out=Path(args.runs) / f"eval-{mode}")
        eval_s = time.time() - t
        print(lab_report(load_run(ev.run_path)).to_text())  # as `zcp lab evaluate` prints it
        report["modes"][mode] = {
            "name": b1.name, "first_call_trained": not b1.cached, "first_call_s": first,
            "recorded_build_s": b1.summary.get("build_seconds"), "cached_call_s": second, "cached": b2.cached,
            "cache_speedup": (first / second) if not b1.cached and second > 0 else None,
            "evaluate_s": eval_s, "summary": dict(ev.summary),
        }
        first_name = first_name or b1.name
    t = time.time()
    clean = evaluate_lab(first_name, EvalOptions(model="smollm2"), out=Path(args.runs) / "eval-clean")
    print(lab_report(load_run(clean.run_path)).to_text())
    report["clean"] = {"evaluate_s": time.time() - t, "summary": dict(clean.summary)}
    Path(args.out).write_text(json.dumps(report, indent=2, default=str))
    print(args.out)


if __name__ == "__main__":
    main()
