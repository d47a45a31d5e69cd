"""Figures and views for the artifacts page: counts, highlighted spans, before/after diffs.

Everything here reads what a ``scan`` or ``clean`` run stored; nothing is rescanned.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from zcp_core.artifacts.patterns import FAMILY_ORDER
from zcp_core.artifacts.report import GROUP_WORDS, words
from zcp_core.report import fmt_share

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go

    from zcp_core.runs import Run

FAMILY_COLORS = {"rejection": "#d62728", "substitute": "#e377c2", "transcript": "#17becf", "prompt": "#9467bd", "assistant": "#8c564b", "beginning": "#1f77b4",
                 "ending": "#ff7f0e", "domain": "#bcbd22"}


@dataclass(frozen=True)
class ItemView:
    """One text as the browser shows it.

    Attributes:
        id: Text id.
        original: The original text.
        cleaned: The cleaned text (None when dropped; equal to original for scan runs).
        spans: Matches in the original (``start, end, family, pattern_id`` DataFrame).
        edits: The text's edits (clean runs; empty for scan runs).
    """

    id: str
    original: str
    cleaned: str | None
    spans: pd.DataFrame
    edits: pd.DataFrame


def axis_words(by: str) -> str:
    """A grouping column as an axis title: ``llm_type`` is "generator"."""
    return GROUP_WORDS.get(by, words(by)).lower()


def family_counts_figure(table: pd.DataFrame, by: str = "llm_type") -> go.Figure:
    """Stacked bars: texts per family (first match wins) for each row of a Table-2-shaped table."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for fam in FAMILY_ORDER:
        if fam in table.columns:
            fig.add_bar(name=fam, x=[words(x) for x in table[by]], y=table[fam], marker_color=FAMILY_COLORS[fam])
    fig.update_layout(barmode="stack", yaxis_title="texts (first match wins)", xaxis_title=axis_words(by),
                      legend_title="family",
                      height=380, margin={"t": 30})
    return fig


def flag_rate_figure(table: pd.DataFrame, by: str = "llm_type") -> go.Figure:
    """Bars: share of texts flagged by high-precision families per row (human rows are false positives)."""
    import plotly.graph_objects as go

    colors = ["#d62728" if str(x) == "human" else "#1f77b4" for x in table[by]]
    fig = go.Figure(go.Bar(x=[words(x) for x in table[by]], y=table["rate"], marker_color=colors,
                           text=[fmt_share(r) for r in table["rate"]], textposition="outside"))
    fig.update_layout(yaxis_title="share flagged", yaxis_tickformat=".0%", xaxis_title=axis_words(by), height=340,
                      margin={"t": 30})
    return fig


def edits_figure(edits: pd.DataFrame) -> go.Figure:
    """Bars: applied vs. not-applied edits per family in a clean run."""
    import plotly.graph_objects as go

    fams = [f for f in FAMILY_ORDER if f in set(edits["family"])]
    fig = go.Figure()
    for applied, name, color in ((True, "applied", "#2ca02c"), (False, "rejected or overlapped", "#7f7f7f")):
        sub = edits[edits["applied"] == applied]
        fig.add_bar(name=name, x=fams, y=[int((sub["family"] == f).sum()) for f in fams], marker_color=color)
    fig.update_layout(barmode="stack", yaxis_title="edits", xaxis_title="family", legend_title="edit",
                      height=320, margin={"t": 30})
    return fig


def highlight_html(text: str, spans: Sequence[Any] | pd.DataFrame) -> str:
    """HTML of a text with artifact spans marked in their family colour (outermost span wins on overlap)."""
    rows = spans.to_dict("records") if hasattr(spans, "to_dict") else [s if isinstance(s, dict) else vars(s)
                                                                       for s in spans]
    rows = sorted(rows, key=lambda r: (int(r["start"]), -int(r["end"])))
    out, cur = [], 0
    for r in rows:
        s, e = int(r["start"]), int(r["end"])
        if s < cur:
            continue
        out.append(html.escape(text[cur:s]))
        color = FAMILY_COLORS.get(str(r["family"]), "#cccccc")
        out.append(f'<mark title="{html.escape(str(r["pattern_id"]))}" style="background:{color}33;'
                   f'border-bottom:2px solid {color}">{html.escape(text[s:e])}</mark>')
        cur = e
    out.append(html.escape(text[cur:]))
    return '<div style="white-space:pre-wrap;line-height:1.5">' + "".join(out) + "</div>"


def diff_html(original: str, edits: pd.DataFrame) -> str:
    """Before/after diff of a cleaned text: removed characters struck through in red, the rest as kept."""
    rows = sorted((r for r in edits.to_dict("records") if r.get("applied", True)), key=lambda r: int(r["start"]))
    out, cur = [], 0
    for r in rows:
        s, e = int(r["start"]), int(r["end"])
        out.append(html.escape(original[cur:s]))
        out.append(f'<del title="{html.escape(str(r["pattern_id"]))}" style="color:#d62728;background:#fde0e0">'
                   f"{html.escape(original[s:e])}</del>")
        if r.get("replacement"):
            out.append(f'<ins style="color:#2ca02c;background:#e0fde0">{html.escape(str(r["replacement"]))}</ins>')
        cur = e
    out.append(html.escape(original[cur:]))
    return '<div style="white-space:pre-wrap;line-height:1.5">' + "".join(out) + "</div>"


def browsable_ids(run: Run) -> list[str]:
    """Ids worth browsing: texts with matches (scan) or with edits (clean), in stored order."""
    table = run.records
    return list(dict.fromkeys(str(x) for x in table["id"]))


def item_view(run: Run, text_id: str) -> ItemView:
    """The stored original, cleaned text, spans and edits of one text in a scan or clean run."""
    import pandas as pd

    if run.kind == "scan":
        texts = run.table("texts")
        original = str(texts.loc[texts["id"] == text_id, "text"].iloc[0])
        m = run.records
        return ItemView(text_id, original, original, m[m["id"] == text_id].reset_index(drop=True), pd.DataFrame())
    originals = run.table("originals")
    original = str(originals.loc[originals["id"] == text_id, "text"].iloc[0])
    edits = run.records[run.records["id"] == text_id].reset_index(drop=True)
    cleaned_path = run.path / "cleaned" / "data.parquet"
    cleaned_df = pd.read_parquet(cleaned_path, columns=["id", "text"])
    hit = cleaned_df.loc[cleaned_df["id"] == text_id, "text"]
    spans = edits.rename(columns={})[["start", "end", "family", "pattern_id"]]
    return ItemView(text_id, original, str(hit.iloc[0]) if len(hit) else None, spans, edits)
