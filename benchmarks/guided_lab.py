"""Does Time-Travel guided overlap separate a lab model's contaminated items (C) from its clean ones (U)?

Runs the guided probe on the lab build's C and U items (both from the GSM8K
test split, so both get the same guided prompt "test split of the GSM8K
dataset") for the lab model and, as a control, for the base model, in both
math modes. Per mode and model it reports the partition test per subset and
the instance-level AUROC of C vs U for the guided overlap and for the
guided - general difference. Each configuration is written as a ``guided``
run under ``--out``.

    .venv/bin/python benchmarks/guided_lab.py --lab smoke --out runs/guided-lab
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ZCP_CACHE", str(ROOT / ".zcp_cache"))


def main() -> int:
    """Run the comparison and print one JSON line per configuration."""
    import pandas as pd

    from zcp_core.backends import load_backend
    from zcp_core.data import load_items
    from zcp_core.guided import GuidedConfig, run_partition, split_items, write_guided_run
    from zcp_core.lab import resolve_build
    from zcp_core.runs import RunSpec, load_run
    from zcp_core.stats import auroc

    ap = argparse.ArgumentParser()
    ap.add_argument("--lab", default="smoke", help="lab build name (lab:NAME)")
    ap.add_argument("--base", default="smollm2", help="control model")
    ap.add_argument("--out", default="runs/guided-lab")
    ap.add_argument("--max-new-tokens", type=int, default=48)
    ap.add_argument("--modes", default="question,question-solution")
    ap.add_argument("--control-modes", default=None, help="modes for the control model (default: --modes; '' skips)")
    ap.add_argument("--judge", default="rule", choices=["rule", "model"])
    ap.add_argument("--limit", type=int, default=None, help="at most N items of C and of U")
    args = ap.parse_args()

    build = load_run(resolve_build(args.lab))
    split = build.records
    dataset = str(ROOT / build.manifest["config"].get("dataset", "data/gsm8k/test.jsonl"))
    items = {it.id: it for it in load_items(dataset)}
    subsets = {s: [items[i] for i in split.loc[split["split"] == s, "id"]][: args.limit] for s in ("C", "U")}
    rows = []
    control_modes = args.modes if args.control_modes is None else args.control_modes
    for spec, modes in ((f"lab:{args.lab}", args.modes), (args.base, control_modes)):
        if not modes:
            continue
        backend = load_backend(spec, device="cpu")
        for mode in modes.split(","):
            results = []
            for name, its in subsets.items():
                cfg = GuidedConfig("GSM8K", "test", math_mode=mode, max_new_tokens=args.max_new_tokens,
                                   partition=name)  # type: ignore[arg-type]
                results.append(run_partition(backend, split_items(its, math_mode=mode), cfg,  # type: ignore[arg-type]
                                             judge_mode="self" if args.judge == "model" else "rule"))
            out = Path(args.out) / f"{spec.replace(':', '-')}-{mode}"
            write_guided_run(str(out), RunSpec("guided", {**vars(args), "mode": mode}, model=spec,
                                               model_revision=backend.revision, dataset=(dataset,)), results)
            rec = pd.concat([r.records for r in results])
            c, u = rec[rec.partition == "C"], rec[rec.partition == "U"]
            diff = lambda d: (d.rouge_l_guided - d.rouge_l_general).tolist()  # noqa: E731
            row = {"model": spec, "mode": mode, "n_C": len(c), "n_U": len(u),
                   "rouge_l_guided_C": c.rouge_l_guided.mean(), "rouge_l_guided_U": u.rouge_l_guided.mean(),
                   "rouge_l_general_C": c.rouge_l_general.mean(), "rouge_l_general_U": u.rouge_l_general.mean(),
                   "auroc_guided": auroc(c.rouge_l_guided.tolist(), u.rouge_l_guided.tolist()),
                   "auroc_guided_minus_general": auroc(diff(c), diff(u)),
                   **{f"{r.summary['partition']}_{k}": r.summary[k] for r in results
                      for k in ("p", "confidence", "exact", "near_exact", "contaminated")},
                   "run": str(out)}
            rows.append(row)
            print(json.dumps(row, default=float), flush=True)
    print(pd.DataFrame(rows).drop(columns=["run"]).to_string(index=False, float_format="%.3f"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
