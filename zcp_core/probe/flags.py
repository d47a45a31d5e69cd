"""Per-item evidence and flags of a probe run: each item's twins, its p-value and q-value, and the flags.

:func:`item_flags` writes the run's ``items.parquet`` and :func:`flags_summary` its summary's ``flags``
block. Flags follow a :class:`~zcp_core.probe.ktwins.FlagRule`:

* on a P metric (default ``p_all``): Benjamini-Hochberg discoveries at ``q`` (default 0.1) among the
  items with at least two twins, from each item's one-sided conformal p
  (:func:`zcp_core.probe.ktwins.item_pvalues`); across audits the expected share of false flags is at most
  about ``q`` (approximately: items are not exactly exchangeable), and a given list can hold more;
* on ``acc``: the paper's rule, original right at zero-CoT and every twin wrong, with no false-discovery
  control (chance alone flags some; the release card gives how many).
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

from zcp_core.probe.config import NOT_GRADED
from zcp_core.probe.ktwins import FlagRule

if TYPE_CHECKING:
    import pandas as pd

#: What an item row says when the flag metric has no per-item p for it.
NO_ITEM_P = ("no per-item p: it needs at least 2 distinct twins with a score (one the original is scored "
             "against, and a spare)")
NO_FDR = "no false-discovery control"


def _truthy(x: Any) -> bool:
    """NA (an arm without this item) counts as not correct."""
    import pandas as pd

    return False if pd.isna(x) else bool(x)


def _flip(s: Any, twins_right: float) -> str:
    """``orig_only``: original right, every twin wrong; ``ref_only``: original wrong, some twin right."""
    s = _truthy(s)
    r = bool(twins_right == twins_right and twins_right > 0)
    if s and not r:
        return "orig_only"
    if r and not s:
        return "ref_only"
    return "both" if s and r else "neither"


def _in_twin_order(ref: pd.DataFrame) -> pd.DataFrame:
    """Twin rows sorted by pair and twin number (``twin``, 1 where a run stored none)."""
    import pandas as pd

    n = pd.to_numeric(ref["twin"], errors="coerce").fillna(1) if "twin" in ref else 1
    return ref.assign(_n=n).sort_values(["pair_id", "_n"], kind="stable")


def _twin_lists(ref: pd.DataFrame, pair_ids: Any) -> dict[str, list[Any]]:
    """Each pair's twins in twin order: ids, questions, golds, predictions, Acc, P_all and P_first."""
    ref = _in_twin_order(ref)
    if "grade_status" not in ref:
        ref = ref.assign(grade_status="ok")
    ref = ref.assign(_graded=~ref["grade_status"].isin(NOT_GRADED))
    groups = {pid: g for pid, g in ref.groupby("pair_id", sort=False)}
    cols = {"twin_ids": "id", "twin_questions": "question", "twin_golds": "gold", "twin_preds": "pred",
            "twin_acc": "acc", "twin_graded": "_graded", "twin_p_all": "p_all", "twin_p_first": "p_first"}
    out: dict[str, list[Any]] = {k: [] for k in cols}
    for pid in pair_ids:
        g = groups.get(pid)
        for k, c in cols.items():
            vals = [] if g is None else g[c].tolist()
            if k in ("twin_acc", "twin_graded"):
                vals = [_truthy(v) for v in vals]
            elif k in ("twin_p_all", "twin_p_first"):
                vals = [float(v) for v in vals]
            else:
                vals = ["" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v) for v in vals]
            out[k].append(vals)
    return out


def item_flags(records: pd.DataFrame, suspect_arm: str = "original", rule: FlagRule | None = None) -> pd.DataFrame:
    """One row per pair: the original, its K twins with their scores, its p and q-value, the flag.

    Columns: ``pair_id``, ``question``, ``gold``; the first twin as ``reference_id``,
    ``reference_question``, ``reference_gold`` and ``pred_reference``/``acc_reference``/``p_all_reference``;
    ``pred_<arm>``, ``acc_<arm>``, ``p_all_<arm>`` for the original (and paraphrased) arm,
    ``cot_correct_<arm>`` when a full CoT was generated; ``n_twins`` and the lists ``twin_ids``,
    ``twin_questions``, ``twin_golds``, ``twin_preds``, ``twin_acc``, ``twin_graded`` (its box held a number),
    ``twin_p_all``, ``twin_p_first``;
    ``twins_right`` (share of twins right), ``p_all_gap`` (original minus the twins' mean P_all) and
    ``p_all_gap_rank`` (1 for the largest); ``flip`` (``orig_only``: original right and every twin wrong,
    ``ref_only``, ``both``, ``neither``, ``no_number`` when a box held no number); ``item_p``,
    ``item_rank_p``, ``item_q`` (NaN without a per-item p), ``flag_metric``, ``flagged``, ``evidence``, and
    the flag metric's scores ``score_original`` and ``score_twins`` (a list in twin order; Acc as 0/1).
    """
    import numpy as np
    import pandas as pd

    from zcp_core.probe.analysis import _zero
    from zcp_core.probe.ktwins import bh_flags, item_pvalues

    rule = rule or FlagRule()
    z = _zero(records)
    ref = z[z["arm"] == "reference"]
    first = _in_twin_order(ref).drop_duplicates("pair_id").set_index("pair_id")
    base = z[z["arm"] == suspect_arm].set_index("pair_id")
    base = base[base.index.isin(first.index)]
    out = pd.DataFrame({"pair_id": base.index, "question": base["question"].values, "gold": base["gold"].values})
    out["reference_id"] = first.loc[out["pair_id"], "id"].values
    out["reference_question"] = first.loc[out["pair_id"], "question"].values
    out["reference_gold"] = first.loc[out["pair_id"], "gold"].values
    has_cot = z["cot_text"].notna().any()
    for arm in ("original", "paraphrased", "reference"):
        a = (first if arm == "reference" else z[z["arm"] == arm].set_index("pair_id"))
        if a.empty:
            continue
        a = a.reindex(out["pair_id"])
        out[f"pred_{arm}"] = a["pred"].values
        out[f"acc_{arm}"] = a["acc"].astype("boolean").values
        out[f"p_all_{arm}"] = a["p_all"].astype(float).values
        if has_cot:
            out[f"cot_correct_{arm}"] = a["cot_correct"].astype("boolean").values
    for k, v in _twin_lists(ref, out["pair_id"]).items():
        out[k] = v
    # distinct twins: a twin repeating an earlier one's question (runs made before twins were distinct) is no draw
    out["n_twins"] = [len(dict.fromkeys(q)) for q in out["twin_questions"]]
    # a twin whose box holds no number, or never closed, was not graded: the share right is over the graded twins only
    out["twins_right"] = [float(np.mean([a for a, g in zip(acc, gr) if g])) if any(gr) else math.nan
                          for acc, gr in zip(out["twin_acc"], out["twin_graded"])]
    twin_p_all = [float(np.nanmean(v)) if v and not np.isnan(v).all() else math.nan for v in out["twin_p_all"]]
    out["p_all_gap"] = out[f"p_all_{suspect_arm}"].astype(float) - np.asarray(twin_p_all, dtype=float)
    out["p_all_gap_rank"] = out["p_all_gap"].rank(ascending=False, method="min").astype("Int64")
    out["flip"] = [_flip(s, r) for s, r in zip(out[f"acc_{suspect_arm}"], out["twins_right"])]
    # a pair whose original box holds no number or never closed, or every twin's, was not graded: never a flip, never a flag
    sus = z[(z["arm"] == suspect_arm) & z["grade_status"].isin(NOT_GRADED)]["pair_id"].astype(str) \
        if "grade_status" in z else pd.Series(dtype=str)
    words = set(sus) | {str(p) for p, gr in zip(out["pair_id"], out["twin_graded"]) if len(gr) and not any(gr)}
    out.loc[out["pair_id"].astype(str).isin(words), "flip"] = "no_number"
    out["item_p"] = out["item_rank_p"] = out["item_q"] = out["calibration_size"] = math.nan
    if rule.controlled:
        p = item_pvalues(records, rule.metric, suspect_arm).set_index("pair_id")
        out["item_p"] = p["item_p"].reindex(out["pair_id"]).to_numpy(dtype=float)
        out["item_rank_p"] = p["item_rank_p"].reindex(out["pair_id"]).to_numpy(dtype=float)
        out["calibration_size"] = p["calibration_size"].reindex(out["pair_id"]).to_numpy(dtype=float)
        out["item_q"], flagged = bh_flags(out["item_p"], rule.fdr)
        out["flagged"] = flagged
    else:
        out["flagged"] = out["flip"] == "orig_only"
    out["flag_metric"] = rule.metric
    # the flag metric's own scores, so a release can say how the model scores before and after it
    col = rule.metric
    orig = z[z["arm"] == suspect_arm].drop_duplicates("pair_id").set_index("pair_id")[col]
    out["score_original"] = pd.to_numeric(orig.reindex(out["pair_id"]).astype("Float64"),
                                          errors="coerce").to_numpy(dtype=float)
    if col == "acc":
        out["score_twins"] = [[float(x) for x in v] for v in out["twin_acc"]]
    elif col in ("p_all", "p_first"):
        out["score_twins"] = out[f"twin_{col}"]
    else:
        lists = {pid: g[col].astype(float).tolist() for pid, g in _in_twin_order(ref).groupby("pair_id")}
        out["score_twins"] = [lists.get(pid, []) for pid in out["pair_id"]]
    n = len(out)
    out["evidence"] = [_evidence(row, suspect_arm, n, rule) for row in out.to_dict("records")]
    return out


#: The K-twin clause of an item's evidence, as :func:`twins_correct_text` writes it; a release rewrites its
#: parenthesis (which twins) by this pattern, so the wording and its reader live here together.
TWINS_CORRECT = re.compile(r"(\d+ of \d+ twins correct) \(([^)]*)\)")


def twins_correct_text(right: int, k: int, which: str) -> str:
    """``"2 of 4 twins correct (which)"``: the K-twin clause of an item's evidence."""
    return f"{right} of {k} twins correct ({which})"


def _evidence(row: dict[str, Any], arm: str, n: int, rule: FlagRule) -> str:
    from zcp_core.report import fmt_num, fmt_p, metric_name

    s_ok = _truthy(row[f"acc_{arm}"])
    parts = [f"zero-CoT {arm} {'correct' if s_ok else 'wrong'} (pred {row[f'pred_{arm}']!s}, gold {row['gold']})"]
    k = int(row["n_twins"])  # distinct twins
    if len(row["twin_ids"]) == 1:
        r_ok = _truthy(row["acc_reference"])
        parts.append(f"twin {row['reference_id']} {'correct' if r_ok else 'wrong'} "
                     f"(pred {row['pred_reference']!s}, gold {row['reference_gold']})")
    else:
        right = sum(bool(x) for x in row["twin_acc"])
        parts.append(twins_correct_text(right, len(row["twin_acc"]), ", ".join(row["twin_ids"])))
    gap = row["p_all_gap"]
    if gap is not None and not (isinstance(gap, float) and math.isnan(gap)):
        mean = "twin" if k == 1 else "the twins' mean"
        parts.append(f"P(all answer tokens), original minus {mean}, {fmt_num(gap, signed=True)} "
                     f"(rank {row['p_all_gap_rank']} of {n})")
    else:
        parts.append("P(all answer tokens) not measured")
    if rule.controlled:
        p = row["item_p"]
        if p == p:
            parts.append(f"{metric_name(rule.metric)}: item p {fmt_p(p)}, rank p {fmt_p(row['item_rank_p'])}, "
                         f"q-value {fmt_p(row['item_q'])}")
        else:
            parts.append(f"no per-item p: {k} distinct twin{'' if k == 1 else 's'} with a score (it needs 2: one "
                         "the original is scored against, and a spare)")
    return "; ".join(parts)


def flags_summary(items: pd.DataFrame, rule: FlagRule) -> dict[str, Any]:
    """The run summary's ``flags`` block: ``metric``, ``q``, ``flagged``, ``items`` (items with a p, or every
    pair under the ``acc`` rule), ``share_p_below_05``, ``twins_per_item`` (items by their number of distinct
    twins), ``p_floor`` (the smallest p an item could get) and ``bh_first`` (BH's first threshold ``q/m``),
    ``controlled`` and ``note``."""
    import numpy as np

    flagged = int(items["flagged"].sum()) if len(items) else 0
    per_item = {str(k): v for k, v in distinct_twins_per_item(items).items()}
    floor = bh_first = None
    if rule.controlled:
        p = items["item_p"].to_numpy(dtype=float) if len(items) else np.array([])
        tested = int(np.isfinite(p).sum())
        share = float((p[np.isfinite(p)] < 0.05).mean()) if tested else None
        note = "" if tested else NO_ITEM_P.replace("no per-item p", "no item has a p")
        if tested and "calibration_size" in items:
            size = items["calibration_size"].to_numpy(dtype=float)
            floor = 1.0 / (float(np.nanmax(size)) + 1.0) if np.isfinite(size).any() else None
            bh_first = rule.fdr / tested
            if floor is not None and floor > bh_first:
                from zcp_core.report import fmt_p

                note = (f"no item can be flagged alone: the smallest item p ({fmt_p(floor)}) is above BH's first "
                        f"threshold q/m ({fmt_p(bh_first)})")
    else:
        tested, share, note = len(items), None, NO_FDR
    return {"metric": rule.metric, "q": rule.fdr if rule.controlled else None, "flagged": flagged,
            "items": tested, "share_p_below_05": share, "twins_per_item": per_item, "p_floor": floor,
            "bh_first": bh_first, "controlled": rule.controlled, "note": note}


def distinct_twins_per_item(items: pd.DataFrame) -> dict[int, int]:
    """Items by their number of distinct twin questions (a twin that repeats another of its item counts once).

    Runs made before twins were drawn distinct stored ``n_twins`` with repeats counted; the twin questions they
    stored give the distinct count.
    """
    if not len(items):
        return {}
    if "twin_questions" in items:
        counts = items["twin_questions"].map(lambda qs: len({str(q) for q in (qs if qs is not None else [])}))
    else:
        counts = items["n_twins"]
    return {int(k): int(v) for k, v in sorted(counts.value_counts().items())}


def flag_block(summary: Any, items: pd.DataFrame | None) -> dict[str, Any]:
    """The run's flag block as every surface shows it: what the run stored (metric, q, flagged, items with a
    p...), with ``twins_per_item`` as the distinct twins of the run's items table and ``flagged`` counted there."""
    block = dict(summary.get("flags") or {})
    if items is not None and len(items):
        block["twins_per_item"] = {str(k): v for k, v in distinct_twins_per_item(items).items()}
        if "flagged" in items:
            block["flagged"] = int(items["flagged"].sum())
    return block
