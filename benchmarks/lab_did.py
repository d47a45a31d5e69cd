"""The lab against its own base model: the plain test and the difference in differences, on C and U.

Runs ``zcp lab evaluate --name direct`` (the build's base model as the control, the default) and writes
``benchmarks/results/lab_did.md``: C per metric on C and U for the plain test and relative to the control,
the AUROC of the per-item gap and of the per-item difference, both models' twin means, and the targets
(C >= 0.95 on C, <= 0.6 on U; AUROC of the difference >= 0.80).

    .venv/bin/python benchmarks/lab_did.py [--name paper --result benchmarks/results/lab_paper.md]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "lab_did.md"


def _f(v: object) -> str:
    return "-" if not isinstance(v, (int, float)) else f"{v:.3f}"


def _build_lines(build: str) -> list[str]:
    """The build's own record (time, loss, reward stage), from its cached manifest, when it is there."""
    path = Path(os.environ.get("ZCP_CACHE", ROOT / ".zcp_cache")) / "lab" / build / "build" / "manifest.json"
    if not path.exists():
        return []
    b = json.loads(path.read_text())["summary"]
    out = [f"Build {build}: {b.get('steps')} steps on {b.get('n_train_texts')} texts, final loss "
           f"{_f(b.get('final_loss'))}, {b.get('build_seconds', 0):.0f} s cold on this machine (training "
           f"{b.get('train_seconds', 0):.0f} s)."]
    if b.get("reward"):
        r = b["reward"]
        grpo = (r.get("spec") or {}).get("method") == "grpo"
        out.append(f"Reward stage: {r.get('n_samples')} samples on {r.get('n_prompts')} C prompts "
                   f"({json.dumps(r.get('spec'))}), mean reward {_f(r.get('mean_reward'))}, {r.get('n_kept')} correct"
                   + (f", GRPO ({r.get('steps')} steps, {r.get('train_seconds') or 0:.0f} s)" if grpo else
                      f" and trained on ({r.get('steps')} steps); sampling {r.get('sample_seconds') or 0:.0f} s")
                   + f"; {r.get('zero_variance_groups')} of {r.get('n_prompts')} groups with zero reward variance "
                   "(no GRPO gradient there).")
    return out


def main() -> int:
    """Evaluate the direct build with its base model as control and write the results file."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--result", type=Path, default=OUT, help="results file to write (default lab_did.md)")
    ap.add_argument("--name", default="direct", help="lab build or alias to evaluate (default direct)")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, str(ROOT))
    from zcp_core.lab import EvalOptions, evaluate_lab
    from zcp_core.lab.config import LAB_AMBIGUITY
    from zcp_core.reference.numeric import method_for

    twins = method_for(ambiguity=LAB_AMBIGUITY)  # the lab's own generator, not the default

    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    res = evaluate_lab(args.name, EvalOptions(), out=Path(os.environ.get("ZCP_RUNS", "runs")) / f"lab-eval-{args.name}-did")
    s = res.summary
    did, ctl = s["did"], s["control"]
    lines = [
        "# The lab against its base model: plain test and difference in differences", "",
        "Command: `HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/lab_did.py"
        + ("" if args.result == OUT else f" --result benchmarks/results/{args.result.name}")
        + ("" if args.name == "direct" else f" --name {args.name}") + "` "
        f"(= `zcp lab evaluate --name {args.name} --json`, base model as the control)",
        f"Made at commit {commit[:12]} on {dt.date.today().isoformat()}. Versions: lab build {s['build']} "
        f"({s['mode']}, {s['profile']}), audited `{s['model']}`, control `{ctl['model']}`, numeric twins "
        f"{s.get('twin_method', twins)}, {s['n_c']} C + {s['n_u']} U pairs.", "",
        "C is the Contamination Confidence (0.5: no evidence; 0.999 is the one ceiling, shown as ≥ 0.999). "
        "'Relative to the control' tests each item's gap (original - twin; log P for the P metrics) minus the "
        "base model's gap on the same item with the sign-flip test; U is the placebo check.", "",
        "| metric | C on C | C on U | AUROC of the gap | C on C, relative to the control | C on U, relative to the "
        "control | AUROC of the difference |", "|---|---|---|---|---|---|---|",
    ]
    for m in s["contaminated"]:
        lines.append(f"| {m} | {_f(s['contaminated'][m])} | {_f(s['clean'].get(m))} | "
                     f"{_f(s['detection'].get(m, {}).get('auroc'))} | {_f(did['contaminated'].get(m))} | "
                     f"{_f(did['clean'].get(m))} | {_f(did['detection'].get(m, {}).get('auroc'))} |")
    lines += ["", f"Twin means (strength check on {ctl['strength']['metric']}): audited "
              f"{json.dumps(ctl['twin_means']['audited'])}, control {json.dumps(ctl['twin_means']['control'])}; "
              f"ratio {_f(ctl['strength']['ratio'])}; warning: {ctl['strength']['warning'] or 'none'}.",
              f"Targets, plain: {json.dumps(s['targets'])}. Relative to the control: {json.dumps(did['targets'])}; "
              f"AUROC of the difference ({did['auroc_metric']}) {_f(did['auroc'])} (target >= 0.80).",
              f"Manipulation check: took {s.get('took')}, full-CoT gain (C minus U, lab minus base) "
              f"{_f(s.get('took_gain'))}, 95% CI [{', '.join(_f(v) for v in s.get('took_ci') or [])}].",
              *_build_lines(s["build"]),
              f"Evaluation took {s['eval_seconds']:.0f} s on this machine (both models, response cache as found).", ""]
    args.result.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
