"""The artifact page's text browser and the review of cleaning edits.

Browsing: which texts to list first, and one text with its matched spans, each named by family and pattern id.
The low-precision ``domain`` family is kept apart from the flagged (high-precision) families everywhere.

Review: every accept/reject is appended to ``review.jsonl`` in the run folder the moment it is made, with its
reason; ``decisions.json`` (what :func:`~zcp_core.artifacts.export_run` respects) is rewritten from the log each
time, and the last decision can be undone. Bulk decisions cover every edit of one pattern id.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Sequence

from zcp_core.artifacts.patterns import HIGH_PRECISION
from zcp_core.artifacts.release import DECISIONS_FILE, run_decisions, save_decisions
from zcp_core.errors import DataError
from zcp_core.report import fmt_num

if TYPE_CHECKING:
    import pandas as pd

REVIEW_FILE = "review.jsonl"
Decision = Literal["accept", "reject"]
Precision = Literal["flagged", "low precision"]
_COLORS = {"rejection": "#d62728", "substitute": "#e377c2", "transcript": "#17becf", "prompt": "#9467bd", "assistant": "#8c564b", "beginning": "#1f77b4",
           "ending": "#ff7f0e", "domain": "#7f7f7f"}


def precision(family: str) -> Precision:
    """``flagged`` for the high-precision families, ``low precision`` for the rest (``domain``)."""
    return "flagged" if family in HIGH_PRECISION else "low precision"


@dataclass(frozen=True)
class SpanSegment:
    """A run of text; ``family`` and ``pattern_id`` are set when it is a matched span."""

    text: str
    family: str | None = None
    pattern_id: str | None = None


@dataclass(frozen=True)
class TextView:
    """One text as its panel shows it.

    Attributes:
        id: Text id.
        segments: The text cut at its spans (outermost span wins on overlap).
        spans: ``Family, Pattern id, Precision, Characters, Matched text`` (flagged spans first).
    """

    id: str
    segments: tuple[SpanSegment, ...]
    spans: pd.DataFrame


def text_table(spans: pd.DataFrame, texts: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per text with a span: flagged texts first, then by span count.

    Args:
        spans: Matches (scan runs) or edits (clean runs): ``id, family, pattern_id`` at least.
        texts: Optional ``id, text`` for an excerpt.

    Returns:
        Columns ``Text, Flagged families, Low-precision families, Patterns, Spans, Excerpt``.
    """
    import pandas as pd

    rows = []
    excerpt = {} if texts is None else dict(zip(texts["id"].astype(str), texts["text"].astype(str)))
    for tid, g in spans.groupby(spans["id"].astype(str), sort=False):
        fams = list(dict.fromkeys(g["family"].astype(str)))
        rows.append({
            "Text": tid, "Flagged families": ", ".join(f for f in fams if precision(f) == "flagged"),
            "Low-precision families": ", ".join(f for f in fams if precision(f) != "flagged"),
            "Patterns": ", ".join(dict.fromkeys(g["pattern_id"].astype(str))), "Spans": len(g),
            "Excerpt": excerpt.get(tid, "")[:90],
        })
    out = pd.DataFrame(rows, columns=["Text", "Flagged families", "Low-precision families", "Patterns", "Spans",
                                      "Excerpt"])
    out = out.assign(_f=out["Flagged families"] != "").sort_values(["_f", "Spans"], ascending=[False, False],
                                                                   kind="stable")
    return out.drop(columns="_f").reset_index(drop=True)


def span_segments(text: str, spans: Sequence[dict]) -> tuple[SpanSegment, ...]:
    """Cut ``text`` at its spans (``start, end, family, pattern_id``); a span inside an earlier one is skipped.

    Flagged spans win over a low-precision span that starts at the same place.
    """
    order = sorted(spans, key=lambda r: (int(r["start"]), -int(r["end"]), precision(str(r["family"])) != "flagged"))
    out: list[SpanSegment] = []
    pos = 0
    for r in order:
        s, e = int(r["start"]), int(r["end"])
        if s < pos or e <= s:
            continue
        if s > pos:
            out.append(SpanSegment(text[pos:s]))
        out.append(SpanSegment(text[s:e], str(r["family"]), str(r["pattern_id"])))
        pos = e
    if pos < len(text):
        out.append(SpanSegment(text[pos:]))
    return tuple(out)


def text_view(text_id: str, text: str, spans: pd.DataFrame) -> TextView:
    """The panel of one text: segments and a table naming each span's family, pattern id and precision."""
    import pandas as pd

    rows = spans.to_dict("records")
    table = pd.DataFrame([{
        "Family": str(r["family"]), "Pattern id": str(r["pattern_id"]), "Precision": precision(str(r["family"])),
        "Characters": f"{int(r['start']):,}–{int(r['end']):,}", "Matched text": text[int(r["start"]):int(r["end"])],
        # a learned edge cut carries the model's score; a pattern has none
        "Model score": fmt_num(r["score"]) if r.get("score") == r.get("score") and r.get("score") is not None else "",
    } for r in rows], columns=["Family", "Pattern id", "Precision", "Characters", "Matched text", "Model score"])
    table = table.sort_values("Precision", kind="stable").reset_index(drop=True)  # "flagged" < "low precision"
    return TextView(text_id, span_segments(text, rows), table)


def segments_html(segments: Sequence[SpanSegment]) -> str:
    """Escaped HTML: flagged spans filled in their family colour, low-precision spans only dotted-underlined."""
    parts = []
    for s in segments:
        t = html.escape(s.text)
        if s.family is None:
            parts.append(t)
            continue
        color = _COLORS.get(s.family, "#cccccc")
        title = html.escape(f"{s.family} · {s.pattern_id} · {precision(s.family)}")
        style = (f"background:{color}33;border-bottom:2px solid {color}" if precision(s.family) == "flagged"
                 else f"background:none;border-bottom:2px dotted {color}")
        parts.append(f'<mark title="{title}" style="{style}">{t}</mark>')
    return '<div style="white-space:pre-wrap;line-height:1.5">' + "".join(parts) + "</div>"


def split_families(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A Table-2-shaped table split into its flagged-family columns and its low-precision columns.

    Both keep the non-family columns, so each can be drawn on its own.
    """
    from zcp_core.artifacts.patterns import FAMILY_ORDER

    fams = [f for f in FAMILY_ORDER if f in table.columns]
    low = [f for f in fams if precision(f) != "flagged"]
    return table.drop(columns=low), table.drop(columns=[f for f in fams if f not in low])


# ----------------------------------------------------------------------------------------------- review


@dataclass(frozen=True)
class ReviewEvent:
    """One line of ``review.jsonl``.

    Attributes:
        action: ``decide`` or ``undo`` (undoes the last decide not yet undone).
        edit_ids: Edits decided.
        decision: ``accept`` or ``reject`` (decide only).
        reason: Why, as the reviewer typed it.
        pattern_id: Set for a bulk decision over one pattern id.
        at: UTC time, ISO 8601.
    """

    action: Literal["decide", "undo"]
    edit_ids: tuple[str, ...] = ()
    decision: Decision | None = None
    reason: str = ""
    pattern_id: str | None = None
    at: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))


def load_review(run_path: str | Path) -> list[ReviewEvent]:
    """The review log of a clean run (empty when none).

    Raises:
        DataError: On a line that is not a review event (naming file and line).
    """
    path = Path(run_path) / REVIEW_FILE
    if not path.exists():
        return []
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            ev = ReviewEvent(action=d["action"], edit_ids=tuple(map(str, d.get("edit_ids", ()))),
                             decision=d.get("decision"), reason=str(d.get("reason", "")),
                             pattern_id=d.get("pattern_id"), at=str(d.get("at", "")))
        except (ValueError, KeyError, TypeError) as e:
            raise DataError(str(path), n, None, f"not a review event: {e}") from e
        if ev.action not in ("decide", "undo") or (ev.action == "decide" and ev.decision not in ("accept", "reject")):
            raise DataError(str(path), n, "decision", "action must be decide/undo, decision accept/reject")
        out.append(ev)
    return out


def active_events(events: Sequence[ReviewEvent]) -> list[ReviewEvent]:
    """The decide events still in force: each ``undo`` cancels the latest decide not yet cancelled."""
    stack: list[ReviewEvent] = []
    for ev in events:
        if ev.action == "undo":
            if stack:
                stack.pop()
        else:
            stack.append(ev)
    return stack


def review_state(edits: pd.DataFrame, events: Sequence[ReviewEvent]) -> dict[str, str]:
    """Every edit's decision: the run's stored ``accepted`` column, then the review events in force, in order."""
    state = {str(e): "accept" if bool(a) else "reject" for e, a in zip(edits["edit_id"], edits["accepted"])}
    for ev in active_events(events):
        for eid in ev.edit_ids:
            if eid in state:
                state[eid] = str(ev.decision)
    return state


def _append(run_path: Path, ev: ReviewEvent) -> None:
    with open(run_path / REVIEW_FILE, "a", encoding="utf-8") as fh:
        fh.write(json.dumps({k: list(v) if isinstance(v, tuple) else v for k, v in asdict(ev).items()}) + "\n")
        fh.flush()


def _start_log(run_path: Path, edits: pd.DataFrame) -> None:
    """Carry decisions saved before the log existed (an older ``decisions.json``) into it as one event per side."""
    if (run_path / REVIEW_FILE).exists() or not (run_path / DECISIONS_FILE).exists():
        return
    base = review_state(edits, [])
    saved = run_decisions(run_path)
    for d in ("accept", "reject"):
        ids = tuple(sorted(k for k, v in saved.items() if v == d and base.get(k) not in (None, d)))
        if ids:
            _append(run_path, ReviewEvent("decide", ids, d, f"from {DECISIONS_FILE} saved before the review log"))  # type: ignore[arg-type]


def record_review(run_path: str | Path, edits: pd.DataFrame, edit_ids: Sequence[str], decision: Decision,
                  reason: str = "", pattern_id: str | None = None) -> dict[str, str]:
    """Save a decision now: append it to ``review.jsonl`` and rewrite ``decisions.json``; returns the new state.

    Raises:
        KeyError: When an edit id is not an edit of the run.
    """
    folder = Path(run_path)
    known = set(edits["edit_id"].astype(str))
    unknown = [e for e in edit_ids if e not in known]
    if unknown:
        raise KeyError(f"not edits of {folder.name}: {', '.join(unknown[:3])}")
    _start_log(folder, edits)
    _append(folder, ReviewEvent("decide", tuple(edit_ids), decision, reason.strip(), pattern_id))
    return _sync(folder, edits)


def undo_review(run_path: str | Path, edits: pd.DataFrame) -> dict[str, str]:
    """Undo the last decision still in force (a no-op when there is none); returns the new state."""
    folder = Path(run_path)
    if active_events(load_review(folder)):
        _append(folder, ReviewEvent("undo", reason="undo"))
    return _sync(folder, edits)


def _sync(folder: Path, edits: pd.DataFrame) -> dict[str, str]:
    state = review_state(edits, load_review(folder))
    save_decisions(folder, state)
    return state


def run_review_state(run_path: str | Path, edits: pd.DataFrame) -> dict[str, str]:
    """The decisions in force for a clean run: its review log, or its ``decisions.json`` when it has no log yet."""
    folder = Path(run_path)
    if (folder / REVIEW_FILE).exists():
        return review_state(edits, load_review(folder))
    state = review_state(edits, [])
    state.update({k: v for k, v in run_decisions(folder).items() if k in state})
    return state


def review_table(events: Sequence[ReviewEvent]) -> pd.DataFrame:
    """The review log for display, newest first: ``When, Action, Decision, Edits, Pattern id, Reason``."""
    import pandas as pd

    rows = [{"When": ev.at.replace("T", " ")[:19], "Action": ev.action, "Decision": ev.decision or "",
             "Edits": len(ev.edit_ids), "Pattern id": ev.pattern_id or "", "Reason": ev.reason} for ev in events]
    return pd.DataFrame(rows[::-1], columns=["When", "Action", "Decision", "Edits", "Pattern id", "Reason"])


def pattern_counts(edits: pd.DataFrame, state: dict[str, str]) -> pd.DataFrame:
    """Per pattern id: ``Pattern id, Family, Edits, Rejected``, most edits first (for bulk decisions)."""
    import pandas as pd

    df = edits.assign(_rej=[state.get(str(e)) == "reject" for e in edits["edit_id"]])
    g = df.groupby("pattern_id", sort=False).agg(Family=("family", "first"), Edits=("edit_id", "size"),
                                                 Rejected=("_rej", "sum"))
    out = g.reset_index().rename(columns={"pattern_id": "Pattern id"})
    out["Rejected"] = out["Rejected"].astype(int)
    return pd.DataFrame(out.sort_values(["Edits", "Pattern id"], ascending=[False, True]).reset_index(drop=True))


def pattern_edit_ids(edits: pd.DataFrame, pattern_id: str) -> list[str]:
    """Every edit id of one pattern id, in stored order."""
    return [str(e) for e in edits.loc[edits["pattern_id"] == pattern_id, "edit_id"]]
