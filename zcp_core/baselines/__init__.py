"""Membership-inference baselines: Min-K% Prob (Shi et al., 2023) and the zlib ratio (Carlini et al., 2021).

Both score a question's teacher-forced token logprobs; higher means more
likely a member. :func:`score_items` returns one row per item (``id``,
``min_k``, ``zlib``, ...); :func:`write_baselines_run` writes a run folder.
"""

from __future__ import annotations

from zcp_core.baselines.run import (
    NO_TEXT,
    NO_TOKEN,
    RECORD_COLUMNS,
    score_items,
    score_requests,
    summarise,
    write_baselines_run,
)
from zcp_core.baselines.scores import (
    BaselineConfig,
    BaselineScores,
    baseline_scores,
    min_k_count,
    min_k_prob,
    zlib_bytes,
    zlib_ratio,
)

__all__ = [
    "NO_TEXT", "NO_TOKEN", "RECORD_COLUMNS", "BaselineConfig", "BaselineScores", "baseline_scores", "min_k_count",
    "min_k_prob", "score_items", "score_requests", "summarise", "write_baselines_run", "zlib_bytes", "zlib_ratio",
]
