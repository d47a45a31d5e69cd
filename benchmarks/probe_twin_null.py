"""Twin 1 against twin 2: the probe on two twins of the same items, which no model has seen (issue 23).

Both arms are numeric twins of the whole GSM8K test set made by ``zcp reference build --twins 2 --seed 1``
(twin 1 with seed 1, twin 2 with seed 2, each its own coin), probed with the untouched embedded model
(``zcp probe --as-original 1 --twin 2``). Nothing separates the arms but the draw, so every metric should
read clean: P_first and P_all C <= 0.6 and each effect's 95% CI holding 0. It checks the test itself. The
seeds are fixed here; a failure is a finding, never a reason to reseed.

    .venv/bin/python benchmarks/probe_twin_null.py --json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from twin_probe_common import PROBE_ARGS, ROOT, Clock, confidence_with_ci, table, verdict, write_result, zcp  # noqa: E402

DATASET = "data/gsm8k/test.jsonl"
TWIN_SEED = 1  # twin 1 uses seed 1, twin 2 seed 2
SIGN_FLIP_SEED = 0  # the probe's --seed: its sign-flip permutation test


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="runs/bench-twin-null")
    ap.add_argument("--limit", type=int, default=0, help="first N items (0: the whole test set)")
    ap.add_argument("--json", action="store_true", help="print the confidence as the last line, as JSON")
    ap.add_argument("--result", default=str(ROOT / "benchmarks" / "results" / "probe_twin_null.md"))
    args = ap.parse_args()
    out, clock = Path(args.out), Clock()
    ref, probe = out / "reference", out / "probe"
    limit = ["--limit", str(args.limit)] if args.limit else []
    build = json.loads(zcp("reference", "build", "--dataset", DATASET, "--seed", str(TWIN_SEED), "--twins", "2",
                           "--prior-model", "none", "--out", str(ref), "--json", *limit))
    zcp("probe", "--dataset", DATASET, "--reference", str(ref), "--as-original", "1", "--twin", "2",
        *PROBE_ARGS[:-1], str(SIGN_FLIP_SEED), "--out", str(probe), *limit)
    conf = confidence_with_ci(probe)
    ok, notes = verdict(conf)
    from zcp_core.reference import METHOD_NUMERIC

    cmd = "python benchmarks/probe_twin_null.py" + (f" --limit {args.limit}" if args.limit else "") + " --json"
    write_result(Path(args.result), "Twin 1 against twin 2 (untouched SmolLM2, GSM8K test)", cmd, [
        f"Twins: `zcp reference build --dataset {DATASET} --seed {TWIN_SEED} --twins 2` ({build['n']} items; twin 1 "
        f"traced {build['twins'][0]['traced']}, twin 2 {build['twins'][1]['traced']}). Probe: `zcp probe "
        f"--as-original 1 --twin 2 {' '.join(PROBE_ARGS)}`; {clock():.0f} s wall in all.", "",
        *table(conf), "", "Done when P_first and P_all C <= 0.6 and each effect's 95% CI holds 0:", "",
        *[f"- {n}" for n in notes], "",
        "Acc is reported, not judged: the model answers about 1% of either arm right, so it can hardly differ.",
    ], f"generator `{METHOD_NUMERIC}`, model smollm2 (SmolLM2-135M-Instruct, embedded)")
    print(Path(args.result).read_text())
    if args.json:
        print(json.dumps(conf, sort_keys=True))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
