"""Figures and HTML for the detector page: SHAP-coloured text, waterfall, top tokens, attack, cross-domain.

Every function reads tables of a ``detector`` run (see ``zcp_core.detector.runs``)
and returns a plotly Figure or an HTML string; none recomputes a result.
Colours: red pushes toward LLM, blue toward human.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

from zcp_core.detector.report import detector_words
from zcp_core.report import fmt_num, fmt_share

#: Metric columns in words (figure titles).
METRIC_WORDS = {"roc_auc": "ROC-AUC", "f1": "F1", "accuracy": "accuracy"}
RED = "#d62728"
BLUE = "#1f77b4"
GREY = "#9e9e9e"


def _rgba(value: float, scale: float) -> str:
    a = min(1.0, abs(value) / scale) * 0.85 if scale > 0 else 0.0
    return f"rgba(214,39,40,{a:.3f})" if value > 0 else f"rgba(31,119,180,{a:.3f})"


def token_html(tokens: pd.DataFrame, text: str) -> str:
    """The text with each token's background coloured by its attribution (HTML-escaped).

    Args:
        tokens: One text's rows of ``token_attributions`` (``start``, ``end``,
            ``attribution``, ``in_artifact``).
        text: The full text the offsets refer to.
    """
    rows = tokens.sort_values("start")
    scale = float(rows["attribution"].abs().max()) if len(rows) else 0.0
    parts, pos = [], 0
    for r in rows.itertuples():
        s, e = int(r.start), int(r.end)
        if s < pos:
            continue
        parts.append(html.escape(text[pos:s]))
        border = "border-bottom:2px solid #000;" if bool(r.in_artifact) else ""
        parts.append(f'<span title="{r.attribution:+.4f}" style="background:{_rgba(float(r.attribution), scale)};'
                     f'{border}border-radius:2px">{html.escape(text[s:e])}</span>')
        pos = e
    parts.append(html.escape(text[pos:]))
    body = "".join(parts).replace("\n", "<br>")
    return f'<div style="line-height:1.9;font-size:0.95rem">{body}</div>'


def text_of(tokens: pd.DataFrame) -> str:
    """Rebuild a text from its token rows (gaps filled with spaces), when the run keeps no full text."""
    rows = tokens.sort_values("start")
    out: list[str] = []
    pos = 0
    for r in rows.itertuples():
        if int(r.start) > pos:
            out.append(" " * (int(r.start) - pos))
        out.append(str(r.token))
        pos = int(r.end)
    return "".join(out)


def waterfall_figure(tokens: pd.DataFrame, base_value: float, k: int = 12) -> go.Figure:
    """Waterfall from the base value to the margin over one text's top-|attribution| tokens.

    The remaining tokens are summed into one bar, so the last bar ends at the margin.
    """
    import plotly.graph_objects as go

    rows = tokens.assign(abs_a=tokens["attribution"].abs()).sort_values("abs_a", ascending=False)
    top, rest = rows.head(k), rows.iloc[k:]
    # a token may occur twice in a text, so its place (the n-th token) tells the bars apart
    labels = [f"“{t}”, token {int(p) + 1}{' ★' if a else ''}"
              for t, p, a in zip(top["token"], top["position"], top["in_artifact"], strict=True)]
    values = list(top["attribution"])
    if len(rest):
        labels.append(f"{len(rest)} other tokens")
        values.append(float(rest["attribution"].sum()))
    fig = go.Figure(go.Waterfall(
        orientation="h", base=base_value, x=values, y=labels, measure=["relative"] * len(values),
        increasing={"marker": {"color": RED}}, decreasing={"marker": {"color": BLUE}},
    ))
    fig.update_layout(yaxis={"autorange": "reversed"}, xaxis_title="log-odds of LLM (base value → margin)",
                      height=max(300, 28 * len(values) + 80), margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      title=f"base {fmt_num(base_value, signed=True)} → margin {fmt_num(base_value + sum(values), signed=True)}"
                            "   (★ artifact token)")
    return fig


def top_tokens_figure(top: pd.DataFrame, k: int = 25) -> go.Figure:
    """Horizontal bars of mean |attribution| per token; artifact tokens in red, others grey."""
    import plotly.graph_objects as go

    rows = top.sort_values("mean_abs", ascending=False).head(k)
    colors = [RED if a else GREY for a in rows["is_artifact"]]
    fig = go.Figure(go.Bar(
        x=rows["mean_abs"], y=[f"{t}{' ★' if a else ''}" for t, a in zip(rows["token"], rows["is_artifact"],
                                                                            strict=True)],
        orientation="h", marker_color=colors,
        customdata=rows[["mean_attribution", "count", "artifact_rate"]].to_numpy(),
        hovertemplate="%{y}<br>mean |SHAP| %{x:.4f}<br>mean signed %{customdata[0]:+.4f}"
                      "<br>count %{customdata[1]}<br>in artifact %{customdata[2]:.0%}<extra></extra>",
    ))
    fig.update_layout(yaxis={"autorange": "reversed"}, xaxis_title="mean |SHAP attribution| per text",
                      height=max(320, 22 * len(rows) + 80), margin={"l": 10, "r": 10, "t": 30, "b": 10},
                      title="Top tokens (★ / red: mostly inside artifact spans)")
    return fig


def attack_figure(attack: pd.DataFrame) -> go.Figure:
    """Grouped bars: attacked human texts classified human vs LLM, per training form."""
    import plotly.graph_objects as go

    names = [detector_words(n) for n in attack["trained_on"]]
    fig = go.Figure([
        go.Bar(name="called human", x=names, y=attack["classified_human"], marker_color=BLUE),
        go.Bar(name="called LLM", x=names, y=attack["classified_llm"], marker_color=RED),
    ])
    fig.update_layout(barmode="group", xaxis_title="detector", legend_title="attacked human texts", yaxis_title="attacked human texts",
                      height=340, margin={"l": 10, "r": 10, "t": 30, "b": 10})
    return fig


def artifact_share_figure(summary_shares: dict) -> go.Figure:
    """Bars of the share of attribution mass on artifact spans per detector."""
    import plotly.graph_objects as go

    names = list(summary_shares)
    vals = [summary_shares[n] if summary_shares[n] is not None else 0.0 for n in names]
    fig = go.Figure(go.Bar(x=[detector_words(n) for n in names], y=vals, marker_color=[RED if "original" in n else BLUE for n in names],
                           text=[fmt_share(summary_shares[n]) for n in names], textposition="outside"))
    fig.update_layout(yaxis_title="share of |SHAP| on artifact spans", yaxis_tickformat=".0%", height=320,
                      margin={"l": 10, "r": 10, "t": 30, "b": 10})
    return fig


def cross_domain_figure(cross: pd.DataFrame, metric: str = "roc_auc") -> go.Figure:
    """Heatmap of a metric: rows train domain/form, columns eval domain/form."""
    import plotly.graph_objects as go

    pv = cross.pivot_table(index=["train_domain", "train_form"], columns=["eval_domain", "eval_form"], values=metric)
    fig = go.Figure(go.Heatmap(
        z=pv.to_numpy(), x=[f"{d}, {f}" for d, f in pv.columns], y=[f"{d}, {f}" for d, f in pv.index],
        colorscale="Viridis", text=[[fmt_num(v) for v in row] for row in pv.to_numpy()], texttemplate="%{text}", colorbar={"title": METRIC_WORDS.get(metric, metric)},
    ))
    fig.update_layout(xaxis_title="evaluated on", yaxis_title="trained on", height=420,
                      margin={"l": 10, "r": 10, "t": 30, "b": 10})
    return fig
