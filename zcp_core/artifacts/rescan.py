"""Re-scan passes: clean the cleaned text again until no pattern matches.

One pass of the cleaner can leave a second artifact behind the first: "Here is
a 5 sentence abstract:Abstract: We ..." loses its opener and then starts with
the label; a "[SYSTEM]: - [assistant] is the assistant. -Okay, here's the
review:" preamble loses its rules and then starts with "Okay, here's". Start-
anchored patterns see such a leftover only once the text in front of it is
gone, so the cleaner scans its own output again, up to :data:`MAX_PASSES`
times.

Every edit a pass finds is stored like a first-pass edit: a span of the
*original* text (the cleaned span mapped back). When that span encloses
earlier edits (the leftover straddled a cut), the new edit takes them over and
they are marked not applied, so applied edits never overlap and
:func:`~zcp_core.artifacts.edits.undo` restores the original as before. The
edit's id ends in ``:r<pass>``.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from zcp_core.artifacts.edits import DROP_ACTIONS, apply_edits, edit_span
from zcp_core.artifacts.patterns import CompiledLibrary
from zcp_core.artifacts.scanner import text_matches

MAX_PASSES = 3


def _positions(text_len: int, applied: Sequence[Mapping[str, Any]]) -> list[int]:
    """For each character of the cleaned text, its index in the original (edits replace with ``""`` here)."""
    kept: list[int] = []
    cur = 0
    for e in sorted(applied, key=lambda x: int(x["start"])):
        kept.extend(range(cur, int(e["start"])))
        cur = int(e["end"])
    kept.extend(range(cur, text_len))
    return kept


def rescan_text(
    rid: str,
    text: str,
    edits: list[dict[str, Any]],
    compiled: CompiledLibrary,
    decisions: Mapping[str, str],
) -> tuple[list[dict[str, Any]], list[tuple[str, str]], bool]:
    """Run re-scan passes over one text's cleaned result.

    Args:
        rid: The text's id.
        text: The original text.
        edits: Its first-pass edits (resolved: ``accepted`` and ``applied`` set); extended in place.
        compiled: The compiled library.
        decisions: ``edit_id -> accept|reject``; edits not listed are accepted.

    Returns:
        All edits, ``(id, "pattern:<pattern_id>")`` flags from flag-only matches of later passes, and whether a
        later pass dropped the text.
    """
    flags: list[tuple[str, str]] = []
    tried = {(str(e["pattern_id"]), int(e["start"])) for e in edits}
    for n in range(1, MAX_PASSES + 1):
        applied = [e for e in edits if e["applied"]]
        if not applied or any(e["action"] in DROP_ACTIONS for e in applied):
            break  # untouched texts cannot change; dropped ones are gone
        if any(e["replacement"] for e in applied):
            break  # a rewrite (not a regex cut) has no character map back to the original
        cleaned = apply_edits(text, applied)
        if not cleaned.strip():
            break
        pos = _positions(len(text), applied)
        fresh = []
        for i, s, e, m in text_matches(compiled, cleaned, "all"):
            p = compiled.patterns[i]
            if p.action == "flag":
                flags.append((rid, f"pattern:{p.id}"))
                continue
            cs, ce = edit_span(cleaned, s, e, p.action)
            ts, te = (0, len(text)) if p.action in DROP_ACTIONS else (pos[cs], pos[ce - 1] + 1)
            if (p.id, ts) in tried:
                continue  # proposed before (a reviewer may have rejected it): never re-propose
            tried.add((p.id, ts))
            eid = f"{rid}:{p.id}:{ts}:r{n}"
            fresh.append({"edit_id": eid, "id": rid, "pattern_id": p.id, "family": p.family, "action": p.action,
                          "start": ts, "end": te, "original": text[ts:te], "replacement": "", "match": m,
                          "stage": 0, "accepted": decisions.get(eid, "accept") == "accept", "applied": False})
        if not _apply_pass(edits, fresh):
            break
    return edits, flags, any(e["applied"] and e["action"] in DROP_ACTIONS for e in edits)


def _apply_pass(edits: list[dict[str, Any]], fresh: list[dict[str, Any]]) -> bool:
    """Apply one pass's accepted, non-overlapping edits; earlier edits they enclose stop applying."""
    edits.extend(fresh)
    drop = next((f for f in fresh if f["accepted"] and f["action"] in DROP_ACTIONS), None)
    if drop is not None:
        for e in edits:
            e["applied"] = e is drop
        return True
    changed, last_end = False, -1
    for f in sorted(fresh, key=lambda x: (x["start"], -x["end"])):
        if not f["accepted"] or f["start"] < last_end:
            continue
        f["applied"], changed, last_end = True, True, f["end"]
        for old in edits:
            # A leftover that straddled a cut: the wider edit takes the earlier one over (and restores it on undo).
            if old is not f and old["applied"] and old["start"] >= f["start"] and old["end"] <= f["end"]:
                old["applied"] = False
    return changed
