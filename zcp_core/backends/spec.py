"""The one parser that turns a model spec string into a backend.

Specs:
    ``smollm2``                  the embedded default (SmolLM2-135M-Instruct)
    ``hf:NAME_OR_PATH``          a local transformers folder
    ``lab:NAME``                 a model built by the contamination lab
    ``openai:BASE_URL#MODEL``    any OpenAI-compatible server
    ``vllm:NAME_OR_PATH``        vLLM offline engine (GPU, optional extra)
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from zcp_core.errors import BackendUnavailable, ModelSpecError

SpecKind = Literal["smollm2", "hf", "lab", "openai", "vllm"]
DEFAULT_MODEL = "smollm2"


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model spec.

    Attributes:
        kind: Which backend serves it.
        target: Path, lab name, or model name.
        base_url: Server URL for ``openai`` specs.
        raw: The original string.
    """

    kind: SpecKind
    target: str
    base_url: str | None = None
    raw: str = ""


def parse_model_spec(spec: str) -> ModelSpec:
    """Parse a spec string; raises :class:`ModelSpecError` with the accepted forms."""
    s = (spec or "").strip()
    if s == "smollm2":
        return ModelSpec("smollm2", "smollm2", raw=s)
    kind, sep, rest = s.partition(":")
    if not sep or not rest:
        raise ModelSpecError(
            f"bad model spec {spec!r}: use smollm2, hf:PATH, lab:NAME, openai:BASE_URL#MODEL or vllm:NAME_OR_PATH"
        )
    if kind == "openai":
        url, hash_, model = rest.rpartition("#")
        if not hash_ or not url or not model:
            raise ModelSpecError(f"bad openai spec {spec!r}: expected openai:BASE_URL#MODEL")
        return ModelSpec("openai", model, base_url=url, raw=s)
    if kind in ("hf", "lab", "vllm"):
        return ModelSpec(kind, rest, raw=s)  # type: ignore[arg-type]
    raise ModelSpecError(f"unknown backend {kind!r} in model spec {spec!r}")


FIX_HINT = "`zcp models` lists the models usable here; `zcp lab build` makes a lab model"


def check_model(spec: str) -> ModelSpec:
    """Fail fast, before any work, when a spec names no usable model; loads nothing.

    Raises:
        ModelSpecError: A malformed spec, with the accepted forms and :data:`FIX_HINT`.
        BackendUnavailable: A lab build, local folder or vLLM that is not on this machine, with the fix.
    """
    try:
        ms = parse_model_spec(spec)
    except ModelSpecError as e:
        raise ModelSpecError(f"{e}; {FIX_HINT}") from None
    if ms.kind == "lab" and not (lab_model_path(ms.target) / "config.json").exists():
        raise BackendUnavailable(
            f"{spec}: no lab build named {ms.target!r} here; `zcp lab build` makes lab:direct (`--mode evasive`, "
            "`verbatim`, `solution` the other kinds) and `zcp models` lists the builds here")
    if ms.kind == "hf":
        path = Path(ms.target).expanduser()
        if not (path / "config.json").exists() and (path.exists() or _hub_cache_copy(ms.target) is None):
            raise BackendUnavailable(f"{spec}: no transformers model folder (config.json) at {path}, and no copy in "
                                     f"the local Hugging Face cache; {FIX_HINT}")
    if ms.kind == "vllm" and not vllm_available():
        raise BackendUnavailable(f"{spec}: vLLM is not installed (pip install '.[vllm]' on a GPU machine); {FIX_HINT}")
    return ms


def vllm_available() -> bool:
    """Whether vLLM is importable here (checked without importing it)."""
    return importlib.util.find_spec("vllm") is not None


def load_backend(spec: str, cache: Any = "default", device: str = "auto", batch_size: int = 16) -> Any:
    """Build the backend a spec names.

    Args:
        spec: Model spec string.
        cache: A ``ResponseCache``, ``None`` for no cache, or ``"default"``.
        device: ``auto``, ``cpu`` or ``cuda`` for local backends.
        batch_size: Requests per batch for local backends.
    """
    from zcp_core.backends.cache import ResponseCache

    ms = parse_model_spec(spec)
    rc = ResponseCache() if cache == "default" else cache
    if ms.kind == "smollm2":
        from zcp_core.backends.embedded import MODEL_NAME, ensure_converted
        from zcp_core.backends.hf import TransformersBackend

        return TransformersBackend(ensure_converted(), model_id=MODEL_NAME, device=device,  # type: ignore[arg-type]
                                   batch_size=batch_size, cache=rc)
    if ms.kind in ("hf", "lab"):
        from zcp_core.backends.hf import TransformersBackend

        return TransformersBackend(local_weights(spec), model_id=ms.raw, device=device,  # type: ignore[arg-type]
                                   batch_size=batch_size, cache=rc)
    if ms.kind == "openai":
        from zcp_core.backends.openai_api import OpenAIBackend

        return OpenAIBackend(ms.base_url or "", ms.target, cache=rc)
    if not vllm_available():
        raise BackendUnavailable(f"{spec}: vLLM is not installed (pip install '.[vllm]' on a GPU machine)")
    from zcp_core.backends.vllm_backend import VLLMBackend

    return VLLMBackend(ms.target, cache=rc)


def local_weights(spec: str) -> Path:
    """The local transformers folder behind a spec; never downloads.

    ``smollm2`` is converted from the embedded GGUF on first use; ``hf:PATH`` is a
    folder, or a hub name already in the local Hugging Face cache; ``lab:NAME`` is
    a lab build. Everything that needs weights on disk (the transformers backend,
    the lab's trainer, the transformer detector) asks here.

    Raises:
        ModelSpecError: For a malformed spec, or a remote one (``openai:``, ``vllm:``).
        BackendUnavailable: When the folder is not on this machine.
    """
    ms = parse_model_spec(spec)
    if ms.kind == "smollm2":
        from zcp_core.backends.embedded import ensure_converted

        return ensure_converted()
    if ms.kind not in ("hf", "lab"):
        raise ModelSpecError(f"{spec}: names a remote model; local weights need smollm2, hf:PATH or lab:NAME")
    path = Path(ms.target).expanduser() if ms.kind == "hf" else lab_model_path(ms.target)
    if (path / "config.json").exists():
        return path
    if ms.kind == "hf" and not path.exists():
        cached = _hub_cache_copy(ms.target)
        if cached is not None:
            return cached
    raise BackendUnavailable(
        f"{spec}: no transformers model folder (config.json) at {path}"
        + ("" if ms.kind == "lab" else " and no copy in the local Hugging Face cache")
        + ". Nothing is downloaded at run time."
    )


def _hub_cache_copy(name: str) -> Path | None:
    """A hub model already in the local Hugging Face cache (offline lookup only), else None."""
    try:
        from huggingface_hub import snapshot_download

        local = Path(snapshot_download(name, local_files_only=True))
    except Exception:  # noqa: BLE001 - any failure means "not available offline"
        return None
    return local if (local / "config.json").exists() else None


def lab_model_path(name: str) -> Path:
    """Folder of a lab-built model: ``<cache>/lab/<name>/model``."""
    from zcp_core.backends.cache import cache_dir

    return cache_dir() / "lab" / name / "model"


def available_models() -> list[dict[str, str]]:
    """What ``zcp models`` lists: each backend and model usable here, with status."""
    from zcp_core.backends.cache import cache_dir

    rows = []
    try:
        from zcp_core.backends.embedded import gguf_path

        gguf_path()
        rows.append({"spec": "smollm2", "backend": "transformers", "status": "available (embedded default)"})
    except BackendUnavailable as e:
        rows.append({"spec": "smollm2", "backend": "transformers", "status": f"unavailable: {e}"})
    lab = cache_dir() / "lab"
    for d in sorted(lab.glob("*/model")) if lab.exists() else []:
        rows.append({"spec": f"lab:{d.parent.name}", "backend": "transformers", "status": "available (lab build)"})
    rows.append({"spec": "hf:PATH", "backend": "transformers", "status": "any local model folder"})
    rows.append({"spec": "openai:BASE_URL#MODEL", "backend": "openai",
                 "status": "available" if importlib.util.find_spec("openai") else "unavailable: pip install openai"})
    rows.append({"spec": "vllm:NAME_OR_PATH", "backend": "vllm",
                 "status": "available" if vllm_available() else "unavailable: vLLM not installed (GPU extra)"})
    return rows
