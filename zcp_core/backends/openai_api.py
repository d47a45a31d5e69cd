"""The OpenAI-compatible HTTP backend (vLLM servers, ``zcp serve``, hosted APIs).

Generation uses ``chat.completions`` for plain chat requests. A prefill or a
thinking control needs the exact prompt text: it is rendered through the
server's vLLM-style ``/tokenize`` + ``/detokenize`` and sent to
``/v1/completions``, so the assistant turn continues the prefill exactly.
Scoring sends context + continuation to ``/v1/completions`` with ``echo`` and
``logprobs`` and keeps the tokens that end past the context (the same joint
tokenization rule as the transformers backend). A server that cannot echo
logprobs yields ``TokenLogprobs(available=False)``, never zeros. A thinking
control on a server without ``/tokenize`` goes to chat as vLLM's
``chat_template_kwargs``; a prefill there raises :class:`BackendUnavailable`.

Balanced-brace stops (``SamplingParams.stop_at``): ``zcp serve`` (its
``/v1/models`` entry is ``owned_by: zcp``) stops on balance itself, given the
``stop_at`` extension field. Any other server gets ``stop: ["}"]``; while the
box is not yet balanced the client continues the completion from the text so
far (prompt + text, the remaining budget) until it is, or the budget runs out.
A server that reports no ``stop_reason`` (vLLM and ``zcp serve`` do) is taken
to have stopped at the ``}`` when it says ``stop``. A decoding ``constraint``
is sent (the ``constraint`` extension field) only to ``zcp serve``; any other
server cannot mask tokens, so a constrained request raises ``ValueError``.

``generate_score`` against ``zcp serve`` is one request per item (the
``zcp_score`` extension: the server folds generation and scoring into one
prefill); against other servers it is a batched generate, then a batched score
(a vLLM server's prefix cache then shares the prompt).

Cache keys use ``revision`` = ``server:MODEL`` (plus ``@REV`` when
``/v1/models`` reports one, as ``zcp serve`` does). It and the capability
probes (``/tokenize``, echo) are fetched once per instance, so even a fully
cached rerun contacts the server once.

Retries: 429, 5xx, timeouts and connection errors are retried with
exponential backoff (``Retry-After`` is honoured). The API key is read from an
environment variable and never logged or shown.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable, Sequence, TypeVar

from zcp_core.backends.base import (
    BRACE_STOPS,
    Completion,
    GenerateRequest,
    GenerateScore,
    GenerateScoreRequest,
    ScoreRequest,
    TokenLogprobs,
    request_key,
)
from zcp_core.backends.cache import ResponseCache, cached_batch, cached_pairs
from zcp_core.backends.http_util import (
    ServerRefused,
    as_zcp_error,
    continuation_span,
    finish_reason,
    retry_delay,
    split_base_url,
)
from zcp_core.errors import BackendUnavailable, ZcpError

T = TypeVar("T")
_UNREPORTED = object()  # a response without the field at all (not even null)


class OpenAIBackend:
    """A backend over an OpenAI-compatible server.

    Args:
        base_url: API URL, e.g. ``http://127.0.0.1:8000/v1`` (``/v1`` is added to a bare host).
        model: Model name the server serves.
        cache: Response cache; ``None`` disables caching.
        api_key_env: Environment variable holding the API key (local servers need none).
        timeout: Per-request timeout in seconds.
        max_retries: Retries after 429/5xx/timeouts, with exponential backoff.
        concurrency: Requests in flight at once (results keep the batch order).
        backoff_s: First retry delay; doubles each retry.
    """

    name = "openai"

    def __init__(self, base_url: str, model: str, cache: ResponseCache | None = None,
                 api_key_env: str = "OPENAI_API_KEY", timeout: float = 60.0, max_retries: int = 5,
                 concurrency: int = 4, backoff_s: float = 0.5):
        if not base_url:
            raise ZcpError("OpenAIBackend needs a base_url, e.g. http://127.0.0.1:8000/v1")
        self.base_url, self.root_url = split_base_url(base_url)
        self.model_id = model
        self.cache = cache
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max_retries
        self.concurrency = max(1, concurrency)
        self.backoff_s = backoff_s
        self._lock = threading.Lock()
        self._probed: dict[str, Any] = {}
        self._clients: tuple[Any, Any] | None = None

    def __repr__(self) -> str:
        return f"OpenAIBackend(base_url={self.base_url!r}, model={self.model_id!r})"

    # ---- connections and probes ------------------------------------------------------------
    def _client(self) -> tuple[Any, Any]:
        """The openai client and an httpx client for the server root, created once."""
        with self._lock:
            if self._clients is None:
                import httpx
                from openai import OpenAI

                key = os.environ.get(self.api_key_env) or "EMPTY"
                api = OpenAI(base_url=self.base_url, api_key=key, timeout=self.timeout, max_retries=0)
                raw = httpx.Client(base_url=self.root_url, timeout=self.timeout,
                                   headers={"Authorization": f"Bearer {key}"})
                self._clients = (api, raw)
            return self._clients

    def _retrying(self, fn: Callable[[], T]) -> T:
        """Call ``fn``, retrying 429/5xx/timeouts; HTTP and connection failures end as :class:`ZcpError`."""
        attempt = 0
        while True:
            try:
                return fn()
            except Exception as e:
                delay = retry_delay(e, attempt, self.backoff_s)
                if delay is None or attempt >= self.max_retries:
                    final = as_zcp_error(e, self.base_url, attempt)
                    if final is None:
                        raise
                    raise final from e
                attempt += 1
                time.sleep(delay)

    def _probe(self, name: str, fn: Callable[[], Any]) -> Any:
        """Run a capability probe once per backend instance."""
        with self._lock:
            if name in self._probed:
                return self._probed[name]
        value = fn()
        with self._lock:
            return self._probed.setdefault(name, value)

    def _post_root(self, path: str, body: dict[str, Any]) -> Any:
        """POST to the server root (vLLM's ``/tokenize``/``/detokenize``); returns the httpx response."""
        raw = self._client()[1]

        def call() -> Any:
            r = raw.post(path, json=body)
            if r.status_code == 429 or r.status_code >= 500:
                r.raise_for_status()
            return r

        return self._retrying(call)

    def _model_entry(self) -> dict[str, Any]:
        """The served model's ``/v1/models`` entry (empty when the server lists none), fetched once."""

        def fetch() -> dict[str, Any]:
            try:
                models = self._retrying(lambda: self._client()[0].models.list())
            except ServerRefused:  # hosted APIs may not list models; the name still keys the cache
                return {}
            entry = next((m for m in models.data if m.id == self.model_id), None)
            return {"revision": getattr(entry, "revision", None), "owned_by": getattr(entry, "owned_by", None)}

        return self._probe("model", fetch)  # type: ignore[no-any-return]

    @property
    def revision(self) -> str:
        """``server:MODEL``, plus the weight fingerprint when the server reports one."""
        rev = self._model_entry().get("revision")
        return f"server:{self.model_id}" + (f"@{rev}" if rev else "")

    @property
    def is_zcp_serve(self) -> bool:
        """Whether the server is ``zcp serve`` (honouring the ``stop_at``, ``constraint``, ``zcp_score`` fields)."""
        return self._model_entry().get("owned_by") == "zcp"

    @property
    def supports_constraints(self) -> bool:
        """Whether ``SamplingParams.constraint`` is honoured: only by ``zcp serve``."""
        return self.is_zcp_serve

    @property
    def can_render(self) -> bool:
        """Whether the server renders chat templates via ``/tokenize`` (vLLM, ``zcp serve``)."""

        def fetch() -> bool:
            r = self._post_root("/tokenize", {"model": self.model_id, "messages": [{"role": "user", "content": "hi"}]})
            return r.status_code == 200 and "tokens" in r.json()  # 404 and other refusals: cannot render

        return self._probe("render", fetch)

    @property
    def supports_logprobs(self) -> bool:
        """Whether the server echoes prompt logprobs (probed once with a tiny request)."""
        return self._echo_mode() is not None

    def _echo_mode(self) -> int | None:
        """``max_tokens`` that echo scoring works with (0, else 1 with the extra token dropped), or ``None``."""

        def fetch() -> int | None:
            for max_tokens in (0, 1):
                try:
                    lp = self._echo("Hello world", max_tokens)
                except ServerRefused:  # a refusal is the answer to the probe; unreachable servers still raise
                    continue
                if lp is not None and len(lp[0]) >= 2:
                    return max_tokens
            return None

        return self._probe("echo", fetch)

    # ---- rendering -------------------------------------------------------------------------
    def render(self, request: GenerateRequest | ScoreRequest) -> str:
        """The exact prompt text (server-rendered template, plus prefill)."""
        if request.messages is None:
            return (request.prompt or "") + request.prefill
        if not self.can_render:
            raise BackendUnavailable(
                f"{self.base_url} cannot render chat templates (no vLLM-style /tokenize endpoint), so an assistant "
                "prefill or thinking control cannot be honoured exactly; use a vLLM server or `zcp serve`")
        body: dict[str, Any] = {"model": self.model_id, "add_generation_prompt": True,
                                "messages": [{"role": m.role, "content": m.content} for m in request.messages]}
        if request.thinking != "auto":
            body["chat_template_kwargs"] = {"enable_thinking": request.thinking == "on"}
        ids = self._json(self._post_root("/tokenize", body))["tokens"]
        text = self._json(self._post_root("/detokenize", {"model": self.model_id, "tokens": ids}))["prompt"]
        return str(text) + request.prefill

    @staticmethod
    def _json(r: Any) -> Any:
        if r.status_code != 200:
            raise ZcpError(f"{r.request.url}: HTTP {r.status_code}: {r.text[:300]}")
        return r.json()

    # ---- generation ------------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerateRequest], progress: bool = False) -> list[Completion]:
        """One completion per request, in order (cached; requests run ``concurrency`` at a time)."""
        from zcp_core.backends.hf import _completion
        from zcp_core.backends.openai_answer import check_constraints

        check_constraints(self, [r.params for r in requests])
        keys = [request_key("generate", self.name, self.model_id, self.revision, r) for r in requests]

        return cached_batch(self.cache, keys, list(requests), lambda rs: self._map(self._generate_one, rs),
                            _completion, chunk=self.concurrency * 8, progress="generate" if progress else None)

    def _map(self, fn: Callable[[Any], T], items: list[Any]) -> list[T]:
        if len(items) <= 1 or self.concurrency == 1:
            return [fn(x) for x in items]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(self.concurrency, len(items))) as pool:
            return list(pool.map(fn, items))  # map keeps input order

    def _sampling(self, r: GenerateRequest) -> tuple[dict[str, Any], dict[str, Any]]:
        p = r.params
        kwargs: dict[str, Any] = {"model": self.model_id, "max_tokens": p.max_new_tokens,
                                  "temperature": p.temperature, "top_p": p.top_p, "seed": p.seed}
        if p.stop:
            kwargs["stop"] = list(p.stop)
        extra: dict[str, Any] = {"top_k": p.top_k} if p.top_k > 0 else {}
        if p.constraint != "none":  # only zcp serve gets here (check_constraints)
            extra["constraint"] = p.constraint
        return kwargs, extra

    def _generate_one(self, r: GenerateRequest) -> Completion:
        if r.params.max_new_tokens == 0:  # many servers refuse max_tokens=0; nothing to ask for anyway
            return Completion("", 0, "length", () if r.logprobs else None, () if r.logprobs else None)
        if r.params.stop_at in BRACE_STOPS:
            from zcp_core.backends.openai_answer import generate_balanced

            return generate_balanced(self, r)
        if r.messages is not None and not r.prefill and (r.thinking == "auto" or not self.can_render):
            return self._chat_one(r)[0]
        return self._complete(self.render(r), r)[0]

    def _chat_one(self, r: GenerateRequest) -> tuple[Completion, bool]:
        """A chat completion, and whether the server reported a ``stop_reason`` field."""
        kwargs, extra = self._sampling(r)
        api = self._client()[0]
        if r.thinking != "auto":
            extra["chat_template_kwargs"] = {"enable_thinking": r.thinking == "on"}
        msgs = [{"role": m.role, "content": m.content} for m in r.messages or ()]
        resp = self._call(lambda: api.chat.completions.create(
            messages=msgs, logprobs=r.logprobs, extra_body=extra or None, **kwargs))
        ch = resp.choices[0]
        toks = lps = None
        if r.logprobs and ch.logprobs is not None and ch.logprobs.content is not None:
            toks = tuple(c.token for c in ch.logprobs.content)
            lps = tuple(float(c.logprob) for c in ch.logprobs.content)
        n = resp.usage.completion_tokens if resp.usage else len(toks or ())
        reason = getattr(ch, "stop_reason", _UNREPORTED)
        return (Completion(ch.message.content or "", n, finish_reason(ch.finish_reason), toks, lps,
                           _stop_reason(reason)), reason is not _UNREPORTED)

    def _complete(self, prompt: str, r: GenerateRequest, extra_body: dict[str, Any] | None = None
                  ) -> tuple[Completion, bool, Any]:
        """A ``/v1/completions`` call on rendered text: the completion, whether ``stop_reason`` was reported,
        and the raw choice (for extension fields)."""
        kwargs, extra = self._sampling(r)
        extra.update(extra_body or {})
        if self.can_render:
            extra["add_special_tokens"] = False  # the rendered template already holds any BOS
        api = self._client()[0]
        resp = self._call(lambda: api.completions.create(
            prompt=prompt, logprobs=0 if r.logprobs else None, extra_body=extra or None, **kwargs))
        ch = resp.choices[0]
        toks = lps = None
        if r.logprobs and ch.logprobs is not None and ch.logprobs.tokens is not None:
            toks = tuple(ch.logprobs.tokens)
            if ch.logprobs.token_logprobs is not None:
                lps = tuple(float(x) for x in ch.logprobs.token_logprobs)
        n = resp.usage.completion_tokens if resp.usage else len(toks or ())
        reason = getattr(ch, "stop_reason", _UNREPORTED)
        comp = Completion(ch.text or "", n, finish_reason(ch.finish_reason), toks, lps, _stop_reason(reason))
        return comp, reason is not _UNREPORTED, ch

    # ---- generation and scoring together ---------------------------------------------------------
    def generate_score(self, requests: Sequence[GenerateScoreRequest], progress: bool = False) -> list[GenerateScore]:
        """Each request's completion and scored continuation, in order (cached under the plain keys).

        ``zcp serve`` folds each pair into one prefill (the ``zcp_score``
        extension); other servers get a batched generate, then a batched score.
        """
        from zcp_core.backends.openai_answer import check_constraints, generate_score_one

        check_constraints(self, [r.generate.params for r in requests])
        if not (self.is_zcp_serve and self.can_render and self.supports_logprobs):
            comps = self.generate([r.generate for r in requests], progress=progress)
            return [GenerateScore(c, lp) for c, lp in zip(comps, self.score([r.score for r in requests], progress))]
        from zcp_core.backends.hf import _completion, _logprobs

        keys = [(request_key("generate", self.name, self.model_id, self.revision, r.generate),
                 request_key("score", self.name, self.model_id, self.revision, r.score)) for r in requests]
        pairs = cached_pairs(self.cache, keys, list(requests),
                             lambda rs: self._map(lambda r: generate_score_one(self, r), rs),
                             (_completion, _logprobs), chunk=self.concurrency * 8,
                             progress="answer" if progress else None)
        return [GenerateScore(c, lp) for c, lp in pairs]

    def _call(self, fn: Callable[[], T]) -> T:
        """An API call with retries (see :meth:`_retrying`)."""
        return self._retrying(fn)

    # ---- scoring ---------------------------------------------------------------------------
    def score(self, requests: Sequence[ScoreRequest], progress: bool = False) -> list[TokenLogprobs]:
        """Teacher-forced logprobs via echo, in order; unavailable (not zero) where the server cannot."""
        if not self.supports_logprobs:
            why = f"{self.base_url} does not return prompt logprobs (completions with echo+logprobs)"
            return [TokenLogprobs((), (), available=False, reason=why) for _ in requests]
        # Chat contexts need the server to render the template; raw prompts never do.
        ok = [i for i, r in enumerate(requests) if r.messages is None or self.can_render]
        why = f"{self.base_url} cannot render chat templates (no /tokenize), so chat contexts cannot be scored"
        out = [TokenLogprobs((), (), available=False, reason=why) for _ in requests]
        todo = [requests[i] for i in ok]
        keys = [request_key("score", self.name, self.model_id, self.revision, r) for r in todo]
        from zcp_core.backends.hf import _logprobs

        done = cached_batch(self.cache, keys, todo, lambda rs: self._map(self._score_one, rs),
                            _logprobs, chunk=self.concurrency * 8, progress="score" if progress else None)
        for i, lp in zip(ok, done):
            out[i] = lp
        return out

    def _echo(self, text: str, max_tokens: int) -> tuple[list[str], list[float | None]] | None:
        """Echoed prompt tokens and logprobs for ``text`` (generated tokens dropped), or ``None``."""
        extra = {"add_special_tokens": False} if self.can_render else None
        api = self._client()[0]
        resp = self._call(lambda: api.completions.create(
            model=self.model_id, prompt=text, max_tokens=max_tokens, echo=True, logprobs=0, temperature=0.0,
            extra_body=extra))
        lp = resp.choices[0].logprobs
        if lp is None or not lp.tokens or lp.token_logprobs is None:
            return None
        toks, lps = list(lp.tokens), list(lp.token_logprobs)
        n_gen = (resp.usage.completion_tokens if resp.usage else max_tokens) if max_tokens else 0
        if n_gen:
            toks, lps = toks[:-n_gen], lps[:-n_gen]
        return toks, lps

    def _score_one(self, r: ScoreRequest) -> TokenLogprobs:
        context = self.render(r)
        got = self._echo(context + r.continuation, self._echo_mode() or 0)
        if got is None:
            return TokenLogprobs((), (), available=False, reason="the server returned no prompt logprobs")
        toks, lps = got
        start = continuation_span(toks, r.continuation)
        vals = lps[start:]
        if any(v is None for v in vals):
            return TokenLogprobs((), (), available=False, reason="the server returned a null prompt logprob")
        return TokenLogprobs(tokens=tuple(toks[start:]), logprobs=tuple(float(v) for v in vals))  # type: ignore[arg-type]


def _stop_reason(reason: Any) -> str | None:
    return reason if isinstance(reason, str) else None
