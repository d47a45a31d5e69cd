"""Benign fine-tunes on GSM8K's training split, probed on the whole covered test set: they must read clean.

Nearly every model a user audits was fine-tuned on data like a benchmark's training split. Two lab kinds stand
for that (``zcp lab build --mode train-direct`` and ``--mode train-solution``): LoRA fine-tunes of the embedded
model on the bundled 300 GSM8K *train* items, less any that share a 13-gram with a test question. Each is
checked (did the fine-tune move the model?) and probed on every covered test item, original against K twins
(the probe's default K). K twins of the test set are built once (``zcp reference build --twins K --seed 0``,
the twins ``zcp probe --twins K`` draws) and shared by the probes; the untouched model is probed on the same
twins for comparison (outside the family).

Targets: no P_first/P_all test rejects at Holm-adjusted 0.05 across both builds (four tests), and BH at
q = 0.1 flags at most 1% of items in each. The recipe and the seeds are fixed here; a miss is a finding,
reported with its size, never a reason to retune.

    .venv/bin/python benchmarks/probe_train_null.py --json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from twin_probe_common import (  # noqa: E402
    ROOT,
    Clock,
    confidence_and_flags,
    flags_lines,
    table,
    write_result,
    zcp,
)

DATASET = "data/gsm8k/test.jsonl"
KINDS = ("train-direct", "train-solution")
PROBE = ("--metrics", "acc,p_first,p_all", "--max-new-tokens", "12", "--seed", "0")


def _ci(v: Any, spec: str = "+.3f") -> str:
    return "-" if not v or None in v else f"[{v[0]:{spec}}, {v[1]:{spec}}]"


def _build_lines(kind: str, build: dict[str, Any], check: dict[str, Any]) -> list[str]:
    o, mem, acc = build.get("test_overlap") or {}, check["memorised"], check["cot_accuracy"]
    return [
        f"### {kind}", "",
        f"- Build: `zcp lab build --mode {kind}`: {build['n_train_texts']} training texts, {build['steps']} optimiser "
        f"steps, final epoch loss {build['final_loss']:.3f}; cold build {build['build_seconds']:.0f} s on 2 shared "
        f"cores ({'reused from the cache in this run' if build.get('cached') else 'built in this run'}).",
        f"- Test overlap: {o.get('n_train')} training items against {o.get('n_test')} test questions; "
        f"{len(o.get('dropped') or [])} dropped before training: "
        + ("; ".join(o.get("overlaps") or []) or "none") + ".",
        f"- Moved: memorised (mean log-probability per token of its own training texts, lab minus base) "
        f"{mem['mean']:+.3f}, 95% CI {_ci(mem['ci'])}, n = {mem['n']}: {check['verdict']}.",
        f"- Full-CoT accuracy on {acc['n']} sampled test items (greedy, {acc['max_new_tokens']} tokens): lab "
        f"{acc['lab']:.1%}, base {acc['base']:.1%}, difference {acc['difference']:+.3f}, exact 95% CI "
        f"{_ci(acc['ci'])}, two-sided p {acc['p']:.3g}.", ""]


def _probe_lines(name: str, conf: dict[str, Any], summary: dict[str, Any], seconds: float) -> list[str]:
    return [f"Probe of {name}: {seconds:.0f} s wall (answers already in the response cache are not recomputed); "
            f"{summary['n_pairs']} pairs.", "", *table(conf), "", *flags_lines(conf["flags"], summary["n_pairs"]), ""]


def _card_lines(ref: Path) -> list[str]:
    s = json.loads((ref / "manifest.json").read_text())["summary"]
    c = s["twin_card"]
    pair = lambda v: f"{v[0]:.3f} / {v[1]:.3f}"  # noqa: E731  (originals / twins)
    return [f"Twin card of the shared twins (twin 1; `zcp reference build --twins {len(s['twins'])} --seed 0`): "
            f"{s['traced']} of {s['n']} items have twin 1 ({s['traced_share']:.1%}); twins 2..K: "
            + ", ".join(f"{t['traced']}" for t in s["twins"][1:]) + ".", "",
            "| balance | value |", "|---|---|",
            f"| twin answer larger than the original's | {c['larger_share']:.3f} |",
            f"| mean log ratio, twin / original (95% CI) | {c['log_ratio_mean']:+.4f} {_ci(c['log_ratio_ci'], '+.4f')} |",
            f"| neutral prior difference, nats (90% CI; {c['neutral_prior_model']}) | {c['neutral_prior_diff']:+.4f} "
            f"{_ci(c['neutral_prior_ci90'], '+.4f')} |",
            f"| trailing zero, originals / twins | {pair(c['trailing_zero_rate'])} |",
            f"| multiple of 5, originals / twins | {pair(c['multiple_of_5_rate'])} |", ""]


def _target_lines(probes: list[Path]) -> list[str]:
    """Holm across the builds' P_first/P_all tests, and each build's flag share, against the targets."""
    from zcp_core.lab.quality import holm

    tests, flags = [], []
    for run in probes:
        s = json.loads((run / "manifest.json").read_text())["summary"]
        tests += [(run.parent.name, m, s["metrics"][m]["p"], s["metrics"][m].get("confidence"))
                  for m in ("p_first", "p_all")]
        f = s["flags"]
        flags.append((run.parent.name, f["flagged"], f["items"]))
    adj = holm([t[2] for t in tests])
    smallest = float(min(adj))
    lines = [f"Holm across the {len(tests)} P_first/P_all tests of the builds:", "",
             "| build | metric | p | Holm-adjusted p | C |", "|---|---|---|---|---|",
             *[f"| {b} | {m} | {p:.3g} | {a:.3g} | {c:.3f} |" for (b, m, p, c), a in zip(tests, adj)], "",
             f"- Smallest Holm-adjusted p: {smallest:.3g}; target >= 0.05: "
             f"{'met' if smallest >= 0.05 else 'NOT met'}."]
    for name, n, items in flags:
        share = n / max(items, 1)
        lines.append(f"- {name}: {n} of {items} items flagged ({share:.2%}); target at most 1%: "
                     f"{'met' if share <= 0.01 else 'NOT met, by ' + format(share - 0.01, '.2%')}.")
    return lines


def main() -> int:
    from zcp_core.probe.ktwins import DEFAULT_TWINS

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="runs/bench-train-null")
    ap.add_argument("--twins", type=int, default=DEFAULT_TWINS, help="twins per item (default: the probe's)")
    ap.add_argument("--kinds", default=",".join(KINDS), help="train kinds to build and probe")
    ap.add_argument("--check-only", default="", metavar="KINDS",
                    help="kinds built and checked but not probed (the file says so); default: probe every kind")
    ap.add_argument("--json", action="store_true", help="print each build's confidence and flags as the last line")
    ap.add_argument("--result", default=str(ROOT / "benchmarks" / "results" / "probe_train_null.md"))
    args = ap.parse_args()
    out, clock = Path(args.out), Clock()
    ref = out / "reference"
    if not (ref / "manifest.json").exists():
        # K twins and the spare, as `zcp probe --twins K` builds them
        zcp("reference", "build", "--dataset", DATASET, "--twins", str(args.twins + 1), "--seed", "0", "--out",
            str(ref))
    body: list[str] = [f"Twins: {args.twins} per covered item, shared by every probe below. Probe settings: "
                       f"`zcp probe --dataset {DATASET} --reference {ref} --model M {' '.join(PROBE)}`.", "",
                       *_card_lines(ref), "## Builds and their checks", ""]
    confs: dict[str, Any] = {}
    probes: list[Path] = []
    probe_text: list[str] = []
    for kind in args.kinds.split(","):
        build = json.loads(zcp("lab", "build", "--mode", kind, "--no-progress", "--json"))
        check = json.loads(zcp("lab", "evaluate", "--name", kind, "--json"))
        body += _build_lines(kind, build, check)
        if kind in args.check_only.split(","):
            probe_text += [f"### lab:{kind}", "", f"Not probed in this run (`--check-only {kind}`): the probe of the "
                           "whole covered test set was left for a later run, so this build has no reading here.", ""]
            continue
        probe, t = out / kind / "probe", Clock()
        zcp("probe", "--dataset", DATASET, "--reference", str(ref), "--model", f"lab:{kind}", *PROBE,
            "--out", str(probe))
        conf, summary = confidence_and_flags(probe)
        conf["moved"] = check["moved"]
        confs[kind], probes = conf, probes + [probe]
        probe_text += [f"### lab:{kind}", "", *_probe_lines(f"lab:{kind}", conf, summary, t())]
    base, t = out / "untouched" / "probe", Clock()
    zcp("probe", "--dataset", DATASET, "--reference", str(ref), "--model", "smollm2", *PROBE, "--out", str(base))
    bconf, bsum = confidence_and_flags(base)
    body += ["## Probes, original against its twins", "", *probe_text,
             "### The untouched model on the same twins (for comparison; not in the family)", "",
             *_probe_lines("smollm2", bconf, bsum, t()),
             "## Targets", "", *_target_lines(probes)]
    cmd = "python benchmarks/probe_train_null.py" + (f" --check-only {args.check_only}" if args.check_only else "")
    write_result(Path(args.result), "Benign fine-tunes on the training split, probed on the GSM8K test set",
                 cmd + " --json", body,
                 f"model smollm2 (SmolLM2-135M-Instruct, embedded) and its train-kind LoRA builds; {clock():.0f} s "
                 "wall in all")
    print(Path(args.result).read_text())
    if args.json:
        print(json.dumps(confs, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
