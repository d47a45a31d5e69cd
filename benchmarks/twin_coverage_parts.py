"""Which part of GSM8K test the default twins cover: covered against uncovered items, on the whole test set.

Builds the default generator's seed-0 twins of all 1,319 items and compares the items with a twin against
the rest (:func:`zcp_core.reference.coverage.coverage_comparison`): the covered share of each answer-size
quartile, solution steps, question length and repeated numbers, each with its two-sided p. A probe verdict
speaks for the covered part only; this says how that part differs.

    .venv/bin/python benchmarks/twin_coverage_parts.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import ROOT, header  # noqa: E402

DATASET = ROOT / "data" / "gsm8k" / "test.jsonl"
SEED = 0


def build_parser() -> argparse.ArgumentParser:
    """The script's options."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--result", type=Path, default=ROOT / "benchmarks" / "results" / "twin_coverage_parts.md")
    return ap


def main(argv: list[str] | None = None) -> int:
    """Build the twins, compare, write the results file."""
    from zcp_core.data import load_items
    from zcp_core.reference import perturb_gsm8k
    from zcp_core.reference.coverage import coverage_comparison

    args = build_parser().parse_args(argv)
    t0 = time.perf_counter()
    items = load_items(DATASET)
    rs = perturb_gsm8k(items, seed=SEED)
    cov = coverage_comparison(items, {t.original_id for t in rs.items if t.original_id})
    lines = [header("Which part of GSM8K test the default twins cover", f"generator `{rs.method}`, seed {SEED}"), "",
             f"{cov.sentence}", "",
             "| answer-size quartile (smallest first) | 1 | 2 | 3 | 4 |", "|---|---|---|---|---|",
             "| covered share | " + " | ".join(f"{q:.1%}" if q is not None else "–" for q in cov.quartile_coverage)
             + " |", "",
             "| feature | covered | uncovered | two-sided p |", "|---|---|---|---|"]
    for r in cov.rows:
        fmt = (lambda v: f"{v:.1%}") if r.kind == "share" else (lambda v: f"{v:.2f}")
        lines.append(f"| {r.feature} | {fmt(r.covered) if r.covered is not None else '–'} | "
                     f"{fmt(r.uncovered) if r.uncovered is not None else '–'} | "
                     f"{f'{r.p:.2g}' if r.p is not None else '–'} |")
    lines += ["", "p: Fisher's exact test for a share, Mann-Whitney U for a mean. A repeated number is a number "
              "the question writes more than once (by its digits).",
              f"Wall time {time.perf_counter() - t0:.0f} s on 2 shared cores."]
    args.result.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(cov.sentence)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
