"""Generated-text detectors (human vs LLM): TF-IDF + logistic regression, and a transformer head.

The CPU default is word and character n-gram TF-IDF with logistic regression;
it trains in seconds and its attributions are exact (see ``zcp_core.explain``).
The transformer detector lives in ``zcp_core.detector_transformer``.

Both kinds share one interface: ``margin(texts)`` (log-odds of ``llm``),
``predict_proba(texts)`` (probability of ``llm``), ``save(folder)``, and
:func:`load_detector` to read one back. Nothing is pickled: the TF-IDF model is
saved as ``detector.json`` (config, vocabularies) plus ``weights.npz``
(idf, coefficients), loaded with ``allow_pickle=False`` and rebuilt.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from zcp_core.errors import DataError, ZcpError

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from zcp_core.schema import TextRecord

DetectorKind = Literal["tfidf", "transformer"]
FORMAT_VERSION = 1
MANIFEST = "detector.json"
WEIGHTS = "weights.npz"
# sklearn's default word token pattern; explain.py reuses it to map features to text spans.
WORD_PATTERN = r"(?u)\b\w\w+\b"


@dataclass(frozen=True)
class TfidfConfig:
    """Settings of the TF-IDF + logistic-regression detector.

    Attributes:
        word_ngrams: Word n-gram range.
        char_ngrams: Character n-gram range (sklearn ``analyzer="char"``).
        max_word_features: Vocabulary cap for word n-grams.
        max_char_features: Vocabulary cap for char n-grams.
        min_df: Minimum document frequency of a feature.
        C: Inverse L2 regularisation strength.
        seed: Seed for the solver.
    """

    word_ngrams: tuple[int, int] = (1, 2)
    char_ngrams: tuple[int, int] = (3, 5)
    max_word_features: int = 50_000
    max_char_features: int = 50_000
    min_df: int = 2
    C: float = 4.0
    seed: int = 0


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


class TfidfDetector:
    """Word + char TF-IDF features with a logistic-regression head.

    Feature ``j`` of the combined space is word feature ``j`` for
    ``j < n_word`` and char feature ``j - n_word`` otherwise.
    """

    kind = "tfidf"

    def __init__(self, config: TfidfConfig, word_vec: Any, char_vec: Any, coef: np.ndarray, intercept: float):
        self.config = config
        self.word_vec = word_vec
        self.char_vec = char_vec
        self.coef = coef
        self.intercept = float(intercept)

    @staticmethod
    def _vectorizers(config: TfidfConfig, vocab: tuple[list[str], list[str]] | None = None) -> tuple[Any, Any]:
        import numpy as np
        from sklearn.feature_extraction.text import TfidfVectorizer

        common = {"lowercase": True, "sublinear_tf": True, "dtype": np.float64}
        word = TfidfVectorizer(analyzer="word", token_pattern=WORD_PATTERN, ngram_range=tuple(config.word_ngrams),
                               min_df=config.min_df, max_features=config.max_word_features,
                               vocabulary=vocab[0] if vocab else None, **common)
        char = TfidfVectorizer(analyzer="char", ngram_range=tuple(config.char_ngrams), min_df=config.min_df,
                               max_features=config.max_char_features, vocabulary=vocab[1] if vocab else None, **common)
        return word, char

    @classmethod
    def fit(cls, texts: Sequence[str], labels: Sequence[str], config: TfidfConfig | None = None) -> TfidfDetector:
        """Train on labelled texts (``human`` / ``llm``)."""
        import numpy as np
        from scipy.sparse import hstack
        from sklearn.linear_model import LogisticRegression

        cfg = config or TfidfConfig()
        y = _labels01(labels)
        word, char = cls._vectorizers(cfg)
        x = hstack([word.fit_transform(texts), char.fit_transform(texts)]).tocsr()
        lr = LogisticRegression(C=cfg.C, max_iter=2000, solver="liblinear", random_state=cfg.seed)
        lr.fit(x, np.asarray(y))
        return cls(cfg, word, char, lr.coef_[0].astype(np.float64), float(lr.intercept_[0]))

    @property
    def n_word(self) -> int:
        """Number of word-n-gram features."""
        return len(self.word_vec.vocabulary_)

    def feature_names(self) -> list[str]:
        """Names of the combined features, ``w:`` or ``c:`` prefixed, in column order."""
        word = self.word_vec.get_feature_names_out()
        char = self.char_vec.get_feature_names_out()
        return [f"w:{w}" for w in word] + [f"c:{c}" for c in char]

    def transform(self, texts: Sequence[str]) -> Any:
        """The sparse feature matrix (CSR) of ``texts``."""
        from scipy.sparse import hstack

        return hstack([self.word_vec.transform(texts), self.char_vec.transform(texts)]).tocsr()

    def margin(self, texts: Sequence[str]) -> np.ndarray:
        """Log-odds of ``llm`` per text."""
        import numpy as np

        return np.asarray(self.transform(texts) @ self.coef).ravel() + self.intercept

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """Probability of ``llm`` per text."""
        return _sigmoid(self.margin(texts))

    def save(self, folder: str | Path) -> Path:
        """Write ``detector.json`` + ``weights.npz`` (no pickle) and return the folder."""
        import numpy as np
        import sklearn

        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        meta = {
            "format": FORMAT_VERSION, "kind": self.kind, "config": asdict(self.config),
            "sklearn": sklearn.__version__,
            "word_vocabulary": list(self.word_vec.get_feature_names_out()),
            "char_vocabulary": list(self.char_vec.get_feature_names_out()),
        }
        (out / MANIFEST).write_text(json.dumps(meta, ensure_ascii=False))
        np.savez(out / WEIGHTS, word_idf=self.word_vec.idf_, char_idf=self.char_vec.idf_,
                 coef=self.coef, intercept=np.array([self.intercept]))
        return out

    @classmethod
    def load(cls, folder: str | Path) -> TfidfDetector:
        """Rebuild a saved detector from its vocabularies and arrays."""
        import numpy as np

        folder = Path(folder)
        meta = json.loads((folder / MANIFEST).read_text())
        cfg_d = meta["config"]
        cfg = TfidfConfig(**{**cfg_d, "word_ngrams": tuple(cfg_d["word_ngrams"]),
                             "char_ngrams": tuple(cfg_d["char_ngrams"])})
        word, char = cls._vectorizers(cfg, (meta["word_vocabulary"], meta["char_vocabulary"]))
        with np.load(folder / WEIGHTS, allow_pickle=False) as w:
            word.idf_ = w["word_idf"]
            char.idf_ = w["char_idf"]
            coef, intercept = w["coef"], float(w["intercept"][0])
        return cls(cfg, word, char, coef, intercept)


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
    from zcp_core.detector_transformer import TransformerDetector

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
        from zcp_core.detector_transformer import TransformerDetector

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
