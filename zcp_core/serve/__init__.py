"""An OpenAI-compatible HTTP server over any local backend (``zcp serve``): a batching worker, endpoint bodies, the FastAPI app."""

from __future__ import annotations

from zcp_core.serve.app import BackgroundServer, create_app, free_port, serve
from zcp_core.serve.batcher import Batcher
from zcp_core.serve.endpoints import ApiError, ServerConfig, sampling_params, thinking_of, token_strings

__all__ = [
    "ApiError", "BackgroundServer", "Batcher", "ServerConfig", "create_app", "free_port", "sampling_params",
    "serve", "thinking_of", "token_strings",
]
