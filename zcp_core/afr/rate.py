"""Answer-first rate (AFR): where a chain of thought first states its answer.

Per chain, the *block* is the think block (``<think>…</think>`` or
``<|begin_of_thought|>…<|end_of_thought|>``; an unclosed block runs to the
final answer). Without a think block the block is the chain before its final
answer (the last ``\\boxed{}``; else a final ``A:``/``Answer:``/``####`` line;
else the last statement of the answer). The answer position is the character
offset of the answer's first statement in the block divided by the block's
length; the chain is *answer-first* when the block states the answer and that
fraction is below the threshold (default 0.2).

The paper's AFR divides by the *covered* chains: those with a think block that
states the answer; its numerator is the covered chains that are answer-first.
Chains without a think block are never in it: they are their own group
(``no_think``), whose AFR is measured on the text before the final answer and
reported apart. The all-chains AFR puts every chain in the denominator and
every answer-first chain (by its block, think or not) in the numerator; it is
always labelled as not the paper's. Items whose question already contains the
answer are flagged (``answer_in_question``) and every statistic is also given
without them.

Per-chain frame columns added by :func:`afr_frame`: ``block_kind``
(``think``/``pre_answer``), ``block_start``, ``block_end``, ``block_len``,
``mention_start``, ``mention_end`` (absolute positions in ``chain``, -1 when
absent), ``frac`` (NaN when the block does not state the answer),
``states_answer`` (the block states the answer), ``covered`` (a think block
that states the answer: the paper's denominator), ``answer_first`` (the block
states the answer before the threshold; the paper counts it only when
covered), ``answer_in_question``.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal

from zcp_core.afr.answer_find import answer_pattern, find_all

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_THRESHOLD = 0.2
#: The headline's denominator, in words (the paper divides by the chains whose think block states the answer).
PAPER_DENOMINATOR = ("covered chains: those whose think block states the answer (the paper's denominator; "
                     "chains without a think block are reported apart)")
#: The label every all-chains figure carries.
ALL_CHAINS_LABEL = "all-chains AFR (every chain in the denominator, not the paper's)"
#: The label of the group the paper's denominator leaves out.
NO_THINK_LABEL = "chains without a think block (never in the paper's denominator; block = text before the final answer)"
BlockKind = Literal["think", "pre_answer"]
#: ``covered``: the paper's; ``all``: every chain; ``no_think``: the chains without a think block whose text
#: before the final answer states it (their own group).
Denominator = Literal["covered", "all", "no_think"]
_OPEN = re.compile(r"<think>|<\|begin_of_thought\|>")
_CLOSE = re.compile(r"</think>|<\|end_of_thought\|>|<\|begin_of_solution\|>")
_FINAL_LINE = re.compile(r"(?im)^[ \t*#]*(?:A:|Answer:|####|final answer)")
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*[{ ]")


@dataclass(frozen=True)
class ChainAFR:
    """The answer position of one chain.

    Attributes:
        block_kind: ``think`` (a think block) or ``pre_answer`` (chain before the final answer).
        block_start: Start of the block in the chain.
        block_end: End of the block in the chain.
        mention_start: Start of the first statement of the answer in the block (-1: none).
        mention_end: Its end (-1: none).
        frac: ``(mention_start - block_start) / block_len``; NaN when the block does not state the answer.
        covered: Whether a think block states the answer (the paper's denominator).
        answer_first: ``states_answer and frac < threshold`` (the paper counts it only when covered).
        answer_in_question: Whether the question itself states the answer.
    """

    block_kind: BlockKind
    block_start: int
    block_end: int
    mention_start: int
    mention_end: int
    frac: float
    covered: bool
    answer_first: bool
    answer_in_question: bool

    @property
    def block_len(self) -> int:
        """Block length in characters."""
        return self.block_end - self.block_start

    @property
    def states_answer(self) -> bool:
        """Whether the block (think block or, without one, the text before the final answer) states the answer."""
        return self.mention_start >= 0


def final_answer_start(chain: str, answer: str = "") -> int:
    """Where the chain's final answer begins: last ``\\boxed``, else a final-answer line, else the last mention."""
    boxes = list(_BOXED.finditer(chain))
    if boxes:
        return boxes[-1].start()
    lines = list(_FINAL_LINE.finditer(chain))
    if lines:
        return lines[-1].start()
    found = find_all(chain, answer) if answer else []
    return found[-1].start if found else len(chain)


def find_block(chain: str, answer: str = "") -> tuple[BlockKind, int, int]:
    """The block AFR is measured in: ``(kind, start, end)`` character offsets in ``chain``."""
    op = _OPEN.search(chain)
    cl = _CLOSE.search(chain, op.end() if op else 0)
    if op or cl:
        start = op.end() if op else 0
        end = cl.start() if cl else max(start, final_answer_start(chain[start:], answer) + start)
        return "think", start, end
    return "pre_answer", 0, final_answer_start(chain, answer)


def chain_afr(chain: str, answer: str, question: str = "", threshold: float = DEFAULT_THRESHOLD) -> ChainAFR:
    """Measure where ``chain`` first states ``answer``.

    Args:
        chain: The assistant's chain (think block included).
        answer: The gold answer.
        question: The question, to flag answers it already contains.
        threshold: Answer-first cut-off on the position fraction.
    """
    pat = answer_pattern(answer)
    kind, s, e = find_block(chain, answer)
    first = next((m for m in find_all(chain, pat) if m.start >= s and m.end <= e), None)
    in_q = bool(question) and bool(find_all(question, pat))
    if first is None or e <= s:
        return ChainAFR(kind, s, e, -1, -1, math.nan, False, False, in_q)
    frac = (first.start - s) / (e - s)
    return ChainAFR(kind, s, e, first.start, first.end, frac, kind == "think", frac < threshold, in_q)


def afr_frame(chains: pd.DataFrame, threshold: float = DEFAULT_THRESHOLD) -> pd.DataFrame:
    """Add the per-chain AFR columns (see the module docstring) to a chains frame.

    ``chains`` needs ``chain`` and ``answer`` columns; ``question`` is used when present.
    """
    import pandas as pd

    qs = chains["question"] if "question" in chains else [""] * len(chains)
    rows = []
    for chain, ans, q in zip(chains["chain"], chains["answer"], qs):
        r = chain_afr(str(chain or ""), str(ans), str(q or ""), threshold)
        d = asdict(r)
        d["block_len"] = r.block_len
        d["states_answer"] = r.states_answer
        rows.append(d)
    cols = ["block_kind", "block_start", "block_end", "block_len", "mention_start", "mention_end", "frac",
            "states_answer", "covered", "answer_first", "answer_in_question"]
    extra = pd.DataFrame(rows, columns=cols, index=chains.index)
    return pd.concat([chains.drop(columns=[c for c in cols if c in chains], errors="ignore"), extra], axis=1)


@dataclass(frozen=True)
class AFRStats:
    """A corpus's AFR: the paper's denominator, all chains, and the chains without a think block apart.

    Attributes:
        n_chains: All chains.
        n_covered: Chains whose think block states the answer (the paper's denominator).
        n_answer_first: Covered chains that are answer-first (the paper's numerator).
        afr_all: ``n_answer_first_all / n_chains`` (denominator "all chains", not the paper's).
        afr_covered: ``n_answer_first / n_covered`` (the paper's AFR; NaN without covered chains).
        n_chains_excl: Chains, answer-in-question items excluded.
        n_covered_excl: Covered chains, excluded likewise.
        n_answer_first_excl: The paper's numerator, excluded likewise.
        afr_all_excl: AFR over all chains, excluded likewise.
        afr_covered_excl: The paper's AFR, excluded likewise.
        n_think: Chains with a think block.
        n_answer_first_all: Answer-first chains of any block kind (the all-chains numerator).
        n_no_think: Chains without a think block (their own group).
        n_no_think_stated: Of those, the ones whose text before the final answer states it.
        n_no_think_answer_first: Of those, the answer-first ones.
        afr_no_think: ``n_no_think_answer_first / n_no_think_stated`` (NaN when none).
        n_answer_first_all_excl: The all-chains numerator without answer-in-question items.
    """

    n_chains: int
    n_covered: int
    n_answer_first: int
    afr_all: float
    afr_covered: float
    n_chains_excl: int
    n_covered_excl: int
    n_answer_first_excl: int
    afr_all_excl: float
    afr_covered_excl: float
    n_think: int = 0
    n_answer_first_all: int = 0
    n_no_think: int = 0
    n_no_think_stated: int = 0
    n_no_think_answer_first: int = 0
    afr_no_think: float = math.nan
    n_answer_first_all_excl: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Plain dict (NaN for empty denominators)."""
        return asdict(self)


def _ratio(a: int, b: int) -> float:
    return a / b if b else math.nan


def afr_stats(frame: pd.DataFrame) -> AFRStats:
    """Corpus AFR from a frame made by :func:`afr_frame`."""
    cov = frame["covered"].astype(bool)
    first = frame["answer_first"].astype(bool)
    keep = ~frame["answer_in_question"].astype(bool)
    think = frame["block_kind"] == "think"
    stated = frame["states_answer"].astype(bool) if "states_answer" in frame else frame["mention_start"] >= 0
    paper = first & cov
    n, nc, nf, nfa = len(frame), int(cov.sum()), int(paper.sum()), int(first.sum())
    ne, nce, nfe = int(keep.sum()), int((cov & keep).sum()), int((paper & keep).sum())
    nt, nts, ntf = int((~think).sum()), int((~think & stated).sum()), int((~think & first).sum())
    nfae = int((first & keep).sum())
    return AFRStats(n, nc, nf, _ratio(nfa, n), _ratio(nf, nc), ne, nce, nfe, _ratio(nfae, ne), _ratio(nfe, nce),
                    int(think.sum()), nfa, nt, nts, ntf, _ratio(ntf, nts), nfae)


@dataclass(frozen=True)
class Interval:
    """A point estimate with a percentile bootstrap interval."""

    value: float
    low: float
    high: float
    level: float = 0.95


def _per_uid(frame: pd.DataFrame, uids: list[str], denominator: Denominator, exclude_aiq: bool) -> tuple[Any, Any]:
    """Per-uid (answer-first count, denominator count) arrays aligned to ``uids``."""
    import numpy as np

    f = frame[~frame["answer_in_question"].astype(bool)] if exclude_aiq else frame
    first = f["answer_first"].astype(bool)
    if denominator == "covered":
        num, den = first & f["covered"].astype(bool), f["covered"].astype(bool)
    elif denominator == "no_think":
        no_think = (f["block_kind"] != "think") & (f["mention_start"] >= 0)
        num, den = first & no_think, no_think
    else:
        num, den = first, np.ones(len(f), dtype=bool)
    g = f.assign(_num=num.astype(int), _den=np.asarray(den, dtype=int)).groupby(f["uid"].astype(str))[
        ["_num", "_den"]].sum()
    g = g.reindex(uids, fill_value=0)
    return g["_num"].to_numpy(float), g["_den"].to_numpy(float)


def bootstrap_afr(
    frames: list[pd.DataFrame],
    denominator: Denominator = "covered",
    n_boot: int = 2000,
    seed: int = 0,
    exclude_aiq: bool = False,
) -> list[Interval]:
    """Bootstrap CIs for each frame's AFR and, with two frames, for their difference (second − first).

    Problems (uids) are resampled with replacement, the same draw for every
    frame, so the difference is paired on problems and clustered over a
    problem's samples. Values are fractions (0.2 = 20%). The default denominator
    is the paper's (``covered``: chains whose think block states the answer).

    Returns:
        One :class:`Interval` per frame, then the difference when two frames are given.
    """
    import numpy as np

    uids = sorted(set().union(*[set(f["uid"].astype(str)) for f in frames]))
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, max(len(uids), 1), size=(n_boot, len(uids)))
    points, reps = [], []
    for f in frames:
        num, den = _per_uid(f, uids, denominator, exclude_aiq)
        points.append(num.sum() / den.sum() if den.sum() else math.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            reps.append(num[draws].sum(1) / den[draws].sum(1) if len(uids) else np.full(n_boot, np.nan))
    if len(frames) == 2:
        points.append(points[1] - points[0])
        reps.append(reps[1] - reps[0])
    out = []
    for p, r in zip(points, reps):
        r = r[~np.isnan(r)]
        lo, hi = (float(np.percentile(r, 2.5)), float(np.percentile(r, 97.5))) if len(r) else (math.nan, math.nan)
        out.append(Interval(float(p), lo, hi))
    return out


def histogram(frame: pd.DataFrame, bins: int = 10, group: Literal["covered", "no_think"] = "covered") -> list[int]:
    """Counts of the answer-position fraction of covered chains in ``bins`` equal bins over [0, 1].

    ``group="no_think"`` counts the chains without a think block instead (on the text before the final answer).
    """
    counts = [0] * bins
    sel = (frame["covered"].astype(bool) if group == "covered"
           else (frame["block_kind"] != "think") & (frame["mention_start"] >= 0))
    for x in frame.loc[sel, "frac"]:
        counts[min(int(float(x) * bins), bins - 1)] += 1
    return counts
