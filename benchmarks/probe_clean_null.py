"""A clean model reads clean: the untouched embedded model over GSM8K pairs, every metric's C.

Builds the numeric reference for GSM8K test, probes the embedded SmolLM2 (never fine-tuned on GSM8K
as far as anyone knows, and solving almost nothing at zero-CoT) on the first ``--limit`` items against
it, and prints ``zcp confidence --json``'s C and n per metric. The regression target (issue 13) is
C <= 0.6 on every metric over at least 200 pairs. ``--calibrate`` adds the answer-prior calibrated
metrics (``p_first_cal``, ``p_all_cal``) and, per logit metric, the mean on each arm and the share of
pairs where the original beats its twin; ``--limit 0`` probes the whole test set.

    .venv/bin/python benchmarks/probe_clean_null.py --limit 400 --out runs/bench-clean-null
    .venv/bin/python benchmarks/probe_clean_null.py --limit 0 --calibrate --out runs/bench-clean-null-full \
        --result benchmarks/results/probe_calibration.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from _provenance import header  # noqa: E402

ZCP = [sys.executable, "-m", "zcp_core.cli.main"]


def zcp(*args: str) -> str:
    out = subprocess.run([*ZCP, *args], check=True, capture_output=True, text=True, cwd=ROOT)
    return out.stdout


def arm_table(recs: Any) -> list[str]:
    """Per logit metric: mean on each arm and the share of pairs the original wins (r = 0)."""
    z = recs[recs["ratio"] == 0.0]
    o = z[z["arm"] == "original"].set_index("pair_id")
    r = z[z["arm"] == "reference"].set_index("pair_id")
    both = o.index.intersection(r.index)
    out = ["| metric | mean, originals | mean, twins | original > twin (share of pairs) |", "|---|---|---|---|"]
    for m in ("p_first", "p_all", "p_first_cal", "p_all_cal"):
        a, b = o.loc[both, m].astype(float), r.loc[both, m].astype(float)
        keep = a.notna() & b.notna()
        out.append(f"| {m} | {a[keep].mean():.4f} | {b[keep].mean():.4f} | {(a[keep] > b[keep]).mean():.3f} "
                   f"({int(keep.sum())} pairs) |")
    return ["Raw metrics are probabilities; calibrated ones are log-ratios in nats (the gold after the question "
            "minus after the question with its numbers masked).", "", *out, ""]


def _twin_method(ref: Path) -> str:
    """The generator that made the reference set (read from the twins, not assumed)."""
    import json as _json

    for f in sorted(ref.glob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            meta = _json.loads(line).get("metadata") or {}
            if meta.get("method"):
                return str(meta["method"])
    return "unknown"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=400)
    ap.add_argument("--out", default="runs/bench-clean-null")
    ap.add_argument("--calibrate", action="store_true", help="also measure p_first_cal and p_all_cal")
    ap.add_argument("--result", default=str(ROOT / "benchmarks" / "results" / "probe_clean_null.md"))
    args = ap.parse_args()
    out = Path(args.out)
    ref, probe = out / "reference", out / "probe"
    t0 = time.time()
    zcp("reference", "build", "--method", "numeric", "--dataset", "data/gsm8k/test.jsonl", "--out", str(ref))
    probe_cmd = ["probe", "--model", "smollm2", "--dataset", "data/gsm8k/test.jsonl", "--limit", str(args.limit),
                 "--reference", str(ref), "--metrics", "acc,p_first,p_all", "--out", str(probe)]
    probe_cmd += ["--calibrate"] if args.calibrate else []
    t1 = time.time()
    zcp(*probe_cmd)
    probe_secs = time.time() - t1
    conf = json.loads(zcp("confidence", str(probe), "--json"))
    secs = time.time() - t0
    import pandas as pd

    recs = pd.read_parquet(probe / "records.parquet")
    stops = recs["answer_stop"].value_counts().to_dict() if "answer_stop" in recs else {}
    rows = [(m, v.get("n"), v.get("confidence"), v.get("reason", "")) for m, v in conf["metrics"].items()]
    enough = max(n or 0 for _, n, _, _ in rows) >= 200
    ok = all(c is None or c <= 0.6 for _, _, c, _ in rows) and enough
    # With --calibrate the calibrated forms are the verdict a user reads; the raw ones are still shown.
    cal_ok = all(c is None or c <= 0.6 for m, _, c, _ in rows if m in ("acc", "p_first_cal", "p_all_cal")) and enough
    lines = [
        header("A clean model reads clean (embedded SmolLM2, GSM8K test, numeric twins)",
               f"twins {_twin_method(ref)}; model smollm2 (SmolLM2-135M-Instruct, embedded)"),
        f"It took {secs:.0f} s wall and ran `zcp reference build --method numeric --dataset data/gsm8k/test.jsonl` "
        f"then `zcp {' '.join(probe_cmd)}` and `zcp confidence --json`.", "",
        "| metric | pairs | Contamination Confidence | note |", "|---|---|---|---|",
        *[f"| {m} | {n} | {'n/a' if c is None else f'{c:.3f}'} | {why} |" for m, n, c, why in rows], "",
        f"Target: C <= 0.6 on every metric over at least 200 pairs: {'met' if ok else 'NOT met'}"
        + (f"; on Acc and the calibrated metrics: {'met' if cal_ok else 'NOT met'}." if args.calibrate else "."), "",
        f"The probe itself: {len(recs)} prompts ({(recs['arm'] == 'original').sum()} originals, "
        f"{(recs['arm'] == 'reference').sum()} twins) in {probe_secs:.0f} s wall ({len(recs) / probe_secs:.2f} "
        f"prompts/s, response cache on but cold for these prompts unless run before), {int(recs['answer_tokens'].sum())} "
        f"answer tokens (box closed {stops.get('closed', 0)}, budget spent {stops.get('budget', 0)}, EOS "
        f"{stops.get('eos', 0)}); load average {os.getloadavg()[0]:.1f} at the end (2 shared cores).", "",
    ]
    lines += arm_table(recs) if args.calibrate else []
    Path(args.result).write_text("\n".join(lines))
    print("\n".join(lines))
    return 0 if (cal_ok if args.calibrate else ok) else 1


if __name__ == "__main__":
    raise SystemExit(main())
