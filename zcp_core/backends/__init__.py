"""Model backends: one batch-in, batch-out protocol over transformers, vLLM and HTTP.

Import the concrete backends through :func:`zcp_core.backends.spec.load_backend`;
this package itself imports nothing heavy.
"""

from zcp_core.backends.base import (
    Backend,
    Completion,
    GenerateRequest,
    Message,
    SamplingParams,
    ScoreRequest,
    TokenLogprobs,
)

__all__ = [
    "Backend", "Completion", "GenerateRequest", "Message", "SamplingParams", "ScoreRequest", "TokenLogprobs",
]
