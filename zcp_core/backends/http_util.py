"""HTTP helpers of the OpenAI-compatible client: URLs, echoed-token spans, retries and error messages."""

from __future__ import annotations

import random
from typing import Any, Literal, Sequence
from urllib.parse import urlparse

from zcp_core.errors import ZcpError


def split_base_url(base_url: str) -> tuple[str, str]:
    """The API base (ending in ``/v1`` for bare hosts) and the server root (where ``/tokenize`` lives)."""
    url = base_url.rstrip("/")
    path = urlparse(url).path
    if path in ("", "/"):
        return url + "/v1", url
    if path.endswith("/v1"):
        return url, url[: -len("/v1")]
    return url, url


def continuation_span(tokens: Sequence[str], continuation: str) -> int:
    """Index of the first continuation token among echoed prompt tokens.

    A token belongs to the continuation when it ends past the context. Counting
    from the end (the continuation is the text's suffix) keeps this exact even
    when a server's per-token strings mis-measure multi-byte characters earlier
    in the context. The first token never counts, as in the transformers backend.
    """
    tail = 0
    start = len(tokens)
    for k in range(len(tokens) - 1, -1, -1):
        if tail >= len(continuation):
            break
        start = k
        tail += len(tokens[k])
    return max(start, 1)


def retry_delay(exc: BaseException, attempt: int, backoff_s: float) -> float | None:
    """Seconds to wait before retrying after ``exc``, or ``None`` when it is not retryable."""
    import httpx
    import openai

    status, headers = None, None
    if isinstance(exc, openai.APIStatusError):
        status, headers = exc.status_code, exc.response.headers
    elif isinstance(exc, httpx.HTTPStatusError):
        status, headers = exc.response.status_code, exc.response.headers  # type: ignore[assignment]
    elif not isinstance(exc, openai.APIConnectionError | httpx.TransportError):  # timeouts are both of these
        return None
    if status is not None and status != 429 and status < 500:
        return None
    delay = min(backoff_s * (2**attempt), 30.0)
    after = headers.get("retry-after") if headers is not None else None
    if after:
        try:
            delay = min(max(delay, float(after)), 60.0)
        except ValueError:
            pass
    return delay * (1.0 + 0.1 * random.random())  # jitter, so parallel clients do not retry in lockstep


class ServerRefused(ZcpError):
    """The server answered with an HTTP error (after any retries); the message is the server's."""


def as_zcp_error(e: BaseException, url: str, retries: int) -> ZcpError | None:
    """A user-facing error for a final HTTP or connection failure (``None``: not one of those)."""
    import httpx
    import openai

    if isinstance(e, openai.APIStatusError):
        return ServerRefused(f"{url}: HTTP {e.status_code}: {_message(e)}")
    if isinstance(e, httpx.HTTPStatusError):
        return ServerRefused(f"{url}: HTTP {e.response.status_code}: {e.response.text[:300]}")
    if isinstance(e, openai.APIConnectionError | httpx.TransportError):
        return ZcpError(f"cannot reach {url} ({type(e).__name__}, after {retries} retries)")
    return None


def finish_reason(reason: Any) -> Literal["stop", "length"]:
    """An OpenAI ``finish_reason`` as a :class:`~zcp_core.backends.base.Completion` one."""
    return "length" if reason == "length" else "stop"


def _message(e: Any) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(getattr(e, "message", "") or e)[:300]
