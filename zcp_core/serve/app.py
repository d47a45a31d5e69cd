"""An OpenAI-compatible HTTP server over any local backend (``zcp serve``).

Endpoints: ``GET /v1/models``, ``POST /v1/chat/completions``,
``POST /v1/completions`` (``echo`` and ``logprobs``, ``max_tokens`` 0 allowed),
and vLLM's ``POST /tokenize`` / ``POST /detokenize`` so clients can render the
chat template and continue an assistant prefill exactly. vLLM's chat extensions
``continue_final_message``, ``add_generation_prompt`` and
``chat_template_kwargs`` (``enable_thinking``) are honoured.

Batching: every HTTP request is handed to one worker thread, which owns the
backend. The worker takes the first waiting request, collects whatever else
arrives within ``batch_wait_ms`` (up to ``max_batch``) and sends the lot to the
backend's batch ``generate``/``score`` in one call. Concurrent clients are thus
batched; a lone client is served one request at a time. Since backends keep
order and make per-request results independent of batch composition, a
batched answer equals the one a single request would get.

Sampling without a ``seed`` draws a random seed per request (as vLLM does);
with a seed, the output is reproducible. ``top_logprobs`` (chat) and
``logprobs=N`` (completions) alternatives come from one extra forward pass on
backends that expose their model (transformers); other backends return the
chosen tokens only.
"""
# No ``from __future__ import annotations`` here: FastAPI must see the real
# ``Request`` class on endpoints defined inside create_app, not a string.
import threading
import time
from typing import TYPE_CHECKING, Any

from zcp_core.serve.batcher import Batcher
from zcp_core.serve.endpoints import (
    ApiError,
    ServerConfig,
    chat_response,
    completions_response,
    detokenize_response,
    models_response,
    tokenize_response,
)

if TYPE_CHECKING:
    from fastapi import FastAPI

# ---- the app ---------------------------------------------------------------------------------
def create_app(backend: Any, config: ServerConfig) -> "FastAPI":
    """A FastAPI app serving ``backend`` under ``config``."""
    from contextlib import asynccontextmanager

    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse
    from starlette.concurrency import run_in_threadpool

    batcher = Batcher(backend, config.max_batch, config.batch_wait_ms / 1000.0)

    @asynccontextmanager
    async def lifespan(app: "FastAPI"):  # type: ignore[no-untyped-def]
        yield
        batcher.close()

    app = FastAPI(title="zcp serve", lifespan=lifespan)

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(status_code=exc.status,
                            content={"error": {"message": exc.message, "type": exc.kind, "code": exc.status}})

    @app.exception_handler(ValueError)
    async def _value_error(request: Request, exc: ValueError) -> JSONResponse:
        return JSONResponse(status_code=400, content={"error": {"message": str(exc), "type": "BadRequestError",
                                                                "code": 400}})

    async def _body(request: Request, check_model: bool = True) -> dict[str, Any]:
        try:
            body = await request.json()
        except Exception as e:
            raise ApiError(400, f"request body is not JSON: {e}") from e
        if not isinstance(body, dict):
            raise ApiError(400, "request body must be a JSON object")
        model = body.get("model")
        if check_model and model is not None and model != config.served_model_name:
            raise ApiError(404, f"the model {model!r} does not exist; this server serves {config.served_model_name!r}",
                           "NotFoundError")
        return body

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return models_response(backend, config)

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> dict[str, Any]:
        body = await _body(request)
        if body.get("stream"):
            raise ApiError(400, "streaming is not supported")
        return await run_in_threadpool(chat_response, batcher, backend, config, body)

    @app.post("/v1/completions")
    async def completions(request: Request) -> dict[str, Any]:
        body = await _body(request)
        if body.get("stream"):
            raise ApiError(400, "streaming is not supported")
        return await run_in_threadpool(completions_response, batcher, backend, config, body)

    @app.post("/tokenize")
    async def tokenize(request: Request) -> dict[str, Any]:
        return await run_in_threadpool(tokenize_response, batcher, backend, await _body(request))

    @app.post("/detokenize")
    async def detokenize(request: Request) -> dict[str, Any]:
        return await run_in_threadpool(detokenize_response, batcher, backend, await _body(request))

    return app


def serve(backend: Any, config: ServerConfig, host: str = "127.0.0.1", port: int = 8000) -> None:
    """Serve ``backend`` over HTTP until interrupted (binds 127.0.0.1 unless told otherwise)."""
    import uvicorn

    uvicorn.run(create_app(backend, config), host=host, port=port, log_level="warning")


def free_port(host: str = "127.0.0.1") -> int:
    """A port that is free on ``host`` right now."""
    import socket

    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


class BackgroundServer:
    """``zcp serve`` in a background thread of this process (tests, notebooks).

    Use as a context manager; ``url`` is the API base (``.../v1``).

    Args:
        backend: The backend to serve.
        config: Server settings.
        host: Address to bind (this machine only by default).
        port: Port; ``None`` picks a free one.
    """

    def __init__(self, backend: Any, config: ServerConfig, host: str = "127.0.0.1", port: int | None = None):
        import uvicorn

        self.host, self.port = host, port or free_port(host)
        self.url = f"http://{host}:{self.port}/v1"
        self._server = uvicorn.Server(uvicorn.Config(create_app(backend, config), host=host, port=self.port,
                                                     log_level="warning"))
        self._thread = threading.Thread(target=self._server.run, name="zcp-serve", daemon=True)

    def start(self, timeout: float = 30.0) -> "BackgroundServer":
        """Start serving and wait until the socket accepts requests."""
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"zcp serve did not start on {self.host}:{self.port}")
            time.sleep(0.02)
        return self

    def close(self) -> None:
        """Stop serving and wait for the thread."""
        self._server.should_exit = True
        self._thread.join(timeout=30)

    def __enter__(self) -> "BackgroundServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
