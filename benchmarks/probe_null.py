"""The untouched embedded model, each original against its K twins, on the whole GSM8K test set.

The null a user's audit stands on: SmolLM2 was never fine-tuned on GSM8K as far as anyone knows, so with
twins as easy as their originals every test should read clean. The probe builds K twins per item on the fly
(``zcp probe --twins K``: twin k drawn with seed k - 1) and answers only the originals that have one (the
default); the run's summary says how many originals that skipped. Seeds are fixed here; a miss is a
finding, never a reason to reseed. ``benchmarks/probe_twin_null.py`` is the other half of the family: with
both runs present, the four P_first/P_all tests are Holm-adjusted together.

    .venv/bin/python benchmarks/probe_null.py --json
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


def main() -> int:
    from zcp_core.probe.ktwins import DEFAULT_TWINS
    from zcp_core.reference import METHOD_NUMERIC

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="runs/bench-null")
    ap.add_argument("--twins", type=int, default=DEFAULT_TWINS, help="twins per item (default: the probe's)")
    ap.add_argument("--limit", type=int, default=0, help="first N items (0: the whole test set)")
    ap.add_argument("--json", action="store_true", help="print the confidence and flags as the last line, as JSON")
    ap.add_argument("--result", default=str(ROOT / "benchmarks" / "results" / "probe_null.md"))
    args = ap.parse_args()
    out, clock = Path(args.out), Clock()
    probe = out / "probe"
    limit = ["--limit", str(args.limit)] if args.limit else []
    zcp("probe", "--dataset", DATASET, "--twins", str(args.twins), *PROBE_ARGS, "--out", str(probe), *limit)
    conf, summary = confidence_and_flags(probe)
    orig = summary["originals"]
    cmd = ("python benchmarks/probe_null.py" + (f" --twins {args.twins}" if args.twins != DEFAULT_TWINS else "")
           + (f" --limit {args.limit}" if args.limit else "") + " --json")
    total = orig["given"] + args.twins * summary["n_pairs"]
    write_result(Path(args.result), f"Original against its {args.twins} twins, untouched SmolLM2, whole GSM8K test set",
                 cmd, [
        f"Probe: `zcp probe --dataset {DATASET} --twins {args.twins} {' '.join(PROBE_ARGS)}`; {clock():.0f} s wall "
        f"(answers already in the response cache are not recomputed). Twins per item: "
        f"{json.dumps(summary['twins']['per_item'])} (twins: originals).", "",
        *table(conf), "", *flags_lines(conf["flags"], summary["n_pairs"]), "",
        f"Work saved by answering only originals with a twin: {orig['given'] - orig['probed']} of {orig['given']} "
        f"originals skipped, {orig['given'] - orig['probed']} of {total} answers "
        f"({(orig['given'] - orig['probed']) / total:.1%}) that `--all-originals` would add.", "",
        *holm_lines(probe, ROOT / "runs" / "bench-twin-null" / "probe"),
    ], f"generator {METHOD_NUMERIC} (the default), model smollm2 (SmolLM2-135M-Instruct, embedded)")
    return finish(Path(args.result), conf, args.json)


if __name__ == "__main__":
    raise SystemExit(main())
