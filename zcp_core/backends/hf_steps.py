"""Greedy decoding steps after the shared prefill (:func:`~zcp_core.backends.hf_decode.fused_batch`).

Each step feeds every running row its last token. A batch decodes until its
slowest row stops, and on a CPU a step of a small model costs about the same
for one row as for a dozen (every weight is read once per step). When only a
few rows are left, each step therefore also feeds up to ``LOOKUP`` draft tokens
per row, copied from what followed the row's last tokens earlier in its own
prompt or answer (prompt-lookup decoding). Greedy verification keeps a draft
token only where the argmax agrees, so the output is what one token per step
gives (up to floating-point ties); a runaway answer that repeats itself
(``0.000000…``) then takes a few steps instead of one per token. Drafting stops
for the batch after a step that kept no draft token, where the text does not
repeat itself (a LaTeX derivation) and wider steps would only cost more.
"""

from __future__ import annotations

from typing import Any, Sequence

LOOKUP = 8  # draft tokens per row and step in the tail
TAIL_ROWS = 2  # the tail: at most this many rows still running
SLACK = 4 * (LOOKUP + 1)  # extra static-cache columns that rejected drafts may fill


def ngram_draft(context: Sequence[int], k: int, max_n: int = 3) -> list[int]:
    """Up to ``k`` tokens that followed an earlier occurrence of the context's last n tokens.

    The longest suffix (``max_n`` down to 1 token) with an earlier occurrence
    wins. Among its occurrences, the latest one with ``k`` tokens after it is
    used, or else the one with the most (in a run such as ``0 0 0 0`` the
    latest occurrence is followed by one token, the earliest by the rest).
    """
    for n in range(min(max_n, len(context) - 1), 0, -1):
        tail = list(context[-n:])
        best: list[int] = []
        for start in range(len(context) - n - 1, -1, -1):
            if list(context[start : start + n]) == tail:
                follow = list(context[start + n : start + n + k])
                if len(follow) >= k:
                    return follow
                best = max(best, follow, key=len)
        if best:
            return best
    return []


def decode(model: Any, cache: Any, st: Any, mask: Any, tok: Any, pos: Any, column: int,
           prompts: Sequence[Sequence[int]]) -> None:
    """Continue greedy decoding of the running rows from the prefill's cache.

    Cache columns of rejected draft tokens stay in place but are masked out
    (``mask``, as wide as the cache; a static cache's unfilled columns are 0
    until written), so each row attends to exactly its prompt, its accepted
    tokens and what follows; ``tok`` is each row's last generated token and
    ``pos`` its position; ``column`` is the first cache column not yet
    written; ``st`` is the decoder's per-row state (``hf_decode._State``);
    ``prompts`` are the rows' prompt ids (for drafts). Finished rows
    leave the batch (cache included) once a quarter of it has finished, so
    later steps compute only running rows.
    """
    import torch

    rows = torch.arange(len(tok))  # batch row -> row of ``st``
    drafting = True  # off once a draft step keeps nothing: the text no longer repeats itself
    static = mask.shape[1] > column  # a preallocated cache: the mask already spans every column
    while True:
        running = st.code[rows] == 0
        if not bool(running.any()):
            return
        if int(running.sum()) <= 3 * len(rows) // 4:
            keep = torch.nonzero(running).flatten()
            _select_rows(cache, keep.to(model.device))
            rows, mask, tok, pos = rows[keep], mask[keep], tok[keep], pos[keep]
        tail = drafting and len(rows) <= TAIL_ROWS
        k = LOOKUP if tail and (not static or _room(st, rows, column, mask.shape[1])) else 0
        feed = _with_drafts(st, rows, tok, prompts, k)
        width = feed.shape[1]
        if static:
            mask[:, column : column + width] = 1
        else:
            mask = torch.cat([mask, torch.ones((len(rows), width), dtype=torch.long)], 1)
        out = model(input_ids=feed.to(model.device), attention_mask=mask.to(model.device),
                    position_ids=(pos[:, None] + torch.arange(width)[None, :]).to(model.device), cache=cache,
                    use_cache=True, logits_to_keep=width)
        logits = out.logits
        if st.bans is not None:
            masks, index = st.bans
            ban = masks[index[rows].to(masks.device)][:, None, : logits.shape[-1]]
            logits = logits.masked_fill(ban, float("-inf"))
        greedy = logits.argmax(-1).cpu()  # (rows, width): the token after each fed position
        agree = (feed[:, 1:] == greedy[:, :-1]).long().cumprod(1).sum(1)  # draft tokens greedy keeps
        for j in range(width):
            full = torch.zeros(len(st.code), dtype=torch.long)
            full[rows] = greedy[:, j]
            active = torch.zeros(len(st.code), dtype=torch.bool)
            active[rows] = j <= agree
            st.advance(full, active)
        if width > 1:  # rejected drafts stay in the cache, masked out
            cols = column + torch.arange(width)[None, :]
            mask[:, column : column + width] = (cols <= column + agree[:, None]).long()
        tok = greedy.gather(1, agree[:, None])[:, 0]
        pos = pos + agree + 1
        column += width
        drafting = drafting and (width == 1 or bool((agree > 0).any()))


def _room(st: Any, rows: Any, column: int, total: int) -> bool:
    """Whether a step with drafts still leaves every running row the columns its remaining budget needs
    (a step writes ``LOOKUP + 1`` columns and gives each running row at least one token)."""
    left = int((st.budget[rows] - st.n[rows]).max())
    return column + LOOKUP + 1 + max(left - 1, 0) <= total


def _with_drafts(st: Any, rows: Any, tok: Any, prompts: Sequence[Sequence[int]], k: int) -> Any:
    """Each row's last token followed by ``k`` lookup draft tokens (padded with the last token)."""
    import torch

    if k == 0:
        return tok[:, None]
    feed = tok[:, None].repeat(1, k + 1)
    found = False
    for b, r in enumerate(rows.tolist()):
        context = list(prompts[r]) + st.out[r, : int(st.n[r])].tolist()
        draft = ngram_draft(context, k)
        if draft:
            feed[b, 1 : 1 + len(draft)] = torch.tensor(draft, dtype=torch.long)
            found = True
    return feed if found else tok[:, None]  # no row has a draft: a plain step is cheaper


def _select_rows(cache: Any, keep: Any) -> None:
    """Keep only the ``keep`` batch rows of a key-value cache (static layers have no method for it)."""
    for layer in cache.layers:
        layer.keys, layer.values = layer.keys[keep], layer.values[keep]
        if hasattr(layer, "batch_size"):
            layer.batch_size = len(keep)
