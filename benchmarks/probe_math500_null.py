"""Nulls on MATH-500 with template twins: the untouched embedded model, original against its twins and twin 1
against twins 2..K+1, P_first and P_all, Holm across the four tests.

SmolLM2-135M answers almost nothing on MATH at zero-CoT, and its answer-token probabilities there are low and
noisy, so this null has little power: it can show that template twins do not make a clean model look
contaminated, not that the probe would catch a contaminated one. Seeds are fixed; a miss is a finding.

    .venv/bin/python benchmarks/probe_math500_null.py --json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from twin_probe_common import (  # noqa: E402
        ROOT,
    Clock,
    confidence_and_flags,
    finish,
    flags_lines,
    holm_lines,
    table,
    write_result,
    zcp,
)

DATASET = "data/math500/test.jsonl"
#: The null's tests are P_first and P_all, which are teacher-forced on the gold: no answer needs generating (one
#: token is), and Acc is left out (the model answers almost no MATH item, so it could not differ)
#: No --calibrate flag: the probe's default (auto) adds P_first and P_all net of each answer's prior for template
#: twins, whose answers are a priori less likely than their originals' (twin_card_math500.md), and its verdict then
#: reads calibrated P_all. Both families are reported: the raw one a user would read with --calibrate off.
MATH_ARGS = ("--model", "smollm2", "--metrics", "p_first,p_all", "--max-new-tokens", "1", "--seed", "0")
CALIBRATED = ("p_first_cal", "p_all_cal")


def main() -> int:
    from zcp_core.probe.ktwins import DEFAULT_TWINS
    from zcp_core.reference.template_build import METHOD_TEMPLATE

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="runs/bench-math500-null")
    ap.add_argument("--twins", type=int, default=DEFAULT_TWINS, help="twins per item (twin 1's null uses K more)")
    ap.add_argument("--json", action="store_true", help="print the original arm's confidence as the last line")
    ap.add_argument("--result", default=str(ROOT / "benchmarks" / "results" / "probe_math500_null.md"))
    args = ap.parse_args()
    out, clock = Path(args.out), Clock()
    ref = out / "reference"
    build = json.loads(zcp("reference", "build", "--method", "template", "--dataset", DATASET, "--seed", "0",
                           "--twins", str(args.twins + 1), "--prior-model", "none", "--out", str(ref), "--json"))
    runs = {"original": out / "original" / "probe", "twin": out / "twin" / "probe"}
    zcp("probe", "--dataset", DATASET, "--reference", str(ref), *MATH_ARGS, "--out", str(runs["original"]))
    zcp("probe", "--dataset", DATASET, "--reference", str(ref), "--as-original", "1", *MATH_ARGS, "--out",
        str(runs["twin"]))
    body = [f"Twins: `zcp reference build --method template --dataset {DATASET} --seed 0 --twins {args.twins + 1}` "
            f"({build['traced']} of {build['n']} items have twins; per twin: "
            f"{', '.join(str(t['traced']) for t in build.get('twins', []))}). Probes: `zcp probe --reference ... "
            f"{' '.join(MATH_ARGS)}` (originals against all their twins), then with `--as-original 1` (twin 1 "
            f"against the others); {clock():.0f} s wall in all.", ""]
    confs = {}
    for name, run in runs.items():
        conf, summary = confidence_and_flags(run)
        confs[name] = conf
        cal = summary.get("calibration") or {}
        body += [f"## {'Originals against their twins' if name == 'original' else 'Twin 1 against twins 2..K+1'}", "",
                 f"Calibration: {'on' if cal.get('on') else 'off'} (`--calibrate {cal.get('mode', '?')}`, basis "
                 f"`{cal.get('basis', '?')}`); the verdict reads {(conf.get('headline') or {}).get('metric') or 'no metric'}.", "",
                 *table(conf), *_calibrated_rows(conf), "", *flags_lines(conf["flags"], summary["n_pairs"]), ""]
    body += ["Holm across the raw P_first/P_all tests (what a user reads with `--calibrate off`):", "",
             *holm_lines(runs["original"], runs["twin"]), "", *_calibrated_holm(confs), "",
             "Power: a 135M model answers almost no MATH item, so these tests can fail to reject for lack of "
             "signal. Read them as 'template twins do not make a clean model look contaminated', not as a "
             "measure of the probe's sensitivity on MATH."]
    cmd = "python benchmarks/probe_math500_null.py" + (f" --twins {args.twins}" if args.twins != DEFAULT_TWINS
                                                       else "") + " --json"
    write_result(Path(args.result), "Nulls on MATH-500 with template twins (untouched SmolLM2)", cmd, body,
                 f"twins `{METHOD_TEMPLATE}`, model smollm2 (SmolLM2-135M-Instruct, embedded)")
    return finish(Path(args.result), confs["original"], args.json)


def _calibrated_rows(conf: dict) -> list[str]:
    """The calibrated metrics' rows, in the table's columns (their effect is in nats of log-ratio)."""
    rows = []
    for m in CALIBRATED:
        v = conf["metrics"].get(m, {})
        if v.get("n") is None:
            continue
        rows.append(f"| {m} | {v['n']} | {v['effect']:.4f} | - | - | {v['p']:.3g} | {v['confidence']:.3f} |")
    return rows


def _calibrated_holm(confs: dict) -> list[str]:
    """Holm across the four calibrated tests (both arms): the family a user reading calibrated metrics relies on."""
    from zcp_core.lab.quality import holm

    tests = [(f"{arm} {m}", confs[arm]["metrics"][m]["p"]) for arm in confs for m in CALIBRATED
             if confs[arm]["metrics"].get(m, {}).get("p") is not None]
    if len(tests) < 4:
        return ["Calibrated metrics: not all four tests available."]
    adj = holm([p for _, p in tests])
    return ["Holm across the four calibrated tests (P_first and P_all net of each answer's prior; the family the "
            "default verdict reads):", "",
            "| test | p | Holm-adjusted p |", "|---|---|---|",
            *[f"| {n} | {p:.3g} | {a:.3g} |" for (n, p), a in zip(tests, adj, strict=True)], "",
            f"Smallest Holm-adjusted p: {min(adj):.3g}; target >= 0.05: {'met' if min(adj) >= 0.05 else 'NOT met'}."]


if __name__ == "__main__":
    raise SystemExit(main())
