"""The balanced-brace stop of the transformers backend, counted per row with tensor lookups.

:func:`brace_table` turns the vocabulary into per-token brace arithmetic once,
so each decoding step updates every row's depth with a few tensor lookups (no
Python loop over the batch). The rule is that of
:func:`zcp_core.backends.base.balanced_close`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

_NO_CLOSE = 1 << 20  # "this token closes nothing": larger than any reachable depth


@dataclass(frozen=True)
class BraceTable:
    """Brace arithmetic per token id, indexed ``[escaped, token]`` (escaped: the text so far ends in ``\\``).

    Attributes:
        delta: Depth change over the token.
        close: Lowest depth (relative to the token's start) right after one of its counted ``}``;
            a huge value when it has none. A row closes when ``depth + close <= 0``.
        ends_escape: Whether the token ends in a backslash.
    """

    delta: Any
    close: Any
    ends_escape: Any


def brace_table(tokenizer: Any, vocab_size: int) -> BraceTable:
    """The :class:`BraceTable` of a tokenizer (token ids past the tokenizer's own count never brace)."""
    import torch

    n = min(len(tokenizer), vocab_size)
    strings = tokenizer.batch_decode([[i] for i in range(n)], skip_special_tokens=True)
    delta = torch.zeros((2, vocab_size), dtype=torch.long)
    close = torch.full((2, vocab_size), _NO_CLOSE, dtype=torch.long)
    ends = torch.zeros((2, vocab_size), dtype=torch.bool)
    for t, s in enumerate(strings):
        if "{" not in s and "}" not in s and "\\" not in s:
            continue
        for escaped in (0, 1):
            depth, low, prev_bs = 0, _NO_CLOSE, bool(escaped)
            for c in s:
                if not prev_bs and c == "{":
                    depth += 1
                elif not prev_bs and c == "}":
                    depth -= 1
                    low = min(low, depth)
                prev_bs = c == "\\"
            delta[escaped, t], close[escaped, t], ends[escaped, t] = depth, low, prev_bs
    return BraceTable(delta, close, ends)


def brace_step(table: BraceTable, depth: Any, escaped: Any, tokens: Any) -> tuple[Any, Any, Any]:
    """One token per row: new depth, new escape state, and whether the token closed the row's group."""
    e = escaped.long()
    closes = depth + table.close[e, tokens] <= 0
    return depth + table.delta[e, tokens], table.ends_escape[e, tokens], closes


def brace_stopping_criteria(table: BraceTable, prompt_len: int, depths: Sequence[int]) -> Any:
    """A transformers ``StoppingCriteria`` ending each row at its balanced ``}``, counted from ``depths[i]``."""
    import torch
    from transformers import StoppingCriteria

    class _BraceStop(StoppingCriteria):  # type: ignore[misc]
        def __init__(self) -> None:
            self.start = torch.tensor(list(depths), dtype=torch.long)
            self.depth: Any = None
            self.escaped: Any = None
            self.closed: Any = None

        def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
            tok = input_ids[:, -1].cpu()
            if self.depth is None or input_ids.shape[1] == prompt_len + 1:
                self.depth = self.start.clone()
                self.escaped = torch.zeros(len(tok), dtype=torch.bool)
                self.closed = torch.zeros(len(tok), dtype=torch.bool)
            self.depth, self.escaped, closes = brace_step(table, self.depth, self.escaped, tok)
            self.closed = self.closed | closes
            return self.closed.clone().to(input_ids.device)

    return _BraceStop()
