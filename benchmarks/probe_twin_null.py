"""Twin 1 against twins 2..K+1: the probe on twins of the same items, which no model has seen.

K + 1 numeric twins of the whole GSM8K test set are made by ``zcp reference build --twins K+1 --seed 0``
(twin k with seed k - 1, the seeds ``zcp probe --twins K`` draws its own twins with, so the two null scripts
share answers through the response cache). The untouched embedded model is probed with twin 1 standing as
the original against the other K (``zcp probe --as-original 1``). Nothing separates the arms but the draw,
so the benchmark tests should read clean and each item's p should be uniform: the share of items with
p < 0.05 should lie in [3.4%, 6.6%], and BH at q = 0.1 should flag at most 1% of items. The seeds are fixed
here; a miss is a finding, never a reason to reseed. With the untouched model's run of the originals against
the same twins present (``runs/bench-null/untouched``, read by ``benchmarks/probe_item_null.py``), the four
P_first/P_all tests of both runs are Holm-adjusted together.

    .venv/bin/python benchmarks/probe_twin_null.py --json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from twin_probe_common import (  # noqa: E402
    PROBE_ARGS,
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

DATASET = "data/gsm8k/test.jsonl"
TWIN_SEED = 0  # twin k uses seed TWIN_SEED + k - 1; 0 is what `zcp probe --twins K` draws
CALIBRATED = (0.034, 0.066)  # the per-item test is calibrated when the share of p < 0.05 lies here


def main() -> int:
    from zcp_core.probe.ktwins import DEFAULT_TWINS

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="runs/bench-twin-null")
    ap.add_argument("--twins", type=int, default=DEFAULT_TWINS, help="twins each stand-in is probed against")
    ap.add_argument("--seed", type=int, default=TWIN_SEED,
                    help="twin 1's seed (twin k: seed + k - 1); the default shares twins with runs/bench-null")
    ap.add_argument("--limit", type=int, default=0, help="first N items (0: the whole test set)")
    ap.add_argument("--json", action="store_true", help="print the confidence and flags as the last line, as JSON")
    ap.add_argument("--result", default=str(ROOT / "benchmarks" / "results" / "probe_twin_null.md"))
    args = ap.parse_args()
    out, clock = Path(args.out), Clock()
    ref, probe = out / "reference", out / "probe"
    limit = ["--limit", str(args.limit)] if args.limit else []
    build = json.loads(zcp("reference", "build", "--dataset", DATASET, "--seed", str(args.seed), "--twins",
                           str(args.twins + 1), "--prior-model", "none", "--out", str(ref), "--json", *limit))
    zcp("probe", "--dataset", DATASET, "--reference", str(ref), "--as-original", "1", *PROBE_ARGS, "--out",
        str(probe), *limit)
    conf, summary = confidence_and_flags(probe)
    share = summary["flags"].get("share_p_below_05")
    calibrated = share is not None and CALIBRATED[0] <= share <= CALIBRATED[1]
    from zcp_core.reference import METHOD_NUMERIC

    cmd = ("python benchmarks/probe_twin_null.py" + (f" --twins {args.twins}" if args.twins != DEFAULT_TWINS else "")
           + (f" --seed {args.seed}" if args.seed != TWIN_SEED else "")
           + (f" --limit {args.limit}" if args.limit else "") + " --json")
    write_result(Path(args.result), f"Twin 1 against twins 2..{args.twins + 1} (untouched SmolLM2, GSM8K test)", cmd, [
        f"Twins: `zcp reference build --dataset {DATASET} --seed {args.seed} --twins {args.twins + 1}` "
        f"({build['n']} items; traced per twin: {', '.join(str(t['traced']) for t in build['twins'])}). Probe: "
        f"`zcp probe --as-original 1 {' '.join(PROBE_ARGS)}`; {clock():.0f} s wall in all (answers already in the "
        "response cache are not recomputed). Twins per item: "
        f"{json.dumps(summary['twins']['per_item'])} (twins: items).", "",
        *table(conf), "", *flags_lines(conf["flags"], summary["n_pairs"]), "",
        f"Per-item calibration: share of items with p < 0.05 is "
        f"{'-' if share is None else f'{share:.2%}'}; target [3.4%, 6.6%]: {'met' if calibrated else 'NOT met'}.", "",
        *holm_lines(ROOT / "runs" / "bench-null" / "untouched", probe), "",
        "Acc is reported, not judged: the model answers about 1% of either arm right, so it can hardly differ."
        if conf["metrics"].get("acc", {}).get("confidence") is not None else
        "Acc is not judged either way: where it is read, the model answers about 1% of either arm right.",
    ], f"generator `{METHOD_NUMERIC}`, model smollm2 (SmolLM2-135M-Instruct, embedded)")
    return finish(Path(args.result), conf, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
