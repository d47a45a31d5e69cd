"""The AFR page's chain browser: which chains to list first, and what one chain's panel shows.

Pure functions over an ``afr`` run's stored per-chain frame (the columns :func:`zcp_core.afr.afr_frame` adds,
plus ``uid``, ``sample``, ``answer``, ``chain`` and ``arm`` or ``corpus``); the page only renders.
Nothing here recomputes a position: the panel marks what the run stored.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from zcp_core.afr.viz import group_column

if TYPE_CHECKING:
    import pandas as pd

SegmentKind = Literal["outside", "block", "first", "box"]
_STYLE: dict[str, str] = {
    "outside": "color:#777",
    "block": "",
    "first": "background:#ffe08a;font-weight:bold;outline:2px solid #e0a800",
    "box": "background:#cde8ff",
}


@dataclass(frozen=True)
class ChainSegment:
    """A run of chain text and what it is.

    Attributes:
        text: The characters.
        kind: ``outside`` the block, inside the ``block``, the answer's ``first`` statement, or a ``box``
            (``\\boxed{}``) inside or after the block.
    """

    text: str
    kind: SegmentKind


@dataclass(frozen=True)
class ChainView:
    """Everything the panel of one chain shows.

    Attributes:
        key: The chain's key in :func:`chain_table`.
        group: Arm (screen runs) or corpus (profile runs).
        uid: Problem id.
        sample: Sample index.
        answer: The gold answer.
        block_kind: ``think`` or ``pre_answer``.
        block_len: Characters in the block.
        frac: First answer position / block length (NaN when the block never states the answer).
        answer_first: Whether ``frac`` is below the run's threshold.
        answer_in_question: Whether the question itself states the answer.
        position: The marked position in words.
        segments: The chain cut into segments; exactly one ``first`` segment when the block states the answer.
    """

    key: str
    group: str
    uid: str
    sample: int
    answer: str
    block_kind: str
    block_len: int
    frac: float
    answer_first: bool
    answer_in_question: bool
    position: str
    segments: tuple[ChainSegment, ...]


def chain_keys(frame: pd.DataFrame) -> list[str]:
    """One readable, unique key per chain: ``<arm or corpus> · <uid> · #<sample>`` (``~k`` added on a clash)."""
    col = group_column(frame)
    seen: dict[str, int] = {}
    keys = []
    for g, uid, s in zip(frame[col], frame["uid"], frame.get("sample", [0] * len(frame))):
        k = f"{g} · {uid} · #{s}"
        n = seen.get(k, 0)
        seen[k] = n + 1
        keys.append(k if n == 0 else f"{k}~{n}")
    return keys


def _percent(frac: Any) -> float:
    return float(frac) * 100 if frac is not None and frac == frac else float("nan")


def chain_table(frame: pd.DataFrame) -> pd.DataFrame:
    """The chain list: answer-first chains first, then by answer position (earliest first), uncovered last.

    Columns: ``Chain`` (the key :func:`chain_view` takes), ``Arm`` or ``Corpus``, ``Answer first``,
    ``Answer position (%)`` (of the block), ``Gold answer``, ``Block``, ``Answer in question``.
    """
    import pandas as pd

    col = group_column(frame)
    out = pd.DataFrame({
        "Chain": chain_keys(frame),
        col.capitalize(): frame[col].astype(str).to_numpy(),
        "Answer first": frame["answer_first"].astype(bool).to_numpy(),
        "Answer position (%)": [round(_percent(f), 1) for f in frame["frac"]],
        "Gold answer": frame["answer"].astype(str).to_numpy(),
        "Block": [f"{k} ({int(n):,} chars)" for k, n in zip(frame["block_kind"], frame["block_len"])],
        "Answer in question": frame["answer_in_question"].astype(bool).to_numpy(),
    })
    out = out.sort_values(["Answer first", "Answer position (%)"], ascending=[False, True], na_position="last",
                          kind="stable")
    return out.reset_index(drop=True)


def chain_segments(chain: str, block: tuple[int, int], first: tuple[int, int],
                   boxes: list[tuple[int, int]]) -> tuple[ChainSegment, ...]:
    """Cut ``chain`` at the block's edges, the first answer statement and every box.

    Args:
        chain: The chain text.
        block: ``(start, end)`` of the block.
        first: ``(start, end)`` of the answer's first statement; ``(-1, -1)`` when absent.
        boxes: ``(start, end)`` of each ``\\boxed{}``; a box that overlaps the first statement is dropped.
    """
    marks = [(s, e, "first") for s, e in [first] if 0 <= s < e]
    marks += [(s, e, "box") for s, e in boxes if not any(s < fe and fs < e for fs, fe, _ in marks[:1])]
    marks.sort()
    out: list[ChainSegment] = []

    def plain(a: int, b: int) -> None:
        # The block's edges cut plain text into outside / block runs.
        cuts = sorted({a, b, *(x for x in block if a < x < b)})
        for x, y in zip(cuts, cuts[1:]):
            if y > x:
                out.append(ChainSegment(chain[x:y], "block" if block[0] <= x < block[1] else "outside"))

    pos = 0
    for s, e, kind in marks:
        if s < pos:
            continue
        plain(pos, s)
        out.append(ChainSegment(chain[s:e], kind))  # type: ignore[arg-type]
        pos = e
    plain(pos, len(chain))
    return tuple(out)


def position_words(frac: float, mention_start: int, block_start: int, block_len: int, threshold: float) -> str:
    """Where the answer is first stated, in words: ``"first stated at 12.5% of the block (character 40 of 320)…"``."""
    if frac != frac or mention_start < 0:
        return f"the block ({block_len:,} characters) never states the gold answer: not covered, so not counted"
    verdict = "answer-first" if frac < threshold else "not answer-first"
    return (f"first stated at {frac:.1%} of the block (character {mention_start - block_start:,} of {block_len:,}): "
            f"{verdict} at the {threshold:.0%} threshold")


def chain_view(frame: pd.DataFrame, key: str, threshold: float) -> ChainView:
    """The panel of one chain: its text cut into segments with the answer's first position marked.

    Raises:
        KeyError: When ``key`` is not a chain of the frame.
    """
    from zcp_core.answers import all_boxed

    keys = chain_keys(frame)
    if key not in keys:
        raise KeyError(f"{key} is not a chain of this run")
    r = frame.iloc[keys.index(key)]
    chain = str(r["chain"] or "")
    frac = float(r["frac"]) if r["frac"] is not None and r["frac"] == r["frac"] else math.nan
    start = int(r.get("block_start", 0))
    end = int(r.get("block_end", start + int(r["block_len"])))
    first = (int(r["mention_start"]), int(r["mention_end"]))
    segs = chain_segments(chain, (start, end), first, [(s, e) for s, e, _ in all_boxed(chain)])
    return ChainView(
        key=key, group=str(r[group_column(frame)]), uid=str(r["uid"]), sample=int(r.get("sample", 0)),
        answer=str(r["answer"]), block_kind=str(r["block_kind"]), block_len=int(r["block_len"]), frac=frac,
        answer_first=bool(r["answer_first"]), answer_in_question=bool(r["answer_in_question"]),
        position=position_words(frac, first[0], start, int(r["block_len"]), threshold), segments=segs)


def segments_html(segments: tuple[ChainSegment, ...]) -> str:
    """Escaped HTML of a chain: text outside the block greyed, the first answer statement marked, boxes tinted."""
    parts = []
    for s in segments:
        text = html.escape(s.text)
        if s.kind in ("first", "box"):
            title = "first statement of the gold answer" if s.kind == "first" else "\\boxed{}"
            parts.append(f'<mark style="{_STYLE[s.kind]}" title="{title}">{text}</mark>')
        elif s.kind == "outside":
            parts.append(f'<span style="{_STYLE["outside"]}" title="outside the block">{text}</span>')
        else:
            parts.append(text)
    return ('<div style="white-space:pre-wrap;font-family:monospace;font-size:0.85em;max-height:480px;'
            'overflow-y:auto;border:1px solid #ddd;padding:8px">' + "".join(parts) + "</div>")
