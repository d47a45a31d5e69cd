"""Score benchmark items with the membership-inference baselines and write a ``baselines`` run.

Each item's question text is scored raw (no chat template), as
``ScoreRequest(prompt="", continuation=question)``: one batched
``backend.score`` call for all items, in order, cached and resumable by the
backend. Its first token has no context and is not scored.

Records table (``records.parquet``), one row per item, in input order:

- ``id``: the item id.
- ``n_tokens``: scored tokens (0 when none were scored).
- ``mean_logprob``: mean token logprob (``-log PPL``).
- ``n_min_k``: tokens Min-K% Prob averaged.
- ``min_k``: Min-K% Prob (higher = more likely member).
- ``zlib_bytes``: zlib-compressed length of the UTF-8 question.
- ``zlib``: ``mean_logprob / zlib_bytes`` (higher = more likely member).
- ``logprob_reason``: why the scores are NaN (the backend cannot score, the
  text has no scored token...), ``""`` when they are real.

Scores are NaN, never 0, when logprobs are unavailable. See
:mod:`zcp_core.baselines.scores` for the definitions and their orientation.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zcp_core.baselines.scores import BaselineConfig, baseline_scores, zlib_bytes

if TYPE_CHECKING:
    from zcp_core.runs import RunSpec
    from zcp_core.schema import Item

RECORD_COLUMNS = ("id", "n_tokens", "mean_logprob", "n_min_k", "min_k", "zlib_bytes", "zlib", "logprob_reason")
NO_TEXT = "the question is empty, so there is nothing to score"
NO_TOKEN = "the question has no scored token (its first token has no context and is never scored)"


def score_requests(items: Sequence[Item]) -> list[Any]:
    """The raw-text score request of each item with a non-empty question, in order."""
    from zcp_core.backends import ScoreRequest

    return [ScoreRequest(prompt="", continuation=it.question) for it in items if it.question]


def _unavailable(item: Item, reason: str) -> dict[str, Any]:
    nan = float("nan")
    return {"id": item.id, "n_tokens": 0, "mean_logprob": nan, "n_min_k": 0, "min_k": nan,
            "zlib_bytes": zlib_bytes(item.question), "zlib": nan, "logprob_reason": reason}


def score_items(backend: Any, items: Sequence[Item], config: BaselineConfig = BaselineConfig(),
                progress: bool = False) -> Any:
    """Min-K% Prob and the zlib ratio of each item's question, from one batched ``backend.score`` call.

    Args:
        backend: Any :class:`zcp_core.backends.Backend`.
        items: The items; their ``question`` is scored.
        config: Baseline settings.
        progress: Show the backend's progress bar.

    Returns:
        A DataFrame with the columns in :data:`RECORD_COLUMNS`, one row per item, in order.
    """
    import pandas as pd

    reqs = score_requests(items)
    scored = iter(backend.score(reqs, progress=progress) if reqs else [])
    rows = []
    for it in items:
        if not it.question:
            rows.append(_unavailable(it, NO_TEXT))
            continue
        tl = next(scored)
        if not tl.available:
            why = tl.reason or f"the {getattr(backend, 'name', '?')} backend returned no logprobs"
            rows.append(_unavailable(it, why))
            continue
        if not tl.logprobs:
            rows.append(_unavailable(it, NO_TOKEN))
            continue
        rows.append({"id": it.id, **asdict(baseline_scores(tl.logprobs, it.question, config)), "logprob_reason": ""})
    if next(scored, None) is not None:
        raise RuntimeError("the backend returned more score results than requests")
    return pd.DataFrame(rows, columns=list(RECORD_COLUMNS))


def _mean(values: Any) -> float | None:
    """Mean of the finite values, or None (JSON null) when there are none."""
    vals = [float(v) for v in values if not math.isnan(float(v))]
    return math.fsum(vals) / len(vals) if vals else None


def summarise(records: Any, config: BaselineConfig) -> dict[str, Any]:
    """The run's summary: counts, unavailable reasons and mean scores over the scored items.

    The baselines give no verdict on their own: a score means something only
    against the same model's scores on known non-members (``zcp lab matrix``).
    """
    reasons = Counter(r for r in records["logprob_reason"] if r)
    scored = int((records["logprob_reason"] == "").sum())
    min_k = _mean(records["min_k"])
    return {
        "n": len(records),
        "n_scored": scored,
        "n_unavailable": len(records) - scored,
        "unavailable_reasons": dict(reasons),
        "config": asdict(config),
        "min_k_mean": min_k,
        "zlib_mean": _mean(records["zlib"]),
        "mean_logprob_mean": _mean(records["mean_logprob"]),
        "headline": {"label": f"Min-{config.k:.0%} Prob, mean over {scored} scored items", "value": min_k},
    }


def write_baselines_run(out: str | Path, spec: RunSpec, records: Any, config: BaselineConfig) -> Path:
    """Write a ``baselines`` run folder: ``records.parquet`` (see the module docstring) and ``manifest.json``.

    Args:
        out: Run folder.
        spec: How the run was made (``kind`` must be ``baselines``).
        records: The :func:`score_items` table.
        config: The settings that made it (its summary records them).

    Returns:
        The run folder.
    """
    from zcp_core.runs import write_run

    if spec.kind != "baselines":
        raise ValueError(f"a baselines run needs RunSpec(kind='baselines'), got {spec.kind!r}")
    missing = [c for c in RECORD_COLUMNS if c not in records.columns]
    if missing:
        raise ValueError(f"baselines records lack columns {missing}")
    return write_run(out, spec, records, summarise(records, config))
