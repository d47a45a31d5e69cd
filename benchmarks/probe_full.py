"""The untouched embedded model, original against its twin (default generator), on the whole GSM8K test set, twin card beside it.

A finding with no target (issue 23): with twins as easy as their originals, an untouched model should read
clean; what it reads, next to the card that measures the twins' balance, says how far the remaining twin
bias (or the model's reading) moves the verdict.

    .venv/bin/python benchmarks/probe_full.py --json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from twin_probe_common import PROBE_ARGS, ROOT, Clock, confidence_with_ci, table, verdict, write_result, zcp  # noqa: E402

DATASET = "data/gsm8k/test.jsonl"
CARD_KEYS = ("n_pairs", "larger_share", "log_ratio_mean", "log_ratio_ci", "trailing_zero_rate", "multiple_of_5_rate",
             "neutral_prior_diff", "neutral_prior_ci90", "fallback_share", "same_digits_share", "failures",
             "fallbacks")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="runs/bench-probe-full")
    ap.add_argument("--limit", type=int, default=0, help="first N items (0: the whole test set)")
    ap.add_argument("--json", action="store_true", help="print the confidence as the last line, as JSON")
    ap.add_argument("--result", default=str(ROOT / "benchmarks" / "results" / "probe_full.md"))
    args = ap.parse_args()
    out, clock = Path(args.out), Clock()
    ref, probe = out / "reference", out / "probe"
    limit = ["--limit", str(args.limit)] if args.limit else []
    build = json.loads(zcp("reference", "build", "--dataset", DATASET, "--seed", "0", "--out", str(ref), "--json",
                           *limit))
    zcp("probe", "--dataset", DATASET, "--reference", str(ref), *PROBE_ARGS, "--out", str(probe), *limit)
    conf = confidence_with_ci(probe)
    _, notes = verdict(conf)
    card = build["twin_card"]
    from zcp_core.reference import METHOD_NUMERIC

    cmd = "python benchmarks/probe_full.py" + (f" --limit {args.limit}" if args.limit else "") + " --json"
    write_result(Path(args.result), f"Original against its twin ({METHOD_NUMERIC}), untouched SmolLM2, whole GSM8K test set", cmd, [
        f"Twins: `zcp reference build --dataset {DATASET} --seed 0` ({build['traced']} of {build['n']} items). "
        f"Probe: `zcp probe {' '.join(PROBE_ARGS)}`; {clock():.0f} s wall in all.", "",
        *table(conf), "", *[f"- {n}" for n in notes], "",
        "Twin card (`zcp reference build --json`, key `twin_card`):", "", "| key | value |", "|---|---|",
        *[f"| {k} | {json.dumps(card.get(k))} |" for k in CARD_KEYS], "",
        "## What it means", "", "(written by hand below, after the run)",
    ], f"generator `{METHOD_NUMERIC}`, model smollm2 (SmolLM2-135M-Instruct, embedded)")
    print(Path(args.result).read_text())
    if args.json:
        print(json.dumps(conf, sort_keys=True))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
