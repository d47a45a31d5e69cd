"""Decoding constraints (``SamplingParams.constraint``): which tokens a completion may be made of.

A zero-CoT probe prefills ``\\boxed{`` and reads the answer up to the brace
that closes it. A model that writes a derivation inside the box
(``\\text{Janet's ducks lay ...}``) is reasoning, which a zero-CoT probe must
not allow, so under ``constraint="number"`` decoding may only pick tokens
that spell a number, the closing brace, or EOS. The rule is per token
(:func:`number_token_ok`); :func:`allowed_token_ids` applies it to a whole
vocabulary once, and the backends turn that list into a logits mask (the
transformers backend, :func:`banned_mask` and :func:`mask_processor`) or pass
it on (vLLM's ``allowed_token_ids``, ``zcp serve``'s ``constraint`` field).
Only the decoding step is masked: scored logprobs stay the model's own.
"""

from __future__ import annotations

from typing import Any, Sequence

from zcp_core.backends.base import Constraint

NUMBER_CHARS = frozenset("0123456789.,-/ ")


def number_token_ok(text: str) -> bool:
    """Whether a token whose text is ``text`` may be generated under ``constraint="number"`` (EOS aside).

    Allowed: a non-empty text made only of ``0123456789.,-/`` and spaces
    (a leading space included), or a closing ``}`` optionally followed by
    whitespace. Anything else (letters, ``{``, ``\\``, ``}.``, ``}}``, an
    empty or partial-character text) is not.
    """
    if text.startswith("}"):
        return text[1:] == "" or text[1:].isspace()
    return bool(text) and all(c in NUMBER_CHARS for c in text)


def allowed_token_ids(tokenizer: Any, constraint: Constraint = "number") -> list[int]:
    """The token ids a ``constraint`` allows, sorted: those whose text passes its rule, and EOS.

    Each token is decoded on its own, special tokens kept and spaces not
    cleaned up, so a special token's text (``<|im_end|>``) never passes; EOS
    is added by id.

    Raises:
        ValueError: For ``constraint="none"``, which allows every token and needs no list.
    """
    if constraint != "number":
        raise ValueError(f"constraint {constraint!r} allows every token; there is no list to build")
    texts = tokenizer.batch_decode([[i] for i in range(len(tokenizer))], skip_special_tokens=False,
                                   clean_up_tokenization_spaces=False)
    ids = {i for i, t in enumerate(texts) if number_token_ok(t)}
    eos = getattr(tokenizer, "eos_token_id", None)
    if eos is not None:
        ids.add(int(eos))
    return sorted(ids)


def banned_mask(tokenizer: Any, vocab_size: int, constraint: Constraint, eos_ids: Sequence[int] = ()) -> Any:
    """A bool tensor of ``vocab_size``: True for the tokens ``constraint`` forbids (ids past the tokenizer too).

    ``eos_ids`` are the ids the backend itself ends a completion on (allowed).
    """
    import torch

    banned = torch.ones(vocab_size, dtype=torch.bool)
    ok = [i for i in allowed_token_ids(tokenizer, constraint) if i < vocab_size]
    banned[torch.tensor(ok + [int(t) for t in eos_ids if 0 <= int(t) < vocab_size], dtype=torch.long)] = False
    return banned


def mask_processor(banned: Any) -> Any:
    """A transformers ``LogitsProcessor`` that sets the ``banned`` tokens' scores to -inf in every row."""
    from transformers import LogitsProcessor

    class _Mask(LogitsProcessor):  # type: ignore[misc]
        def __call__(self, input_ids: Any, scores: Any) -> Any:
            return scores.masked_fill(banned[: scores.shape[-1]].to(scores.device), float("-inf"))

    return _Mask()
