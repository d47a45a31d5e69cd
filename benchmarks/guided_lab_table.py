"""Summarise the ``guided`` runs written by ``benchmarks/guided_lab.py`` (reads stored runs only).

Per run (model x math mode): mean ROUGE-L of guided and general completions on
the lab's contaminated (C) and clean (U) items, the instance-level AUROC of C
vs U, each subset's partition test, judge counts, and how often the guided /
general completion contains the item's gold final answer (what the lab model
was trained to say).

    .venv/bin/python benchmarks/guided_lab_table.py runs/guided-lab-direct
"""

from __future__ import annotations

import sys


def main(root: str) -> int:
    """Print one row per run under ``root``."""
    import pandas as pd

    from zcp_core.afr import mentions_answer
    from zcp_core.data import load_items
    from zcp_core.runs import iter_runs
    from zcp_core.stats import auroc

    gold = {it.id: it.answer for it in load_items("data/gsm8k/test.jsonl")}
    rows = []
    for run in sorted(iter_runs(root), key=lambda r: r.path.name):
        if run.kind != "guided":
            continue
        rec = run.records
        rec = rec.assign(ans_guided=[mentions_answer(str(t), gold[i]) for t, i in zip(rec.guided, rec.id, strict=True)],
                         ans_general=[mentions_answer(str(t), gold[i]) for t, i in zip(rec.general, rec.id, strict=True)],
                         diff=rec.rouge_l_guided - rec.rouge_l_general)
        c, u = rec[rec.partition == "C"], rec[rec.partition == "U"]
        parts = run.table("partitions").set_index("partition")
        rows.append({
            "run": run.path.name, "n_C/n_U": f"{len(c)}/{len(u)}",
            "RL_guided C/U": f"{c.rouge_l_guided.mean():.3f}/{u.rouge_l_guided.mean():.3f}",
            "RL_general C/U": f"{c.rouge_l_general.mean():.3f}/{u.rouge_l_general.mean():.3f}",
            "AUROC guided": round(auroc(c.rouge_l_guided.tolist(), u.rouge_l_guided.tolist()), 3),
            "AUROC guided-general": round(auroc(c["diff"].tolist(), u["diff"].tolist()), 3),
            "p C/U": f"{parts.loc['C', 'p']:.3g}/{parts.loc['U', 'p']:.3g}",
            "Conf C/U": f"{parts.loc['C', 'confidence']:.3f}/{parts.loc['U', 'confidence']:.3f}",
            "exact+near C/U": f"{parts.loc['C', 'exact']}+{parts.loc['C', 'near_exact']}/"
                              f"{parts.loc['U', 'exact']}+{parts.loc['U', 'near_exact']}",
            "gold in guided C/U": f"{c.ans_guided.mean():.2f}/{u.ans_guided.mean():.2f}",
            "gold in general C/U": f"{c.ans_general.mean():.2f}/{u.ans_general.mean():.2f}",
        })
    df = pd.DataFrame(rows)
    cols = list(df.columns)
    print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in df.itertuples(index=False):
        print("| " + " | ".join(str(x) for x in r) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1] if len(sys.argv) > 1 else "runs/guided-lab-direct"))
