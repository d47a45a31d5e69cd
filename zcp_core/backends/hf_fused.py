"""Greedy answering on the transformers backend through the shared-prefill decoder.

:func:`~zcp_core.backends.hf_decode.fused_batch` serves two callers:

* ``generate_score``: each row's prefill covers prompt + gold, so the gold's
  logprobs and the first answer tokens come from one forward pass;
* plain greedy ``generate``: a row with nothing to score is just its prompt.

Both go through :func:`run_fused`, so plain generation gets the same decoder:
length-sorted batches, a preallocated key-value cache, finished rows leaving
the batch, and no Python loop per token. ``transformers``' own ``generate``
stays for what the decoder does not do (sampling, stop strings, token
logprobs); a contract test checks the two give the same greedy text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from zcp_core.backends.base import BRACE_STOPS, Completion, GenerateRequest, balanced_close, stop_depth

if TYPE_CHECKING:
    from zcp_core.backends.hf import TransformersBackend
    from zcp_core.backends.hf_decode import FusedRow


@dataclass(frozen=True)
class FusedAnswer:
    """A fused row's completion and the logprobs of its scored tokens (empty when it scored nothing)."""

    completion: Completion
    score_logprobs: tuple[float, ...]


def foldable(request: GenerateRequest) -> bool:
    """Whether the shared-prefill decoder can answer ``request`` exactly (greedy, no stop strings or logprobs)."""
    p = request.params
    return p.greedy and not p.stop and not request.logprobs and p.max_new_tokens > 0


def prompt_row(backend: TransformersBackend, request: GenerateRequest) -> FusedRow:
    """A plain generation request as a decoder row: the prompt, nothing to score."""
    from zcp_core.backends.hf_decode import FusedRow

    ids = list(backend.tokenizer(backend.render(request), add_special_tokens=False).input_ids)
    p = request.params
    return FusedRow(prompt_ids=ids, seq_ids=ids, score_start=len(ids), score_end=len(ids), budget=p.max_new_tokens,
                    balanced=p.stop_at in BRACE_STOPS, depth=stop_depth(request), constraint=p.constraint,
                    word_stop=p.stop_at == "numeric_box")


def run_fused(backend: TransformersBackend, rows: Sequence[FusedRow]) -> list[FusedAnswer]:
    """Answer ``rows`` greedily, in order, in length-sorted decoding batches.

    Batches hold about ``answer_batch_size`` rows and are split evenly: every
    batch decodes as many steps as its slowest row, so a small remainder batch
    would pay nearly the full step count for a few rows. Prefills run in groups
    of at most ``batch_size`` rows, cut where padding would grow
    (:func:`~zcp_core.backends.hf_decode.prefill_groups`).
    """
    from zcp_core.backends.hf_decode import fused_batch

    tok = backend.tokenizer
    eos = [t for t in (tok.eos_token_id, tok.pad_token_id) if t is not None]
    order = sorted(range(len(rows)), key=lambda i: -len(rows[i].seq_ids))
    out: list[FusedAnswer | None] = [None] * len(rows)
    n_batches = max(1, round(len(order) / max(backend.answer_batch_size, 1)))
    for k in range(n_batches):
        part = order[k * len(order) // n_batches : (k + 1) * len(order) // n_batches]
        if not part:
            continue
        banned: dict[str, object] = {c: backend._banned_mask(c) for c in {rows[i].constraint for i in part} - {"none"}}
        got = fused_batch(backend.model, [rows[i] for i in part], backend._braces(), eos, tok.pad_token_id,
                          backend.batch_size, banned, backend.decode_ids)
        for i, fo in zip(part, got):
            text = backend.decode_ids(fo.token_ids)
            cut = balanced_close(text, rows[i].depth) if fo.stop == "}" else None
            comp = Completion(text=text[:cut] if cut is not None else text, n_tokens=len(fo.token_ids),
                              finish_reason=fo.finish, stop_reason=fo.stop)
            out[i] = FusedAnswer(comp, tuple(fo.score_logprobs))
    return [a for a in out if a is not None]
