"""Plotly figures and display tables for probe runs (used by ``app_pages/probe.py`` and notebook 01).

Every function reads tables a probe run stored (``records``, ``items``,
``tests``, ``truncation``, ``sample_size``) and only reshapes them for display.
:func:`static_png` draws any of these figures with matplotlib, so a notebook
rendered outside live Jupyter still shows it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from zcp_core.probe.browse import GAP_WORDS
from zcp_core.report import capital, metric_name

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

FLIP_KINDS = ("orig_only", "ref_only", "both", "neither", "no_number")
ARM_COLORS = {"original": "#d62728", "paraphrased": "#ff7f0e", "reference": "#1f77b4"}
#: Each arm by the name every surface shows.
ARM_NAMES = {"original": "original", "paraphrased": "paraphrase", "reference": "twin"}
#: A C bar's colour by its reading (``zcp_core.report.EVIDENCE_LEVELS``).
READING_COLORS = {"no evidence": "#9e9e9e", "weak evidence": "#ff9f1c", "evidence of contamination": "#d62728"}
#: A sample-size curve with fewer distinct N than this is not drawn (one or two points make no curve).
MIN_CURVE_POINTS = 3
#: Display words for the probe's own column names (the app applies them after ``readable``).
COLUMN_WORDS = {
    "pair_id": "Item", "flip": "Flip", "flagged": "Flagged", "p_all_gap": GAP_WORDS,
    "p_all_gap_rank": "Rank of that gap (1 = largest)", "gold": "Gold", "reference_gold": "Twin gold", "question": "Question",
    "reference_question": "Twin question", "evidence": "Evidence", "discordant_b": "Original only correct (b)",
    "discordant_c": "Twin only correct (c)", "pred_original": "Prediction (original)",
    "pred_reference": "Prediction (twin)", "acc_original": "Correct (original)", "acc_reference": "Correct (twin)",
    "p_all_original": "P(all answer tokens), original", "p_all_reference": "P(all answer tokens), twin",
    "cot_correct_original": "Correct with full CoT (original)", "cot_correct_reference": "Correct with full CoT (twin)",
}
#: The probe's metrics, in the order the app shows them.
PROBE_METRICS = ("acc", "con", "p_first", "p_all", "p_first_cal", "p_all_cal", "p_first_net", "p_all_net")
#: Each metric in words, capitalised to open a label or caption: the report layer's names
#: (``report.metric_name``), so a figure names a metric as every table and sentence does.
METRIC_LABELS = {m: capital(metric_name(m)) for m in PROBE_METRICS}


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
    """Per metric the evidence of ``zcp confidence``: test, n, effect (original - twin) with its 95% CI and
    one-sided 95% lower bound, d_z, p, BF10, C (``bound``: at the ceiling, "≥ 0.999"), the direction in
    words and the discordant counts (or why untested); older runs get it from their stored table."""
    import pandas as pd

    from zcp_core.probe.analysis import confidence_from_tests

    df = tests[tests["arm"] == arm]
    conf = confidence_from_tests(tests, arm)
    if conf is None or "test" not in df:
        return df.reset_index(drop=True)
    test_of = dict(zip(df["metric"], df["test"]))
    name_of = dict(zip(df["metric"], df["effect_name"])) if "effect_name" in df else {}
    direction_of = dict(zip(df["metric"], df["direction"])) if "direction" in df else {}
    rows = []
    for m, v in conf["metrics"].items():
        ci = v.get("effect_ci") or [None, None]
        disc = v.get("discordant") or [None, None]
        rows.append({"metric": m, "test": test_of.get(m), "n": v.get("n"), "effect_name": name_of.get(m),
                     "effect": v.get("effect"),
                     "ci_low": ci[0], "ci_high": ci[1], "effect_lower": v.get("effect_lower"),
                     "effect_size": v.get("effect_size"), "p": v.get("p"), "bf10": v.get("bf10"),
                     "confidence": v.get("confidence"), "bound": v.get("bound"), "reading": v.get("reading"),
                     "direction": direction_of.get(m), "discordant_b": disc[0], "discordant_c": disc[1],
                     "reason": v.get("reason") or ""})
    return pd.DataFrame(rows)


def measured_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of :func:`confidence_table` for metrics the run measured (tested, or untestable for a reason)."""
    if "reason" not in table:
        return table
    return table[~table["reason"].fillna("").astype(str).str.startswith("not measured")].reset_index(drop=True)


def unmeasured_notes(table: pd.DataFrame) -> list[str]:
    """``"metric: how to measure it"`` for each metric the run did not measure (e.g. ``con: add con to --metrics``)."""
    if "reason" not in table:
        return []
    rows = table[table["reason"].fillna("").astype(str).str.startswith("not measured")]
    return [f"{m}: {str(r).removeprefix('not measured').strip(' ()')}" for m, r in zip(rows["metric"], rows["reason"])]


def confidence_figure(tests: pd.DataFrame) -> go.Figure:
    """C per metric and suspect arm; the dashed line is C = 0.5 (no evidence either way)."""
    import plotly.express as px

    from zcp_core.report import evidence_words

    df = tests.dropna(subset=["confidence"]) if "confidence" in tests else tests.iloc[0:0]
    if len(df):  # a bar takes its colour from its reading, so C = 0.5 is never drawn in the colour of evidence
        df = df.assign(metric=df["metric"].map(metric_name), reading=df["confidence"].map(evidence_words))
    arms = df["arm"].nunique() if len(df) else 0
    fig = px.bar(df, x="metric", y="confidence", color="reading" if len(df) else None, barmode="group",
                 range_y=[0, 1], color_discrete_map=READING_COLORS,
                 pattern_shape="arm" if arms > 1 else None, category_orders={"reading": list(READING_COLORS)},
                 hover_data=[c for c in ("arm", "n", "p", "bf10") if c in df],
                 labels={"confidence": "Contamination Confidence C", "metric": "Metric", "arm": "Tested arm",
                         "reading": "Reading", "n": "Pairs", "p": "p-value", "bf10": "Bayes factor bound"})
    fig.add_hline(y=0.5, line_dash="dash", line_color="gray")
    return fig


def paired_records(records: pd.DataFrame) -> pd.DataFrame:
    """Records of paired items only: pairs with a reference row and a suspect (original/paraphrased) row.

    Originals without a twin are probed too, but they have no paired evidence, so distributions leave them out.
    """
    ref = set(records.loc[records["arm"] == "reference", "pair_id"])
    sus = set(records.loc[records["arm"] != "reference", "pair_id"])
    return records[records["pair_id"].isin(ref & sus)]


def distribution_figure(records: pd.DataFrame, metric: str) -> go.Figure:
    """Per-item values of a metric at r = 0 on paired items, each arm against the reference.

    A box for P_*, bars for Acc/Con; originals without a twin are left out (see :func:`paired_records`).
    """
    import pandas as pd
    import plotly.express as px

    z = paired_records(records[records["ratio"] == 0.0]).copy()
    z["value"] = pd.to_numeric(z[metric].astype("Float64"), errors="coerce").astype(float)
    z = z.dropna(subset=["value"])
    # the arms by the names every surface uses (a reference item is a "twin"), never the stored ones
    z["arm"] = z["arm"].map(lambda a: ARM_NAMES.get(a, a))
    colors = {ARM_NAMES.get(a, a): c for a, c in ARM_COLORS.items()}
    words = {"arm": "Question", "id": "Item"}
    if metric in ("acc", "con"):
        g = z.groupby("arm", as_index=False)["value"].mean()
        return px.bar(g, x="arm", y="value", color="arm", color_discrete_map=colors, range_y=[0, 1],
                      labels={**words, "value": f"Mean {metric_name(metric)}"})
    return px.box(z, x="arm", y="value", color="arm", points="all", color_discrete_map=colors,
                  hover_data=["id"], labels={**words, "value": capital(metric_name(metric))})


def gap_figure(items: pd.DataFrame, arm: str = "original") -> go.Figure:
    """P_all on each original against its twin; points above the diagonal favour the original."""
    import plotly.express as px

    from zcp_core.probe.browse import FLIP_WORDS

    df = items.dropna(subset=[f"p_all_{arm}", "p_all_reference"])
    # The legend in words ("original right, twin wrong"), not the stored flip codes.
    df = df.assign(flip=df["flip"].map(lambda f: FLIP_WORDS.get(f, f)))
    p_all = metric_name("p_all")
    fig = px.scatter(df, x="p_all_reference", y=f"p_all_{arm}", color="flip", hover_data=["pair_id", "p_all_gap"],
                     labels={"p_all_reference": f"{p_all} on the twin", f"p_all_{arm}": f"{p_all} on the {arm}",
                             "flip": "Zero-CoT answers", "pair_id": "Item", "p_all_gap": "Gap"})
    hi = float(max(df[f"p_all_{arm}"].max(), df["p_all_reference"].max(), 0.01)) if len(df) else 1.0
    fig.add_shape(type="line", x0=0, y0=0, x1=hi, y1=hi, line={"dash": "dash", "color": "gray"})
    return fig


def truncation_figure(truncation: pd.DataFrame, metric: str) -> go.Figure:
    """Metric against truncation ratio r per arm (r = 0 is zero-CoT, r = 1 the full CoT)."""
    import plotly.express as px

    df = truncation[truncation["metric"] == metric]
    return px.line(df, x="ratio", y="value", color="arm", markers=True, color_discrete_map=ARM_COLORS,
                   labels={"ratio": "CoT kept (r)", "value": capital(metric_name(metric))})


def curve_points(sample_size: pd.DataFrame) -> int:
    """Number of distinct sample sizes N in a ``sample_size`` table (draw the curve from MIN_CURVE_POINTS)."""
    return int(sample_size["n"].nunique()) if "n" in sample_size and len(sample_size) else 0


def sample_size_figure(sample_size: pd.DataFrame) -> go.Figure:
    """Mean C (band: 10th-90th percentile over subsamples) against the number of pairs N."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for m, g in sample_size.groupby("metric", sort=False):
        g = g.sort_values("n")
        fig.add_trace(go.Scatter(x=g["n"], y=g["confidence_mean"], mode="lines+markers", name=capital(metric_name(m)),
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
    for m in PROBE_METRICS:
        if m in records and pd.to_numeric(records[m].astype("Float64"), errors="coerce").notna().any():
            out.append(m)
    return out


def compare_confidence(tests: Mapping[str, pd.DataFrame], arm: str = "original") -> pd.DataFrame:
    """Two or more probe runs on the same items, C per metric side by side.

    Args:
        tests: ``{model label: that run's tests table}``.
        arm: The suspect arm to compare.

    Returns:
        One row per metric and model: ``metric``, ``model``, ``n``, ``confidence``, ``p``, ``bf10``, ``direction``.
    """
    import pandas as pd

    cols = ["metric", "n", "confidence", "p", "bf10", "direction"]
    frames = [t[t["arm"] == arm][[c for c in cols if c in t]].assign(model=name) for name, t in tests.items()]
    out = pd.concat(frames, ignore_index=True)
    return out[["metric", "model", *[c for c in cols[1:] if c in out]]]


def compare_confidence_figure(table: pd.DataFrame) -> go.Figure:
    """C per metric, one bar per model (a :func:`compare_confidence` table); dashed line at 0.5."""
    import plotly.express as px

    fig = px.bar(table.dropna(subset=["confidence"]), x="metric", y="confidence", color="model", barmode="group",
                 range_y=[0, 1.05], labels={"confidence": "Contamination Confidence C", "metric": "metric"})
    fig.add_hline(y=0.5, line_dash="dash", line_color="gray")
    return fig


def pair_gaps(items: Mapping[str, pd.DataFrame], split: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Per pair, the P_all gap (original minus twin) under each model, in one row.

    Args:
        items: ``{model label: that run's items table}``; the runs share their items.
        split: Optional ``{pair_id: group}`` (e.g. the lab's ``C``/``U``) added as column ``split``.

    Returns:
        ``pair_id``, ``split`` (when given), then ``gap <model>`` and ``flagged <model>`` per model.
    """
    out: pd.DataFrame | None = None
    for name, t in items.items():
        part = t[["pair_id", "p_all_gap", "flagged"]].rename(
            columns={"p_all_gap": f"gap {name}", "flagged": f"flagged {name}"})
        out = part if out is None else out.merge(part, on="pair_id", how="outer")
    if out is None:
        raise ValueError("pair_gaps needs at least one items table")
    if split is not None:
        out.insert(1, "split", out["pair_id"].map(dict(split)))
    return out.reset_index(drop=True)


def pair_gap_figure(gaps: pd.DataFrame, x_model: str, y_model: str) -> go.Figure:
    """Each pair's P_all gap under one model against another (a :func:`pair_gaps` table); diagonal = no change."""
    import plotly.express as px

    x, y = f"gap {x_model}", f"gap {y_model}"
    fig = px.scatter(gaps, x=x, y=y, color="split" if "split" in gaps else None, hover_data=["pair_id"],
                     color_discrete_map={"C": "#d62728", "U": "#1f77b4"},
                     labels={x: f"P(all answer tokens), original minus twin, {x_model}",
                             y: f"P(all answer tokens), original minus twin, {y_model}"})
    lo = float(min(gaps[x].min(), gaps[y].min(), 0.0))
    hi = float(max(gaps[x].max(), gaps[y].max(), 0.01))
    fig.add_shape(type="line", x0=lo, y0=lo, x1=hi, y1=hi, line={"dash": "dash", "color": "gray"})
    return fig


def _title(axis: Any) -> str:
    return str(axis.title.text or "") if axis is not None and axis.title is not None else ""


def _trace_color(t: Any) -> str | None:
    for part in ("marker", "line"):
        c = getattr(getattr(t, part, None), "color", None)
        if isinstance(c, str):
            return c
    return None


def _categories(traces: Sequence[Any]) -> list[str]:
    """Categorical x values of bar and box traces, in order of first appearance."""
    import numbers

    cats: list[str] = []
    for t in traces:
        if t.type not in ("bar", "box", "waterfall"):
            continue
        xs = [t.name] if t.x is None else list(t.y if getattr(t, "orientation", None) == "h" else t.x)
        if not all(isinstance(v, numbers.Number) for v in xs):
            cats += [str(v) for v in dict.fromkeys(xs) if str(v) not in cats]
    return cats


def _draw(ax: Any, t: Any, pos: Mapping[str, int], shift: float, width: float) -> None:
    """Draw one plotly trace (bar, scatter or box) on a matplotlib axis."""
    import numpy as np

    color, name = _trace_color(t), (str(t.name) if t.name and t.showlegend is not False else None)
    if t.type == "bar" and t.orientation == "h":
        y = np.array([pos.get(str(v), v) for v in t.y], dtype=float)
        ax.barh(y + shift, np.array([np.nan if v is None else v for v in t.x], dtype=float), height=width,
                color=color, label=name)
    elif t.type == "waterfall":  # running total from the trace's base: each bar starts where the last ended
        h = t.orientation == "h"
        steps = np.array([0.0 if v is None else v for v in (t.x if h else t.y)], dtype=float)
        at = np.array([pos.get(str(v), v) for v in (t.y if h else t.x)], dtype=float)
        start = float(t.base or 0.0) + np.concatenate([[0.0], np.cumsum(steps)[:-1]])
        colors = ["#d62728" if v > 0 else "#1f77b4" for v in steps]
        if h:
            ax.barh(at, steps, left=start, height=0.8, color=colors)
        else:
            ax.bar(at, steps, bottom=start, width=0.8, color=colors)
    elif t.type == "histogram":
        xb = t.xbins
        bins = (np.arange(xb.start, xb.end + xb.size / 2, xb.size) if xb is not None and xb.size else 20)
        ax.hist(np.asarray(t.x, dtype=float), bins=bins, color=color, alpha=0.6, label=name)
    elif t.type == "heatmap":
        z = np.asarray(t.z, dtype=float)
        im = ax.imshow(z, aspect="auto", cmap="RdBu_r", vmin=np.nanmin(z), vmax=np.nanmax(z))
        if t.x is not None:
            ax.set_xticks(range(len(t.x)), [str(v) for v in t.x], rotation=45, ha="right", fontsize=7)
        if t.y is not None:
            ax.set_yticks(range(len(t.y)), [str(v) for v in t.y], fontsize=7)
        ax.figure.colorbar(im, ax=ax)
    elif t.type == "bar":
        x = np.array([pos.get(str(v), v) for v in t.x], dtype=float)
        y = np.array([np.nan if v is None else v for v in t.y], dtype=float)
        ax.bar(x + shift, y, width=width, color=color, label=name)
    elif t.type == "scatter":
        x = np.array([pos.get(str(v), v) for v in t.x], dtype=float)
        y = np.array([np.nan if v is None else v for v in t.y], dtype=float)
        mode = t.mode or "markers"
        style = (":" if t.line.dash else "-") * ("lines" in mode) + "o" * ("markers" in mode)
        if t.error_y is not None and t.error_y.array is not None:
            minus = t.error_y.arrayminus if t.error_y.arrayminus is not None else t.error_y.array
            err = np.vstack([np.asarray(minus, dtype=float), np.asarray(t.error_y.array, dtype=float)])
            ax.errorbar(x, y, yerr=err, fmt=style or "o", color=color, label=name, capsize=3, ms=4)
        else:
            ax.plot(x, y, style or "o", color=color, label=name, ms=4,
                    drawstyle="steps-post" if t.line.shape == "hv" else "default")
    elif t.type == "box":
        y = np.asarray(t.y, dtype=float)
        xs = [str(t.name)] * len(y) if t.x is None else [str(v) for v in t.x]
        rng = np.random.default_rng(0)  # fixed jitter: the same image on every run
        for i, c in enumerate(dict.fromkeys(xs)):
            vals = y[[v == c for v in xs]]
            vals = vals[~np.isnan(vals)]
            if len(vals):
                ax.boxplot([vals], positions=[pos[c]], widths=0.5, showfliers=False)
                ax.scatter(pos[c] + rng.uniform(-0.15, 0.15, len(vals)), vals, s=10, color=color, alpha=0.6,
                           label=name if i == 0 else None)


def static_png(fig: go.Figure, width: float = 7.0, height: float = 4.0, dpi: int = 100) -> bytes:
    """The same figure drawn with matplotlib, as PNG bytes, for notebooks rendered outside live Jupyter.

    Bar (vertical and horizontal), waterfall, histogram, heatmap, scatter and box traces and straight-line
    shapes (``add_hline``, ``add_vline``, ``add_shape``) are drawn; other trace types are skipped. In a
    notebook, :func:`show_figure` shows both.
    """
    import io

    from matplotlib.figure import Figure

    out = Figure(figsize=(width, height), dpi=dpi)
    ax = out.add_subplot()
    traces = list(fig.data)
    cats = [] if any(t.type == "heatmap" for t in traces) else _categories(traces)
    pos = {c: i for i, c in enumerate(cats)}
    bars = [t for t in traces if t.type == "bar"]
    group = fig.layout.barmode == "group" and len(bars) > 1
    width_bar = 0.8 / len(bars) if group else 0.8
    for t in traces:
        shift = (bars.index(t) - (len(bars) - 1) / 2) * width_bar if group and t in bars else 0.0
        _draw(ax, t, pos, shift, width_bar)
    for s in fig.layout.shapes or ():
        if s.type != "line":
            continue
        style: dict[str, Any] = {"color": s.line.color or "gray", "linestyle": "--" if s.line.dash else "-",
                                 "linewidth": 1}
        if str(s.xref).endswith("domain"):
            ax.axhline(float(s.y0), **style)
        elif str(s.yref).endswith("domain"):
            ax.axvline(float(s.x0), **style)
        else:
            ax.plot([s.x0, s.x1], [s.y0, s.y1], **style)
    if cats and any(t.type in ("bar", "waterfall") and t.orientation == "h" for t in traces):
        ax.set_yticks(range(len(cats)), cats, fontsize=7)
    elif cats:
        ax.set_xticks(range(len(cats)), cats, rotation=45 if len(cats) > 6 else 0, ha="right" if len(cats) > 6 else "center")
    ax.set_xlabel(_title(fig.layout.xaxis))
    ax.set_ylabel(_title(fig.layout.yaxis))
    for axis, setter in ((fig.layout.xaxis, ax.set_xlim), (fig.layout.yaxis, ax.set_ylim)):
        if axis.range is not None:
            setter(*axis.range)
    if fig.layout.yaxis.autorange == "reversed":
        ax.invert_yaxis()
    if ax.get_legend_handles_labels()[0] and fig.layout.showlegend is not False:
        ax.legend(fontsize=8, loc="best")
    out.tight_layout()
    buf = io.BytesIO()
    out.savefig(buf, format="png")
    return buf.getvalue()


def show_figure(fig: go.Figure, width: float = 7.0, height: float = 4.0) -> None:
    """Show a plotly figure in a notebook together with its static image (:func:`static_png`), in one cell.

    The interactive figure needs live Jupyter; the image survives a static render (nbviewer, GitHub, HTML).
    """
    from IPython.display import Image, display

    display(fig, Image(static_png(fig, width=width, height=height)))


def format_evidence(df: pd.DataFrame) -> pd.DataFrame:
    """A copy whose numbers are text by the report rules (:mod:`zcp_core.report`): ``p`` (``1.1e-07``),
    ``bf10`` (``212,285.7``), ``confidence`` (``≥ 0.999``), ``effect`` (signed), ``n`` and ``metric`` in words.

    Rounding a p-value to a few decimals would show 2e-07 as 0; a C at the ceiling reads ``≥ 0.999``, never 1.000.
    """
    from zcp_core.report import fmt_bf, fmt_c, fmt_count, fmt_num, fmt_p

    out = df.copy()
    for col, fmt in (("p", fmt_p), ("bf10", fmt_bf), ("confidence", fmt_c), ("n", fmt_count),
                     ("effect", lambda v: fmt_num(v, signed=True)), ("metric", metric_name)):
        if col in out:
            out[col] = [fmt(v) for v in out[col]]
    return out
