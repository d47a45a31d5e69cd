"""The transformers backend (CPU or GPU).

Prompts are rendered with the model's chat template; a prefill continues
inside the assistant turn. Generation batches requests with equal decoding
parameters, sorted by length and left-padded. Sampling draws each row from
its own seeded generator (via a logits processor), so a sampled output
depends on its request and seed only, not on which batch it landed in.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, Sequence

from zcp_core.backends.base import (
    Completion,
    GenerateRequest,
    Message,
    SamplingParams,
    ScoreRequest,
    TokenLogprobs,
    request_key,
)
from zcp_core.backends.cache import ResponseCache, cached_batch

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


class _RowSampler:
    """Logits processor that samples each row with its own generator.

    It leaves only the sampled token finite, so greedy decoding in
    ``generate`` then picks exactly that token.
    """

    def __init__(self, params: Sequence[SamplingParams]):
        import torch

        self.params = params
        self.gens = []
        for p in params:
            g = torch.Generator()
            g.manual_seed(int(p.seed))
            self.gens.append(g)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        out = torch.full_like(scores, float("-inf"))
        for i, p in enumerate(self.params):
            logits = scores[i].float() / max(p.temperature, 1e-6)
            if p.top_k > 0:
                kth = torch.topk(logits, min(p.top_k, logits.numel())).values[-1]
                logits = logits.masked_fill(logits < kth, float("-inf"))
            probs = torch.softmax(logits, dim=-1)
            if p.top_p < 1.0:
                sp, si = torch.sort(probs, descending=True)
                keep = torch.cumsum(sp, 0) - sp < p.top_p
                mask = torch.zeros_like(probs, dtype=torch.bool)
                mask[si[keep]] = True
                probs = torch.where(mask, probs, torch.zeros_like(probs))
                probs = probs / probs.sum()
            tok = int(torch.multinomial(probs.cpu(), 1, generator=self.gens[i]).item())
            out[i, tok] = 0.0
        return out


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
    """

    name = "transformers"

    def __init__(
        self,
        path: str | Path,
        model_id: str | None = None,
        revision: str | None = None,
        device: Device = "auto",
        batch_size: int = 16,
        cache: ResponseCache | None = None,
        dtype: str = "float32",
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
            chunk=max(self.batch_size * 4, 1), progress="generate" if progress else None,
        )

    def _generate_uncached(self, requests: list[GenerateRequest]) -> list[Completion]:
        out: list[Completion | None] = [None] * len(requests)
        groups: dict[tuple[Any, ...], list[int]] = {}
        for i, r in enumerate(requests):
            p = r.params
            groups.setdefault((p.max_new_tokens, p.greedy, p.stop, r.logprobs), []).append(i)
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
        kwargs: dict[str, Any] = dict(
            max_new_tokens=p0.max_new_tokens, do_sample=False, pad_token_id=tok.pad_token_id,
            return_dict_in_generate=True, output_scores=reqs[0].logprobs,
        )
        # transformers warns about sampling-only fields on greedy configs; clear them.
        kwargs.update(temperature=None, top_p=None, top_k=None)
        if not p0.greedy:
            kwargs["logits_processor"] = LogitsProcessorList([_RowSampler([r.params for r in reqs])])
        if p0.stop:
            kwargs.update(stop_strings=list(p0.stop), tokenizer=tok)
        with torch.inference_mode():
            gen = self.model.generate(**enc, **kwargs)
        new = gen.sequences[:, enc.input_ids.shape[1] :]
        # Under sampling the processed scores are masked, so logprobs are
        # recomputed below by teacher forcing; under greedy they are exact.
        logp = None
        if reqs[0].logprobs and p0.greedy:
            logp = torch.stack([torch.log_softmax(s.float(), -1) for s in gen.scores], 1)
        results = []
        eos = {tok.eos_token_id, tok.pad_token_id} - {None}
        for b, r in enumerate(reqs):
            ids = new[b].tolist()
            n = next((k for k, t in enumerate(ids) if t in eos), len(ids))
            finish: Literal["stop", "length"] = "stop" if n < len(ids) else "length"
            ids = ids[:n]
            text = str(tok.decode(ids, skip_special_tokens=True))
            for st in r.params.stop:
                if st in text:
                    text, finish = text[: text.index(st)], "stop"
            toks = lps = None
            if r.logprobs:
                toks = tuple(str(tok.decode([t])) for t in ids)
                if logp is not None:
                    lps = tuple(float(logp[b, k, t]) for k, t in enumerate(ids))
            results.append(Completion(text=text, n_tokens=n, finish_reason=finish, tokens=toks, logprobs=lps))
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
            chunk=max(self.batch_size * 4, 1), progress="score" if progress else None,
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
        import torch

        width = max(len(ids) for ids, _ in encs)
        pad = self.tokenizer.pad_token_id
        ids = torch.full((len(encs), width), pad, dtype=torch.long)
        mask = torch.zeros((len(encs), width), dtype=torch.long)
        for b, (seq, _) in enumerate(encs):
            ids[b, : len(seq)] = torch.tensor(seq)
            mask[b, : len(seq)] = 1
        # Only positions that predict a continuation token need the vocabulary
        # projection; on CPU the full [batch, width, vocab] logits cost more than
        # batching saves. ``logits_to_keep`` takes those positions (union over rows).
        need = sorted({k - 1 for seq, start in encs for k in range(start, len(seq))})
        col = {p: j for j, p in enumerate(need)}
        if not need:  # nothing to score (a one-token text): no forward pass needed
            return [TokenLogprobs(tokens=(), logprobs=()) for _ in encs]
        with torch.inference_mode():
            kwargs = dict(input_ids=ids.to(self.device), attention_mask=mask.to(self.device))
            try:
                logits = self.model(**kwargs, logits_to_keep=torch.tensor(need, dtype=torch.long, device=self.device)).logits
            except TypeError:  # a model class without logits_to_keep: project every position
                logits = self.model(**kwargs).logits
                col = {p: p for p in need}
        logp = torch.log_softmax(logits.float(), -1).cpu()
        out = []
        for b, (seq, start) in enumerate(encs):
            target = seq[start:]
            vals = [float(logp[b, col[k - 1], t]) for k, t in zip(range(start, len(seq)), target)]
            toks = tuple(str(self.tokenizer.decode([t])) for t in target)
            out.append(TokenLogprobs(tokens=toks, logprobs=tuple(vals)))
        return out


def _completion(d: dict[str, Any]) -> Completion:
    return Completion(
        text=d["text"], n_tokens=d["n_tokens"], finish_reason=d["finish_reason"],
        tokens=tuple(d["tokens"]) if d.get("tokens") is not None else None,
        logprobs=tuple(d["logprobs"]) if d.get("logprobs") is not None else None,
    )


def _logprobs(d: dict[str, Any]) -> TokenLogprobs:
    return TokenLogprobs(tokens=tuple(d["tokens"]), logprobs=tuple(d["logprobs"]),
                         available=d.get("available", True), reason=d.get("reason", ""))

