"""Plotly figures for the contamination lab (build and evaluate runs).

Each function takes tables a lab run stored and returns a Figure (or a
DataFrame view); nothing is recomputed from model outputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Mapping

from zcp_core.report import capital, fmt_c, fmt_num, metric_name

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

SPLIT_NAMES = {"C": "C (trained on)", "U": "U (held out)"}
SPLIT_COLORS = {"C": "#d62728", "U": "#1f77b4"}
#: Display words for the lab's own column names (the app applies them after ``readable``).
COLUMN_WORDS = {
    "split": "Split", "pair_id": "Item", "flip": "Flip", "gold": "Gold", "pred_original": "Prediction (original)",
    "reference_gold": "Twin gold", "pred_reference": "Prediction (twin)", "p_all_original": "P(all answer tokens), original",
    "p_all_reference": "P(all answer tokens), twin", "p_all_gap": "P(all answer tokens), original minus twin", "question": "Question", "orig_only": "Original only",
    "ref_only": "Twin only", "both": "Both", "neither": "Neither", "c_on_c": "C on C (trained on)",
    "c_on_u": "C on U (held out)", "auroc": "AUROC (gap, C vs U)", "model": "Model", "prompt": "Prompt",
    "original_id": "Original item",
    "kind": "Contamination kind", "detector": "Detector", "family_size": "Detectors in the family",
    "tpr_at_5fpr": "TPR at 5% FPR", "c_contaminated": "C on C (trained on)", "c_clean": "C on U (held out)",
    "n_c": "C items", "n_u": "U items", "c_reason": "Why no C", "auroc_ci": "AUROC 95% CI",
    "auroc_ci_fw": "AUROC family-wise CI",
}


def loss_figure(loss: pd.DataFrame, epochs: pd.DataFrame | None = None) -> go.Figure:
    """Training loss per step (line) and per epoch mean (markers).

    Args:
        loss: The build run's ``loss`` table (``step``, ``epoch``, ``loss``).
        epochs: The ``epochs`` table (``epoch``, ``loss``, ``steps``), optional.
    """
    import plotly.graph_objects as go

    fig = go.Figure()
    fig.add_trace(go.Scatter(x=loss["step"], y=loss["loss"], mode="lines", name="step loss"))
    if epochs is not None and len(epochs):
        ends = loss.groupby("epoch")["step"].max().reindex(epochs["epoch"]).to_numpy()
        fig.add_trace(go.Scatter(x=ends, y=epochs["loss"], mode="markers+lines", name="epoch mean",
                                 marker={"size": 9}))
    fig.update_layout(xaxis_title="optimiser step", yaxis_title="loss (answer tokens)", height=340,
                      margin={"t": 30, "b": 40})
    return fig


def confidence_figure(confidence: pd.DataFrame) -> go.Figure:
    """Contamination Confidence per metric, C next to U, with the 0.95 and 0.6 target lines.

    Args:
        confidence: The evaluate run's ``confidence`` table (``split``, ``metric``, ``confidence``).
    """
    import plotly.graph_objects as go

    fig = go.Figure()
    for sp in ("C", "U"):
        d = confidence[confidence["split"] == sp]  # the pooled "all" rows are left out of this chart
        fig.add_trace(go.Bar(x=[capital(metric_name(m)) for m in d["metric"]], y=d["confidence"],
                             name=SPLIT_NAMES[sp], marker_color=SPLIT_COLORS[sp],
                             text=[fmt_c(v) for v in d["confidence"]], textposition="outside"))
    fig.add_hline(y=0.95, line_dash="dash", line_color="#d62728", annotation_text="target on C ≥ 0.95")
    fig.add_hline(y=0.6, line_dash="dot", line_color="#1f77b4", annotation_text="target on U ≤ 0.6")
    fig.update_layout(barmode="group", yaxis={"range": [0, 1.1], "title": "Contamination Confidence"},
                      height=380, margin={"t": 30, "b": 40})
    return fig


def roc_figure(roc: pd.DataFrame, detection: dict[str, Any] | None = None) -> go.Figure:
    """ROC curve of each metric's original-minus-reference gap (C positive, U negative).

    Args:
        roc: The evaluate run's ``roc`` table (``metric``, ``fpr``, ``tpr``).
        detection: ``summary["detection"]`` for the AUROC in the legend.
    """
    import plotly.graph_objects as go

    fig = go.Figure()
    for metric, d in roc.groupby("metric", sort=False):
        auc = (detection or {}).get(metric, {}).get("auroc")
        name = capital(metric_name(metric))
        label = f"{name}, AUROC {fmt_num(auc)}" if isinstance(auc, (int, float)) and auc == auc else name
        fig.add_trace(go.Scatter(x=d["fpr"], y=d["tpr"], mode="lines+markers", name=label, line_shape="hv"))
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="chance", line={"dash": "dot", "color": "grey"}))
    fig.add_vline(x=0.05, line_dash="dash", line_color="grey", annotation_text="5% FPR")
    fig.update_layout(xaxis_title="false-positive rate (U flagged)", yaxis_title="true-positive rate (C flagged)",
                      xaxis={"range": [0, 1]}, yaxis={"range": [0, 1.02]}, height=400, margin={"t": 30, "b": 40})
    return fig


def gap_figure(gaps: pd.DataFrame, metric: str = "p_all") -> go.Figure:
    """Per-item original-minus-reference gap of one metric, C against U (box with points).

    Args:
        gaps: The evaluate run's ``gaps`` table (``metric``, ``split``, ``gap``, ``pair_id``).
        metric: Which metric's gap to show.
    """
    import plotly.graph_objects as go

    fig = go.Figure()
    d = gaps[gaps["metric"] == metric]
    for sp in ("C", "U"):
        s = d[d["split"] == sp]
        fig.add_trace(go.Box(y=s["gap"], name=SPLIT_NAMES[sp], boxpoints="all", jitter=0.4, pointpos=0,
                             marker_color=SPLIT_COLORS[sp], text=s["pair_id"]))
    fig.add_hline(y=0, line_color="grey")
    fig.update_layout(yaxis_title=f"{capital(metric_name(metric))}: original − twin", height=360, showlegend=False,
                      margin={"t": 30, "b": 40})
    return fig


def flips_view(flips: pd.DataFrame) -> pd.DataFrame:
    """The flips table to show: one row per pair, C first, largest P_all gap first.

    Columns (those present): ``split``, ``pair_id``, ``flip``, ``gold``, ``pred_original``,
    ``reference_gold``, ``pred_reference``, ``p_all_original``, ``p_all_reference``, ``p_all_gap``, ``question``.
    """
    cols = ["split", "pair_id", "flip", "gold", "pred_original", "reference_gold", "pred_reference",
            "p_all_original", "p_all_reference", "p_all_gap", "question"]
    view = flips[[c for c in cols if c in flips.columns]]
    return view.sort_values(["split", "p_all_gap"], ascending=[True, False], na_position="last").reset_index(drop=True)


def flip_counts(flips: pd.DataFrame) -> pd.DataFrame:
    """Count of each zero-CoT flip kind (``orig_only``, ``ref_only``, ``both``, ``neither``) per split."""
    table = flips.groupby(["split", "flip"]).size().unstack(fill_value=0)
    for k in ("orig_only", "ref_only", "both", "neither"):
        if k not in table.columns:
            table[k] = 0
    return table[["orig_only", "ref_only", "both", "neither"]].rename_axis(columns=None).reset_index()


def compare_models(confidence: Mapping[str, pd.DataFrame], detection: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """Evaluate runs of several models on the same lab split, side by side.

    Args:
        confidence: ``{model label: that evaluate run's confidence table}``.
        detection: ``{model label: that run's summary["detection"]}``.

    Returns:
        One row per model and metric, in words and formatted by the report rules (every cell text): the model,
        the metric, C on the trained-on split, C on the held-out split, and the AUROC of the metric's gap
        separating C from U.
    """
    import pandas as pd

    rows = []
    for name, conf in confidence.items():
        by = {(r["split"], r["metric"]): r["confidence"] for r in conf.to_dict("records")}
        for metric in dict.fromkeys(conf["metric"]):
            auc = (detection.get(name) or {}).get(metric, {}).get("auroc")
            rows.append({"model": name, "metric": metric_name(metric), "c_on_c": fmt_c(by.get(("C", metric))),
                         "c_on_u": fmt_c(by.get(("U", metric))), "auroc": fmt_num(auc)})
    cols = ["model", "metric", "c_on_c", "c_on_u", "auroc"]
    return pd.DataFrame(rows, columns=cols).rename(columns={c: COLUMN_WORDS.get(c, c.capitalize()) for c in cols})


# ---- the detector-by-kind matrix ---------------------------------------------------------------

def _ci_text(ci: Any) -> str:
    """An AUROC's stored ``[lo, hi]``, unsigned (``report.fmt_value_ci``): an AUROC is not a difference."""
    from zcp_core.report import fmt_value_ci

    lo, hi = (list(ci) + [None, None])[:2] if ci is not None else (None, None)
    return fmt_value_ci(lo, hi)


Cell = Callable[[str, str, dict[str, Any]], tuple[Any, str, str]]


def _auroc_heatmap(table: pd.DataFrame, kinds: list[str], labels: list[str], cell: Cell, colorbar: str,
                   title: str) -> go.Figure:
    """Kinds (rows, in ``kinds`` order, shown as ``labels``) by detectors; ``cell`` gives each (value, text, hover)."""
    import plotly.graph_objects as go

    from zcp_core.lab.report import detector_name

    dets = list(dict.fromkeys(table["detector"]))
    rows = {(r["kind"], r["detector"]): r for r in table.to_dict("records")}
    z, text, hover = [], [], []
    for k in kinds:
        got = [cell(k, d, rows.get((k, d), {})) for d in dets]
        z.append([v if v is not None and v == v else None for v, _, _ in got])
        text.append([t for _, t, _ in got])
        hover.append([h for _, _, h in got])
    fig = go.Figure(go.Heatmap(z=z, x=[detector_name(d) for d in dets], y=labels, text=text, texttemplate="%{text}",
                               customdata=hover, hovertemplate="%{customdata}<extra></extra>", zmin=0.0, zmax=1.0,
                               zmid=0.5, colorscale="RdBu_r", colorbar={"title": colorbar}))
    fig.update_layout(title=title, xaxis_title="detector", yaxis_title="contamination kind",
                      yaxis_autorange="reversed")
    return fig


def matrix_figure(table: pd.DataFrame) -> go.Figure:
    """Heatmap of AUROC, kinds (rows) by detectors (columns); the hover holds both CIs, TPR and C on C / U.

    Args:
        table: The matrix run's ``matrix`` table (:data:`zcp_core.lab.quality.ROW_COLUMNS`).
    """
    from zcp_core.lab.report import detector_name

    def cell(k: str, d: str, r: dict[str, Any]) -> tuple[Any, str, str]:
        a = r.get("auroc")
        return a, _num(a), (f"{k} × {detector_name(d)}<br>AUROC {_num(a)}  95% CI {_ci_text(r.get('auroc_ci'))}"
                            f"<br>family-wise CI {_ci_text(r.get('auroc_ci_fw'))}  TPR@5%FPR "
                            f"{_num(r.get('tpr_at_5fpr'))}<br>C on C {_num(r.get('c_contaminated'))}  C on U "
                            f"{_num(r.get('c_clean'))}"
                            + (f"<br>{r['reason']}" if isinstance(r.get("reason"), str) and r["reason"] else ""))

    kinds = list(dict.fromkeys(table["kind"]))
    # A build that did not take is drawn apart: its row label says so, and it sits below the others.
    failed = [k for k in kinds if _took(table, k) is False]
    kinds = [k for k in kinds if k not in failed] + failed
    labels = [f"{k} (did not take)" if k in failed else k for k in kinds]
    return _auroc_heatmap(table, kinds, labels, cell, "AUROC",
                          "Which detector catches which leak (AUROC, C vs U; 0.5 = chance)")


def replicates_figure(table: pd.DataFrame) -> go.Figure:
    """Heatmap of the median AUROC over replicate builds; the hover holds the range, catches and pooled p.

    Args:
        table: The pooled run's ``replicates`` table (:data:`zcp_core.lab.replicates.REPLICATE_COLUMNS`).
    """
    from zcp_core.lab.report import detector_name, kind_name
    from zcp_core.report import fmt_count, fmt_p

    def cell(k: str, d: str, r: dict[str, Any]) -> tuple[Any, str, str]:
        a, n = r.get("auroc_median"), fmt_count(r.get("replicates"))
        # a cell the pooled test catches is starred, one it finds reversed is marked with a down arrow
        mark = {"caught": "*", "inverted": "↓"}.get(str(r.get("reading")), "")
        return a, _num(a) + mark, (
            f"{kind_name(k)} × {detector_name(d)}<br>median AUROC {_num(a)}, range {_num(r.get('auroc_min'))}–"
            f"{_num(r.get('auroc_max'))} over {n} builds<br>caught by {fmt_count(r.get('caught'))} of {n}"
            f"<br>pooled exact p {fmt_p(r.get('pooled_p'))}, Holm-adjusted {fmt_p(r.get('pooled_p_holm'))}"
            + (f"<br>{r['reading']}" if r.get("reading") else ""))

    kinds = list(dict.fromkeys(table["kind"]))
    single = set(table.loc[table["single_build"].astype(bool), "kind"])
    labels = [f"{k} (single build)" if k in single else k for k in kinds]
    return _auroc_heatmap(table, kinds, labels, cell, "median AUROC",
                          "Which detector catches which leak over replicate builds (median AUROC; * caught)")


def _took(table: pd.DataFrame, kind: str) -> bool | None:
    from zcp_core.lab.report import took_of

    return took_of(table, kind)


def _num(v: Any) -> str:
    return fmt_num(v)




def matrix_png(table: pd.DataFrame, width: float = 8.0, height: float = 4.5) -> bytes:
    """The matrix heatmap as a static PNG with each cell's AUROC printed and the colours centred at chance (0.5)."""
    return heatmap_png(matrix_figure(table), "AUROC, C against U (0.5 = chance)", width, height)


def heatmap_png(fig: go.Figure, title: str, width: float = 8.0, height: float = 4.5) -> bytes:
    """An AUROC heatmap (:func:`matrix_figure`, :func:`replicates_figure`) as a static PNG, cell texts printed.

    A generic static render scales colours to the data's own range, which put the midpoint near 0.65 and drew
    chance blue; here white is 0.5, red above, blue below, and the first row is drawn on top as in the app.
    """
    import io

    import numpy as np
    from matplotlib.colors import TwoSlopeNorm
    from matplotlib.figure import Figure

    heat = fig.data[0]
    z = np.array([[np.nan if v is None else v for v in row] for row in heat.z], dtype=float)
    out = Figure(figsize=(width, height), dpi=100)
    ax = out.add_subplot()
    im = ax.imshow(z, aspect="auto", cmap="RdBu_r", norm=TwoSlopeNorm(vcenter=0.5, vmin=0.0, vmax=1.0))
    for i, row in enumerate(heat.text):
        for j, cell in enumerate(row):
            ax.text(j, i, cell, ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(heat.x)), list(heat.x), rotation=45, ha="right", fontsize=7)
    ax.set_yticks(range(len(heat.y)), list(heat.y), fontsize=7)
    ax.set_xlabel("detector")
    ax.set_ylabel("contamination kind")
    ax.set_title(title, fontsize=9)
    out.colorbar(im, ax=ax, label=heat.colorbar.title.text)
    out.tight_layout()
    buf = io.BytesIO()
    out.savefig(buf, format="png")
    return buf.getvalue()


def dose_figure(table: pd.DataFrame, took: pd.DataFrame | None = None) -> go.Figure:
    """AUROC against dose (exposures per C item), one line per detector and one panel per kind; the title of
    each panel says at which doses the build took.

    Args:
        table: A dose run's ``dose`` table (matrix rows with a ``dose`` column).
        took: Its ``took`` table (``kind``, ``dose``, ``took``, ``took_gain``), when there is one.
    """
    from plotly.subplots import make_subplots

    from zcp_core.lab.report import detector_name

    kinds = list(dict.fromkeys(table["kind"]))
    titles = []
    for k in kinds:
        rows = [] if took is None else took[took["kind"] == k].sort_values("dose").to_dict("records")
        marks = ", ".join(f"{r['dose']}: {'took' if r['took'] is True else 'did not take' if r['took'] is False else 'no verdict'}"
                          for r in rows)
        titles.append(f"{k}" + (f" (took at dose {marks})" if marks else ""))
    fig = make_subplots(rows=1, cols=len(kinds), subplot_titles=titles, shared_yaxes=True)
    for i, k in enumerate(kinds, 1):
        sub = table[table["kind"] == k]
        for det in dict.fromkeys(sub["detector"]):
            d = sub[sub["detector"] == det].sort_values("dose")
            fig.add_scatter(x=d["dose"], y=d["auroc"], mode="lines+markers", name=detector_name(det),
                            legendgroup=det, showlegend=i == 1, row=1, col=i,
                            customdata=[_ci_text(c) for c in d["auroc_ci"]],
                            hovertemplate=f"{detector_name(det)}<br>dose %{{x}}<br>AUROC %{{y:.2f}}  95% CI %{{customdata}}"
                                          "<extra></extra>")
        fig.add_hline(y=0.5, line_dash="dot", line_color="grey", row=1, col=i)
        fig.update_xaxes(title_text="exposures per C item", type="log", row=1, col=i)
    fig.update_yaxes(title_text="AUROC (C vs U)", range=[0, 1], row=1, col=1)
    fig.update_layout(title="How much contamination each detector needs")
    return fig
