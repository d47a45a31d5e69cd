"""Coverage of the deterministic generators on the bundled GSM8K test set.

Prints (and with --write, stores in benchmarks/results/reference_coverage.md):
* the share of items the numeric perturbation traces, and failures by kind;
* the deterministic rewording: share of (item, version) pairs that reach the
  0.5 non-numeric change bar, and mean/min change over the ones made and over all.

Usage: .venv/bin/python benchmarks/reference_coverage.py [--seed 0] [--versions 1] [--write]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    from zcp_core.data import load_items
    from zcp_core.reference import failure_kind, perturb_gsm8k, reword_deterministic, reword_one

    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--versions", type=int, default=1)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    items = load_items(ROOT / "data" / "gsm8k" / "test.jsonl")
    n = len(items)
    t = time.perf_counter()
    rs = perturb_gsm8k(items, seed=args.seed)
    t_ref = time.perf_counter() - t
    kinds = Counter(failure_kind(f.reason) for f in rs.failures)
    first50 = perturb_gsm8k(items[:50], seed=args.seed)
    t = time.perf_counter()
    ps = reword_deterministic(items, versions=args.versions, seed=args.seed)
    t_para = time.perf_counter() - t
    every = [reword_one(it, k, args.seed)[1] for it in items for k in range(args.versions)]
    made = list(ps.change_fraction)
    lines = [
        f"# Reference and paraphrase coverage (bundled GSM8K test, n={n}, seed={args.seed})",
        "",
        f"Command: `.venv/bin/python benchmarks/reference_coverage.py --seed {args.seed} "
        f"--versions {args.versions}{' --write' if args.write else ''}`",
        "",
        "## Numeric perturbation (`perturb_gsm8k`)",
        f"- traced: {len(rs.items)}/{n} = {len(rs.items) / n:.3f} ({t_ref:.1f} s)",
        f"- first 50 items (the probe demo sample): {len(first50.items)}/50 traced",
        "- failures by kind: " + ", ".join(f"{k} {v}" for k, v in kinds.most_common()),
        "",
        f"## Deterministic rewording (`reword_deterministic`, versions={args.versions})",
        f"- made (change >= 0.5 and every number kept): {len(made)}/{len(every)} = {len(made) / len(every):.3f} "
        f"({t_para:.1f} s)",
        f"- non-numeric change over the ones made: mean {statistics.mean(made):.3f}, min {min(made):.3f}",
        f"- over every item, before the 0.5 bar: mean {statistics.mean(every):.3f}, min {min(every):.3f}, "
        f"median {statistics.median(every):.3f}",
        "- failures by kind: " + ", ".join(f"{k} {v}" for k, v in
                                           Counter(failure_kind(f.reason) for f in ps.failures).most_common()),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        out = ROOT / "benchmarks" / "results" / "reference_coverage.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)


if __name__ == "__main__":
    main()
