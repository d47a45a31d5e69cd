"""TF-IDF + logistic-regression detector: the CPU default.

Word and character n-gram TF-IDF with logistic regression; it trains in
seconds and its attributions are exact (see :mod:`zcp_core.detector.explain`).
It is saved as ``detector.json`` (config, vocabularies) plus ``weights.npz``
(idf, coefficients), loaded with ``allow_pickle=False`` and rebuilt.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zcp_core.detector.base import FORMAT_VERSION, MANIFEST, WEIGHTS, WORD_PATTERN, _labels01, _sigmoid

if TYPE_CHECKING:
    import numpy as np


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
