"""Answer generation of the OpenAI-compatible client: balanced-brace stops and generate-and-score.

Used by :class:`~zcp_core.backends.openai_api.OpenAIBackend` (``client``); see
its module docstring for the rules.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from zcp_core.backends.base import (
    Completion,
    GenerateRequest,
    GenerateScoreRequest,
    SamplingParams,
    TokenLogprobs,
    balanced_close,
    stop_depth,
)
from zcp_core.errors import ZcpError


def check_constraints(client: Any, params: Sequence[SamplingParams]) -> None:
    """Refuse decoding constraints unless the server is ``zcp serve``, the one that can mask tokens.

    Raises:
        ValueError: A request has ``constraint`` other than ``none`` and the server is not ``zcp serve``.
    """
    asked = sorted({p.constraint for p in params} - {"none"})
    if asked and not client.is_zcp_serve:
        raise ValueError(
            f"constraint={asked[0]!r} needs a server that masks tokens while decoding, and {client.base_url} "
            "is not `zcp serve` (its /v1/models entry is not owned_by 'zcp'). Serve the model with `zcp serve`, "
            "or load it in process (transformers or vLLM backend), or drop the constraint.")


def generate_balanced(client: Any, r: GenerateRequest) -> Completion:
    """Generate until the balanced ``}`` (see the module docstring), continuing after each unbalanced one."""
    p = r.params
    if r.messages is not None and not client.can_render:
        # Without the rendered prompt the text so far cannot be continued: one stop at "}".
        c, reported = client._chat_one(replace(r, params=replace(p, stop=(*p.stop, "}"), stop_at="eos")))
        return _closed_at_brace(c, reported) or c
    prompt = client.render(r)
    if client.is_zcp_serve:
        return client._complete(prompt, r, {"stop_at": p.stop_at})[0]  # type: ignore[no-any-return]
    text, spent = "", 0
    toks: list[str] | None = [] if r.logprobs else None
    lps: list[float] | None = [] if r.logprobs else None
    while True:
        part = replace(r, params=replace(p, max_new_tokens=p.max_new_tokens - spent, stop=(*p.stop, "}"),
                                         stop_at="eos"))
        c, reported, _ = client._complete(prompt + text, part)
        spent += c.n_tokens
        text += c.text
        toks = toks + list(c.tokens or ()) if toks is not None else None
        lps = lps + list(c.logprobs or ()) if lps is not None and c.logprobs is not None else None
        if _closed_at_brace(c, reported) is None:
            return replace(c, text=text, n_tokens=spent, tokens=_tuple(toks), logprobs=_tuple(lps))
        text += "}"  # servers cut the stop string off
        if balanced_close(text, stop_depth(r)) == len(text):
            return Completion(text, spent, "stop", _tuple(toks), _tuple(lps), "}")
        if spent >= p.max_new_tokens or c.n_tokens == 0:
            return Completion(text, spent, "length", _tuple(toks), _tuple(lps))


def generate_score_one(client: Any, r: GenerateScoreRequest) -> tuple[Completion, TokenLogprobs]:
    """One generate-and-score pair as one ``zcp serve`` request (the ``zcp_score`` extension)."""
    g, sc = r.generate, r.score
    if g.params.max_new_tokens == 0 or g.logprobs:
        return client._generate_one(g), client._score_one(sc)
    same_base = (g.messages, g.prompt, g.thinking) == (sc.messages, sc.prompt, sc.thinking)
    base = client.render(replace(g, prefill="")) if same_base else None  # one template render for both
    prompt = base + g.prefill if base is not None else client.render(g)
    context = base + sc.prefill if base is not None else client.render(sc)
    extra: dict[str, Any] = {"zcp_score": {"prompt": context, "continuation": sc.continuation}}
    if g.params.stop_at != "eos":
        extra["stop_at"] = g.params.stop_at
    comp, _, ch = client._complete(prompt, g, extra)
    got = getattr(ch, "zcp_score", None)
    if not isinstance(got, dict):
        raise ZcpError(f"{client.base_url} ignored the zcp_score extension")
    lp = TokenLogprobs(tuple(got.get("tokens") or ()), tuple(float(v) for v in got.get("logprobs") or ()),
                       available=bool(got.get("available", True)), reason=str(got.get("reason") or ""))
    return comp, lp


def _closed_at_brace(c: Completion, reported: bool) -> Completion | None:
    """``c`` with its ``}`` put back when the server stopped there (else None); servers cut stop strings off."""
    if c.finish_reason != "stop" or (c.stop_reason != "}" and reported):
        return None
    return replace(c, text=c.text + "}", stop_reason="}")


def _tuple(xs: list[Any] | None) -> tuple[Any, ...] | None:
    return tuple(xs) if xs is not None else None
