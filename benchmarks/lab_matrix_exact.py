"""Exact tests for every cell of the lab matrix: the permutation p of each AUROC, Holm-adjusted across the reading.

Reads a stored matrix run (default: the bundled ``data/examples/lab-matrix``, made by ``zcp lab matrix``) and
its per-item scores (``records.parquet``), and computes for every kind x detector the exact two-sided
permutation p of the C/U labels (the Mann-Whitney distribution over mid-rank sums, ties included) and that p
Holm-adjusted across every cell the matrix reading uses (full-CoT accuracy on twins, which restates the
manipulation check, stays outside the family). No model runs. With ``--amend`` it writes the two columns into
the run (``matrix.parquet`` and the summary's rows) and records the amendment in its manifest, so the app and
notebooks read them; the run's other numbers are unchanged.

    .venv/bin/python benchmarks/lab_matrix_exact.py
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]
from _provenance import command_line, git_commit  # noqa: E402

RUN = ROOT / "data" / "examples" / "lab-matrix"
OUT = ROOT / "benchmarks" / "results" / "lab_matrix_exact.md"


def main() -> int:
    import pandas as pd

    from zcp_core.lab.quality import OUTSIDE_FAMILY, json_rows, with_exact_p
    from zcp_core.lab.report import detector_name, matrix_reading
    from zcp_core.report import fmt_num, fmt_p
    from zcp_core.runs import atomic_write_json, atomic_write_parquet

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", default=str(RUN.relative_to(ROOT)), help="a `zcp lab matrix` run folder")
    ap.add_argument("--amend", action="store_true", help="write the exact p columns into the run")
    ap.add_argument("--result", default=str(OUT.relative_to(ROOT)))
    args = ap.parse_args()
    run = ROOT / args.run
    matrix = pd.read_parquet(run / "matrix.parquet")
    scores = pd.read_parquet(run / "records.parquet")
    table = with_exact_p(matrix.drop(columns=[c for c in ("auroc_p", "auroc_p_holm") if c in matrix]), scores)
    family = int(table["auroc_p_holm"].notna().sum())
    rows = ["| kind | detector | AUROC | exact p (two-sided) | Holm-adjusted p | reading |", "|---|---|---|---|---|---|"]
    for r in table.itertuples(index=False):
        if r.detector in OUTSIDE_FAMILY:
            reading = "restates the manipulation check (outside the family)"
        elif r.auroc_p_holm == r.auroc_p_holm and r.auroc_p_holm < 0.05:
            reading = "caught" if r.auroc > 0.5 else "inverted"
        else:
            reading = "–"
        rows.append(f"| {r.kind} | {detector_name(r.detector)} | {fmt_num(r.auroc)} | {fmt_p(r.auroc_p)} | "
                    f"{fmt_p(r.auroc_p_holm)} | {reading} |")
    manifest = json.loads((run / "manifest.json").read_text())
    text = ["# Exact permutation p of every lab matrix cell, Holm-adjusted across the reading", "",
            f"Command: `{command_line()}`",
            f"Made at commit {git_commit()} on {_dt.date.today().isoformat()}. Versions: matrix run "
            f"`{args.run}` (made at commit {str(manifest.get('git_sha', ''))[:12]}), scipy rank sums; no model "
            "runs.", "",
            f"- Cells in the Holm family: {family} (every kind x detector with an AUROC, full-CoT accuracy on "
            "twins excepted).",
            "- p: exact, two-sided, over every labelling of the items as C or U with the observed group sizes "
            "(ties by mid-ranks). A cell is read as caught (or inverted) when its Holm-adjusted p < 0.05.", "",
            *rows, "", "Reading:", "", *[f"- {line}" for line in matrix_reading(table)], ""]
    (ROOT / args.result).write_text("\n".join(text))
    print("\n".join(text))
    if args.amend:
        atomic_write_parquet(run / "matrix.parquet", table)
        manifest["summary"]["rows"] = json_rows(table)
        manifest.setdefault("amended", []).append({
            "what": "auroc_p and auroc_p_holm added to matrix.parquet and the summary's rows",
            "how": "benchmarks/lab_matrix_exact.py --amend, from the run's own records.parquet; no other number "
                   "changed (undo: drop the two columns)",
            "date": _dt.date.today().isoformat()})
        atomic_write_json(run / "manifest.json", manifest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
