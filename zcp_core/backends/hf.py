"""The transformers backend (CPU or GPU).

Prompts are rendered with the model's chat template; a prefill continues
inside the assistant turn. Generation batches requests with equal decoding
parameters, sorted by length and left-padded (each batch as wide as its
longest row). Sampling draws each row from its own seeded generator (via a
logits processor), so a sampled output depends on its request and seed only,
not on which batch it landed in. ``stop_at="balanced_brace"`` is a stopping
criterion that counts braces per row with tensor lookups
(:mod:`zcp_core.backends.hf_braces`). A ``constraint`` is a logits mask on
the decoding steps (built once per backend and constraint,
:mod:`zcp_core.backends.constraints`); requests with different constraints
never share a batch of ``generate``, and scored logprobs are never masked.

:meth:`TransformersBackend.generate_score` folds a greedy generation and the
scoring of a continuation of the same prompt into one prefill: the forward
pass over prompt + continuation yields the (unmasked) logprobs and starts the
generation, which continues from its key-value cache; a constrained row's
argmax is taken on its masked logits.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
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
    request_size,
    stop_depth,
)
from zcp_core.backends.cache import ResponseCache, cached_batch, cached_pairs
from zcp_core.backends.opening import word_stop

Device = Literal["auto", "cpu", "cuda"]


def folder_revision(path: str | Path) -> str:
    """A cheap fingerprint of a model folder: config plus weight files' size and edges."""
    p = Path(path)
    h = hashlib.sha256()
    for f in sorted(p.iterdir()):
        if f.suffix in {".json", ".jinja"}:
            h.update(f.name.encode() + f.read_bytes())
        elif f.suffix in {".safetensors", ".bin", ".gguf"}:
            size = f.stat().st_size
            h.update(f"{f.name}:{size}".encode())
            with open(f, "rb") as fh:
                h.update(fh.read(1 << 20))
                fh.seek(max(0, size - (1 << 20)))
                h.update(fh.read(1 << 20))
    return h.hexdigest()[:16]


class TransformersBackend:
    """Batch generation and scoring with a local transformers model.

    Args:
        path: Local model folder.
        model_id: Name shown in runs (defaults to the path).
        revision: Weight fingerprint (computed from the folder when omitted).
        device: ``auto`` picks CUDA when present.
        batch_size: Requests per forward batch.
        cache: Response cache; ``None`` disables caching.
        dtype: ``float32`` (default on CPU) or ``bfloat16``/``float16``.
        answer_batch_size: Rows per greedy decoding batch of :meth:`generate_score` and :meth:`generate`
            (default ``4 * batch_size``):
            each decoding step reads every weight once, so more rows per step amortise it.
    """

    name = "transformers"
    supports_constraints = True

    def __init__(
        self,
        path: str | Path,
        model_id: str | None = None,
        revision: str | None = None,
        device: Device = "auto",
        batch_size: int = 16,
        cache: ResponseCache | None = None,
        dtype: str = "float32",
        answer_batch_size: int | None = None,
    ):
        import os

        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.path = Path(path)
        self.model_id = model_id or str(path)
        self.revision = revision or folder_revision(self.path)
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = device
        self.batch_size = batch_size
        self.answer_batch_size = answer_batch_size or 4 * batch_size
        self.cache = cache
        self.tokenizer = AutoTokenizer.from_pretrained(self.path)
        self.model = AutoModelForCausalLM.from_pretrained(self.path, dtype=getattr(torch, dtype))
        self.model.to(device)  # type: ignore[arg-type]
        self.model.eval()
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self._template_kwargs = set()
        tmpl = getattr(self.tokenizer, "chat_template", None) or ""
        if "enable_thinking" in tmpl:
            self._template_kwargs.add("enable_thinking")
        self._brace_table: Any = None
        self._banned: dict[str, Any] = {}

    def decode_ids(self, ids: Sequence[int]) -> str:
        """Generated token ids as text (special tokens skipped)."""
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=True))

    def _braces(self) -> Any:
        """The tokenizer's brace table (built on first use: one decode of the vocabulary)."""
        if self._brace_table is None:
            from zcp_core.backends.hf_braces import brace_table

            self._brace_table = brace_table(self.tokenizer, int(self.model.config.vocab_size))
        return self._brace_table

    def _banned_mask(self, constraint: Constraint) -> Any:
        """The tokens ``constraint`` forbids, as a bool vocabulary mask on the model's device (built on first use)."""
        if constraint not in self._banned:
            from zcp_core.backends.constraints import banned_mask

            eos = [t for t in (self.tokenizer.eos_token_id, self.tokenizer.pad_token_id) if t is not None]
            mask = banned_mask(self.tokenizer, int(self.model.config.vocab_size), constraint, eos)
            self._banned[constraint] = mask.to(self.device)
        return self._banned[constraint]

    @property
    def supports_logprobs(self) -> bool:
        """Transformers always exposes logits."""
        return True

    # ---- rendering -------------------------------------------------------------------------
    def render_messages(self, messages: Sequence[Message], thinking: str = "auto") -> str:
        """Apply the chat template with a generation prompt, honouring ``thinking``.

        With ``thinking="off"`` a template that knows ``enable_thinking`` renders
        its own closed empty block (e.g. ``<think>\\n\\n</think>``); nothing is
        hard-coded per model.
        """
        msgs = [{"role": m.role, "content": m.content} for m in messages]
        kwargs: dict[str, Any] = {}
        if thinking != "auto" and "enable_thinking" in self._template_kwargs:
            kwargs["enable_thinking"] = thinking == "on"
        if not getattr(self.tokenizer, "chat_template", None):
            return "".join(f"{m['role']}: {m['content']}\n" for m in msgs) + "assistant: "
        return str(self.tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True, **kwargs))

    def render(self, request: GenerateRequest | ScoreRequest) -> str:
        """The exact prompt text: template (or raw prompt) plus prefill."""
        base = request.prompt if request.messages is None else self.render_messages(request.messages, request.thinking)
        return (base or "") + request.prefill

    # ---- generation ------------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerateRequest], progress: bool = False) -> list[Completion]:
        """Generate one completion per request, in order (cached)."""
        keys = [request_key("generate", self.name, self.model_id, self.revision, r) for r in requests]
        return cached_batch(
            self.cache, keys, list(requests), self._generate_uncached, lambda d: _completion(d),
            chunk=max(self.batch_size * 4, 1), progress="generate" if progress else None, size=request_size,
        )

    def _generate_uncached(self, requests: list[GenerateRequest]) -> list[Completion]:
        from zcp_core.backends.hf_fused import foldable, prompt_row, run_fused

        out: list[Completion | None] = [None] * len(requests)
        # Greedy requests go through the shared-prefill decoder (see hf_fused); the rest through generate().
        fold = [i for i, r in enumerate(requests) if foldable(r)]
        for i, ans in zip(fold, run_fused(self, [prompt_row(self, requests[i]) for i in fold])):
            out[i] = ans.completion
        groups: dict[tuple[Any, ...], list[int]] = {}
        for i, r in enumerate(requests):
            if out[i] is not None:
                continue
            p = r.params
            groups.setdefault((p.max_new_tokens, p.greedy, p.stop, p.stop_at, p.constraint, r.logprobs), []).append(i)
        for idx in groups.values():
            texts = [self.render(requests[i]) for i in idx]
            lens = [len(self.tokenizer(t, add_special_tokens=False).input_ids) for t in texts]
            order = sorted(range(len(idx)), key=lambda j: -lens[j])
            for s in range(0, len(order), self.batch_size):
                part = order[s : s + self.batch_size]
                res = self._generate_batch([requests[idx[j]] for j in part], [texts[j] for j in part])
                for j, c in zip(part, res):
                    out[idx[j]] = c
        return [c for c in out if c is not None]

    def _generate_batch(self, reqs: list[GenerateRequest], texts: list[str]) -> list[Completion]:
        import torch
        from transformers import LogitsProcessorList

        tok = self.tokenizer
        tok.padding_side = "left"
        enc = tok(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(self.device)
        p0 = reqs[0].params
        constrained = p0.constraint != "none"
        # Constrained scores are masked: generated-token logprobs then come from the raw logits.
        kwargs: dict[str, Any] = dict(
            max_new_tokens=p0.max_new_tokens, do_sample=False, pad_token_id=tok.pad_token_id,
            return_dict_in_generate=True, output_scores=reqs[0].logprobs and not constrained,
            output_logits=reqs[0].logprobs and constrained,
        )
        # transformers warns about sampling-only fields on greedy configs; clear them.
        kwargs.update(temperature=None, top_p=None, top_k=None)
        processors = LogitsProcessorList()
        if constrained:
            from zcp_core.backends.constraints import mask_processor

            processors.append(mask_processor(self._banned_mask(p0.constraint)))
        if not p0.greedy:  # after the mask, so the sample is drawn from the allowed tokens
            from zcp_core.backends.hf_decode import RowSampler

            processors.append(RowSampler([r.params for r in reqs]))
        if processors:
            kwargs["logits_processor"] = processors
        if p0.stop:
            kwargs.update(stop_strings=list(p0.stop), tokenizer=tok)
        balanced = p0.stop_at in BRACE_STOPS
        if balanced:
            from transformers import StoppingCriteriaList

            from zcp_core.backends.hf_braces import brace_stopping_criteria

            kwargs["stopping_criteria"] = StoppingCriteriaList([
                brace_stopping_criteria(self._braces(), enc.input_ids.shape[1], [stop_depth(r) for r in reqs])])
        with torch.inference_mode():
            gen = self.model.generate(**enc, **kwargs)
        new = gen.sequences[:, enc.input_ids.shape[1] :]
        # Under sampling the processed scores are masked, so logprobs are
        # recomputed below by teacher forcing; under greedy they are exact.
        logp = None
        if reqs[0].logprobs and p0.greedy:
            raw = gen.logits if constrained else gen.scores
            logp = torch.stack([torch.log_softmax(s.float(), -1) for s in raw], 1)
        results = []
        eos = {tok.eos_token_id, tok.pad_token_id} - {None}
        for b, r in enumerate(reqs):
            ids = new[b].tolist()
            n = next((k for k, t in enumerate(ids) if t in eos), len(ids))
            finish: Literal["stop", "length"] = "stop" if n < len(ids) else "length"
            ids = ids[:n]
            # generate() does not stop at a worded box opening; the same token-level cut is applied after it.
            worded = word_stop(ids, self.decode_ids) if r.params.stop_at == "numeric_box" else None
            text = self.decode_ids(ids)
            reason = None
            if worded is not None and (balanced_close(self.decode_ids(ids[:worded]), stop_depth(r)) is None):
                ids, n, finish, reason = ids[:worded], worded, "stop", "word"
                text = self.decode_ids(ids)
            for st in r.params.stop:
                if st in text:
                    text, finish, reason = text[: text.index(st)], "stop", st
            cut = balanced_close(text, stop_depth(r)) if balanced else None
            if cut is not None:
                text, finish, reason = text[:cut], "stop", "}"
            toks = lps = None
            if r.logprobs:
                toks = tuple(str(tok.decode([t])) for t in ids)
                if logp is not None:
                    lps = tuple(float(logp[b, k, t]) for k, t in enumerate(ids))
            results.append(Completion(text=text, n_tokens=n, finish_reason=finish, tokens=toks, logprobs=lps,
                                      stop_reason=reason))
        if reqs[0].logprobs and not p0.greedy:
            results = self._rescore(reqs, results)
        return results

    def _rescore(self, reqs: list[GenerateRequest], results: list[Completion]) -> list[Completion]:
        todo = [i for i, c in enumerate(results) if c.text]
        scored = self._score_uncached([
            ScoreRequest(continuation=results[i].text, messages=reqs[i].messages, prompt=reqs[i].prompt,
                         prefill=reqs[i].prefill, thinking=reqs[i].thinking)
            for i in todo
        ])
        out = list(results)
        for i, sc in zip(todo, scored):
            out[i] = replace(out[i], tokens=sc.tokens, logprobs=sc.logprobs)
        return out

    # ---- scoring ---------------------------------------------------------------------------
    def score(self, requests: Sequence[ScoreRequest], progress: bool = False) -> list[TokenLogprobs]:
        """Teacher-forced logprobs of each continuation, in order (cached)."""
        keys = [request_key("score", self.name, self.model_id, self.revision, r) for r in requests]
        return cached_batch(
            self.cache, keys, list(requests), self._score_uncached, lambda d: _logprobs(d),
            chunk=max(self.batch_size * 4, 1), progress="score" if progress else None, size=request_size,
        )

    def _score_uncached(self, requests: list[ScoreRequest]) -> list[TokenLogprobs]:
        encs = [self._encode_scored(r) for r in requests]
        order = sorted(range(len(requests)), key=lambda i: -len(encs[i][0]))
        out: list[TokenLogprobs | None] = [None] * len(requests)
        for s in range(0, len(order), self.batch_size):
            part = order[s : s + self.batch_size]
            for i, lp in zip(part, self._score_batch([encs[i] for i in part])):
                out[i] = lp
        return [x for x in out if x is not None]

    def _encode_scored(self, r: ScoreRequest) -> tuple[list[int], int]:
        """Token ids of context+continuation, and the index of the first continuation token.

        The two are tokenized jointly (as an HTTP server with ``echo`` would),
        and the continuation starts at the first token ending past the context.
        """
        context = self.render(r)
        enc = self.tokenizer(context + r.continuation, add_special_tokens=False, return_offsets_mapping=True)
        start = next(k for k, (_, e) in enumerate(enc["offset_mapping"]) if e > len(context))
        return list(enc["input_ids"]), max(start, 1)

    def _score_batch(self, encs: list[tuple[list[int], int]]) -> list[TokenLogprobs]:
        from zcp_core.backends.hf_decode import score_batch

        if all(start >= len(ids) for ids, start in encs):  # nothing to score (one-token texts): no forward pass
            return [TokenLogprobs(tokens=(), logprobs=()) for _ in encs]
        vals = score_batch(self.model, [ids for ids, _ in encs], [start for _, start in encs],
                           self.tokenizer.pad_token_id, self.device)
        return [TokenLogprobs(tokens=self._token_strings(ids[start:]), logprobs=tuple(v))
                for (ids, start), v in zip(encs, vals)]

    def _token_strings(self, ids: Sequence[int]) -> tuple[str, ...]:
        return tuple(str(t) for t in self.tokenizer.batch_decode([[t] for t in ids]))

    # ---- generation and scoring with one prefill ---------------------------------------------
    def generate_score(self, requests: Sequence[GenerateScoreRequest], progress: bool = False) -> list[GenerateScore]:
        """Each request's completion and scored continuation, in order, sharing one prefill (cached).

        Greedy requests without stop strings or logprobs whose scored text
        extends the generation prompt are folded (see the module docstring);
        others are answered by separate batched ``generate`` and ``score``.
        Results are stored under the same cache keys as those separate calls.
        """
        keys = [(request_key("generate", self.name, self.model_id, self.revision, r.generate),
                 request_key("score", self.name, self.model_id, self.revision, r.score)) for r in requests]
        pairs = cached_pairs(self.cache, keys, list(requests), self._generate_score_uncached, (_completion, _logprobs),
                             chunk=max(self.answer_batch_size * 2, 1), progress="answer" if progress else None,
                             size=lambda r: request_size(r.score))
        return [GenerateScore(c, lp) for c, lp in pairs]

    def _generate_score_uncached(self, requests: list[GenerateScoreRequest]) -> list[tuple[Completion, TokenLogprobs]]:
        from zcp_core.backends.hf_fused import run_fused

        out: list[tuple[Completion, TokenLogprobs] | None] = [None] * len(requests)
        rows = {i: row for i, r in enumerate(requests) if (row := self._fused_row(r)) is not None}
        for i, ans in zip(rows, run_fused(self, list(rows.values()))):
            row = rows[i]
            scored = self._token_strings(row.seq_ids[row.score_start : row.score_end])
            out[i] = (ans.completion, TokenLogprobs(tokens=scored, logprobs=ans.score_logprobs))
        rest = [i for i in range(len(requests)) if i not in rows]
        if rest:
            comps = self._generate_uncached([requests[i].generate for i in rest])
            scores = self._score_uncached([requests[i].score for i in rest])
            for i, c, lp in zip(rest, comps, scores):
                out[i] = (c, lp)
        return [x for x in out if x is not None]

    def _fused_row(self, r: GenerateScoreRequest) -> Any:
        """The request in token ids for :func:`~zcp_core.backends.hf_decode.fused_batch`, or None when it cannot fold."""
        from zcp_core.backends.hf_decode import FusedRow

        p = r.generate.params
        if not p.greedy or p.stop or r.generate.logprobs or p.max_new_tokens <= 0:
            return None
        prompt = list(self.tokenizer(self.render(r.generate), add_special_tokens=False).input_ids)
        seq, start = self._encode_scored(r.score)
        if start < len(prompt) or seq[: len(prompt)] != prompt or start >= len(seq):
            return None  # the scored text does not extend the prompt token for token
        # The closing brace joins the draft when it tokenizes apart, so a correct boxed answer is verified whole.
        closed = self.tokenizer(self.render(r.score) + r.score.continuation + "}", add_special_tokens=False).input_ids
        draft_end = len(closed) if list(closed[: len(seq)]) == seq else len(seq)
        return FusedRow(prompt_ids=prompt, seq_ids=list(closed[:draft_end]) if draft_end > len(seq) else seq,
                        score_start=start, score_end=len(seq), budget=p.max_new_tokens,
                        balanced=p.stop_at in BRACE_STOPS, depth=stop_depth(r.generate),
                        constraint=p.constraint, word_stop=p.stop_at == "numeric_box")


def _completion(d: dict[str, Any]) -> Completion:
    return Completion(
        text=d["text"], n_tokens=d["n_tokens"], finish_reason=d["finish_reason"],
        tokens=tuple(d["tokens"]) if d.get("tokens") is not None else None,
        logprobs=tuple(d["logprobs"]) if d.get("logprobs") is not None else None,
        stop_reason=d.get("stop_reason"),
    )


def _logprobs(d: dict[str, Any]) -> TokenLogprobs:
    return TokenLogprobs(tokens=tuple(d["tokens"]), logprobs=tuple(d["logprobs"]),
                         available=d.get("available", True), reason=d.get("reason", ""))

