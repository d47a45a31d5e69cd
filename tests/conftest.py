"""Shared fixtures.

The embedded model is converted once per machine into ``$ZCP_CACHE`` (the
repository's ``.zcp_cache`` unless set), so notebooks and tests share it.
Tests that check caching use their own response cache in ``tmp_path``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("ZCP_CACHE", str(ROOT / ".zcp_cache"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
SHARED = ROOT.parent / "shared" / "data"
DATA = ROOT / "data"


@pytest.fixture(scope="session")
def smollm2():
    """The embedded SmolLM2 backend on CPU, without a response cache."""
    from zcp_core.backends import load_backend

    return load_backend("smollm2", cache=None, device="cpu")


@pytest.fixture(scope="session")
def gsm8k_items():
    """The bundled GSM8K test items."""
    from zcp_core.data import load_items

    return load_items(DATA / "gsm8k" / "test.jsonl")


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data``; skips the test when it is absent."""
    if not SHARED.exists():
        pytest.skip("../shared/data is not present on this machine")
    return SHARED


@pytest.fixture(scope="session")
def detectrl_humans() -> dict[str, str]:
    """Every distinct human text of DetectRL's test splits, by ``file:index`` of its first occurrence; skips the
    test when the splits are absent."""
    import json

    data = SHARED / "detectrl"
    if not data.exists():
        pytest.skip("../shared/data/detectrl is not present on this machine")
    out: dict[str, str] = {}
    seen: set[str] = set()
    for f in sorted(data.rglob("*_test.json")):
        for i, row in enumerate(json.loads(f.read_text())):
            if row["label"] == "human" and row["text"] not in seen:
                seen.add(row["text"])
                out[f"{f.name}:{i}"] = row["text"]
    return out


@pytest.fixture(scope="session")
def detectrl_cleaned():
    """DetectRL's test splits (distinct texts) and their cleaning as a release makes it (patterns, then the edge
    stage), shared by the full-split checks: cleaning all 14,703 texts takes about 20 s. Skips when absent."""
    from zcp_core.artifacts import CleanConfig, clean, dedupe_texts, load_library
    from zcp_core.data import load_texts

    data = SHARED / "detectrl"
    if not data.exists():
        pytest.skip("../shared/data/detectrl is not present on this machine")
    texts, _ = dedupe_texts(load_texts(sorted(data.glob("*/*.json"))))
    return texts, clean(texts, load_library(), config=CleanConfig(edges="auto"))


@pytest.fixture(scope="module")
def lab_cache(tmp_path_factory):
    """A private ZCP_CACHE for lab builds, and the first 60 GSM8K test items in it (enough traceable items for
    |C| = |U| = 2, and quick to perturb); the base is the embedded model, converted once in the shared cache."""
    from zcp_core.backends import ensure_converted

    base = ensure_converted()  # before ZCP_CACHE moves: the shared conversion, not a private one
    cache = tmp_path_factory.mktemp("zcp_cache")
    dataset = cache / "gsm8k-60.jsonl"
    dataset.write_text("\n".join((DATA / "gsm8k" / "test.jsonl").read_text().splitlines()[:60]) + "\n")
    mp = pytest.MonkeyPatch()
    mp.setenv("ZCP_CACHE", str(cache))
    yield {"base": base, "cache": cache, "dataset": dataset}
    mp.undo()
