"""Request parsing and endpoint bodies of ``zcp serve`` (plain functions, testable without HTTP).

Each ``*_response`` function takes the backend (and the batcher that feeds
it; its ``lock`` serialises tokenizer use with the backend's own, since fast
tokenizers are not safe to share across threads) plus the decoded JSON body, and returns the JSON answer in OpenAI's or
vLLM's shape; :class:`ApiError` becomes an ``{"error": ...}`` reply.

zcp extensions (the zcp client sends them only to ``zcp serve``): ``stop_at: "balanced_brace"`` stops at
the ``}`` balancing the first brace group; ``constraint: "number"`` lets decoding pick only number tokens
(``SamplingParams.constraint``); on ``/v1/completions``, ``zcp_score: {"prompt", "continuation"}`` also
scores the continuation after that prompt in the generating backend call (one shared prefill on
transformers), returned as the choice's ``zcp_score: {"tokens", "logprobs", "available", "reason"}``.
Choices carry vLLM's ``stop_reason``.
"""

from __future__ import annotations

import random
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, get_args

from zcp_core.backends import (
    Completion,
    Constraint,
    GenerateRequest,
    GenerateScoreRequest,
    Message,
    SamplingParams,
    ScoreRequest,
    StopAt,
)

if TYPE_CHECKING:
    from zcp_core.serve.batcher import Batcher

@dataclass(frozen=True)
class ServerConfig:
    """How the server presents and batches.

    Attributes:
        served_model_name: The model name clients must send (and ``/v1/models`` lists).
        max_batch: Most requests handed to the backend in one call.
        batch_wait_ms: How long the worker waits for more requests to batch.
    """

    served_model_name: str
    max_batch: int = 16
    batch_wait_ms: float = 5.0


class ApiError(Exception):
    """An error returned to the client in OpenAI's ``{"error": {...}}`` shape."""

    def __init__(self, status: int, message: str, kind: str = "BadRequestError"):
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind


# ---- request parsing -------------------------------------------------------------------------
def _content_text(content: Any) -> str:
    """Message content as text: a string, or OpenAI's list of ``{"type": "text"}`` parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        if len(parts) != len(content):
            raise ApiError(400, "only text content parts are supported")
        return "".join(parts)
    raise ApiError(400, f"unsupported message content type {type(content).__name__}")


def parse_messages(raw: Any) -> list[Message]:
    """OpenAI chat messages as :class:`Message` records (``developer`` counts as ``system``)."""
    if not isinstance(raw, list) or not raw:
        raise ApiError(400, "'messages' must be a non-empty list")
    out = []
    for i, m in enumerate(raw):
        role = m.get("role") if isinstance(m, dict) else None
        role = "system" if role == "developer" else role
        if role not in ("system", "user", "assistant"):
            raise ApiError(400, f"messages[{i}]: unsupported role {role!r} (system, user, assistant)")
        out.append(Message(role, _content_text(m.get("content"))))  # type: ignore[arg-type]
    return out


def thinking_of(body: dict[str, Any]) -> Literal["auto", "on", "off"]:
    """The thinking mode that ``chat_template_kwargs.enable_thinking`` asks for."""
    kwargs = body.get("chat_template_kwargs") or {}
    if "enable_thinking" not in kwargs:
        return "auto"
    return "on" if kwargs["enable_thinking"] else "off"


@dataclass(frozen=True)
class ChatPrompt:
    """A chat request resolved to backend terms: messages plus prefill, or an already rendered prompt."""

    messages: tuple[Message, ...] | None
    prompt: str | None
    prefill: str
    thinking: Literal["auto", "on", "off"]


def resolve_chat(backend: Any, body: dict[str, Any]) -> ChatPrompt:
    """Map vLLM's template options onto the backend's messages + prefill convention.

    ``continue_final_message`` turns a final assistant message into a prefill
    (the backend renders the generation prompt, then appends it).
    ``add_generation_prompt=False`` without it renders the bare conversation,
    which needs the backend's tokenizer.
    """
    msgs = parse_messages(body.get("messages"))
    thinking = thinking_of(body)
    cont = bool(body.get("continue_final_message", False))
    agp = bool(body.get("add_generation_prompt", True))
    if cont:
        if agp and "add_generation_prompt" in body:
            raise ApiError(400, "continue_final_message and add_generation_prompt cannot both be true")
        if msgs[-1].role != "assistant":
            raise ApiError(400, "continue_final_message needs an assistant message last")
        return ChatPrompt(tuple(msgs[:-1]), None, msgs[-1].content, thinking)
    if agp:
        return ChatPrompt(tuple(msgs), None, "", thinking)
    tok = _tokenizer(backend)
    kwargs = {"enable_thinking": thinking == "on"} if thinking != "auto" else {}
    text = tok.apply_chat_template([{"role": m.role, "content": m.content} for m in msgs], tokenize=False,
                                   add_generation_prompt=False, **kwargs)
    return ChatPrompt(None, str(text), "", thinking)


def sampling_params(body: dict[str, Any], default_max: int) -> SamplingParams:
    """Sampling fields of a request body as :class:`SamplingParams`."""
    n = body.get("n", 1)
    if n not in (1, None):
        raise ApiError(400, "only n=1 is supported; send one request per sample (with its own seed)")
    max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
    max_tokens = default_max if max_tokens is None else int(max_tokens)
    if max_tokens < 0:
        raise ApiError(400, "max_tokens must be >= 0")
    temperature = float(body["temperature"]) if body.get("temperature") is not None else 1.0
    stop = body.get("stop") or ()
    stop = (stop,) if isinstance(stop, str) else tuple(stop)
    seed = body.get("seed")
    if seed is None:
        # No seed: a fresh draw per request, as OpenAI servers do.
        seed = random.SystemRandom().randrange(2**31) if temperature > 0 else 0
    top_k = body.get("top_k")
    stop_at: Any = body.get("stop_at") or "eos"
    constraint: Any = body.get("constraint") or "none"
    for name, value, kind in (("stop_at", stop_at, StopAt), ("constraint", constraint, Constraint)):
        if value not in get_args(kind):
            raise ApiError(400, f"{name} must be one of {get_args(kind)}, got {value!r}")
    return SamplingParams(
        max_new_tokens=max_tokens, temperature=temperature,
        top_p=float(body["top_p"]) if body.get("top_p") is not None else 1.0,
        top_k=int(top_k) if top_k is not None and int(top_k) > 0 else 0, seed=int(seed), stop=stop,
        stop_at=stop_at, constraint=constraint,
    )


def _tokenizer(backend: Any) -> Any:
    tok = getattr(backend, "tokenizer", None)
    if tok is None:
        raise ApiError(400, f"the {getattr(backend, 'name', '?')} backend exposes no tokenizer for this request")
    return tok


def token_strings(tok: Any, ids: list[int]) -> list[str]:
    """Per-token text that concatenates back to the decoded text exactly.

    A token ending inside a multi-byte character gets ``""`` and the character
    goes to the token that completes it, so offsets built from these strings
    are true character offsets (as vLLM's incremental detokenizer does).
    """
    out, prev = [], ""
    for k in range(len(ids)):
        cur = tok.decode(ids[: k + 1], skip_special_tokens=False, clean_up_tokenization_spaces=False)
        if cur.endswith("\ufffd") and k + 1 < len(ids):
            out.append("")
            continue
        out.append(cur[len(prev):])
        prev = cur
    return out


def _offsets(tokens: list[str], start: int) -> list[int]:
    offs, pos = [], start
    for t in tokens:
        offs.append(pos)
        pos += len(t)
    return offs


def _echo_logprobs(batcher: Batcher, backend: Any, prompts: list[str]) -> list[dict[str, list[Any]]]:
    """Prompt-token logprobs (first token ``None``), by scoring each prompt after an empty context."""
    tok = _tokenizer(backend)
    if not backend.supports_logprobs:
        raise ApiError(400, f"the {backend.name} backend cannot return prompt logprobs")
    todo = [i for i, p in enumerate(prompts) if p]
    scored = batcher.run("score", [ScoreRequest(prompt="", continuation=prompts[i]) for i in todo])
    out: list[dict[str, list[Any]]] = [{"tokens": [], "token_logprobs": []} for _ in prompts]
    for i, sc in zip(todo, scored):
        with batcher.lock:
            ids = tok(prompts[i], add_special_tokens=False).input_ids
            strs = token_strings(tok, ids)
        lps: list[float | None] = [None, *sc.logprobs]
        if not sc.available or len(lps) != len(ids):
            raise ApiError(500, f"prompt scoring returned {len(lps)} values for {len(ids)} tokens")
        out[i] = {"tokens": strs, "token_logprobs": lps}
    return out


def _n_prompt_tokens(batcher: Batcher, backend: Any, text: str) -> int:
    tok = getattr(backend, "tokenizer", None)
    with batcher.lock:
        return len(tok(text, add_special_tokens=False).input_ids) if tok is not None else 0


def top_alternatives(batcher: Batcher, backend: Any, context: str, continuation: str, k: int
                     ) -> list[dict[str, float]] | None:
    """The ``k`` most likely tokens (text -> logprob) at each continuation position.

    One forward pass over the jointly tokenized text, as in scoring. Needs a
    backend with ``model`` and ``tokenizer`` (transformers); ``None`` otherwise,
    and the reply then carries only the chosen tokens.
    """
    model, tok = getattr(backend, "model", None), getattr(backend, "tokenizer", None)
    if model is None or tok is None or k <= 0 or not continuation:
        return None
    import torch

    with batcher.lock:
        enc = tok(context + continuation, add_special_tokens=False, return_offsets_mapping=True)
        ids = list(enc["input_ids"])
        start = max(next((j for j, (_, e) in enumerate(enc["offset_mapping"]) if e > len(context)), len(ids)), 1)
        if start >= len(ids):
            return []
        device = next(model.parameters()).device
        with torch.inference_mode():
            logits = model(input_ids=torch.tensor([ids], device=device)).logits[0, start - 1 : len(ids) - 1]
        top = torch.log_softmax(logits.float(), -1).topk(min(k, logits.shape[-1]))
        return [{tok.decode([int(i)]): float(v) for v, i in zip(vals, idx)}
                for vals, idx in zip(top.values.cpu(), top.indices.cpu())]


def _with_chosen(alts: list[dict[str, float]] | None, toks: list[str], lps: list[Any]) -> list[Any]:
    """vLLM's ``top_logprobs``: each position's alternatives plus the chosen token (``None`` where unknown)."""
    if alts is None or len(alts) != len(toks):
        alts = [{} for _ in toks]
    return [None if v is None else {**a, t: v} for a, t, v in zip(alts, toks, lps)]


# ---- endpoint bodies (plain functions of the backend, testable without HTTP) -------------------
def models_response(backend: Any, cfg: ServerConfig) -> dict[str, Any]:
    """``GET /v1/models``; ``revision`` is a zcp extension (the backend's weight fingerprint)."""
    entry = {"id": cfg.served_model_name, "object": "model", "created": int(time.time()), "owned_by": "zcp",
             "root": str(backend.model_id), "revision": str(backend.revision)}
    return {"object": "list", "data": [entry]}


def chat_response(batcher: Batcher, backend: Any, cfg: ServerConfig, body: dict[str, Any]) -> dict[str, Any]:
    """``POST /v1/chat/completions``."""
    cp = resolve_chat(backend, body)
    params = sampling_params(body, default_max=256)
    want_lp = bool(body.get("logprobs", False))
    req = GenerateRequest(messages=cp.messages, prompt=cp.prompt, prefill=cp.prefill, params=params,
                          thinking=cp.thinking, logprobs=want_lp)
    (c,) = batcher.run("generate", [req]) if params.max_new_tokens > 0 else [Completion("", 0, "length")]
    with batcher.lock:
        rendered = backend.render(req)
    logprobs = None
    if want_lp and c.tokens is not None and c.logprobs is not None:
        n_top = int(body.get("top_logprobs") or 0)
        alts = top_alternatives(batcher, backend, rendered, c.text, n_top) if n_top else None
        if alts is None or len(alts) != len(c.tokens):
            alts = [{} for _ in c.tokens]
        logprobs = {"content": [
            {"token": t, "logprob": lp, "bytes": list(t.encode()),
             "top_logprobs": [{"token": a, "logprob": v, "bytes": list(a.encode())} for a, v in alt.items()]}
            for t, lp, alt in zip(c.tokens, c.logprobs, alts)]}
    n_prompt = _n_prompt_tokens(batcher, backend, rendered)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
        "model": cfg.served_model_name,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": c.text},
                     "logprobs": logprobs, "finish_reason": c.finish_reason, "stop_reason": c.stop_reason}],
        "usage": {"prompt_tokens": n_prompt, "completion_tokens": c.n_tokens, "total_tokens": n_prompt + c.n_tokens},
    }


def _prompts(batcher: Batcher, backend: Any, raw: Any) -> list[str]:
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list) and raw and all(isinstance(p, str) for p in raw):
        return list(raw)
    if isinstance(raw, list) and raw and all(isinstance(t, int) for t in raw):
        raw = [raw]
    if isinstance(raw, list) and raw and all(isinstance(p, list) for p in raw):
        tok = _tokenizer(backend)
        with batcher.lock:
            return [tok.decode(p, skip_special_tokens=False, clean_up_tokenization_spaces=False) for p in raw]
    raise ApiError(400, "'prompt' must be a string, a list of strings, or token ids")


def completions_response(batcher: Batcher, backend: Any, cfg: ServerConfig, body: dict[str, Any]) -> dict[str, Any]:
    """``POST /v1/completions`` (a list of prompts is one batch)."""
    prompts = _prompts(batcher, backend, body.get("prompt"))
    params = sampling_params(body, default_max=16)
    n_lp = body.get("logprobs")
    want_lp, echo = n_lp is not None, bool(body.get("echo", False))
    reqs = [GenerateRequest(prompt=p, params=params, logprobs=want_lp) for p in prompts]
    scored = _zcp_score(batcher, reqs, body.get("zcp_score"))
    if scored is not None:
        comps = [s.completion for s in scored]
    elif params.max_new_tokens > 0:
        comps = batcher.run("generate", reqs)
    else:
        comps = [Completion("", 0, "length", (), ()) for _ in prompts]
    echoed = _echo_logprobs(batcher, backend, prompts) if echo and want_lp else None
    choices = []
    for i, (p, c) in enumerate(zip(prompts, comps)):
        lp = None
        if want_lp:
            toks, lps = list(c.tokens or ()), list(c.logprobs or ())
            k = int(n_lp or 0)
            tops = _with_chosen(top_alternatives(batcher, backend, p, c.text, k) if k else None, toks, lps)
            start = len(p)
            if echoed is not None:
                e_toks, e_lps = echoed[i]["tokens"], echoed[i]["token_logprobs"]
                e_alts = top_alternatives(batcher, backend, "", p, k) if k else None
                tops = [None, *_with_chosen(e_alts, e_toks[1:], e_lps[1:])] + tops if e_toks else tops
                toks, lps, start = e_toks + toks, e_lps + lps, 0
            lp = {"tokens": toks, "token_logprobs": lps, "text_offset": _offsets(toks, start), "top_logprobs": tops}
            if c.tokens is not None and c.logprobs is None:
                lp = None  # the backend could not give generated-token logprobs; never fake them
        choices.append({"index": i, "text": (p if echo else "") + c.text, "logprobs": lp,
                        "finish_reason": c.finish_reason, "stop_reason": c.stop_reason})
        if scored is not None:
            s = scored[i].logprobs
            choices[-1]["zcp_score"] = {"tokens": list(s.tokens), "logprobs": list(s.logprobs),
                                        "available": s.available, "reason": s.reason}
    n_prompt = sum(_n_prompt_tokens(batcher, backend, p) for p in prompts)
    n_comp = sum(c.n_tokens for c in comps)
    return {
        "id": f"cmpl-{uuid.uuid4().hex}", "object": "text_completion", "created": int(time.time()),
        "model": cfg.served_model_name, "choices": choices,
        "usage": {"prompt_tokens": n_prompt, "completion_tokens": n_comp, "total_tokens": n_prompt + n_comp},
    }


def _zcp_score(batcher: Batcher, reqs: list[GenerateRequest], ext: Any) -> list[Any] | None:
    """The ``zcp_score`` extension: generate and score in one backend call (None when not asked for)."""
    if ext is None:
        return None
    if not isinstance(ext, dict) or not isinstance(ext.get("prompt"), str) or not ext.get("continuation"):
        raise ApiError(400, "zcp_score must be {'prompt': str, 'continuation': non-empty str}")
    if len(reqs) != 1 or reqs[0].params.max_new_tokens <= 0:
        raise ApiError(400, "zcp_score needs exactly one prompt and max_tokens >= 1")
    score = ScoreRequest(prompt=ext["prompt"], continuation=str(ext["continuation"]))
    return batcher.run("generate_score", [GenerateScoreRequest(reqs[0], score)])


def tokenize_response(batcher: Batcher, backend: Any, body: dict[str, Any]) -> dict[str, Any]:
    """``POST /tokenize`` in vLLM's shape, for ``{"prompt"}`` or ``{"messages", ...}``."""
    with batcher.lock:
        return _tokenize(backend, body)


def _tokenize(backend: Any, body: dict[str, Any]) -> dict[str, Any]:
    tok = _tokenizer(backend)
    if "messages" in body:
        cp = resolve_chat(backend, body)
        text = cp.prompt if cp.prompt is not None else backend.render(
            GenerateRequest(messages=cp.messages, prefill=cp.prefill, thinking=cp.thinking))
        special = bool(body.get("add_special_tokens", False))
    elif isinstance(body.get("prompt"), str):
        text, special = body["prompt"], bool(body.get("add_special_tokens", True))
    else:
        raise ApiError(400, "tokenize needs 'prompt' (a string) or 'messages'")
    ids = list(tok(text, add_special_tokens=special).input_ids)
    max_len = getattr(getattr(getattr(backend, "model", None), "config", None), "max_position_embeddings", None)
    out: dict[str, Any] = {"count": len(ids), "max_model_len": int(max_len or tok.model_max_length), "tokens": ids,
                           "token_strs": None}
    if body.get("return_token_strs"):
        out["token_strs"] = tok.convert_ids_to_tokens(ids)
    return out


def detokenize_response(batcher: Batcher, backend: Any, body: dict[str, Any]) -> dict[str, Any]:
    """``POST /detokenize``: token ids back to text (special tokens kept, no clean-up)."""
    ids = body.get("tokens")
    if not isinstance(ids, list) or not all(isinstance(t, int) for t in ids):
        raise ApiError(400, "detokenize needs 'tokens': a list of token ids")
    with batcher.lock:
        return {"prompt": _tokenizer(backend).decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)}
