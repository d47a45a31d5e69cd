"""The replicate benchmark's builds table (``benchmarks/lab_matrix_replicates.py``): one row per replicate build,
read from the build cache's manifest, the base model's row without build figures."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _bench():
    spec = importlib.util.spec_from_file_location("lab_matrix_replicates", ROOT / "benchmarks" /
                                                  "lab_matrix_replicates.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_builds_table_rows(tmp_path, monkeypatch):
    monkeypatch.setenv("ZCP_CACHE", str(tmp_path))
    man = tmp_path / "lab" / "direct-seed1-abc" / "build" / "manifest.json"
    man.parent.mkdir(parents=True)
    man.write_text(json.dumps({"summary": {"build_seconds": 1234.4, "n_train_texts": 40, "final_loss": 0.0871}}))
    bench = _bench()
    assert bench._cached_builds() == {"direct-seed1-abc"}
    made = bench._build_line({"replicate": 1, "kind": "direct", "build": "direct-seed1-abc", "n_c": 40, "n_u": 40,
                              "split_sha": "0123456789abcdef"}, {"direct-seed1-abc"})
    assert made == "| 1 | direct | direct-seed1-abc | this run | 1,234 | 40 | 0.087 | 40/40 | 0123456789ab |"
    cached = bench._build_line({"replicate": 1, "kind": "direct", "build": "direct-seed1-abc", "n_c": 40, "n_u": 40,
                                "split_sha": "0123456789abcdef"}, set())
    assert "| cache |" in cached
    base = bench._build_line({"replicate": 0, "kind": "none", "build": None, "n_c": 40, "n_u": 40}, set())
    assert base.startswith("| 0 | none | (base model) | - |") and base.endswith("| 40/40 | - |")
