"""Twin 1 against a twin of twin 1: the real test's one asymmetry, original -> derived, on unseen text (issue 23).

Twin 1 of every GSM8K test item is made with ``--seed 1``; twin 1 then stands as an original and is perturbed
again where it traces (``zcp reference build --dataset <twin 1 items> --format items --seed 2``). The untouched
embedded model is probed on twin 1 against its own twin. Both arms are text no model has seen, so a reading
of contamination here is the generator's direction bias (derived twins harder than what they derive from):
P_first and P_all C <= 0.6 and each effect's 95% CI holding 0 is the decisive check. The seeds are fixed
here; a failure is a finding, never a reason to reseed.

    .venv/bin/python benchmarks/probe_twin_of_twin.py --json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from twin_probe_common import PROBE_ARGS, ROOT, Clock, confidence_with_ci, table, verdict, write_result, zcp  # noqa: E402

DATASET = "data/gsm8k/test.jsonl"
TWIN_SEED, TWIN_OF_TWIN_SEED = 1, 2
SIGN_FLIP_SEED = 0  # the probe's --seed: its sign-flip permutation test


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="runs/bench-twin-of-twin")
    ap.add_argument("--limit", type=int, default=0, help="first N items (0: the whole test set)")
    ap.add_argument("--json", action="store_true", help="print the confidence as the last line, as JSON")
    ap.add_argument("--result", default=str(ROOT / "benchmarks" / "results" / "probe_twin_of_twin.md"))
    args = ap.parse_args()
    out, clock = Path(args.out), Clock()
    first, second, probe = out / "twin1", out / "twin-of-twin", out / "probe"
    limit = ["--limit", str(args.limit)] if args.limit else []
    b1 = json.loads(zcp("reference", "build", "--dataset", DATASET, "--seed", str(TWIN_SEED), "--prior-model", "none",
                        "--out", str(first), "--json", *limit))
    # Twin 1 stands as an original: the same items without original_id (the probe pairs an arm by it).
    twins = str(out / "twin1-as-original.jsonl")
    rows = [json.loads(line) for line in (first / "reference.jsonl").read_text().splitlines() if line.strip()]
    Path(twins).write_text("".join(json.dumps({k: v for k, v in r.items() if k != "original_id"}) + "\n"
                                   for r in rows))
    b2 = json.loads(zcp("reference", "build", "--dataset", twins, "--format", "items", "--seed",
                        str(TWIN_OF_TWIN_SEED), "--out", str(second), "--json"))
    zcp("probe", "--dataset", twins, "--format", "items", "--reference", str(second),
        *PROBE_ARGS[:-1], str(SIGN_FLIP_SEED), "--out", str(probe))
    conf = confidence_with_ci(probe)
    ok, notes = verdict(conf)
    card = b2["twin_card"]
    from zcp_core.reference import METHOD_NUMERIC

    cmd = "python benchmarks/probe_twin_of_twin.py" + (f" --limit {args.limit}" if args.limit else "") + " --json"
    keys = ("n_pairs", "larger_share", "log_ratio_mean", "log_ratio_ci", "trailing_zero_rate", "multiple_of_5_rate",
            "neutral_prior_diff", "neutral_prior_ci90", "fallback_share", "same_digits_share")
    write_result(Path(args.result), "Twin 1 against a twin of twin 1 (untouched SmolLM2, GSM8K test)", cmd, [
        f"Twin 1: `zcp reference build --dataset {DATASET} --seed {TWIN_SEED}` ({b1['traced']} of {b1['n']} items). "
        f"Twin of twin 1: `zcp reference build --dataset <twin 1 items> --format items --seed {TWIN_OF_TWIN_SEED}` "
        f"({b2['traced']} of {b2['n']} twins traced again). Probe: twin 1 as the original arm, `zcp probe --format "
        f"items {' '.join(PROBE_ARGS)}`; {clock():.0f} s wall in all.", "",
        *table(conf), "", "Done when P_first and P_all C <= 0.6 and each effect's 95% CI holds 0:", "",
        *[f"- {n}" for n in notes], "",
        "Acc is reported, not judged: the model answers about 1% of either arm right, so it can hardly differ.", "",
        "Twin card of the twins of twin 1 (against twin 1):", "", "| key | value |", "|---|---|",
        *[f"| {k} | {json.dumps(card.get(k))} |" for k in keys],
    ], f"generator `{METHOD_NUMERIC}`, model smollm2 (SmolLM2-135M-Instruct, embedded)")
    print(Path(args.result).read_text())
    if args.json:
        print(json.dumps(conf, sort_keys=True))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
