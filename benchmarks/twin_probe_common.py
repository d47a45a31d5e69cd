"""Shared by the twin null benchmarks (issue 23): run ``zcp``, read a probe run, write a results file.

The confidence line a script prints with ``--json`` is ``zcp confidence --json`` with, per metric, an
``effect_ci``: the probe's own 95% CI of the mean paired difference (original arm minus reference arm), whose
sign is the effect's (``effect`` is Cohen's d_z for P_first and P_all, the risk difference for Acc).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ZCP = [sys.executable, "-m", "zcp_core.cli.main"]
METRICS = ("acc", "p_first", "p_all")
#: The probe settings of every twin benchmark: the untouched embedded model, short answers (a number closes
#: its box well inside 12 tokens; the model solves about 1% at zero-CoT, so Acc is near-vacuous anyway).
PROBE_ARGS = ("--model", "smollm2", "--metrics", ",".join(METRICS), "--max-new-tokens", "12", "--seed", "0")


def zcp(*args: str) -> str:
    """Run ``zcp`` from the repository root; its stdout (raises on a failure, with stderr)."""
    out = subprocess.run([*ZCP, *args], capture_output=True, text=True, cwd=ROOT)
    if out.returncode:
        raise SystemExit(f"zcp {' '.join(args)} failed ({out.returncode}):\n{out.stderr[-3000:]}")
    return out.stdout


def head_commit() -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()


START_COMMIT = head_commit()  # the commit the run started at (later commits must not claim its results)


def confidence_with_ci(run: Path) -> dict[str, Any]:
    """``zcp confidence RUN --json`` plus, per metric, ``effect_ci``: the probe's own 95% CI of the mean paired
    difference (original arm minus reference arm; ``tests.parquet``: Wald for Acc, Student t for the logit
    metrics), which holds 0 exactly when the CI of the effect's sign does; and ``mean_difference``."""
    import math

    import pandas as pd

    conf = json.loads(zcp("confidence", str(run), "--json"))
    tests = pd.read_parquet(run / "tests.parquet")
    for _, t in tests[tests["arm"] == "original"].iterrows():
        v = conf["metrics"].get(t["metric"])
        if v is None or v.get("n") is None or not all(math.isfinite(float(t[k])) for k in ("ci_low", "ci_high")):
            continue
        v["effect_ci"] = [float(t["ci_low"]), float(t["ci_high"])]
        v["mean_difference"] = float(t["mean_diff"])
    return conf


def verdict(conf: dict[str, Any]) -> tuple[bool, list[str]]:
    """Done-when of issue 23: P_first and P_all C <= 0.6 and each effect's 95% CI holds 0."""
    notes, ok = [], True
    for m in ("p_first", "p_all"):
        v = conf["metrics"].get(m, {})
        c, ci = v.get("confidence"), v.get("effect_ci")
        good = c is not None and c <= 0.6 and ci is not None and ci[0] <= 0 <= ci[1]
        ok &= good
        notes.append(f"{m}: C {c if c is None else round(c, 3)}, effect CI {ci and [round(x, 4) for x in ci]}"
                     f" -> {'met' if good else 'NOT met'}")
    return ok, notes


def table(conf: dict[str, Any]) -> list[str]:
    rows = ["| metric | pairs | effect (d_z; Acc: risk difference) | mean difference, original arm - reference arm "
            "| its 95% CI | p | C |", "|---|---|---|---|---|---|---|"]
    for m in METRICS:
        v = conf["metrics"].get(m, {})
        ci = v.get("effect_ci")
        rows.append(f"| {m} | {v.get('n') if v.get('n') is not None else '-'} | {_f(v.get('effect'))} | {_f(v.get('mean_difference'))} | "
                    f"{'-' if ci is None or None in ci else f'[{ci[0]:.4f}, {ci[1]:.4f}]'} | {_f(v.get('p'), '.3g')} | "
                    f"{_f(v.get('confidence'), '.3f')} |")
    unread = [f"{m}: {conf['metrics'][m]['reason']}" for m in METRICS
              if conf["metrics"].get(m, {}).get("confidence") is None and conf["metrics"].get(m, {}).get("reason")]
    return rows + (["", "Not read: " + "; ".join(unread) + "."] if unread else [])


def confidence_and_flags(run: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`confidence_with_ci` with the run's ``flags`` block added, and the run's summary."""
    conf = confidence_with_ci(run)
    summary = json.loads((run / "manifest.json").read_text())["summary"]
    conf["flags"] = summary["flags"]
    return conf, summary


def finish(result: Path, conf: dict[str, Any], as_json: bool) -> int:
    """Print the results file and, with ``--json``, the confidence line last."""
    print(result.read_text())
    if as_json:
        print(json.dumps(conf, sort_keys=True))
    return 0


def flags_lines(flags: dict[str, Any], pairs: int) -> list[str]:
    """The run's flags block as a results file states it, against the null targets."""
    share = flags.get("share_p_below_05")
    return [f"Flags (`--flag-metric {flags.get('metric')} --fdr {flags.get('q')}`): {flags.get('flagged')} of "
            f"{flags.get('items')} items with a per-item p ({pairs} pairs); share of items with p < 0.05: "
            f"{'-' if share is None else f'{share:.2%}'}. Null targets: at most 1% flagged "
            f"({'met' if flags.get('flagged', 0) <= 0.01 * max(flags.get('items') or 0, 1) else 'NOT met'})."]


def holm_lines(*runs: Path) -> list[str]:
    """Holm across the P_first and P_all tests of the null runs that exist (the original-against-twins and twin-against-twins nulls of the untouched model)."""
    ps = []
    for run in runs:
        if not (run / "manifest.json").exists():
            continue
        m = json.loads((run / "manifest.json").read_text())["summary"]["metrics"]
        ps += [(f"{run.parent.name} {k}", m[k]["p"]) for k in ("p_first", "p_all") if m.get(k, {}).get("p") is not None]
    if len(ps) < 4:
        return [f"Holm family: {len(ps)} of 4 P tests found (probe both null runs); not adjusted yet."]
    from zcp_core.lab.quality import holm

    adj = [float(a) for a in holm([p for _, p in ps])]
    smallest = min(adj)
    return ["Holm across the four P_first/P_all tests of both null runs:", "",
            "| test | p | Holm-adjusted p |", "|---|---|---|",
            *[f"| {name} | {p:.3g} | {a:.3g} |" for (name, p), a in zip(ps, adj)], "",
            f"Smallest Holm-adjusted p: {smallest:.3g}; target >= 0.05: {'met' if smallest >= 0.05 else 'NOT met'}."]


def _f(x: Any, spec: str = ".4f") -> str:
    return "-" if x is None else format(x, spec)


def write_result(path: Path, title: str, command: str, body: list[str], versions: str) -> None:
    """A results file with the header every benchmarks/results file opens with."""
    text = [f"# {title}", "", f"Command: `{command}`",
            f"Made at commit {START_COMMIT} on {date.today().isoformat()}. Versions: {versions}.", "",
            f"Load average at the end: {os.getloadavg()[0]:.1f} (2 shared cores).", "", *body, ""]
    path.write_text("\n".join(text))


class Clock:
    """Wall seconds since it was made."""

    def __init__(self) -> None:
        self.t0 = time.time()

    def __call__(self) -> float:
        return time.time() - self.t0
