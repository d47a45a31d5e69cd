"""Dose-response of the lab: each detector's AUROC (C vs U) against exposures per C item, with ``took``.

Runs ``zcp lab dose --kinds solution,paper --doses 2,6,12 --build-missing --json`` (missing builds are made
and cached; a dose is epochs for ``solution`` and paraphrase versions for ``paper``) and writes
``benchmarks/results/lab_dose.md``: per kind and dose, the build, its manipulation check (took gain and CI)
and every detector's AUROC with its 95% and family-wise CIs. The recipe and the doses are fixed before the
run; a detector that stays at 0.5 where the build took is a finding.

    ZCP_CACHE=... HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/lab_dose.py
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from twin_probe_common import ROOT, Clock, write_result, zcp  # noqa: E402


def _ci(v: object) -> str:
    return f"[{v[0]:.2f}, {v[1]:.2f}]" if isinstance(v, list) and len(v) == 2 and None not in v else "-"


def _f(v: object, fmt: str = ".3f") -> str:
    return format(v, fmt) if isinstance(v, (int, float)) else "-"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kinds", default="solution,paper")
    ap.add_argument("--doses", default="2,6,12")
    ap.add_argument("--out", default="runs/bench-lab-dose")
    ap.add_argument("--result", default=str(ROOT / "benchmarks" / "results" / "lab_dose.md"))
    args = ap.parse_args()
    clock = Clock()
    s = json.loads(zcp("lab", "dose", "--kinds", args.kinds, "--doses", args.doses, "--build-missing", "--out",
                       args.out, "--json").strip().splitlines()[-1])  # --json prints the whole summary
    took = {(r["kind"], r["dose"]): r for r in s["took"]}
    builds = {(b["kind"], b["dose"]): b.get("build") for b in s.get("builds", [])}
    body = [f"`zcp lab dose --kinds {args.kinds} --doses {args.doses} --build-missing`: {len(took)} points, "
            f"{clock():.0f} s wall in all (cold builds included where the cache lacked them).", ""]
    for kind in s["kinds"]:
        body += [f"## {kind}", "", "| dose | build | took | took gain (95% CI) | full-CoT accuracy C lab/base, U lab/base |",
                 "|---|---|---|---|---|"]
        for d in s["doses"]:
            t = took.get((kind, d), {})
            body.append(f"| {d} | {builds.get((kind, d), '-')} | {t.get('took', '-')} | {_f(t.get('took_gain'), '+.3f')} "
                        f"{_ci([t.get('took_ci_lo'), t.get('took_ci_hi')])} | {_f(t.get('c_lab'))}/{_f(t.get('c_base'))}, "
                        f"{_f(t.get('u_lab'))}/{_f(t.get('u_base'))} |")
        body += ["", "| detector | " + " | ".join(f"dose {d}: AUROC (95% CI; family-wise)" for d in s["doses"]) + " |",
                 "|---|" + "---|" * len(s["doses"])]
        for det in s["detectors"]:
            cells = []
            for d in s["doses"]:
                r = next((r for r in s["rows"] if r["kind"] == kind and r["detector"] == det and r["dose"] == d), {})
                cells.append(f"{_f(r.get('auroc'))} ({_ci(r.get('auroc_ci'))}; {_ci(r.get('auroc_ci_fw'))})"
                             if isinstance(r.get("auroc"), (int, float)) else (r.get("reason") or "-"))
            body.append(f"| {det} | " + " | ".join(cells) + " |")
        body.append("")
    body += ["## What it means", "", "(written by hand below, after the run)", ""]
    default_result = str(ROOT / "benchmarks" / "results" / "lab_dose.md")
    cmd = "python benchmarks/lab_dose.py" + ("" if args.kinds == "solution,paper" else f" --kinds {args.kinds}") + \
        ("" if args.doses == "2,6,12" else f" --doses {args.doses}") + \
        ("" if args.out == "runs/bench-lab-dose" else f" --out {args.out}") + \
        ("" if args.result == default_result else f" --result {Path(args.result).resolve().relative_to(ROOT)}")
    from zcp_core.lab.config import LAB_AMBIGUITY
    from zcp_core.reference.numeric import method_for

    twins = method_for(ambiguity=LAB_AMBIGUITY)  # the lab's own generator, not the default

    write_result(Path(args.result), "Lab dose-response: detector AUROC against exposures per C item", cmd, body,
                 f"lab kinds {args.kinds} (profile default), base smollm2, twins {twins}")
    print(Path(args.result).read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
