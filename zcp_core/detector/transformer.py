"""Transformer detector: a frozen local checkpoint with a trained classification head.

Any local transformers checkpoint serves as the backbone (the paper used
RoBERTa-base). Offline, the embedded SmolLM2-135M is the one always present.
Texts are encoded once by the frozen backbone (mean-pooled last hidden state
over the attention mask); a logistic-regression head is trained on the
standardised features. Training a head on cached features keeps the CPU cost
at one forward pass per text, so a few hundred short texts take minutes.

Saved as ``detector.json`` (config, checkpoint path and fingerprint) plus
``head.npz`` (feature mean/std, coefficients); the backbone is referenced, not
copied, and its fingerprint is checked on load. Attributions use ``shap``'s
text masker (Partition explainer) over the backbone's tokens.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from zcp_core.detector.base import MANIFEST, _labels01, _sigmoid
from zcp_core.errors import BackendUnavailable, ZcpError

if TYPE_CHECKING:
    import numpy as np


HEAD = "head.npz"


@dataclass(frozen=True)
class TransformerConfig:
    """Settings of the transformer detector.

    Attributes:
        checkpoint: ``smollm2`` (embedded), ``hf:PATH``, ``lab:NAME``, a folder,
            or a hub name that must already be in the local HF cache.
        max_length: Tokens kept per text (truncation).
        batch_size: Texts per forward pass.
        C: Inverse L2 regularisation of the head.
        seed: Seed of the head's solver.
        device: ``cpu`` or ``cuda``.
    """

    checkpoint: str = "smollm2"
    max_length: int = 128
    batch_size: int = 16
    C: float = 1.0
    seed: int = 0
    device: Literal["cpu", "cuda"] = "cpu"


def resolve_checkpoint(spec: str) -> Path:
    """The local folder of a detector backbone spec, from the one spec parser; never downloads.

    A bare path or hub name is read as ``hf:SPEC``.

    Raises:
        BackendUnavailable: When the checkpoint is not on this machine.
    """
    from zcp_core.backends import local_weights, parse_model_spec
    from zcp_core.errors import ModelSpecError

    try:
        full = parse_model_spec(spec).raw
    except ModelSpecError:
        full = f"hf:{spec}"  # a bare folder or hub name
    try:
        return local_weights(full)
    except (BackendUnavailable, ModelSpecError) as e:
        raise BackendUnavailable(
            f"detector checkpoint {spec!r} is not available offline ({e}). Pass hf:PATH to a local "
            "checkpoint (e.g. a RoBERTa-base folder) or use the embedded 'smollm2'."
        ) from e


class TransformerDetector:
    """Frozen backbone + logistic head; ``margin`` and ``predict_proba`` like the TF-IDF detector."""

    kind = "transformer"

    def __init__(self, config: TransformerConfig, path: Path, revision: str, head: dict[str, np.ndarray]):
        self.config = config
        self.path = path
        self.revision = revision
        self.head = head
        self._model: Any = None
        self._tokenizer: Any = None
        # Per-instance memo of pooled features by text: the closed loop scores the same
        # test texts several times (metrics, attack baseline, records); the backbone is frozen.
        self._memo: dict[str, Any] = {}

    @property
    def tokenizer(self) -> Any:
        """The backbone's tokenizer (loaded on first use)."""
        self._load()
        return self._tokenizer

    def _load(self) -> None:
        if self._model is not None:
            return
        import torch
        from transformers import AutoModel, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(self.path)
        if tok.pad_token_id is None:
            tok.pad_token = tok.eos_token
        # Right padding keeps a causal model's real-token states (and so the pooled
        # features) independent of which other texts share the batch.
        tok.padding_side = "right"
        model = AutoModel.from_pretrained(self.path, dtype=torch.float32).to(self.config.device)
        model.eval()
        self._tokenizer, self._model = tok, model

    def features(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        """Mean-pooled last hidden states (texts x hidden), batched, longest texts first."""
        import numpy as np
        import torch
        from tqdm.auto import tqdm

        self._load()
        cfg = self.config
        todo = sorted({t for t in texts if t not in self._memo}, key=lambda t: -len(t))
        starts = range(0, len(todo), cfg.batch_size)
        for b in tqdm(starts, desc="encode", disable=not progress or not todo):
            batch = todo[b:b + cfg.batch_size]
            enc = self._tokenizer(batch, truncation=True, max_length=cfg.max_length,
                                  padding=True, return_tensors="pt").to(cfg.device)
            with torch.no_grad():
                hidden = self._model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = ((hidden * mask).sum(1) / mask.sum(1).clamp(min=1)).cpu().double().numpy()
            self._memo.update(zip(batch, pooled, strict=True))
        if not texts:
            return np.zeros((0, self._model.config.hidden_size))
        return np.stack([self._memo[t] for t in texts])

    def margin(self, texts: Sequence[str]) -> np.ndarray:
        """Log-odds of ``llm`` per text."""
        import numpy as np

        if len(texts) == 0:
            return np.zeros(0)
        h = self.head
        z = (self.features(list(texts)) - h["mean"]) / h["std"]
        return z @ h["coef"] + float(h["intercept"][0])

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        """Probability of ``llm`` per text."""
        return _sigmoid(self.margin(texts))

    @classmethod
    def fit(cls, texts: Sequence[str], labels: Sequence[str], config: TransformerConfig | None = None,
            progress: bool = True) -> TransformerDetector:
        """Encode the texts once with the frozen backbone and train the head."""
        import numpy as np
        from sklearn.linear_model import LogisticRegression

        from zcp_core.backends import folder_revision

        cfg = config or TransformerConfig()
        y = np.asarray(_labels01(labels))
        path = resolve_checkpoint(cfg.checkpoint)
        det = cls(cfg, path, folder_revision(path), {})
        x = det.features(list(texts), progress=progress)
        mean, std = x.mean(0), x.std(0) + 1e-6
        lr = LogisticRegression(C=cfg.C, max_iter=2000, random_state=cfg.seed).fit((x - mean) / std, y)
        det.head = {"mean": mean, "std": std, "coef": lr.coef_[0].astype(np.float64),
                    "intercept": np.array([float(lr.intercept_[0])])}
        return det

    def save(self, folder: str | Path) -> Path:
        """Write ``detector.json`` + ``head.npz``; the backbone is referenced by path and fingerprint."""
        import numpy as np

        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        meta = {"format": 1, "kind": self.kind, "config": asdict(self.config), "checkpoint_path": str(self.path),
                "checkpoint_revision": self.revision}
        (out / MANIFEST).write_text(json.dumps(meta))
        np.savez(out / HEAD, **self.head)  # type: ignore[arg-type]
        return out

    @classmethod
    def load(cls, folder: str | Path) -> TransformerDetector:
        """Rebuild from ``head.npz``; the backbone must still be present with the same fingerprint."""
        import numpy as np

        from zcp_core.backends import folder_revision

        folder = Path(folder)
        meta = json.loads((folder / MANIFEST).read_text())
        cfg = TransformerConfig(**meta["config"])
        path = Path(meta["checkpoint_path"])
        if not (path / "config.json").exists():
            path = resolve_checkpoint(cfg.checkpoint)
        rev = folder_revision(path)
        if rev != meta["checkpoint_revision"]:
            raise ZcpError(f"{folder}: backbone {path} changed (fingerprint {rev} != {meta['checkpoint_revision']})")
        with np.load(folder / HEAD, allow_pickle=False) as h:
            head = {k: h[k] for k in h.files}
        return cls(cfg, path, rev, head)
