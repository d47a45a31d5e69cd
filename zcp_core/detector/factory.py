"""Train, load and score detectors of either kind, and find a saved one in a run."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from zcp_core.detector.base import MANIFEST, Detector, DetectorKind, _sigmoid
from zcp_core.detector.tfidf import TfidfDetector
from zcp_core.errors import DataError, ZcpError

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.schema import TextRecord


def train_detector(records: Sequence[TextRecord], kind: DetectorKind = "tfidf", config: Any = None) -> Detector:
    """Train a detector of the given kind on labelled records.

    Args:
        records: Training texts labelled ``human`` / ``llm``.
        kind: ``tfidf`` (CPU default) or ``transformer``.
        config: A :class:`TfidfConfig` or ``TransformerConfig`` (defaults when None).
    """
    texts = [r.text for r in records]
    labels = [r.label for r in records]
    if kind == "tfidf":
        return TfidfDetector.fit(texts, labels, config)
    from zcp_core.detector.transformer import TransformerDetector

    return TransformerDetector.fit(texts, labels, config)


def load_detector(folder: str | Path) -> Detector:
    """Load a detector saved by ``save`` (TF-IDF or transformer)."""
    path = Path(folder)
    mpath = path / MANIFEST
    if not mpath.exists():
        raise DataError(str(path), None, None, f"not a saved detector: {MANIFEST} missing")
    kind = json.loads(mpath.read_text()).get("kind")
    if kind == "tfidf":
        return TfidfDetector.load(path)
    if kind == "transformer":
        from zcp_core.detector.transformer import TransformerDetector

        return TransformerDetector.load(path)
    raise DataError(str(mpath), None, "kind", f"unknown detector kind {kind!r}")


def score_frame(detector: Detector, records: Sequence[TextRecord], threshold: float = 0.5) -> pd.DataFrame:
    """Score records.

    Returns:
        DataFrame with columns ``id``, ``label``, ``llm_type``, ``data_type``,
        ``margin`` (log-odds of llm), ``p_llm``, ``pred`` (``human``/``llm``).
    """
    import pandas as pd

    m = detector.margin([r.text for r in records])
    p = _sigmoid(m)
    return pd.DataFrame({
        "id": [r.id for r in records], "label": [r.label for r in records],
        "llm_type": [r.llm_type for r in records], "data_type": [r.data_type for r in records],
        "margin": m, "p_llm": p, "pred": ["llm" if x >= threshold else "human" for x in p],
    })


def detector_folder(run_or_path: Any, which: Literal["original", "cleaned"] = "original") -> Path:
    """Find a saved detector in a run (``train`` or ``compare``) or a detector folder."""
    path = Path(getattr(run_or_path, "path", run_or_path))
    for cand in (path, path / "detector", path / "detectors" / which):
        if (cand / MANIFEST).exists():
            return cand
    raise ZcpError(f"no saved detector in {path} (looked for {MANIFEST} in ., detector/, detectors/{which}/)")


def detector_scorer(run_or_model: Any, which: Literal["original", "cleaned"] = "original"
                    ) -> Callable[[list[str]], list[float]]:
    """A scoring function for the cleaner's under-cleaning flags.

    Args:
        run_or_model: A detector object, a ``Run``, a run folder or a detector folder.
        which: For a ``compare`` run, which of its two detectors to use.

    Returns:
        ``f(texts) -> [p_llm, ...]``: residual AI-likelihood of each text, one batch call.
    """
    det = run_or_model if hasattr(run_or_model, "margin") else load_detector(detector_folder(run_or_model, which))

    def score(texts: list[str]) -> list[float]:
        return [float(x) for x in det.predict_proba(list(texts))] if texts else []

    return score
