"""Per-item p in the tails, where BH acts: real originals and pseudo-null draws from the same runs' answers.

For each probe run given (folders holding ``records.parquet``), on the flag metric (P_all by default):

* real originals: the share of items with p < 0.05 and p < 0.01, each with its exact 95% interval. On a
  model that never saw the test set these shares should hold 5% and 1%;
* pseudo-null draws: each draw puts a random twin of each item in the original's role against its other
  twins (no new model calls) and flags by BH at q. The share of draws with at least one flag estimates the
  probability of a flag under a complete null (it should not lie wholly above q). The draws share one run's
  answers, so they are not independent: the interval is that of independent draws and is too narrow by an
  unknown amount;
* the benchmark level of every metric the run measured (its own test, C and p); with ``--family RUN ...``,
  Holm across the P_first and P_all tests of the named runs (the benign fine-tunes: no test may reject at a
  Holm-adjusted 0.05);
* where the run's items carry a lab split (``C`` trained on, ``U`` held out; ``--splits FILE``), flagged C
  and U and the false discovery proportion among the flags, with its exact 95% interval.

Writes ``--out`` (markdown).

    .venv/bin/python benchmarks/probe_item_null.py RUN [RUN ...] --out benchmarks/results/probe_item_null.md
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from zcp_core.probe.ktwins import FlagRule, bh_flags, item_pvalues, pseudo_null_pvalues

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from _provenance import header  # noqa: E402
from probe_test_size import clopper_pearson  # noqa: E402


def _share(hits: int, n: int) -> str:
    lo, hi = clopper_pearson(hits, n, 0.95)
    return f"{hits} of {n} ({100 * hits / n:.2f}%; 95% CI {100 * lo:.2f}% to {100 * hi:.2f}%)" if n else "no items"


def _splits(path: Path | None) -> dict[str, str]:
    if path is None:
        return {}
    rows = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return {str(r["id"]): str(r.get("split") or "") for r in rows}


def _manifest(run: Path) -> dict:
    return json.loads((run / "manifest.json").read_text())


def _metrics(manifest: dict) -> dict[str, dict]:
    """A run's benchmark-level results by metric (its manifest summary)."""
    m = manifest.get("summary", {}).get("metrics") or {}
    return {k: v for k, v in m.items() if isinstance(v, dict)}


def _level(bench: dict) -> str:
    if bench.get("confidence") is None:
        return f"not read ({bench.get('reason') or 'no verdict'})"
    ci = bench.get("effect_ci") or [None, None]
    diff = (f", mean difference {bench['effect']:+.4f} (95% CI {ci[0]:+.4f} to {ci[1]:+.4f})"
            if bench.get("effect") is not None and None not in ci else "")
    return f"C {bench['confidence']:.3f}, p {bench['p']:.3g}{diff} over {bench['n']} pairs"


def family_lines(runs: list[Path]) -> list[str]:
    """Holm across the P_first and P_all tests of the named runs: the benign fine-tunes' family."""
    from zcp_core.lab.quality import holm

    tests = [(f"{run.name} {k}", float(v["p"])) for run in runs for k, v in _metrics(_manifest(run)).items()
             if k in ("p_first", "p_all") and v.get("p") is not None]
    if not tests:
        return []
    adj = holm([p for _, p in tests])
    smallest = float(np.nanmin(adj))
    return ["## Benign fine-tunes: Holm across their P tests", "",
            "Target: no P_first or P_all test of the benign fine-tunes rejects at a Holm-adjusted 0.05.", "",
            "| test | p | Holm-adjusted p |", "|---|---|---|",
            *[f"| {name} | {p:.3g} | {a:.3g} |" for (name, p), a in zip(tests, adj)], "",
            f"Smallest Holm-adjusted p: {smallest:.3g}; target {'met' if smallest >= 0.05 else 'NOT met'}.", ""]


def run_lines(run: Path, metric: str, q: float, draws: int, splits: dict[str, str]) -> list[str]:
    """One run's section: real shares, pseudo-null flag probability, and flags against the truth."""
    records = pd.read_parquet(run / "records.parquet")
    real = item_pvalues(records, metric)
    p = real["item_p"].to_numpy(dtype=float)
    ok = np.isfinite(p)
    _, flagged = bh_flags(p, q)
    hist = real["n_twins"].value_counts().sort_index()
    # paths below the checkout shown relative to it, as a fresh checkout would run the command
    manifest = _manifest(run)
    # any checkout or worktree prefix before runs/ dropped too (a run made elsewhere names its machine's path)
    made = re.sub(r"(?<![\w.])/\S*?/(?=runs/)", "", str(manifest.get("command") or "not recorded").replace(
        str(ROOT) + "/", ""))
    levels = "; ".join(f"{k} {_level(v)}" for k, v in _metrics(manifest).items()
                       if not str(v.get("reason") or "").startswith("not measured"))
    lines = [f"## {run.name}", "", f"- Run: `{made}` (model {manifest.get('model')}).",
             f"- Benchmark level (the run's own test, every metric it measured): {levels}.",
             f"- Items with a p on {metric}: {int(ok.sum())}; distinct twins per item: "
             + ", ".join(f"{int(k)}: {int(v)}" for k, v in hist.items())
             + f"; comparators per item: {', '.join(map(str, sorted(set(real['comparators'].tolist()))))}.",
             f"- p floor: {1 / (real['calibration_size'].max() + 1):.2e}; BH's first threshold q/m: "
             f"{q / max(int(ok.sum()), 1):.2e}.",
             f"- Real originals, p < 0.05: {_share(int((p[ok] < 0.05).sum()), int(ok.sum()))}.",
             f"- Real originals, p < 0.01: {_share(int((p[ok] < 0.01).sum()), int(ok.sum()))}.",
             f"- Real originals flagged at q = {q}: {int(flagged.sum())}."]
    any_flag, below05, below01, n_null = 0, 0, 0, 0
    for d in range(draws):
        pn = pseudo_null_pvalues(records, metric, seed=d)["item_p"].to_numpy(dtype=float)
        pn = pn[np.isfinite(pn)]
        any_flag += int(bh_flags(pn, q)[1].any())
        below05, below01, n_null = below05 + int((pn < 0.05).sum()), below01 + int((pn < 0.01).sum()), n_null + pn.size
    lines += [f"- Pseudo-null draws ({draws}; a random twin plays the original against the item's other twins): "
              f"at least one flag in {_share(any_flag, draws)}; items below 0.05: {100 * below05 / max(n_null, 1):.2f}%, "
              f"below 0.01: {100 * below01 / max(n_null, 1):.2f}% (pooled over draws). The draws share one run's "
              "answers, so they are not independent: the interval is that of independent draws and too narrow by an "
              "unknown amount."]
    ids = real["pair_id"].astype(str).tolist()
    # flags against the truth only on a lab run: one whose items are (nearly) all in the split
    if splits and sum(i in splits for i in ids) >= 0.9 * len(ids):
        lab = [splits.get(i, "") for i in ids]
        c = sum(1 for f, s in zip(flagged, lab) if f and s == "C")
        u = sum(1 for f, s in zip(flagged, lab) if f and s == "U")
        fdp = _share(u, c + u) if c + u else "no flags"
        lines.append(f"- Flags against the truth: flagged C (trained on) {c} of {lab.count('C')}, flagged U (held out) "
                     f"{u} of {lab.count('U')}; false discovery proportion {fdp}.")
    return lines + [""]


def main() -> None:
    """Read each run and write the markdown."""
    ap = argparse.ArgumentParser()
    ap.add_argument("runs", nargs="+", type=Path, help="probe run folders")
    ap.add_argument("--metric", default="p_all")
    ap.add_argument("--q", type=float, default=0.1)
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--splits", type=Path, default=None, help="items jsonl with a split field (C / U)")
    ap.add_argument("--family", nargs="*", type=Path, default=[],
                    help="runs (among RUN) whose P_first/P_all tests form one Holm family (the benign fine-tunes)")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    FlagRule(args.metric, args.q)  # validates both
    splits = _splits(args.splits)
    lines = [header("Per-item p in the tails: real originals and pseudo-null draws",
                    "zcp_core.stats.itemp (conformal per-item p; the original against all twins but the spare)"), ""]
    for run in args.runs:
        lines += run_lines(run, args.metric, args.q, args.draws, splits)
    lines += family_lines(args.family)
    args.out.write_text("\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
