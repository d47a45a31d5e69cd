"""Transformer detector on the embedded SmolLM2 backbone: tiny train, save/reload, SHAP text masker."""

from __future__ import annotations

from pathlib import Path

import pytest

from zcp_core.schema import TextRecord


def test_missing_checkpoint_is_a_clear_error() -> None:
    from zcp_core.detector import resolve_checkpoint
    from zcp_core.errors import BackendUnavailable

    with pytest.raises(BackendUnavailable, match="not available offline.*hf:PATH"):
        resolve_checkpoint("FacebookAI/roberta-base-not-here")


def _records() -> list[TextRecord]:
    llm = ["Here is a 6 sentence abstract for the article:", "Sure! Here is a short story about a dog:",
           "Here is a review of the restaurant:", "Here are some thoughts on the paper:"]
    human = ["the food was cold and the waiter rude", "we measure the cross section at 13 TeV",
             "my dog ran off again last night lol", "Police said the man was arrested on Friday."]
    return [TextRecord(f"l{i}", t, "llm") for i, t in enumerate(llm)] + [
        TextRecord(f"h{i}", t, "human") for i, t in enumerate(human)]


@pytest.fixture(scope="module")
def tiny_detector():
    from zcp_core.detector import TransformerConfig, train_detector

    return train_detector(_records(), "transformer", TransformerConfig(max_length=16, batch_size=8))


@pytest.mark.model
def test_tiny_transformer_detector_trains_and_reloads(tiny_detector, tmp_path: Path) -> None:
    import json

    import numpy as np

    from zcp_core.detector import load_detector

    texts = [r.text for r in _records()]
    p = tiny_detector.predict_proba(texts)
    assert p[:4].mean() > p[4:].mean()  # separates its own training texts
    folder = tiny_detector.save(tmp_path / "det")
    assert sorted(x.name for x in folder.iterdir()) == ["detector.json", "head.npz"]
    assert json.loads((folder / "detector.json").read_text())["checkpoint_revision"] == tiny_detector.revision
    again = load_detector(folder)
    assert np.allclose(again.margin(texts), tiny_detector.margin(texts), atol=1e-6)


@pytest.mark.slow
@pytest.mark.model
def test_text_masker_shap_on_transformer(tiny_detector) -> None:
    # slow: shap's Partition explainer JIT-compiles numba code on first use (tens of seconds on 2 cores)
    from zcp_core.detector import explain

    a = explain(tiny_detector, [TextRecord("x", "Here is a review: good food.", "llm")], max_evals=12)
    assert a.method == "partition-text-masker"
    row = a.texts.iloc[0]
    assert row["margin"] == pytest.approx(float(tiny_detector.margin([row["text"]])[0]), abs=1e-4)
    assert row["phi_sum"] + row["base_value"] == pytest.approx(row["margin"], abs=1e-4)  # shap's additivity
    assert {"Here", "review"} <= set(a.tokens["token"])
