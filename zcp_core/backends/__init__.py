"""Model backends: one batch-in, batch-out protocol over transformers, vLLM and HTTP.

Import the concrete backends through :func:`zcp_core.backends.spec.load_backend`;
this package itself imports nothing heavy.

"""

from __future__ import annotations

from zcp_core.backends.base import (
    BRACE_STOPS,
    Backend,
    Completion,
    Constraint,
    GenerateRequest,
    GenerateScore,
    GenerateScoreRequest,
    Message,
    SamplingParams,
    ScoreRequest,
    StopAt,
    TokenLogprobs,
    balanced_close,
    chat,
    generate_and_score,
    open_braces,
    stop_depth,
)
from zcp_core.backends.cache import ResponseCache, cache_dir
from zcp_core.backends.constraints import allowed_token_ids, number_token_ok
from zcp_core.backends.embedded import converted_dir, ensure_converted, gguf_path
from zcp_core.backends.hf import TransformersBackend, folder_revision
from zcp_core.backends.http_util import continuation_span, retry_delay, split_base_url
from zcp_core.backends.openai_api import OpenAIBackend
from zcp_core.backends.opening import BoxOpening, box_opening, word_stop
from zcp_core.backends.spec import (
    DEFAULT_MODEL,
    ModelSpec,
    available_models,
    check_model,
    lab_model_path,
    load_backend,
    local_weights,
    parse_model_spec,
    vllm_available,
)
from zcp_core.backends.vllm_backend import VLLMBackend

__all__ = [
    "Backend", "Completion", "Constraint", "DEFAULT_MODEL", "GenerateRequest", "GenerateScore", "GenerateScoreRequest", "Message",
    "ModelSpec", "OpenAIBackend", "ResponseCache", "SamplingParams", "ScoreRequest", "StopAt", "TokenLogprobs",
    "TransformersBackend", "VLLMBackend", "available_models", "balanced_close", "box_opening", "word_stop", "BoxOpening", "BRACE_STOPS", "open_braces", "stop_depth", "cache_dir", "chat",
    "continuation_span", "converted_dir", "ensure_converted", "generate_and_score",
    "check_model", "folder_revision", "gguf_path", "lab_model_path", "load_backend", "local_weights", "parse_model_spec",
    "retry_delay", "split_base_url", "vllm_available", "allowed_token_ids", "number_token_ok",
]
