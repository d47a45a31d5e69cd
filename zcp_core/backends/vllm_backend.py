"""The vLLM backend (GPU, optional extra): offline ``vllm.LLM``.

vLLM is imported only when a :class:`VLLMBackend` is built, so this module
imports on any machine. Prompts follow the transformers backend exactly: the
chat template is rendered with the model's tokenizer (``enable_thinking``
when the template knows it), the prefill is appended as text, and the prompt
goes to the engine as token ids tokenized without special tokens (the
template already holds any BOS). Scoring uses ``prompt_logprobs`` over the
jointly tokenized context + continuation, keeping the tokens that end past
the context. Each request carries its own seed, so sampled outputs do not
depend on batch composition.

``stop_at="balanced_brace"``: the engine stops at ``}`` (kept in the text);
rows whose box is not yet balanced are continued from the text so far with
the remaining budget, in batched rounds, until balanced or out of budget.
A ``constraint`` becomes vLLM's ``allowed_token_ids`` (the list from
:func:`~zcp_core.backends.constraints.allowed_token_ids`, EOS included, built
once per backend); vLLM applies it to sampling only, so prompt logprobs stay
unmasked.
``generate_score`` scores first, then generates: with vLLM's automatic prefix
caching (on by default in the V1 engine) the generation reuses the prompt's
cached key-value blocks, so the prompt is prefilled once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Sequence

from zcp_core.backends.base import (
    BRACE_STOPS,
    Completion,
    Constraint,
    GenerateRequest,
    GenerateScore,
    GenerateScoreRequest,
    Message,
    ScoreRequest,
    TokenLogprobs,
    balanced_close,
    request_key,
    stop_depth,
)
from zcp_core.backends.cache import ResponseCache, cached_batch, cached_pairs


class VLLMBackend:
    """Batch generation and scoring with vLLM's offline engine.

    Args:
        model: Local folder or hub name (hub names need the weights already cached offline).
        cache: Response cache; ``None`` disables caching.
        revision: Weight fingerprint (from the folder when local, else ``hub:NAME``).
        **engine_kwargs: Passed to ``vllm.LLM`` (``dtype``, ``gpu_memory_utilization``, ``max_model_len``...).
    """

    name = "vllm"
    supports_constraints = True

    def __init__(self, model: str, cache: ResponseCache | None = None, revision: str | None = None,
                 **engine_kwargs: Any):
        from vllm import LLM

        from zcp_core.backends.hf import folder_revision

        self.model_id = str(model)
        self.cache = cache
        if revision is None:
            revision = (folder_revision(model) if Path(model).is_dir()
                        else f"hub:{model}@{engine_kwargs.get('revision') or 'default'}")
        self.revision = revision
        self.llm = LLM(model=str(model), **engine_kwargs)
        self.tokenizer = self.llm.get_tokenizer()
        tmpl = getattr(self.tokenizer, "chat_template", None) or ""
        self._thinking_kw = "enable_thinking" in tmpl
        eos = {getattr(self.tokenizer, "eos_token_id", None)}
        self._eos = {t for t in eos if t is not None}
        self._allowed: dict[str, list[int]] = {}

    @property
    def supports_logprobs(self) -> bool:
        """vLLM returns prompt logprobs."""
        return True

    # ---- rendering (same rules as the transformers backend) ---------------------------------
    def render_messages(self, messages: Sequence[Message], thinking: str = "auto") -> str:
        """Apply the chat template with a generation prompt, honouring ``thinking``."""
        msgs = [{"role": m.role, "content": m.content} for m in messages]
        if not getattr(self.tokenizer, "chat_template", None):
            return "".join(f"{m['role']}: {m['content']}\n" for m in msgs) + "assistant: "
        kwargs: dict[str, Any] = {}
        if thinking != "auto" and self._thinking_kw:
            kwargs["enable_thinking"] = thinking == "on"
        return str(self.tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True, **kwargs))

    def render(self, request: GenerateRequest | ScoreRequest) -> str:
        """The exact prompt text: template (or raw prompt) plus prefill."""
        base = request.prompt if request.messages is None else self.render_messages(request.messages, request.thinking)
        return (base or "") + request.prefill

    def _ids(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False).input_ids)

    # ---- generation ------------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerateRequest], progress: bool = False) -> list[Completion]:
        """Generate one completion per request, in order (cached)."""
        from zcp_core.backends.hf import _completion

        keys = [request_key("generate", self.name, self.model_id, self.revision, r) for r in requests]
        return cached_batch(self.cache, keys, list(requests), lambda rs: self._generate_uncached(rs, progress),
                            _completion, chunk=1024, progress="generate" if progress else None)

    def _generate_uncached(self, requests: list[GenerateRequest], progress: bool = False) -> list[Completion]:
        out: list[Completion] = [Completion("", 0, "length") for _ in requests]
        todo = [i for i, r in enumerate(requests) if r.params.max_new_tokens > 0]  # vLLM needs max_tokens >= 1
        texts = {i: "" for i in todo}
        spent = {i: 0 for i in todo}
        while todo:
            results = self.llm.generate([{"prompt_token_ids": self._ids(self.render(requests[i]) + texts[i])}
                                         for i in todo],
                                        sampling_params=[self._params(requests[i], spent[i]) for i in todo],
                                        use_tqdm=progress)
            again = []
            for i, res in zip(todo, results):
                c = self._completion(requests[i], res.outputs[0])
                texts[i] += c.text
                spent[i] += c.n_tokens
                out[i] = Completion(texts[i], spent[i], c.finish_reason, c.tokens, c.logprobs, c.stop_reason)
                if c.stop_reason == "}" and balanced_close(texts[i], stop_depth(requests[i])) != len(texts[i]):
                    if spent[i] < requests[i].params.max_new_tokens and c.n_tokens:
                        again.append(i)  # a nested group closed, not the box: continue from the text so far
                    else:
                        out[i] = Completion(texts[i], spent[i], "length", c.tokens, c.logprobs)
            todo = again
        return out

    def _params(self, r: GenerateRequest, spent: int) -> Any:
        from vllm import SamplingParams as VSP

        p = r.params
        stop = list(p.stop) + (["}"] if p.stop_at in BRACE_STOPS else [])
        return VSP(n=1, max_tokens=p.max_new_tokens - spent, temperature=max(p.temperature, 0.0), top_p=p.top_p,
                   top_k=p.top_k if p.top_k > 0 else -1, seed=None if p.greedy else p.seed, stop=stop or None,
                   include_stop_str_in_output=p.stop_at in BRACE_STOPS, logprobs=0 if r.logprobs else None,
                   allowed_token_ids=self._allowed_ids(p.constraint))

    def _allowed_ids(self, constraint: Constraint) -> list[int] | None:
        """vLLM's ``allowed_token_ids`` for a constraint (None: every token), built once per constraint."""
        if constraint == "none":
            return None
        if constraint not in self._allowed:
            from zcp_core.backends.constraints import allowed_token_ids

            self._allowed[constraint] = sorted(set(allowed_token_ids(self.tokenizer, constraint)) | self._eos)
        return self._allowed[constraint]

    def _completion(self, r: GenerateRequest, o: Any) -> Completion:
        ids = list(o.token_ids)
        finish: Literal["stop", "length"] = "length" if o.finish_reason == "length" else "stop"
        # Like the transformers backend, the EOS token is not part of the completion.
        if ids and ids[-1] in self._eos:
            ids = ids[:-1]
        toks = lps = None
        if r.logprobs:
            toks = tuple(self.tokenizer.decode([t]) for t in ids)
            if o.logprobs is not None:
                lps = tuple(float(step[t].logprob) for step, t in zip(o.logprobs, ids))
        reason = getattr(o, "stop_reason", None)
        return Completion(text=o.text, n_tokens=len(ids), finish_reason=finish, tokens=toks, logprobs=lps,
                          stop_reason=reason if isinstance(reason, str) and finish == "stop" else None)

    # ---- generation and scoring together -------------------------------------------------------
    def generate_score(self, requests: Sequence[GenerateScoreRequest], progress: bool = False) -> list[GenerateScore]:
        """Each request's completion and scored continuation, in order: scoring first, so that the
        generation finds the prompt in vLLM's prefix cache (cached under the plain keys)."""
        from zcp_core.backends.hf import _completion, _logprobs

        def compute(rs: list[GenerateScoreRequest]) -> list[tuple[Completion, TokenLogprobs]]:
            scores = self._score_uncached([r.score for r in rs], progress)
            return list(zip(self._generate_uncached([r.generate for r in rs], progress), scores))

        keys = [(request_key("generate", self.name, self.model_id, self.revision, r.generate),
                 request_key("score", self.name, self.model_id, self.revision, r.score)) for r in requests]
        pairs = cached_pairs(self.cache, keys, list(requests), compute, (_completion, _logprobs), chunk=1024,
                             progress="answer" if progress else None)
        return [GenerateScore(c, lp) for c, lp in pairs]

    # ---- scoring ---------------------------------------------------------------------------
    def score(self, requests: Sequence[ScoreRequest], progress: bool = False) -> list[TokenLogprobs]:
        """Teacher-forced logprobs of each continuation via ``prompt_logprobs``, in order (cached)."""
        from zcp_core.backends.hf import _logprobs

        keys = [request_key("score", self.name, self.model_id, self.revision, r) for r in requests]
        return cached_batch(self.cache, keys, list(requests), lambda rs: self._score_uncached(rs, progress),
                            _logprobs, chunk=1024, progress="score" if progress else None)

    def _encode_scored(self, r: ScoreRequest) -> tuple[list[int], int]:
        """Joint token ids of context+continuation and the first continuation token (as in hf.py)."""
        context = self.render(r)
        enc = self.tokenizer(context + r.continuation, add_special_tokens=False, return_offsets_mapping=True)
        start = next(k for k, (_, e) in enumerate(enc["offset_mapping"]) if e > len(context))
        return list(enc["input_ids"]), max(start, 1)

    def _score_uncached(self, requests: list[ScoreRequest], progress: bool = False) -> list[TokenLogprobs]:
        from vllm import SamplingParams as VSP

        encs = [self._encode_scored(r) for r in requests]
        params = VSP(n=1, max_tokens=1, temperature=0.0, prompt_logprobs=0)
        results = self.llm.generate([{"prompt_token_ids": ids} for ids, _ in encs], sampling_params=params,
                                    use_tqdm=progress)
        out = []
        for (ids, start), res in zip(encs, results):
            plp = res.prompt_logprobs  # [None, {token_id: Logprob}, ...], one entry per prompt token
            vals = [float(plp[k][ids[k]].logprob) for k in range(start, len(ids))]
            toks = tuple(self.tokenizer.decode([t]) for t in ids[start:])
            out.append(TokenLogprobs(tokens=toks, logprobs=tuple(vals)))
        return out
