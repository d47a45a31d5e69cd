"""The edge detector's decisions applied to a cleaning: cuts become edits, unsure texts go to review.

Each cut is stored like a pattern edit (:mod:`zcp_core.artifacts.rescan`): a span of the *original* text (the
cleaned span mapped back, whitespace next to it included), ``pattern_id`` ``learned:<name>-<version>:<edge>``,
the model's ``score``, accepted unless a decision rejects its ``edit_id``. Two rules cut first, each
with its own ``pattern_id`` and no score: a title the text restates (:mod:`zcp_core.artifacts.titles`; the
model's head decision then gives way to it, unless the cut is rejected or would leave too little) and sentence
numbers left after a cut "1." (:mod:`zcp_core.artifacts.numbering`; only in a text whose head was cut, or a long
run). The model cuts a head shaped like a glued title at its gated threshold (:func:`gate_for`). An edit a cut encloses is taken over, so
:func:`~zcp_core.artifacts.edits.undo` restores the original as before. A cut that would leave less than
:data:`MIN_KEPT` of the text, or nothing, goes to review instead.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from zcp_core.artifacts.edges import Candidate, EdgeDecision
from zcp_core.artifacts.edits import apply_edits
from zcp_core.artifacts.numbering import RULE_ID as NUMBER_RULE
from zcp_core.artifacts.numbering import applies, find_sentence_numbers
from zcp_core.artifacts.rescan import _apply_pass, _positions
from zcp_core.artifacts.titles import GATE_ID, find_title, glued_title
from zcp_core.artifacts.titles import RULE_ID as TITLE_RULE

if TYPE_CHECKING:
    from zcp_core.artifacts.edges import EdgeModel
    from zcp_core.schema import TextRecord

MIN_KEPT = 0.4
RULES = (TITLE_RULE, NUMBER_RULE)  # the rules this stage applies before the model, by pattern id
REVIEW_KIND = "edges_review"


def gate_for(model: EdgeModel) -> Callable[[str, Candidate], bool] | None:
    """The glued-title gate when the model's ``gate_cut`` was set for it, else None (a model built for another
    predicate, or none, is applied without its gated threshold)."""
    return glued_title if model.meta.get("gate") == GATE_ID and model.gate_cut else None


def _span(text: str, d: EdgeDecision) -> tuple[int, int]:
    """The decision's span in the cleaned text with the whitespace that joins it to the rest."""
    s, e = d.start, d.end
    if d.edge == "head":
        while e < len(text) and text[e].isspace():
            e += 1
    else:
        while s > 0 and text[s - 1].isspace():
            s -= 1
    return s, e


def _rule_edit(tid: str, text: str, orig: str, pos: Sequence[int], span: tuple[int, int], rule: tuple[str, str],
               decisions: Mapping[str, str]) -> dict[str, Any]:
    """A rule's cut of ``text[span]`` as an edit of the original (``rule`` is its pattern id and family)."""
    s, e = span
    ts, te = pos[s], pos[e - 1] + 1
    eid = f"{tid}:{rule[0]}:{ts}"
    return {"edit_id": eid, "id": tid, "pattern_id": rule[0], "family": rule[1], "action": "strip_match",
            "start": ts, "end": te, "original": orig[ts:te], "replacement": "", "match": text[s:e], "stage": 0,
            "accepted": decisions.get(eid, "accept") == "accept", "applied": False}


def apply_edges(model: EdgeModel, kept: Sequence[TextRecord], originals: Mapping[str, str],
                edits: Mapping[str, list[dict[str, Any]]], decisions: Mapping[str, str], domains: Sequence[str]
                ) -> tuple[list[TextRecord], list[dict[str, Any]]]:
    """Cut what the model is sure of and flag what it is unsure of.

    Args:
        model: The edge detector.
        kept: The cleaned records (patterns applied), in order.
        originals: Each text's original, by id.
        edits: Each text's edits (extended in place with the model's, applied or not).
        decisions: ``edit_id -> accept|reject``; a rejected cut is recorded but not applied.
        domains: Each kept text's domain (:func:`zcp_core.artifacts.cleaner.domain_of`).

    Returns:
        The records with the cuts applied, and ``edges_review`` flags.
    """
    out, flags = [], []
    for t, found in zip(kept, model.decide([t.text for t in kept], domains, gate_for(model))):
        fresh, reviews = [], []
        orig = originals[t.id]
        applied = [e for e in edits.get(t.id, []) if e["applied"]]
        if any(e["replacement"] for e in applied):
            out.append(t)  # a rewrite has no character map back to the original
            continue
        pos = _positions(len(orig), applied)
        title = find_title(t.text)
        if title is not None:
            s, e = _span(t.text, EdgeDecision("head", 0, title.at, 1.0, "cut"))
            if (len(t.text) - (e - s)) >= MIN_KEPT * len(t.text):
                edit = _rule_edit(t.id, t.text, orig, pos, (s, e), (TITLE_RULE, "beginning"), decisions)
                fresh.append(edit)
                if edit["accepted"]:  # the model's head decision gives way only to a cut that is made
                    found = [d for d in found if d.edge != "head"]
        numbers = find_sentence_numbers(t.text)
        if applies(numbers, (int(e["start"]) for e in applied)):
            for n in numbers:
                fresh.append(_rule_edit(t.id, t.text, orig, pos, (n.start, n.end), (NUMBER_RULE, "beginning"),
                                        decisions))
        for d in found:
            s, e = _span(t.text, d)
            left = len(t.text) - (e - s)
            if d.action == "review" or left < MIN_KEPT * len(t.text) or not (t.text[:s] + t.text[e:]).strip():
                reviews.append(d)
                continue
            ts, te = pos[s], pos[e - 1] + 1
            eid = f"{t.id}:{model.pattern_id}:{d.edge}:{ts}"
            fresh.append({"edit_id": eid, "id": t.id, "pattern_id": f"{model.pattern_id}:{d.edge}",
                          "family": "beginning" if d.edge == "head" else "ending", "action": "strip_match",
                          "start": ts, "end": te, "original": orig[ts:te], "replacement": "", "match": t.text[s:e],
                          "stage": 0, "accepted": decisions.get(eid, "accept") == "accept", "applied": False,
                          "score": round(d.score, 6)})
        for d in reviews:
            # a gated cut that would leave too little comes here below the review threshold: name the gated one
            bar = model.review[d.edge] if d.score >= model.review[d.edge] else model.gate_cut[d.edge]
            flags.append({"id": t.id, "kind": f"{REVIEW_KIND}:{d.edge}", "value": round(d.score, 6), "threshold": bar})
        if not fresh:
            out.append(t)
            continue
        text_edits = edits.setdefault(t.id, [])  # type: ignore[attr-defined]
        if _apply_pass(text_edits, fresh):
            now = [e for e in text_edits if e["applied"]]
            t = replace(t, text=apply_edits(orig, now), metadata={**dict(t.metadata), "n_edits": len(now)})
        out.append(t)
    return out, flags
