"""Flags against the truth: lab builds probed at the default K, flagged trained-on (C) and held-out (U) items.

Each lab build named (``--builds``, lab names or kinds that ``zcp lab`` resolves) is probed on its own split's 80
originals (40 C, 40 U) against K + 1 numeric twins per item (the lab's pinned generator; the last twin is the
spare), with ``zcp probe --metrics acc,p_first,p_all --seed 0``. For each it reports, through
``probe_item_null.run_lines``: the per-item p's tail shares, pseudo-null flag probability, and flagged C, flagged
U and the false discovery proportion with its exact 95% interval. The untouched model is probed on the
first build's split as the reference.

Builds must exist (``zcp lab build ...``); a missing one is a line of the file, not a crash.

    .venv/bin/python benchmarks/probe_flags_truth.py --builds direct,upper-bound \
        --out benchmarks/results/probe_flags_truth.md
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]
from _provenance import header  # noqa: E402
from probe_item_null import run_lines  # noqa: E402
from probe_k_twins import write_sets  # noqa: E402

PROBE = ("--metrics", "acc,p_first,p_all", "--seed", "0")


def probe(model: str, items: Path, twins: Path, out: Path) -> Path:
    """``zcp probe`` of ``model`` on the items against the twins (resumed from the response cache)."""
    if not (out / "records.parquet").exists():
        subprocess.run([sys.executable, "-m", "zcp_core.cli.main", "probe", "--model", model, "--dataset", str(items),
                        "--format", "items", "--reference", str(twins), *PROBE, "--out", str(out)],
                       check=True, cwd=ROOT)
    return out


def manipulation(run: Path, split_of: dict[str, str]) -> str:
    """The manipulation check read from the probe: zero-CoT accuracy and mean P_all of the originals, C against U,
    with the exact one-sided Mann-Whitney p of P_all (C above U)."""
    import pandas as pd
    from scipy.stats import mannwhitneyu

    r = pd.read_parquet(run / "records.parquet")
    o = r[(r["arm"] == "original") & (r["ratio"] == 0.0)].assign(split=lambda d: d["pair_id"].map(split_of))
    acc = o.groupby("split")["acc"].mean().to_dict()
    c, u = o.loc[o["split"] == "C", "p_all"].astype(float), o.loc[o["split"] == "U", "p_all"].astype(float)
    p = float(mannwhitneyu(c, u, alternative="greater").pvalue)
    return (f"Manipulation check: zero-CoT accuracy {acc.get('C', float('nan')):.3f} on C against "
            f"{acc.get('U', float('nan')):.3f} on U; mean P_all {c.mean():.3f} against {u.mean():.3f} "
            f"(one-sided Mann-Whitney p {p:.2e}; took when below 0.025).")


def main() -> None:
    """Probe every build and write the markdown."""
    from zcp_core.lab.build import resolve_build
    from zcp_core.lab.config import LabError
    from zcp_core.probe.ktwins import DEFAULT_TWINS
    from zcp_core.runs import load_run

    ap = argparse.ArgumentParser()
    ap.add_argument("--builds", default="direct,upper-bound")
    ap.add_argument("--work", type=Path, default=ROOT / "runs" / "bench-flags-truth")
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    k = DEFAULT_TWINS
    lines = [header("Flags against the truth: lab builds at the default K", f"K = {k} twins and a spare per item; "
                    "lab generator (v5 twins, distinct); zcp_core.stats.itemp (conformal per-item p)"), ""]
    first_split: tuple[Path, Path, dict[str, str]] | None = None
    for build in args.builds.split(","):
        try:
            run = load_run(resolve_build(build))
        except LabError as exc:
            lines += [f"## {build}", "", f"Not built ({exc}).", ""]
            continue
        name = str(run.summary.get("name"))
        items, twins, split_of = write_sets(args.work / name, name, k + 1)
        first_split = first_split or (items, twins, split_of)
        out = probe(f"lab:{name}", items, twins, args.work / f"probe-{name}")
        lines += run_lines(out, "p_all", 0.1, args.draws, split_of)
        lines.insert(len(lines) - 1, f"- Build: `lab:{name}`. {manipulation(out, split_of)}")
    if first_split is not None:
        items, twins, split_of = first_split
        lines += run_lines(probe("smollm2", items, twins, args.work / "probe-smollm2"), "p_all", 0.1, args.draws,
                           split_of)
    args.out.write_text("\n".join(lines))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
