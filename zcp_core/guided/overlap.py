"""Overlap between a completion and the true second piece.

ROUGE-L (F-measure, via ``rouge-score``) is the paper's main score. Exact
match and a normalised edit similarity are ours: both are cheap, need no
model, and read directly ("the same string", "how many edits away"). BLEURT
is optional: it runs only when the ``bleurt`` package and a local checkpoint
(``$ZCP_BLEURT_CHECKPOINT``) are both present; otherwise it is skipped and
the reason is reported.
"""

from __future__ import annotations

import importlib.util
import os
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

BLEURT_ENV = "ZCP_BLEURT_CHECKPOINT"


def normalise(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed and stripped: what "exact" compares."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip().casefold()


def exact_match(candidate: str, reference: str) -> bool:
    """Whether the two texts are equal after :func:`normalise` (an empty reference never matches)."""
    ref = normalise(reference)
    return bool(ref) and normalise(candidate) == ref


def levenshtein(a: str, b: str) -> int:
    """Character edit distance (insertions, deletions, substitutions cost 1)."""
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        cur = [i]
        for j, cb in enumerate(b, start=1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def edit_similarity(a: str, b: str) -> float:
    """``1 - levenshtein(a, b) / max(len(a), len(b))``; 1.0 for two empty strings.

    Raw strings are compared; :func:`score_pairs` normalises them first.
    """
    m = max(len(a), len(b))
    return 1.0 if m == 0 else 1.0 - levenshtein(a, b) / m


def rouge_l(candidates: Sequence[str], references: Sequence[str]) -> list[float]:
    """ROUGE-L F-measure of each candidate against its reference (rouge-score, stemming on)."""
    from rouge_score import rouge_scorer

    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    return [float(scorer.score(r, c)["rougeL"].fmeasure) for c, r in zip(candidates, references, strict=True)]


@dataclass(frozen=True)
class BleurtStatus:
    """Whether BLEURT can run here, and why not when it cannot."""

    available: bool
    reason: str
    checkpoint: str = ""


def bleurt_status() -> BleurtStatus:
    """Check for the ``bleurt`` package and a local checkpoint folder (nothing is downloaded)."""
    ckpt = os.environ.get(BLEURT_ENV, "")
    if importlib.util.find_spec("bleurt") is None:
        return BleurtStatus(False, "skipped: the bleurt package is not installed")
    if not ckpt:
        return BleurtStatus(False, f"skipped: ${BLEURT_ENV} is not set (a local BLEURT checkpoint folder)")
    if not Path(ckpt).is_dir():
        return BleurtStatus(False, f"skipped: ${BLEURT_ENV}={ckpt} is not a folder")
    return BleurtStatus(True, "used", ckpt)


def bleurt_scores(candidates: Sequence[str], references: Sequence[str], status: BleurtStatus) -> list[float]:
    """BLEURT scores with a local checkpoint (call only when ``status.available``)."""
    from bleurt import score as bleurt_score  # type: ignore[import-not-found]

    scorer = bleurt_score.BleurtScorer(status.checkpoint)
    return [float(x) for x in scorer.score(references=list(references), candidates=list(candidates))]


def score_pairs(candidates: Sequence[str], references: Sequence[str], prefix: str = "") -> dict[str, list]:
    """Per-pair overlap columns: ``rouge_l``, ``exact``, ``edit_sim`` (names get ``prefix``).

    Edit similarity compares normalised texts, so case and spacing do not count as edits.
    """
    return {
        f"rouge_l{prefix}": rouge_l(candidates, references),
        f"exact{prefix}": [exact_match(c, r) for c, r in zip(candidates, references, strict=True)],
        f"edit_sim{prefix}": [edit_similarity(normalise(c), normalise(r))
                              for c, r in zip(candidates, references, strict=True)],
    }


def lcs_mask(a: Sequence[str], b: Sequence[str]) -> tuple[list[bool], list[bool]]:
    """Which tokens of ``a`` and of ``b`` belong to one longest common subsequence (case-insensitive)."""
    la = [t.casefold().strip(".,;:!?\"'()") for t in a]
    lb = [t.casefold().strip(".,;:!?\"'()") for t in b]
    n, m = len(la), len(lb)
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            dp[i][j] = dp[i + 1][j + 1] + 1 if la[i] == lb[j] and la[i] else max(dp[i + 1][j], dp[i][j + 1])
    ma, mb = [False] * n, [False] * m
    i = j = 0
    while i < n and j < m:
        if la[i] == lb[j] and la[i]:
            ma[i] = mb[j] = True
            i, j = i + 1, j + 1
        elif dp[i + 1][j] >= dp[i][j + 1]:
            i += 1
        else:
            j += 1
    return ma, mb
