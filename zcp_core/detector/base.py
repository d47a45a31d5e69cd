"""What every generated-text detector shares: the :class:`Detector` protocol, file names, label coding.

Both kinds (:mod:`zcp_core.detector.tfidf`, :mod:`zcp_core.detector.transformer`) offer
``margin(texts)`` (log-odds of ``llm``), ``predict_proba(texts)`` (probability of
``llm``) and ``save(folder)``; :func:`zcp_core.detector.factory.load_detector`
reads either back. Nothing is pickled.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    import numpy as np

DetectorKind = Literal["tfidf", "transformer"]
FORMAT_VERSION = 1
MANIFEST = "detector.json"
WEIGHTS = "weights.npz"
# sklearn's default word token pattern; explain.py reuses it to map features to text spans.
WORD_PATTERN = r"(?u)\b\w\w+\b"


class Detector(Protocol):
    """What every detector offers."""

    kind: str

    def margin(self, texts: Sequence[str]) -> np.ndarray: ...

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray: ...

    def save(self, folder: str | Path) -> Path: ...


def _sigmoid(x: np.ndarray) -> np.ndarray:
    import numpy as np

    return 1.0 / (1.0 + np.exp(-x))


def _labels01(labels: Sequence[str]) -> list[int]:
    bad = sorted(set(labels) - {"human", "llm"})
    if bad:
        raise ValueError(f"labels must be human/llm, found {bad}")
    if len(set(labels)) < 2:
        raise ValueError("training data needs both human and llm texts")
    return [1 if y == "llm" else 0 for y in labels]
