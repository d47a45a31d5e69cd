"""The probe page's item browser: which items to list first, and everything one item's panel shows.

Pure functions over a probe run's stored tables (``records`` and ``items``); the page only renders.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from zcp_core.probe.config import NOT_GRADED
from zcp_core.report import DIGITS, MISSING, metric_name

if TYPE_CHECKING:
    import pandas as pd

# Numbers as a reader sees them: 1,234.5 / 3/4 / 12% / $5 (the sign and currency stay outside the match).
# Number words count too, so a twin that turns "four" into "two" shows the change.
_NUMBER_WORDS = ("zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
                 "sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|"
                 "thousand|million|half|twice|double|triple|thrice|dozen|quarter|third")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?(?:/\d+)?|\b(?:" + _NUMBER_WORDS + r")\b", re.IGNORECASE)
_TEXT = re.compile(r"\\(?:text|mathrm|textbf)\{([^{}]*)\}")


@dataclass(frozen=True)
class Segment:
    """A run of text, and whether it is a number that differs between original and twin."""

    text: str
    changed: bool


@dataclass(frozen=True)
class ArmView:
    """One arm of an item at zero-CoT.

    Attributes:
        arm: ``original``, ``paraphrased`` or ``reference``.
        id: The item's id.
        question: The question as probed.
        segments: ``question`` cut into segments, numbers that differ from the other side marked.
        gold: The gold answer.
        completion: The model's raw zero-CoT completion (after the prefill).
        pred: The extracted answer, or ``None`` on a parse failure.
        correct: Whether ``pred`` equals ``gold``.
        p_first: Probability of the gold answer's first token (NaN when not measured).
        p_all: Geometric mean probability of the gold answer's tokens (NaN when not measured).
        graded: False when the answer was not graded (a box with no number, or never closed).
        stop: How decoding ended (the record's ``answer_stop``: ``closed``, ``word``, ``budget`` or ``eos``).
    """

    arm: str
    id: str
    question: str
    segments: tuple[Segment, ...]
    gold: str
    completion: str
    pred: str | None
    correct: bool
    p_first: float
    p_all: float
    graded: bool = True
    stop: str = ""

    @property
    def verdict(self) -> str:
        """``correct``, ``wrong`` or ``not graded``, as the item panel shows it."""
        return "not graded" if not self.graded else "correct" if self.correct else "wrong"


@dataclass(frozen=True)
class ItemView:
    """Everything the panel of one pair shows."""

    pair_id: str
    flip: str
    flagged: bool
    evidence: str
    p_all_gap: float
    arms: tuple[ArmView, ...]
    item_p: float = float("nan")
    item_rank_p: float = float("nan")
    item_q: float = float("nan")
    flag_metric: str = "acc"

    @property
    def n_twins(self) -> int:
        """The item's twins shown."""
        return sum(a.arm == "reference" for a in self.arms)

    @property
    def p_text(self) -> str:
        """The item's own p, rank p and q-value in words (or why it has none)."""
        from zcp_core.report import fmt_p

        if self.item_p != self.item_p:
            n = len({" ".join(a.question.split()) for a in self.arms if a.arm == "reference"})
            return (f"no per-item p: {n} distinct twin{'' if n == 1 else 's'}, and a p needs at least 2 with a "
                    "score (one the original is scored against, and a spare)") if self.flag_metric != "acc" else (
                "flagged by the paper's rule (no false-discovery control)")
        return (f"item p {fmt_p(self.item_p)} on {metric_name(self.flag_metric)} (rank p {fmt_p(self.item_rank_p)}), "
                f"q-value {fmt_p(self.item_q)}")


def number_segments(text: str, other: str) -> tuple[Segment, ...]:
    """Cut ``text`` into segments; a number is ``changed`` when it is not at the same rank in ``other``.

    Numbers are compared in order of appearance (the twin keeps the original's sentence shape),
    so "3 apples and 5 pears" against "4 apples and 5 pears" marks only the 3.
    """
    mine, theirs = list(_NUMBER.finditer(text)), [m.group() for m in _NUMBER.finditer(other)]
    out: list[Segment] = []
    pos = 0
    for k, m in enumerate(mine):
        if m.start() > pos:
            out.append(Segment(text[pos:m.start()], False))
        out.append(Segment(m.group(), k >= len(theirs) or theirs[k] != m.group()))
        pos = m.end()
    if pos < len(text):
        out.append(Segment(text[pos:], False))
    return tuple(out)


_LATEX = re.compile(r"\\[a-zA-Z]+|\$\$")
_DELIM = re.compile(r"(\$\$|\\\[|\\\]|(?<!\\)\$)")


def _esc(s: str) -> str:
    return re.sub(r"([\\`*_{}\[\]<>#+!|$~])", r"\\\1", s)


def _latex(text: str) -> bool:
    """Whether ``$`` in ``text`` delimits math (MATH's LaTeX) rather than money (GSM8K's $5)."""
    return bool(_LATEX.search(text)) and len(re.findall(r"(?<!\\)\$", text)) % 2 == 0


def segments_markdown(segments: tuple[Segment, ...]) -> str:
    """Markdown with changed numbers highlighted (Streamlit's ``:orange-background[...]``).

    In a LaTeX question (MATH) the math is kept for Streamlit to render (``\\[...\\]`` becomes ``$$...$$``),
    and a changed number inside it is coloured; elsewhere everything is escaped and shown as written.
    """
    if not _latex("".join(s.text for s in segments)):
        return "".join(f":orange-background[**{_esc(s.text)}**]" if s.changed else _esc(s.text) for s in segments)
    out, math = [], False
    for seg in segments:
        if seg.changed:
            out.append(f"{{\\color{{orange}}\\mathbf{{{seg.text}}}}}" if math
                       else f":orange-background[**{_esc(seg.text)}**]")
            continue
        for piece in _DELIM.split(seg.text):
            if _DELIM.fullmatch(piece):
                out.append("$$" if piece in ("$$", "\\[", "\\]") else "$")
                math = not math
            elif piece:
                out.append(piece if math else _esc(piece))
    return "".join(out)


def render_answer(answer: Any) -> str:
    """An answer as a reader should see it: ``\\text{300}`` → ``300``, LaTeX kept for math, ``—`` for none."""
    if answer is None or (isinstance(answer, float) and answer != answer):
        return "— (no answer parsed)"
    s = _TEXT.sub(lambda m: m.group(1), str(answer)).strip()
    return f"${s}$" if "\\" in s or "^" in s else s


#: The P_all gap in words, wherever the browser shows it (table column, item header, sort choice).
GAP_WORDS = metric_name("p_all") + ", original minus twins"

#: The flip kinds in words (original vs twin at zero-CoT).
FLIP_WORDS = {"orig_only": "original right, twin wrong", "ref_only": "twin right, original wrong",
              "both": "both right", "neither": "both wrong", "no_number": "not graded"}


def show_completion(completion: str, stop: str | None = None) -> str:
    """The zero-CoT answer as written, inside the prefilled ``\\boxed{`` (so ``48}`` reads ``\\boxed{48}``).

    ``stop`` is the record's ``answer_stop`` (or a completion's ``stop_reason``): ``word`` says why an open box
    ended where it did.
    """
    if not completion.strip():
        return "(empty completion)"
    depth = 1  # the prefilled "{" is open: the box closes at the first "}" that balances it
    for i, ch in enumerate(completion):
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth == 0:
            after = completion[i + 1:].strip()
            # what the model wrote after the box is no part of its answer; shown apart so it is not read as one
            return "\\boxed{" + completion[: i + 1] + (f"   (then, outside the box: {after})" if after else "")
    if stop == "word":
        return "\\boxed{" + completion + "   ← stopped: the box opened with a word where the number should be"
    return "\\boxed{" + completion + "   ← the box was never closed"


def browse_text(items: pd.DataFrame, split: Mapping[str, str] | None = None) -> pd.DataFrame:
    """:func:`browse_table` as a reader sees it in a notebook: yes/no where the app draws a checkbox."""
    import pandas as pd

    table = browse_table(items, split)
    for col in table.columns:
        if pd.api.types.is_bool_dtype(table[col]) or set(table[col].dropna().unique()) <= {True, False}:
            table[col] = [MISSING if v is None or v is pd.NA else "yes" if v else "no" for v in table[col]]
    return table


def browse_table(items: pd.DataFrame, split: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The item list: flagged items first, then by the P_all gap (largest first), with column names in words.

    ``split`` (item id -> ``C``/``U``, for a lab model) adds a ``Trained on`` column right after the item.
    """
    from zcp_core.report import fmt_p

    has_p = "item_p" in items and items["item_p"].notna().any()
    df = items.assign(_flag=items["flagged"].astype(bool), _p=items["item_p"] if has_p else 1.0).sort_values(
        ["_flag", "_p", "p_all_gap"], ascending=[False, True, False], na_position="last")
    out = {
        "Item": df["pair_id"],
        "Trained on": df["pair_id"].map(lambda i: {"C": "C (trained on)", "U": "U (held out)"}.get(
            split.get(str(i), ""), "–")) if split else None,
        "Flagged": df["_flag"], "Flip": df["flip"].map(lambda f: FLIP_WORDS.get(f, f)),
        "Original correct": df.get("acc_original"), "Twin correct": df.get("acc_reference"),
        "Twins": df["n_twins"] if "n_twins" in df else None,
        "Item p": df["item_p"].map(fmt_p) if has_p else None,
        "q-value": df["item_q"].map(fmt_p) if has_p else None,
        GAP_WORDS: df["p_all_gap"].round(DIGITS),
        "Question": df["question"].map(lambda q: q if len(q) <= 90 else q[:89].rstrip() + "…"),
    }
    import pandas as pd

    return pd.DataFrame({k: v.values for k, v in out.items() if v is not None}).reset_index(drop=True)


def item_view(records: pd.DataFrame, items: pd.DataFrame, pair_id: str) -> ItemView:
    """The panel of one pair: both questions with changed numbers marked, completions, answers, P_* per arm.

    Raises:
        KeyError: When ``pair_id`` is not a paired item of the run.
    """
    row = items[items["pair_id"] == pair_id]
    if row.empty:
        raise KeyError(f"{pair_id} is not a paired item of this run")
    it = row.iloc[0]
    z = records[(records["ratio"] == 0.0) & (records["pair_id"] == pair_id)]
    if "twin" in z:
        z = z.assign(_n=z["twin"].fillna(0)).sort_values("_n", kind="stable")
    by_arm = {r["arm"]: r for r in z.to_dict("records") if r["arm"] != "reference"}
    twins = [r for r in z.to_dict("records") if r["arm"] == "reference"]
    orig_q = str(by_arm.get("original", {}).get("question", it["question"]))
    twin_q = str(twins[0]["question"]) if twins else str(it["reference_question"])
    arms = []
    for r in [by_arm.get("original"), by_arm.get("paraphrased"), *twins]:
        if r is None:
            continue
        other = twin_q if r["arm"] != "reference" else orig_q
        arms.append(ArmView(
            arm=str(r["arm"]), id=str(r["id"]), question=str(r["question"]),
            segments=number_segments(str(r["question"]), other), gold=str(r["gold"]),
            completion=str(r.get("completion") or ""), pred=_answer_or_none(r.get("pred")),
            correct=bool(r["acc"]), p_first=float(r["p_first"]), p_all=float(r["p_all"]),
            graded=str(r.get("grade_status") or "ok") not in NOT_GRADED, stop=str(r.get("answer_stop") or ""),
        ))
    gap = it["p_all_gap"]

    def num(col: str) -> float:
        x = it.get(col, float("nan"))
        return float(x) if x is not None and x == x else float("nan")

    return ItemView(pair_id=pair_id, flip=str(it["flip"]), flagged=bool(it["flagged"]), evidence=str(it["evidence"]),
                    p_all_gap=float(gap) if gap == gap and gap is not None else float("nan"), arms=tuple(arms),
                    item_p=num("item_p"), item_rank_p=num("item_rank_p"), item_q=num("item_q"),
                    flag_metric=str(it.get("flag_metric", "acc")))


def _answer_or_none(pred: Any) -> str | None:
    """A stored prediction as text; ``None`` when nothing was parsed (stored as None or NaN)."""
    if pred is None or (isinstance(pred, float) and pred != pred):
        return None
    return str(pred)


def untested_items(run_path: Any, items: pd.DataFrame) -> pd.DataFrame:
    """Originals of a probe run that have no twin, so no paired evidence: columns ``Item, Question, Reason``."""
    import pandas as pd

    from zcp_core.probe.run import load_item_set

    try:
        originals = load_item_set(run_path, "original")
    except Exception:  # noqa: BLE001 - a run without stored item sets simply has nothing to list
        return pd.DataFrame(columns=["Item", "Question", "Reason"])
    paired = set(items["pair_id"])
    rows = [{"Item": it.id, "Question": it.question[:90], "Reason": "no reference twin (the generator rejected it)"}
            for it in originals if it.id not in paired]
    return pd.DataFrame(rows, columns=["Item", "Question", "Reason"])
