"""Decoding helpers of the transformers backend: per-row sampling, the balanced-brace stop, the shared prefill.

Sampling (:class:`RowSampler`) draws each row from its own seeded generator.

The balanced-brace stop is counted per row with tensor lookups
(:mod:`zcp_core.backends.hf_braces`).

Shared prefill (:func:`fused_batch`): one forward pass over prompt + gold
answer (the tokens a probe scores) gives the gold tokens' logprobs and, at the
same time, the first greedy answer tokens. The gold tokens serve as a draft:
greedy decoding accepts them for as long as its argmax agrees (speculative
decoding with the gold as the draft), so a correct answer costs no further
step. Where the argmax departs, decoding continues from the same key-value
cache, with the rejected draft positions masked out (:mod:`zcp_core.backends.hf_steps`,
which also drafts from a row's own text once few rows are left). Greedy outputs
therefore equal those of transformers' ``generate`` up to floating-point ties,
and the logprobs those of a separate ``score`` (the contract tests check both).
A row with nothing to score is a plain greedy generation
(:mod:`zcp_core.backends.hf_fused`). A row with a decoding ``constraint`` takes
every argmax (draft check included) on its masked logits; its scored logprobs
come from the unmasked ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping, Sequence

from zcp_core.backends.base import Constraint
from zcp_core.backends.hf_braces import BraceTable, brace_step


class RowSampler:
    """Logits processor that samples each row with its own generator.

    It leaves only the sampled token finite, so greedy decoding in
    ``generate`` then picks exactly that token.
    """

    def __init__(self, params: Sequence[Any]):
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


@dataclass(frozen=True)
class FusedRow:
    """One generate-and-score request in token ids.

    Attributes:
        prompt_ids: The generation prompt.
        seq_ids: ``prompt_ids`` followed by the draft (the scored continuation, and its closing
            ``}`` when that tokenizes apart): the tokens of the one forward pass.
        score_start: Index in ``seq_ids`` of the first scored token.
        score_end: One past the last scored token.
        budget: ``max_new_tokens``.
        balanced: Whether to stop at the balanced ``}``.
        depth: Brace groups the prompt leaves open (where the balanced stop starts counting).
        constraint: The decoding constraint (its mask applies to this row's argmax only).
        word_stop: Whether to stop once the box opens with a word (``stop_at="numeric_box"``,
            :func:`zcp_core.backends.opening.box_opening`).
    """

    prompt_ids: list[int]
    seq_ids: list[int]
    score_start: int
    score_end: int
    budget: int
    balanced: bool
    depth: int = 0
    constraint: Constraint = "none"
    word_stop: bool = False


@dataclass(frozen=True)
class FusedOut:
    """A :class:`FusedRow`'s answer tokens (EOS excluded), how it ended, and the scored tokens' logprobs.

    ``stop`` is what ended a ``stop`` finish: ``"}"`` (the box closed), ``"word"`` (it opened with a word)
    or None (EOS, or a ``length`` finish).
    """

    token_ids: list[int]
    finish: Literal["stop", "length"]
    stop: str | None
    score_logprobs: list[float]


class _State:
    """Per-row decoding state as batch tensors (``n`` generated, ``code`` 0 running / 1 EOS / 2 closed / 3 budget /
    4 opened with a word). ``text_of`` decodes a row's tokens for its ``word_stop`` check, which runs only while
    the row's box opening is still undecided (a few tokens)."""

    def __init__(self, rows: Sequence[FusedRow], table: BraceTable, eos_ids: Sequence[int],
                 text_of: Callable[[Sequence[int]], str] | None = None):
        import torch

        b = len(rows)
        self.table = table
        self.eos = torch.tensor(sorted(set(eos_ids)), dtype=torch.long)
        self.budget = torch.tensor([r.budget for r in rows])
        self.balanced = torch.tensor([r.balanced for r in rows])
        self.out = torch.zeros((b, max(r.budget for r in rows) + 1), dtype=torch.long)
        self.n = torch.zeros(b, dtype=torch.long)
        self.depth = torch.tensor([r.depth for r in rows], dtype=torch.long)
        self.escaped = torch.zeros(b, dtype=torch.bool)
        self.code = torch.zeros(b, dtype=torch.long)
        self.text_of = text_of
        self.watch = torch.tensor([r.word_stop and text_of is not None for r in rows], dtype=torch.bool)
        # Constrained rows: (masks: one bool vocabulary row per constraint, row 0 bans nothing; each row's mask index).
        self.bans: tuple[Any, Any] | None = None

    def advance(self, tok: Any, active: Any) -> None:
        """Append ``tok`` to the active rows that are still running, and mark the rows it ends."""
        import torch

        active = active & (self.code == 0)
        is_eos = torch.isin(tok, self.eos)
        take = active & ~is_eos
        depth, escaped, closes = brace_step(self.table, self.depth, self.escaped, tok)
        rows = torch.nonzero(take).flatten()
        self.out[rows, self.n[rows]] = tok[rows]
        self.n = self.n + take.long()
        self.depth = torch.where(take, depth, self.depth)
        self.escaped = torch.where(take, escaped, self.escaped)
        closed = take & closes & self.balanced
        worded = self._worded(take & ~closed)
        spent = take & (self.n >= self.budget)
        code = torch.where(active & is_eos, 1, torch.where(closed, 2, torch.where(worded, 4, torch.where(spent, 3, 0))))
        self.code = torch.where(active, code, self.code)

    def _worded(self, took: Any) -> Any:
        """The watched rows among ``took`` whose box now opens with a word; rows whose opening is decided stop
        being watched."""
        import torch

        from zcp_core.backends.opening import box_opening

        out = torch.zeros_like(took)
        for i in torch.nonzero(took & self.watch).flatten().tolist():
            assert self.text_of is not None
            v = box_opening(self.text_of(self.out[i, : int(self.n[i])].tolist()))
            if v != "open":
                self.watch[i] = False
                out[i] = v == "word"
        return out


def fused_batch(model: Any, rows: Sequence[FusedRow], table: BraceTable, eos_ids: Sequence[int], pad_id: int,
                prefill_rows: int, banned: Mapping[str, Any] | None = None,
                text_of: Callable[[Sequence[int]], str] | None = None) -> list[FusedOut]:
    """Score and greedily answer a batch of rows with one prefill each (see the module docstring).

    The prefill runs in groups of at most ``prefill_rows`` rows of similar
    length (:func:`prefill_groups`: a forward pass over many thousand tokens at
    once is slower per token on a CPU, and padding is paid for), and the groups'
    key-value caches are then joined, right-aligned, into one cache so that
    every decoding step serves the whole batch. ``banned`` maps each
    constraint of the rows (other than ``none``) to its bool vocabulary mask
    of forbidden tokens. ``text_of`` decodes token ids, for the rows' ``word_stop``.
    """
    import torch

    from zcp_core.backends.hf_steps import SLACK, decode

    lens = torch.tensor([len(r.seq_ids) for r in rows])
    plen = torch.tensor([len(r.prompt_ids) for r in rows])
    width = int(lens.max())
    n_pred = int((lens - plen).max()) + 1
    pred = torch.zeros((len(rows), n_pred), dtype=torch.long)
    scores: list[list[float]] = []
    kv: list[list[tuple[Any, Any]]] = []
    st = _State(rows, table, eos_ids, text_of)
    st.bans = _row_bans(rows, banned or {})
    with torch.inference_mode():
        for g, size in prefill_groups([len(r.seq_ids) for r in rows], prefill_rows):
            group = rows[g : g + size]
            ban = None if st.bans is None else st.bans[0].cpu()[st.bans[1][g : g + len(group)]]
            got, group_kv = _prefill(model, group, pad_id, n_pred, ban)
            pred[g : g + len(group)] = got[0]
            scores += got[1]
            kv.append(group_kv)
        draft = torch.full_like(pred, -1)
        for i, r in enumerate(rows):
            d = r.seq_ids[len(r.prompt_ids):]
            draft[i, : len(d)] = torch.tensor(d, dtype=torch.long)
        j = torch.arange(n_pred)
        valid = j[None, :] <= (lens - plen)[:, None]
        accepted = ((pred == draft) & valid).long().cumprod(1).sum(1)  # leading draft tokens greedy agrees with
        for k in range(n_pred):
            st.advance(pred[:, k], j[k] <= accepted)
        if bool((st.code == 0).any()):
            total = width + max(r.budget for r in rows) + SLACK
            cache = _joined_cache(model, kv, [len(gk[0][0]) for gk in kv], width, total)
            del kv
            # Each row keeps its prompt and accepted draft tokens: columns [width - len, width - len + kept).
            kept = plen + accepted
            static = getattr(cache.layers[0], "max_cache_len", None) is not None
            cols = torch.arange(total if static else width)[None, :]
            first = (width - lens)[:, None]
            mask = ((cols >= first) & (cols < first + kept[:, None])).long()
            bonus = pred.gather(1, accepted[:, None])[:, 0]  # the first token after the accepted draft
            decode(model, cache, st, mask, bonus, kept, width, [r.prompt_ids for r in rows])
    stops = {2: "}", 4: "word"}
    return [FusedOut(st.out[i, : int(st.n[i])].tolist(), "length" if int(st.code[i]) == 3 else "stop",
                     stops.get(int(st.code[i])), scores[i]) for i in range(len(rows))]


def prefill_groups(lens: Sequence[int], max_rows: int, waste: float = 0.15) -> list[tuple[int, int]]:
    """``(start, size)`` of consecutive prefill groups over rows of ``lens`` tokens (longest first).

    A group holds at most ``max_rows`` rows, and a row joins it only while the
    group's padding stays within ``waste`` of its real tokens: a group is padded
    to its longest row, and a padded position costs as much as a real one.
    """
    groups: list[tuple[int, int]] = []
    start = 0
    while start < len(lens):
        size, real, width = 1, lens[start], lens[start]
        while start + size < len(lens) and size < max(max_rows, 1):
            nxt = lens[start + size]
            if max(width, nxt) * (size + 1) > (1 + waste) * (real + nxt):
                break
            real, width, size = real + nxt, max(width, nxt), size + 1
        groups.append((start, size))
        start += size
    return groups


def _row_bans(rows: Sequence[FusedRow], banned: Mapping[str, Any]) -> tuple[Any, Any] | None:
    """The masks of the rows' constraints stacked under a ban-nothing row, and each row's index into them
    (None when no row is constrained)."""
    import torch

    kinds = sorted({r.constraint for r in rows} - {"none"})
    if not kinds:
        return None
    first = banned[kinds[0]]
    masks = torch.stack([torch.zeros_like(first), *(banned[k] for k in kinds)])
    return masks, torch.tensor([0 if r.constraint == "none" else 1 + kinds.index(r.constraint) for r in rows])


def _prefill(model: Any, rows: Sequence[FusedRow], pad_id: int, n_pred: int, ban: Any = None
             ) -> tuple[tuple[Any, list[list[float]]], list[tuple[Any, Any]]]:
    """One left-padded forward pass: ((greedy predictions from each row's last prompt token on, scored
    logprobs), per-layer (keys, values)). ``ban`` (rows, vocabulary) masks the predictions, not the scores."""
    import torch

    ids, mask, pos = left_pad([r.seq_ids for r in rows], pad_id)
    # Only positions from the last prompt token on predict a draft or scored token; the vocabulary
    # projection (the costliest single matmul at this size) is kept to those trailing columns.
    keep = int(max(len(r.seq_ids) - min(len(r.prompt_ids), r.score_start) + 1 for r in rows))
    device = model.device
    out = model(input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=pos.to(device),
                use_cache=True, logits_to_keep=keep)
    logits = out.logits.float().cpu()
    scores = gather_scored(torch.log_softmax(logits, -1), [r.seq_ids for r in rows],
                           [(r.score_start, r.score_end) for r in rows], keep)
    lens = torch.tensor([len(r.seq_ids) for r in rows])
    plen = torch.tensor([len(r.prompt_ids) for r in rows])
    col = ((keep - lens + plen - 1)[:, None] + torch.arange(n_pred)[None, :]).clamp(max=keep - 1)
    if ban is None:
        pred = logits.argmax(-1).gather(1, col)
    else:  # only the predicting columns are masked (a copy of every kept column would cost more)
        picked = logits[torch.arange(len(rows))[:, None], col]
        pred = picked.masked_fill(ban[:, None, : picked.shape[-1]], float("-inf")).argmax(-1)
    return (pred, scores), [(layer.keys, layer.values) for layer in out.cache.layers]


def _joined_cache(model: Any, groups: list[list[tuple[Any, Any]]], sizes: list[int], width: int, total: int) -> Any:
    """One cache for all groups: each group's keys and values right-aligned at column ``width``.

    A preallocated (static) cache of ``total`` columns where the model allows
    one, so decoding steps write in place instead of copying the cache.
    """
    cache = _static_cache(model, total)
    if cache is None:
        from transformers import DynamicCache

        cache = DynamicCache(config=model.config)
    for layer in range(len(groups[0])):
        k0, v0 = groups[0][layer]
        keys = k0.new_zeros((sum(sizes), k0.shape[1], width, k0.shape[3]))
        values = v0.new_zeros((sum(sizes), v0.shape[1], width, v0.shape[3]))
        start = 0
        for group, n in zip(groups, sizes):
            k, v = group[layer]
            keys[start : start + n, :, width - k.shape[2]:] = k
            values[start : start + n, :, width - v.shape[2]:] = v
            start += n
        cache.update(keys, values, layer)
    return cache


def _static_cache(model: Any, length: int) -> Any:
    """A preallocated key-value cache of ``length`` columns, or None where the model needs another kind."""
    from transformers import StaticCache

    layer_types = getattr(model.config, "layer_types", None)
    if layer_types and any(t != "full_attention" for t in layer_types):
        return None  # sliding or linear layers: let the model build its own cache
    return StaticCache(config=model.config, max_cache_len=length)


def left_pad(seqs: Sequence[Sequence[int]], pad_id: int) -> tuple[Any, Any, Any]:
    """Token ids, attention mask and position ids of left-padded rows (as wide as the longest row)."""
    import torch

    width = max(len(x) for x in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, x in enumerate(seqs):  # every row ends at the last column
        ids[i, width - len(x):] = torch.tensor(list(x), dtype=torch.long)
        mask[i, width - len(x):] = 1
    return ids, mask, (mask.cumsum(-1) - 1).clamp(min=0)


def gather_scored(logp: Any, seqs: Sequence[Sequence[int]], spans: Sequence[tuple[int, int]],
                  keep: int) -> list[list[float]]:
    """Logprobs of each left-padded row's tokens ``seq[start:end]`` from its last ``keep`` positions' logprobs.

    The logit at position k - 1 predicts token k; row i's position p sits in
    column ``keep - len(seq) + p`` of ``logp`` (batch, keep, vocab).
    """
    import torch

    width = max(max(end - start for start, end in spans), 1)
    cols = torch.zeros((len(seqs), width), dtype=torch.long)
    toks = torch.zeros((len(seqs), width), dtype=torch.long)
    for i, (seq, (start, end)) in enumerate(zip(seqs, spans)):
        first = keep - len(seq) + start - 1
        cols[i, : end - start] = torch.arange(first, first + end - start)
        toks[i, : end - start] = torch.tensor(list(seq[start:end]), dtype=torch.long)
    vals = logp[torch.arange(len(seqs))[:, None], cols, toks]
    return [vals[i, : end - start].tolist() for i, (start, end) in enumerate(spans)]


def score_batch(model: Any, seqs: Sequence[Sequence[int]], starts: Sequence[int], pad_id: int,
                device: str) -> list[list[float]]:
    """Teacher-forced logprobs of ``seq[start:]`` for each row, in one left-padded forward pass.

    Only the trailing positions that predict scored tokens go through the
    vocabulary projection.
    """
    import torch

    ids, mask, pos = left_pad(seqs, pad_id)
    keep = max(len(x) - s + 1 for x, s in zip(seqs, starts))
    with torch.inference_mode():
        logits = model(input_ids=ids.to(device), attention_mask=mask.to(device), position_ids=pos.to(device),
                       logits_to_keep=keep).logits
    logp = torch.log_softmax(logits.float(), -1).cpu()
    return gather_scored(logp, seqs, [(s, len(x)) for x, s in zip(seqs, starts)], keep)
