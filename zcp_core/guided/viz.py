"""Figures and HTML for the Time-Travel page (they read a ``guided`` run; nothing is recomputed).

Overlap highlighting marks the tokens of one longest common subsequence
(the alignment ROUGE-L counts); all text is HTML-escaped before marking.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any

from zcp_core.report import metric_name

GUIDED_COLOR = "#d62728"
GENERAL_COLOR = "#1f77b4"
#: The overlap scores in words: the report layer's names (``report.metric_name``).
METRIC_NAMES = {m: metric_name(m) for m in ("rouge_l", "edit_sim", "bleurt")}


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


INSTRUCTION_WORDS = {"guided": "guided instruction", "general": "general instruction"}


def score_distribution_figure(records: Any, metric: str = "rouge_l") -> Any:
    """Per-instance overlap with the true second piece, guided vs general, per partition (box + points)."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for kind, color in (("guided", GUIDED_COLOR), ("general", GENERAL_COLOR)):
        col = f"{metric}_{kind}"
        if col not in records:
            continue
        fig.add_trace(go.Box(x=records["partition"], y=records[col], name=INSTRUCTION_WORDS[kind], marker_color=color,
                             boxpoints="all", jitter=0.4, pointpos=0, text=records["id"]))
    fig.update_layout(boxmode="group", yaxis_title=METRIC_NAMES.get(metric, metric), xaxis_title="Partition",
                      height=380, margin=dict(t=30, b=40), legend_title_text="Instruction")
    return fig


def paired_scatter_figure(records: Any, metric: str = "rouge_l") -> Any:
    """Guided against general overlap per instance; points above the diagonal favour the guided prompt."""
    import plotly.express as px

    from zcp_core.guided.report import MATCH_WORDS

    name = METRIC_NAMES.get(metric, metric)
    x, y = f"{name}, general instruction", f"{name}, guided instruction"
    df = records.assign(**{"Judge's call": records["match_label"].fillna("none").map(lambda m: MATCH_WORDS.get(m, m)),
                           "Partition": records["partition"], "Instance": records["id"],
                           x: records[f"{metric}_general"], y: records[f"{metric}_guided"]})
    fig = px.scatter(df, x=x, y=y, color="Judge's call", symbol="Partition", hover_data=["Instance"],
                     color_discrete_map={MATCH_WORDS["exact"]: "#d62728", MATCH_WORDS["near_exact"]: "#ff7f0e",
                                         MATCH_WORDS["none"]: "#7f7f7f"})
    fig.add_shape(type="line", x0=0, y0=0, x1=1, y1=1, line=dict(dash="dot", color="black"))
    fig.update_layout(xaxis_title=x, yaxis_title=y, height=380, legend_title_text="Judge's call and partition",
                      margin=dict(t=30, b=40), xaxis_range=[-0.02, 1.02], yaxis_range=[-0.02, 1.02])
    return fig


def partitions_figure(partitions: Any) -> Any:
    """Mean ROUGE-L guided vs general per partition, each bar pair labelled with p and Confidence."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for kind, color in (("guided", GUIDED_COLOR), ("general", GENERAL_COLOR)):
        fig.add_trace(go.Bar(x=partitions["partition"], y=partitions[f"rouge_l_{kind}"], name=INSTRUCTION_WORDS[kind],
                             marker_color=color))
    for _, row in partitions.iterrows():
        fig.add_annotation(x=row["partition"], y=max(row["rouge_l_guided"], row["rouge_l_general"]),
                           text=_pc(row), showarrow=False, yshift=14)
    fig.update_layout(barmode="group", yaxis_title="Mean ROUGE-L", xaxis_title="Partition", height=340,
                      margin=dict(t=40, b=40), legend_title_text="Instruction")
    return fig


def _pc(row: Mapping[str, Any]) -> str:
    """``p = …, C = …`` for a partition by the shared rules, or the reason there is no verdict (too few instances)."""
    from zcp_core.report import fmt_c, fmt_p, number

    if number(row.get("confidence")) is None:
        return str(row.get("reason") or "no verdict")
    return f"p = {fmt_p(row.get('p'))}, C = {fmt_c(row.get('confidence'))}"


def bleurt_note(summary: Mapping[str, Any]) -> str:
    """Whether BLEURT was used in a run, and why not when it was skipped."""
    parts = summary.get("partitions") or [summary]
    notes = {str(p.get("details", {}).get("bleurt", {}).get("status", "not recorded")) for p in parts}
    return "; ".join(sorted(notes))
