"""What a demo-sized run of a clean model reads: the untouched model on the first 40 and 50 GSM8K test items.

Reads a whole-test-set probe run of the untouched model (``RUN``: a ``zcp probe`` folder over
data/gsm8k/test.jsonl at the default K) and reports, with the shipped tests:

1. for the first 40 and the first 50 test items (those of them with twins): each metric's pairs, C and p;
2. how often an exchangeable null gives C > 0.9 at that number of pairs (C > 0.9 needs p below about
   0.0093), simulated with the size study's nulls (``probe_test_size.py``) at the same K;
3. a test written down before the run: is P_first's per-item effect (original minus the mean of its twins)
   larger in the first 40 test items than in the rest of the covered test set? Statistic: the difference of
   the two means; one-sided p from 10,000 random relabellings of which covered items are "first 40" (seed 0),
   ``(1 + hits) / (B + 1)``.

Writes ``--out`` (markdown).

    .venv/bin/python benchmarks/probe_demo_null.py RUN --out benchmarks/results/probe_demo_null.md
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from zcp_core.probe.analysis import item_gaps, metric_tests
from zcp_core.stats import confidence_from_p

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from _provenance import header  # noqa: E402
from probe_test_size import MODELS, cell_pvalues  # noqa: E402

METRICS = ("acc", "p_first", "p_all")
FIRST = (40, 50)
PERMUTATIONS = 10_000


def _test_ids(path: Path) -> list[str]:
    from zcp_core.data import load_items

    return [it.id for it in load_items(path)]


def subset_lines(records: pd.DataFrame, ids: list[str], metrics: tuple[str, ...]) -> list[str]:
    """C and p of each metric on the records of ``ids``."""
    from zcp_core.report import fmt_c, fmt_p

    sub = records[records["pair_id"].isin(set(ids))]
    tests = metric_tests(sub, metrics)
    out = []
    for m in metrics:
        t = tests[m]
        out.append(f"| {m} | {'—' if isinstance(t, str) else t.n} | "
                   + (f"{t} | — |" if isinstance(t, str) else f"{fmt_c(t.confidence, t.bound)} | {fmt_p(t.p)} |"))
    return out


def null_c_above(n: int, k: int, sims: int) -> list[str]:
    """Share of exchangeable null benchmarks of n items at K twins with C > 0.9, per null model."""
    rows = []
    for name, (kind, draw) in MODELS.items():
        p = cell_pvalues(kind, draw, n, k, sims, 999, seed=n * 31 + k)
        c = np.array([confidence_from_p(x) for x in p])
        rows.append(f"| {name} | {n} | {k} | {float((c > 0.9).mean()):.4f} |")
    return rows


def first_vs_rest(records: pd.DataFrame, first: list[str], seed: int = 0) -> tuple[float, float, int, int]:
    """The pre-registered permutation test of P_first's effect, first 40 items against the rest."""
    g = item_gaps(records, "p_first").dropna(subset=["gap"])
    is_first = g["pair_id"].isin(set(first)).to_numpy()
    gap = g["gap"].to_numpy(dtype=float)
    obs = float(gap[is_first].mean() - gap[~is_first].mean())
    rng = np.random.default_rng(seed)
    k, hits = int(is_first.sum()), 0
    for _ in range(PERMUTATIONS):
        lab = np.zeros(gap.size, bool)
        lab[rng.choice(gap.size, k, replace=False)] = True
        hits += gap[lab].mean() - gap[~lab].mean() >= obs - 1e-12
    return obs, (1 + hits) / (PERMUTATIONS + 1), k, int(gap.size - k)


def main() -> None:
    """Read the run and write the markdown."""
    ap = argparse.ArgumentParser()
    ap.add_argument("run", type=Path)
    ap.add_argument("--dataset", type=Path, default=ROOT / "data" / "gsm8k" / "test.jsonl")
    ap.add_argument("--sims", type=int, default=4000)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    records = pd.read_parquet(args.run / "records.parquet")
    manifest = json.loads((args.run / "manifest.json").read_text())
    ids = _test_ids(args.dataset)
    covered = set(records["pair_id"])
    k = int(records[records["arm"] == "reference"].groupby("pair_id").size().max())
    lines = [header("A demo-sized run of the untouched model: the first 40 and 50 GSM8K test items",
                    f"model {manifest.get('model')}; run {args.run.name}"), "",
             f"Run: `{manifest.get('command')}`; {len(covered)} covered items, up to {k} twins each.", ""]
    for n in FIRST:
        first = [i for i in ids[:n] if i in covered]
        lines += [f"## First {n} test items ({len(first)} with twins)", "",
                  "| metric | pairs | C | p |", "|---|---|---|---|", *subset_lines(records, first, METRICS), "",
                  f"How often an exchangeable null gives C > 0.9 at {len(first)} pairs and K = {k} "
                  f"({args.sims} null benchmarks each):", "",
                  "| null | pairs | K | share with C > 0.9 |", "|---|---|---|---|",
                  *null_c_above(len(first), k, args.sims), ""]
    first40 = [i for i in ids[:40] if i in covered]
    obs, p, n1, n2 = first_vs_rest(records, first40)
    lines += ["## P_first in the first 40 items against the rest (test fixed before the run)", "",
              f"Difference of mean per-item effects (original minus the mean of its twins), first 40 ({n1} items) "
              f"minus the rest ({n2} items): {obs:+.4f}; one-sided permutation p = {p:.4f} "
              f"({PERMUTATIONS} relabellings, seed 0).", ""]
    if math.isfinite(p):
        args.out.write_text("\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
