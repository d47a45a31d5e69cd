"""Plotly figures and display tables for probe runs (used by ``app_pages/probe.py`` and notebook 01).

Every function reads tables a probe run stored (``records``, ``items``,
``tests``, ``truncation``, ``sample_size``) and only reshapes them for display.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

FLIP_KINDS = ("orig_only", "ref_only", "both", "neither")
ARM_COLORS = {"original": "#d62728", "paraphrased": "#ff7f0e", "reference": "#1f77b4"}
METRIC_LABELS = {"acc": "Acc (zero-CoT correct)", "con": "Con (agrees with own full CoT)",
                 "p_first": "P_first (first gold token)", "p_all": "P_all (geo-mean gold tokens)"}


def flips_table(items: pd.DataFrame, flips: Sequence[str] = FLIP_KINDS, flagged_only: bool = False,
                sort_by: str = "p_all_gap") -> pd.DataFrame:
    """The zero-CoT flips table: chosen flip kinds, sorted by ``sort_by`` (largest first).

    Full-CoT columns (``cot_correct_*``) are kept when the run generated a CoT.
    """
    df = items[items["flip"].isin(list(flips))]
    if flagged_only:
        df = df[df["flagged"]]
    cols = ["pair_id", "flip", "flagged", "p_all_gap", "p_all_gap_rank", "gold", "reference_gold"]
    cols += [c for c in df.columns if c.startswith(("pred_", "acc_", "p_all_", "cot_correct_")) and c not in cols]
    cols += ["question", "reference_question", "evidence"]
    df = df[[c for c in cols if c in df.columns]]
    if sort_by in df:
        df = df.sort_values(sort_by, ascending=False, na_position="last")
    return df.reset_index(drop=True)


def confidence_table(tests: pd.DataFrame, arm: str = "original") -> pd.DataFrame:
    """Per metric: test, n, effect, 95% CI, p, BF10, C, direction and discordant counts (or why untested)."""
    cols = ["metric", "test", "n", "effect_name", "effect", "mean_diff", "ci_low", "ci_high", "p", "bf10",
            "confidence", "direction", "discordant_b", "discordant_c", "reason"]
    df = tests[tests["arm"] == arm]
    return df[[c for c in cols if c in df.columns]].reset_index(drop=True)


def confidence_figure(tests: pd.DataFrame) -> go.Figure:
    """C per metric and suspect arm; the dashed line is C = 0.5 (no evidence either way)."""
    import plotly.express as px

    df = tests.dropna(subset=["confidence"]) if "confidence" in tests else tests.iloc[0:0]
    fig = px.bar(df, x="metric", y="confidence", color="arm", barmode="group", range_y=[0, 1],
                 color_discrete_map=ARM_COLORS, hover_data=[c for c in ("n", "p", "bf10", "direction") if c in df],
                 labels={"confidence": "Contamination Confidence C"})
    fig.add_hline(y=0.5, line_dash="dash", line_color="gray")
    return fig


def distribution_figure(records: pd.DataFrame, metric: str) -> go.Figure:
    """Per-item values of a metric at r = 0, each arm against the reference (box for P_*, bars for Acc/Con)."""
    import pandas as pd
    import plotly.express as px

    z = records[records["ratio"] == 0.0].copy()
    z["value"] = pd.to_numeric(z[metric].astype("Float64"), errors="coerce").astype(float)
    z = z.dropna(subset=["value"])
    if metric in ("acc", "con"):
        g = z.groupby("arm", as_index=False)["value"].mean()
        return px.bar(g, x="arm", y="value", color="arm", color_discrete_map=ARM_COLORS, range_y=[0, 1],
                      labels={"value": f"mean {METRIC_LABELS.get(metric, metric)}"})
    return px.box(z, x="arm", y="value", color="arm", points="all", color_discrete_map=ARM_COLORS,
                  hover_data=["id"], labels={"value": METRIC_LABELS.get(metric, metric)})


def gap_figure(items: pd.DataFrame, arm: str = "original") -> go.Figure:
    """P_all on each original against its twin; points above the diagonal favour the original."""
    import plotly.express as px

    df = items.dropna(subset=[f"p_all_{arm}", "p_all_reference"])
    fig = px.scatter(df, x="p_all_reference", y=f"p_all_{arm}", color="flip", hover_data=["pair_id", "p_all_gap"],
                     labels={"p_all_reference": "P_all on reference twin", f"p_all_{arm}": f"P_all on {arm}"})
    hi = float(max(df[f"p_all_{arm}"].max(), df["p_all_reference"].max(), 0.01)) if len(df) else 1.0
    fig.add_shape(type="line", x0=0, y0=0, x1=hi, y1=hi, line={"dash": "dash", "color": "gray"})
    return fig


def truncation_figure(truncation: pd.DataFrame, metric: str) -> go.Figure:
    """Metric against truncation ratio r per arm (r = 0 is zero-CoT, r = 1 the full CoT)."""
    import plotly.express as px

    df = truncation[truncation["metric"] == metric]
    return px.line(df, x="ratio", y="value", color="arm", markers=True, color_discrete_map=ARM_COLORS,
                   labels={"ratio": "CoT kept (r)", "value": METRIC_LABELS.get(metric, metric)})


def sample_size_figure(sample_size: pd.DataFrame) -> go.Figure:
    """Mean C (band: 10th-90th percentile over subsamples) against the number of pairs N."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for m, g in sample_size.groupby("metric", sort=False):
        g = g.sort_values("n")
        fig.add_trace(go.Scatter(x=g["n"], y=g["confidence_mean"], mode="lines+markers", name=str(m),
                                 error_y={"type": "data", "symmetric": False,
                                          "array": g["confidence_q90"] - g["confidence_mean"],
                                          "arrayminus": g["confidence_mean"] - g["confidence_q10"]}))
    fig.update_layout(xaxis_title="pairs N", yaxis_title="Contamination Confidence C", yaxis_range=[0, 1.05])
    fig.add_hline(y=0.5, line_dash="dash", line_color="gray")
    return fig


def measured_metrics(records: pd.DataFrame) -> list[str]:
    """Metrics with at least one value in the records."""
    import pandas as pd

    out = []
    for m in ("acc", "con", "p_first", "p_all"):
        if m in records and pd.to_numeric(records[m].astype("Float64"), errors="coerce").notna().any():
            out.append(m)
    return out
