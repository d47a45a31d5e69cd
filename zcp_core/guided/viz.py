"""Figures and HTML for the Time-Travel page (they read a ``guided`` run; nothing is recomputed).

Overlap highlighting marks the tokens of one longest common subsequence
(the alignment ROUGE-L counts); all text is HTML-escaped before marking.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any

GUIDED_COLOR = "#d62728"
GENERAL_COLOR = "#1f77b4"
METRIC_NAMES = {"rouge_l": "ROUGE-L", "edit_sim": "edit similarity", "bleurt": "BLEURT"}


def highlight_overlap(reference: str, candidate: str, tag: str = "mark") -> tuple[str, str]:
    """HTML of both texts with their LCS tokens wrapped in ``<tag>`` (escaped, whitespace kept)."""
    from zcp_core.guided.overlap import lcs_mask

    def pieces(text: str) -> list[str]:
        return re.findall(r"\S+|\s+", text or "")

    ref_p, cand_p = pieces(reference), pieces(candidate)
    ref_w = [i for i, p in enumerate(ref_p) if not p.isspace()]
    cand_w = [i for i, p in enumerate(cand_p) if not p.isspace()]
    ma, mb = lcs_mask([ref_p[i] for i in ref_w], [cand_p[i] for i in cand_w])

    def render(parts: list[str], word_idx: list[int], mask: list[bool]) -> str:
        marked = {word_idx[k] for k, m in enumerate(mask) if m}
        out = [f"<{tag}>{html.escape(p)}</{tag}>" if i in marked else html.escape(p) for i, p in enumerate(parts)]
        return "".join(out).replace("\n", "<br>")

    return render(ref_p, ref_w, ma), render(cand_p, cand_w, mb)


def instance_html(row: Mapping[str, Any]) -> dict[str, str]:
    """HTML blocks for one record: first piece, true second piece, guided and general completions.

    Each completion is highlighted against the true second piece; the second
    piece is highlighted against the guided completion.
    """
    ref_g, guided = highlight_overlap(str(row["second_piece"]), str(row["guided"]))
    _, general = highlight_overlap(str(row["second_piece"]), str(row["general"]))
    return {"first_piece": html.escape(str(row["first_piece"])).replace("\n", "<br>"),
            "second_piece": ref_g, "guided": guided, "general": general}


def score_distribution_figure(records: Any, metric: str = "rouge_l") -> Any:
    """Per-instance overlap with the true second piece, guided vs general, per partition (box + points)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for kind, color in (("guided", GUIDED_COLOR), ("general", GENERAL_COLOR)):
        col = f"{metric}_{kind}"
        if col not in records:
            continue
        fig.add_trace(go.Box(x=records["partition"], y=records[col], name=kind, marker_color=color,
                             boxpoints="all", jitter=0.4, pointpos=0, text=records["id"]))
    fig.update_layout(boxmode="group", yaxis_title=METRIC_NAMES.get(metric, metric), xaxis_title="partition",
                      height=380, margin=dict(t=30, b=40), legend_title_text="instruction")
    return fig


def paired_scatter_figure(records: Any, metric: str = "rouge_l") -> Any:
    """Guided against general overlap per instance; points above the diagonal favour the guided prompt."""
    import plotly.express as px

    df = records.assign(judge=records["match_label"].fillna("none"))
    fig = px.scatter(df, x=f"{metric}_general", y=f"{metric}_guided", color="judge", symbol="partition",
                     hover_data=["id"], color_discrete_map={"exact": "#d62728", "near_exact": "#ff7f0e",
                                                            "none": "#7f7f7f"})
    fig.add_shape(type="line", x0=0, y0=0, x1=1, y1=1, line=dict(dash="dot", color="black"))
    name = METRIC_NAMES.get(metric, metric)
    fig.update_layout(xaxis_title=f"{name}, general", yaxis_title=f"{name}, guided", height=380,
                      margin=dict(t=30, b=40), xaxis_range=[-0.02, 1.02], yaxis_range=[-0.02, 1.02])
    return fig


def partitions_figure(partitions: Any) -> Any:
    """Mean ROUGE-L guided vs general per partition, each bar pair labelled with p and Confidence."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for kind, color in (("guided", GUIDED_COLOR), ("general", GENERAL_COLOR)):
        fig.add_trace(go.Bar(x=partitions["partition"], y=partitions[f"rouge_l_{kind}"], name=kind,
                             marker_color=color))
    for _, row in partitions.iterrows():
        fig.add_annotation(x=row["partition"], y=max(row["rouge_l_guided"], row["rouge_l_general"]),
                           text=_pc(row), showarrow=False, yshift=14)
    fig.update_layout(barmode="group", yaxis_title="mean ROUGE-L", height=340, margin=dict(t=40, b=40))
    return fig


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and x != x)


def _pc(row: Mapping[str, Any]) -> str:
    """``p=…, C=…`` for a partition, or the reason there is no verdict (too few instances)."""
    if _missing(row.get("confidence")):
        return str(row.get("reason") or "no verdict")
    return f"p={row['p']:.3g}, C={row['confidence']:.2f}"


def verdict_line(row: Mapping[str, Any]) -> str:
    """One sentence stating a partition's verdict under both of the paper's algorithms.

    Below the minimum sample the overlap test gives no verdict, and the sentence says so instead of
    calling anything significant.
    """
    rule = "contaminated" if row["contaminated"] else "not contaminated"
    head = (f"**{row['partition']}** (n={row['n']}): judge rule says **{rule}** "
            f"({row['exact']} exact, {row['near_exact']} near-exact); ")
    if _missing(row.get("confidence")):
        return head + f"guided vs general overlap: {row.get('reason') or 'no verdict'} (mean diff {row['mean_diff']:.3f})."
    sig = "significantly" if row.get("overlap_significant") else "not significantly"
    return head + (f"guided overlap is {sig} higher than general "
                   f"(mean diff {row['mean_diff']:.3f}, p={row['p']:.3g}, Contamination Confidence {row['confidence']:.2f}).")


def bleurt_note(summary: Mapping[str, Any]) -> str:
    """Whether BLEURT was used in a run, and why not when it was skipped."""
    parts = summary.get("partitions") or [summary]
    notes = {str(p.get("details", {}).get("bleurt", {}).get("status", "not recorded")) for p in parts}
    return "; ".join(sorted(notes))
