"""How many twins per item: K = 1, 2, 4 and 8 on the lab's direct build and the untouched model.

The lab's default split (40 contaminated items C, 40 clean U) gets K_MAX + 1 = 9 distinct numeric twins per item
with the lab's pinned generator (twin k drawn with seed k - 1, twin 1 being the lab's own twin). ``lab:direct``
and the untouched ``smollm2`` are probed once against all of them; every smaller K reads the same records
restricted to twins 1..K + 1 (K comparators and the spare, as ``zcp probe --twins K`` draws them), so the
comparison is paired and costs one run. For each K and model it reports, from :mod:`zcp_core.probe.ktwins` and
:mod:`zcp_core.probe.flags`:

* the AUROC of C against U of the item statistic (the original minus the mean of its K comparators) on Acc,
  P_first and P_all: how well one item's evidence separates what was trained on from what was not;
* BH flags at q = 0.1 on P_all with the current per-item p (conformal, the original against its K comparators,
  calibrated on the other items' twins): C and U items flagged (the untouched model should flag at most 1);
* the twin null on the untouched model (twin 1 standing as the original against twins 2..K + 2, K <= 4):
  share of items with per-item p < 0.05, and flags;
* the cost: generated answers per original, K + 2 (the original, K comparators and the spare).

Flags against the truth for every lab kind and the probe-format positive control, at the default K, are in
``benchmarks/probe_flags_truth.py``.

The rule for the default K was fixed before the first run (with the tests these replaced) and is applied
unchanged: the smallest K >= 2 at which ``lab:direct`` has at least 10 of its 40 C items flagged at q = 0.1 and
the untouched model at most 1 item, since each extra twin costs one more answer per original. Seeds are fixed
here; a miss is reported, never reseeded.

    .venv/bin/python benchmarks/probe_k_twins.py
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]
from _provenance import command_line, git_commit  # noqa: E402

KS = (1, 2, 4, 8)
K_MAX = 8
Q = 0.1
METRICS = ("acc", "p_first", "p_all")
OUT = ROOT / "benchmarks" / "results" / "probe_k_twins.md"


def write_sets(work: Path, build: str = "direct", k_max: int = K_MAX + 1) -> tuple[Path, Path, dict[str, str]]:
    """A lab build's split: its originals and ``k_max`` twins per item (lab generator), as items files."""
    from zcp_core.lab.evaluate import LAB_AMBIGUITY, eval_items
    from zcp_core.reference import perturb_gsm8k

    work.mkdir(parents=True, exist_ok=True)
    ev = eval_items(build, seed=0)
    items, twins = work / "items.jsonl", work / "twins.jsonl"
    with items.open("w", encoding="utf-8") as f:
        for it in ev.originals:
            f.write(json.dumps({"id": it.id, "question": it.question, "answer": it.answer}) + "\n")
    rows = [t for t in ev.twins]
    for k in range(2, k_max + 1):
        rows += list(perturb_gsm8k(list(ev.originals), seed=k - 1, twin=k, ambiguity=LAB_AMBIGUITY).items)
    with twins.open("w", encoding="utf-8") as f:
        for t in rows:
            f.write(json.dumps({"id": t.id, "original_id": t.original_id, "question": t.question,
                                "answer": t.answer, "twin": int(t.metadata.get("twin") or 1)}) + "\n")
    return items, twins, dict(ev.split_of)


def probe(model: str, items: Path, twins: Path, out: Path) -> Any:
    import subprocess

    import pandas as pd

    if not (out / "records.parquet").exists():
        subprocess.run([sys.executable, "-m", "zcp_core.cli.main", "probe", "--model", model, "--dataset",
                        str(items), "--format", "items", "--reference", str(twins), "--metrics", ",".join(METRICS),
                        "--seed", "0", "--out", str(out)], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return pd.read_parquet(out / "records.parquet")


def upto(records: Any, k: int) -> Any:
    """The records with twins 1..k only (``k`` twins in all: for K comparators and the spare, K + 1)."""
    ref = records["arm"] == "reference"
    return records[~ref | (records["twin"].fillna(1) <= k)]


def kind_row(records: Any, split_of: dict[str, str], k: int) -> dict[str, Any]:
    from zcp_core.probe.analysis import item_gaps
    from zcp_core.probe.flags import item_flags
    from zcp_core.probe.ktwins import FlagRule
    from zcp_core.stats import auroc

    comparators = upto(records, k)
    out: dict[str, Any] = {"k": k}
    for m in METRICS:
        g = item_gaps(comparators, m).dropna(subset=["gap"])
        c = g[g["pair_id"].map(split_of) == "C"]["gap"].tolist()
        u = g[g["pair_id"].map(split_of) == "U"]["gap"].tolist()
        out[f"auroc_{m}"] = auroc(c, u) if c and u else None
    fl = item_flags(upto(records, k + 1), rule=FlagRule("p_all", Q))  # the last twin is the spare
    split = fl["pair_id"].map(split_of)
    out["flag_c"] = int((fl["flagged"] & (split == "C")).sum())
    out["flag_u"] = int((fl["flagged"] & (split == "U")).sum())
    out["items_p"] = int(fl["item_p"].notna().sum())
    out["answers_per_item"] = 2 + k
    return out


def null_row(records: Any, k: int) -> dict[str, Any]:
    import pandas as pd

    from zcp_core.probe.flags import item_flags
    from zcp_core.probe.ktwins import FlagRule

    r = records[records["arm"] == "reference"]
    orig = r[r["twin"] == 1].assign(arm="original")
    rest = r[(r["twin"] >= 2) & (r["twin"] <= k + 2)]  # k comparators and the spare
    fl = item_flags(pd.concat([orig, rest], ignore_index=True), rule=FlagRule("p_all", Q))
    p = fl["item_p"].dropna()
    return {"k": k, "items_p": len(p), "share_p05": float((p < 0.05).mean()) if len(p) else None,
            "flagged": int(fl["flagged"].sum())}


def main() -> int:
    from zcp_core.probe.ktwins import DEFAULT_TWINS

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default="runs/bench-k-twins")
    ap.add_argument("--result", default=str(OUT))
    args = ap.parse_args()
    from zcp_core.report import fmt_num, fmt_share

    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    items, twins, split_of = write_sets(work)
    recs = {m: probe(m, items, twins, work / f"probe-{m.replace(':', '-')}") for m in ("lab:direct", "smollm2")}
    # the probes' wall time is kept beside them, so a rerun that only re-reads them reports the real cost
    timing = work / "probe_wall.json"
    if not timing.exists():
        timing.write_text(json.dumps({"seconds": time.time() - t0}))
    wall = float(json.loads(timing.read_text())["seconds"])
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    n_twins = recs["smollm2"][recs["smollm2"]["arm"] == "reference"].groupby("pair_id").size()
    lines = [f"- Items: {len(split_of)} originals of the lab's default split (40 C, 40 U); "
             f"{int((n_twins >= K_MAX + 1).sum())} have all {K_MAX + 1} distinct twins, "
             f"{int((n_twins < K_MAX + 1).sum())} fewer (an item stops at the first twin it cannot make).",
             f"- Probe: `zcp probe --metrics {','.join(METRICS)} --seed 0` of each model against all twins; "
             f"{wall:.0f} s wall for both when they ran (2 shared cores; answers already in the response cache are "
             "not recomputed).", "",
             "## Separation and flags by K (C: trained on, U: never seen)", "",
             "| model | K | answers per original | AUROC Acc | AUROC P_first | AUROC P_all | items with a p | "
             "flagged C (of 40) | flagged U (of 40) |", "|---|---|---|---|---|---|---|---|---|"]
    for model, r in recs.items():
        for k in KS:
            row = rows[(model, k)] = kind_row(r, split_of, k)
            lines.append(f"| {model} | {k} | {row['answers_per_item']} | {fmt_num(row['auroc_acc'])} | "
                         f"{fmt_num(row['auroc_p_first'])} | {fmt_num(row['auroc_p_all'])} | {row['items_p']} | "
                         f"{row['flag_c']} | {row['flag_u']} |")
    choice = next((k for k in KS if k >= 2 and rows[("lab:direct", k)]["flag_c"] >= 10
                   and rows[("smollm2", k)]["flag_c"] + rows[("smollm2", k)]["flag_u"] <= 1), None)
    lines += ["", f"Rule (fixed before the first run, applied unchanged): the smallest K >= 2 with at least 10 of 40 C items flagged on "
              f"lab:direct and at most 1 item flagged on the untouched model. It picks: "
              f"{'K = ' + str(choice) if choice else 'no K (none meets both targets)'}."]
    lines += ["", "## Twin null on the untouched model (twin 1 as the original against twins 2..K+2)", "",
              "| K | items with a p | share with item p < 0.05 | flagged at q = 0.1 |", "|---|---|---|---|"]
    for k in (2, 4):
        row = null_row(recs["smollm2"], k)
        lines.append(f"| {k} | {row['items_p']} | {fmt_share(row['share_p05'])} | {row['flagged']} |")
    lines += ["", "AUROC: P(a C item's statistic exceeds a U item's), ties half; the statistic is the original's "
              "score minus the mean of its K comparators'. Flags: Benjamini-Hochberg at q = 0.1 over the items' "
              "one-sided conformal p on P(all answer tokens) (the original against its K comparators, calibrated "
              "on every other item's twins; an item needs 2 distinct twins). Its floor is 1 / (calibration size + 1) "
              "and BH's first threshold is q / m, so at 80 items no item is flagged on its own evidence.",
              "", f"Flags against the truth for every lab kind and the probe-format positive control at the default "
              f"K = {DEFAULT_TWINS}: `probe_flags_truth.md`."]
    revision = json.loads((work / "probe-lab-direct" / "manifest.json").read_text()).get("model_revision")
    text = ["# Twins per item: separation, flags and cost at K = 1, 2, 4, 8 (lab direct, untouched SmolLM2)", "",
            f"Command: `{command_line()}`",
            f"Made at commit {git_commit()} on {time.strftime('%Y-%m-%d')}. Versions: lab generator v5 twins "
            f"(ambiguity hold, distinct), zcp_core.stats.itemp (conformal per-item p), model smollm2 (SmolLM2-135M-Instruct, embedded) and its lab:direct LoRA build "
            f"(revision {revision}).", "",
            *lines, ""]
    Path(args.result).write_text("\n".join(text))
    print("\n".join(text))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
