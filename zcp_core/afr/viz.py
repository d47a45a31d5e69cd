"""Figures and HTML for the AFR page, built from what an ``afr`` run stored.

Screen runs group chains by ``arm`` (blind/leaked/excised), profile runs by
``corpus``; :func:`group_column` says which. Nothing here recomputes AFR.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

_COLORS = {"blind": "#4C78A8", "leaked": "#E45756", "excised": "#72B7B2"}


def group_column(frame: pd.DataFrame) -> str:
    """``arm`` for screen runs, ``corpus`` for profile runs."""
    return "arm" if "arm" in frame.columns else "corpus"


def position_histogram(frame: pd.DataFrame, threshold: float) -> go.Figure:
    """Histogram of the answer-position fraction of covered chains, one trace per arm, with the threshold line."""
    import plotly.graph_objects as go

    col = group_column(frame)
    fig = go.Figure()
    for name, sub in frame[frame["covered"].astype(bool)].groupby(col, sort=False):
        fig.add_trace(go.Histogram(x=sub["frac"], name=f"{name} (n={len(sub)})", xbins={"start": 0, "end": 1, "size": 0.05},
                                   opacity=0.6, marker_color=_COLORS.get(str(name))))
    fig.add_vline(x=threshold, line_dash="dash", line_color="black",
                  annotation_text=f"answer-first threshold {threshold}", annotation_position="top right")
    fig.update_layout(barmode="overlay", xaxis_title="first answer position / block length (covered chains)",
                      yaxis_title="chains", xaxis_range=[0, 1], legend_title=col, margin={"t": 30})
    return fig


def _bar(name: str, iv: Mapping[str, float], color: str | None) -> Any:
    import plotly.graph_objects as go

    return go.Bar(x=[name], y=[iv["value"]], marker_color=color, name=name,
                  error_y={"type": "data", "symmetric": False, "array": [iv["high"] - iv["value"]],
                           "arrayminus": [iv["value"] - iv["low"]]})


def afr_ci_figure(summary: Mapping[str, Any], key: str = "ci_covered_chains") -> go.Figure:
    """AFR of each arm (or corpus) and dAFR (percentage points), each with its bootstrap 95% CI.

    ``key`` picks the denominator: ``ci_covered_chains`` (the paper's, the default) or ``ci_all_chains``.
    """
    import plotly.graph_objects as go

    covered = key == "ci_covered_chains"
    fig = go.Figure()
    if "afr_blind" in summary.get(key, {}):
        ci = summary[key]
        fig.add_trace(_bar("AFR blind", ci["afr_blind"], _COLORS["blind"]))
        fig.add_trace(_bar("AFR leaked", ci["afr_leaked"], _COLORS["leaked"]))
        fig.add_trace(_bar("dAFR", ci["dafr"], "#54A24B"))
        if "excision" in summary:
            ex = summary["excision"]
            v = ex["afr_excised"] if covered else ex.get("afr_excised_all", ex["afr_excised"])
            fig.add_trace(go.Bar(x=["AFR excised"], y=[v], marker_color=_COLORS["excised"], name="AFR excised"))
    elif summary.get("mode") == "compare":
        for side in ("a", "b"):
            fig.add_trace(_bar(f"AFR {summary[side]['name']}", summary[side][key], None))
        fig.add_trace(_bar("difference", summary["diff_covered_chains" if covered else "diff_all_chains"], "#54A24B"))
    elif key in summary:
        fig.add_trace(_bar(f"AFR {summary.get('name', '')}", summary[key], None))
    fig.add_hline(y=0, line_color="gray")
    fig.update_layout(showlegend=False, yaxis_title="% (AFR) or percentage points (difference)", margin={"t": 30},
                      title="covered chains (the paper's denominator)" if covered else "all chains")
    return fig


def chain_html(chain: str, mention_start: int, mention_end: int) -> str:
    """The chain as escaped HTML, the first answer mention and every ``\\boxed{}`` highlighted."""
    from zcp_core.answers import all_boxed

    spans = [(s, e, "box") for s, e, _ in all_boxed(chain)]
    if 0 <= mention_start < mention_end:
        spans.append((mention_start, mention_end, "first"))
    spans.sort()
    out, k = [], 0
    for s, e, kind in spans:
        if s < k:
            continue  # overlapping spans: keep the earlier one
        out.append(html.escape(chain[k:s]))
        style = ("background:#ffe08a;font-weight:bold" if kind == "first" else "background:#cde8ff")
        title = "first statement of the answer" if kind == "first" else "\\boxed{}"
        out.append(f'<mark style="{style}" title="{title}">{html.escape(chain[s:e])}</mark>')
        k = e
    out.append(html.escape(chain[k:]))
    return ('<div style="white-space:pre-wrap;font-family:monospace;font-size:0.85em;max-height:480px;'
            'overflow-y:auto;border:1px solid #ddd;padding:8px">' + "".join(out) + "</div>")
