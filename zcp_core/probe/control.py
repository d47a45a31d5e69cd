"""A control model: the audited model's gap against a comparable model's gap on the same pairs.

Twins can be biased and models can share priors over answers, so an original - twin
gap on its own does not say the audited model memorised anything. With a control
(``zcp probe --control SPEC``), the same originals and twins are probed with a
second model, and the audited model's per-item gap (original - twin) is tested
against the control's gap on the same item (a difference in differences):

* per item ``d = (audited original - audited twin) - (control original - control twin)``,
  on log P_all and log P_first (the logs, so a gap is a probability *ratio*) and on Acc
  (0/1, so ``mean(d)`` is the difference of the two risk differences);
* one-sided sign-flip permutation test of ``mean(d) > 0`` on every metric (exact up to
  16 pairs, Monte Carlo above). Under H0 the two models are exchangeable on each item,
  so each ``d`` is symmetric about 0 and the test holds its size at every n, Acc's
  integer differences included;
* the evidence of :mod:`zcp_core.probe.evidence` (effect with CI and lower bound, C).

The comparison assumes models of similar strength: both models' mean metrics on
the twins are recorded, with a warning when they differ by more than a factor of 2.
A control that is itself contaminated on the same items hides contamination.

Run tables: ``control_records`` (the control's records) and ``did_gaps``
(``pair_id, metric, audited_gap, control_gap, difference``); summary blocks
``control`` and ``did`` (:func:`control_summary`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:
    import pandas as pd

#: Metrics a control compares (the calibrated forms and Con are left to the plain test).
DID_METRICS = ("acc", "p_first", "p_all")
#: The metric whose twin means judge the models' strength, first measured of these.
STRENGTH_ORDER = ("p_all", "p_first", "acc")
STRENGTH_FACTOR = 2.0
RELATIVE = "relative to the control"
CONTAMINATED_CONTROL = ("a control that is itself contaminated on these items hides contamination: "
                        "choose one that cannot have seen them")

DID_READINGS = {
    "original>reference": "the audited model's gap is larger than the control's",
    "reference>original": "the control's gap is larger: no evidence of contamination relative to the control",
    "none": "the same gap as the control",
}


@dataclass(frozen=True)
class Control:
    """The control model of a probe: a ready backend and its spec (for the run's records)."""

    backend: Any
    spec: str


def _values(records: pd.DataFrame, metric: str, arm: str) -> pd.Series:
    """Per pair (index ``pair_id``) values at r = 0: logs of the P metrics, 0/1 for Acc."""
    import numpy as np
    import pandas as pd

    z = records[(records["ratio"] == 0.0) & (records["arm"] == arm)].set_index("pair_id")[metric]
    v = pd.to_numeric(z.astype("Float64"), errors="coerce").astype(float)
    return np.log(v.clip(lower=1e-300)) if metric.startswith("p_") else v


def control_gaps(audited: pd.DataFrame, control: pd.DataFrame, metrics: Sequence[str]) -> pd.DataFrame:
    """Per pair and metric: the audited and the control gap (original - twin) and their difference.

    Logit metrics are compared as logs (``log P_all`` ...). Pairs missing a value on either model are dropped.

    Returns:
        Columns ``pair_id, metric, audited_gap, control_gap, difference``, in the audited originals' order.
    """
    import pandas as pd

    frames = []
    for m in (m for m in DID_METRICS if m in metrics):
        a = _values(audited, m, "original") - _values(audited, m, "reference")
        c = _values(control, m, "original") - _values(control, m, "reference")
        df = pd.DataFrame({"audited_gap": a}).join(pd.DataFrame({"control_gap": c}), how="inner").dropna()
        order = [p for p in audited[(audited["ratio"] == 0.0) & (audited["arm"] == "original")]["pair_id"]
                 if p in df.index]
        df = df.loc[order]
        frames.append(pd.DataFrame({"pair_id": df.index, "metric": m, "audited_gap": df["audited_gap"].values,
                                    "control_gap": df["control_gap"].values,
                                    "difference": (df["audited_gap"] - df["control_gap"]).values}))
    cols = ["pair_id", "metric", "audited_gap", "control_gap", "difference"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)


def did_confidence(gaps: pd.DataFrame, n_resamples: int = 10_000, seed: int = 0, prior: float = 0.5,
                   intervals: bool = True) -> dict[str, Any]:
    """The confidence json of the difference in differences: ``{"metrics": {m: evidence}, "headline": ...}``.

    Each metric's entry is the evidence of :mod:`zcp_core.probe.evidence` for the sign-flip test of the
    per-item ``difference`` (its ``effect`` is the mean difference of the gaps, in log units for the P
    metrics); fewer than ``stats.MIN_PAIRS`` pairs withhold the verdict as everywhere.
    """
    from zcp_core.probe.analysis import enforce_min_pairs
    from zcp_core.probe.evidence import evidence_entry
    from zcp_core.stats import sign_flip_test

    metrics: dict[str, Any] = {}
    for m, g in gaps.groupby("metric", sort=False):
        t = sign_flip_test(g["difference"].astype(float).to_numpy(), str(m), n_resamples, seed, prior, intervals)
        e = evidence_entry(t.to_dict())
        metrics[str(m)] = {**e, "reading": DID_READINGS.get(e["direction"] or ""),
                           "audited_gap": _mean(g["audited_gap"]), "control_gap": _mean(g["control_gap"])}
    conf = enforce_min_pairs({"metrics": metrics, "headline": {}})
    out_head = conf["headline"]
    if out_head.get("metric"):
        out_head = {**out_head, "label": f"Contamination Confidence ({out_head['metric']}, {RELATIVE})"}
    return {"metrics": conf["metrics"], "headline": out_head, "relative_to": "control"}


def _mean(s: Any) -> float | None:
    v = float(s.astype(float).mean()) if len(s) else math.nan
    return v if math.isfinite(v) else None


def twin_means(records: pd.DataFrame, metrics: Sequence[str]) -> dict[str, float | None]:
    """Mean of each compared metric on the twins (r = 0), in the metric's own units (not logs)."""
    import pandas as pd

    z = records[(records["ratio"] == 0.0) & (records["arm"] == "reference")]
    out = {}
    for m in (m for m in DID_METRICS if m in metrics):
        v = pd.to_numeric(z[m].astype("Float64"), errors="coerce").astype(float)
        out[m] = _mean(v.dropna())
    return out


def strength_check(audited: Mapping[str, float | None], control: Mapping[str, float | None]) -> dict[str, Any]:
    """Both models' twin means on the strength metric, their ratio, and a warning above a factor of 2."""
    metric = next((m for m in STRENGTH_ORDER if audited.get(m) is not None and control.get(m) is not None), None)
    if metric is None:
        return {"metric": None, "ratio": None, "warning": "no metric measured on both models' twins"}
    a, c = float(audited[metric] or 0.0), float(control[metric] or 0.0)
    lo, hi = min(a, c), max(a, c)
    ratio = hi / lo if lo > 0 else (1.0 if hi == 0 else math.inf)
    warn = ""
    if ratio > STRENGTH_FACTOR:
        warn = (f"the models differ in strength: mean {metric} on the twins is {a:.3g} (audited) against {c:.3g} "
                f"(control), more than a factor of {STRENGTH_FACTOR:g}; the comparison assumes similar models")
    return {"metric": metric, "ratio": ratio if math.isfinite(ratio) else None, "warning": warn}


def control_summary(audited: pd.DataFrame, control: pd.DataFrame, metrics: Sequence[str], spec: str,
                    test_options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], pd.DataFrame]:
    """The run's ``control`` and ``did`` summary blocks and its ``did_gaps`` table.

    Args:
        audited: The audited model's records.
        control: The control's records on the same originals and twins.
        metrics: Metrics the probe measured.
        spec: The control's model spec.
        test_options: ``ProbeConfig.test_options()`` (``n_resamples``, ``seed``, ``prior``).
    """
    gaps = control_gaps(audited, control, metrics)
    did = did_confidence(gaps, int(test_options.get("n_resamples", 10_000)), int(test_options.get("seed", 0)),
                         float(test_options.get("prior", 0.5)))
    means = {"audited": twin_means(audited, metrics), "control": twin_means(control, metrics)}
    block = {"model": spec, "twin_means": means, "strength": strength_check(means["audited"], means["control"]),
             "note": CONTAMINATED_CONTROL}
    return block, did, gaps


def probe_control(control: Control, sets: Mapping[str, Sequence[Any]], config: Any) -> pd.DataFrame:
    """The control's records on the same originals and twins (``sets``: ``original`` and ``reference`` items)."""
    import pandas as pd

    from zcp_core.probe.measure import probe_items

    return pd.concat([probe_items(control.backend, list(sets[a]), config, a) for a in ("original", "reference")],
                     ignore_index=True)


def format_did(did: Mapping[str, Any], block: Mapping[str, Any]) -> str:
    """The CLI lines of the control comparison (each says it is relative to the control)."""
    from zcp_core.probe.evidence import format_confidence_value

    lines = [f"control: {block.get('model')} ({RELATIVE}; the P metrics compared as logs)"]
    for m, v in did.get("metrics", {}).items():
        ci = v.get("effect_ci") or [None, None]
        ci_txt = "" if None in ci else f" [{ci[0]:+.3f}, {ci[1]:+.3f}]"
        eff = "-" if v.get("effect") is None else f"{v['effect']:+.3f}"
        gaps = (f"audited gap {v['audited_gap']:+.3f}, control gap {v['control_gap']:+.3f}"
                if v.get("audited_gap") is not None and v.get("control_gap") is not None else "")
        lines.append(f"  {m:<8} n {v.get('n')}  difference {eff}{ci_txt}  C {format_confidence_value(v)}  "
                     f"{v.get('reason') or ''}{gaps}")
    h = did.get("headline", {})
    if h.get("confidence") is not None:
        lines.append(f"  headline: C = {format_confidence_value(h)} ({h.get('metric')}, {RELATIVE})")
    warn = (block.get("strength") or {}).get("warning")
    if warn:
        lines.append(f"  warning: {warn}")
    return "\n".join(lines)
