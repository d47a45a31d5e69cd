"""Optional LLM re-cleaning of flagged texts, re-scanned afterwards.

Any backend gets a few-shot prompt "remove only the contamination, change
nothing else", only for texts the cleaner flagged. The rewrite is recorded as a
stage-1 edit over the whole regex-cleaned text (so :func:`~zcp_core.artifacts.cleaner.undo`
still restores the original), and the result is scanned again: any remaining
high-precision match becomes a ``rescan:<pattern_id>`` flag.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Sequence

from zcp_core.artifacts.cleaner import EDIT_COLUMNS, CleanResult
from zcp_core.artifacts.patterns import HIGH_PRECISION, PatternLibrary
from zcp_core.artifacts.scanner import scan

if TYPE_CHECKING:
    from zcp_core.schema import TextRecord

SYSTEM = ("You clean machine-generated texts for a benchmark. Remove only the contamination: assistant "
          "openers (\"Here is a 5 sentence story:\"), refusals, prompt echoes, role tags like [assistant]: and "
          "closing remarks (\"I hope this helps\"). Change nothing else: keep every other word, character and "
          "line break exactly. Reply with the cleaned text only.")
SHOTS = (
    ("Sure! Here is a 3 sentence review of the restaurant:The pasta was fresh. Service was slow. I would go back.",
     "The pasta was fresh. Service was slow. I would go back."),
    ("[assistant]: The council approved the budget on Monday. Critics called it rushed. I hope this helps!",
     "The council approved the budget on Monday. Critics called it rushed."),
)
DEFAULT_KINDS: tuple[str, ...] = ("residual_score", "pattern")


def reclean_requests(texts: Sequence[str], max_new_tokens: int | None = None) -> list[Any]:
    """Few-shot generation requests, one per text (greedy)."""
    from zcp_core.backends import GenerateRequest, Message, SamplingParams

    out = []
    for text in texts:
        msgs = [Message("system", SYSTEM)]
        for raw, cleaned in SHOTS:
            msgs += [Message("user", raw), Message("assistant", cleaned)]
        msgs.append(Message("user", text))
        budget = max_new_tokens or min(2048, len(text) // 3 + 32)  # a cleaned text is never longer than its input
        out.append(GenerateRequest(messages=tuple(msgs), params=SamplingParams(max_new_tokens=budget)))
    return out


def reclean(
    result: CleanResult,
    library: PatternLibrary,
    backend: Any,
    kinds: Sequence[str] = DEFAULT_KINDS,
    max_new_tokens: int | None = None,
) -> CleanResult:
    """Re-clean flagged texts with an LLM, then re-scan them.

    Args:
        result: A :func:`~zcp_core.artifacts.cleaner.clean` result.
        library: Pattern library for the re-scan.
        backend: Any zcp backend (``generate`` takes the whole batch).
        kinds: Flag kinds (prefix before ``:``) that select texts.
        max_new_tokens: Generation budget (default: from each text's length).

    Returns:
        The result with rewritten texts, stage-1 edits and ``rescan:*`` /
        ``reclean_empty`` flags added.
    """
    import pandas as pd

    selected = set(result.flags.loc[result.flags["kind"].str.split(":").str[0].isin(kinds), "id"])
    targets = [t for t in result.texts if t.id in selected]
    if not targets:
        return result
    completions = backend.generate(reclean_requests([t.text for t in targets], max_new_tokens), progress=True)
    new_by_id: dict[str, TextRecord] = {}
    edits, flags = [], []
    for t, c in zip(targets, completions, strict=True):
        new = c.text.strip()
        if not new:
            flags.append({"id": t.id, "kind": "reclean_empty", "value": 0.0, "threshold": float("nan")})
            continue
        if new == t.text:
            continue
        new_by_id[t.id] = replace(t, text=new, metadata={**dict(t.metadata), "llm_recleaned": True})
        edits.append({"edit_id": f"{t.id}:llm-reclean:0", "id": t.id, "pattern_id": "llm-reclean",
                      "family": "llm", "action": "llm_rewrite", "start": 0, "end": len(t.text), "original": t.text,
                      "replacement": new, "accepted": True, "applied": True, "stage": 1})
    rescanned = scan(list(new_by_id.values()), library, mode="all")
    for m in rescanned[rescanned["family"].isin(HIGH_PRECISION)].itertuples(index=False):
        flags.append({"id": str(m.id), "kind": f"rescan:{m.pattern_id}", "value": 1.0, "threshold": float("nan")})
    texts = tuple(new_by_id.get(t.id, t) for t in result.texts)
    new_edits = pd.concat([result.edits, pd.DataFrame(edits, columns=EDIT_COLUMNS)], ignore_index=True)
    new_flags = pd.concat([result.flags, pd.DataFrame(flags, columns=result.flags.columns)], ignore_index=True)
    return replace(result, texts=texts, edits=new_edits.astype(result.edits.dtypes.to_dict()),
                   flags=new_flags.astype(result.flags.dtypes.to_dict()))
