"""The edge detector's decisions applied to a cleaning: cuts become edits, unsure texts go to review.

Each cut is stored like a pattern edit (:mod:`zcp_core.artifacts.rescan`): a span of the *original* text (the
cleaned span mapped back, whitespace next to it included), ``pattern_id`` ``learned:<name>-<version>:<edge>``,
the model's ``score``, accepted unless a decision rejects its ``edit_id``. Rules cut first, each
with its own ``pattern_id`` and no score: a title the text restates (:mod:`zcp_core.artifacts.titles`; the
model's head decision then gives way to it, unless the cut is rejected or would leave too little), a title left
after a lead-in the patterns cut, or the tail of a title the lead-in quoted (:mod:`zcp_core.artifacts.leadin`;
only in a text whose head a pattern cut),
sentence numbers left after a cut "1." (:mod:`zcp_core.artifacts.numbering`; only in a text whose head was cut,
or a long run), sentence numbers the number patterns left among the ones they cut, and bold markers left after a
pattern cut some (:mod:`zcp_core.artifacts.markup`), all through :func:`rule_cuts`. The
model cuts a head shaped like a glued title at its gated threshold (:func:`gate_for`). An edit a cut encloses is taken over, so
:func:`~zcp_core.artifacts.edits.undo` restores the original as before. A cut that would leave less than
:data:`MIN_KEPT` of the text, or nothing, goes to review instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from zcp_core.artifacts.edges import DEFAULT_MODEL, Candidate, EdgeDecision, load_model
from zcp_core.artifacts.edits import apply_edits
from zcp_core.artifacts.leadin import QUOTE_RULE_ID as QUOTE_RULE
from zcp_core.artifacts.leadin import RULE_ID as LEAD_IN_RULE
from zcp_core.artifacts.leadin import find_lead_in_title, find_quoted_tail
from zcp_core.artifacts.markup import RULE_ID as BOLD_RULE
from zcp_core.artifacts.markup import find_left_bold
from zcp_core.artifacts.numbering import LEFT_RULE_ID as LEFT_RULE
from zcp_core.artifacts.numbering import RULE_ID as NUMBER_RULE
from zcp_core.artifacts.numbering import applies, cut_numbers, find_left_numbers, find_sentence_numbers
from zcp_core.artifacts.patterns import splits_a_name
from zcp_core.artifacts.rescan import _apply_pass, _positions
from zcp_core.artifacts.titles import GATE_ID, find_title, glued_title
from zcp_core.artifacts.titles import RULE_ID as TITLE_RULE

if TYPE_CHECKING:
    from zcp_core.artifacts.edges import EdgeModel
    from zcp_core.schema import TextRecord

MIN_KEPT = 0.4
RULES = (TITLE_RULE, LEAD_IN_RULE, QUOTE_RULE, NUMBER_RULE, LEFT_RULE, BOLD_RULE)  # applied before the model
HEAD_RULES = (TITLE_RULE, LEAD_IN_RULE, QUOTE_RULE)  # the rules that cut a text's head
REVIEW_KIND = "edges_review"
# cuts at a text's head that say nothing of a lead-in: an enclosing quote, a sentence number, an ellipsis, a
# placeholder or a script swap; the lead-in title rule does not take them as its evidence
NOT_LEAD_INS = frozenset({"beg-enclosing-quote", "beg-enclosing-quote-close", "beg-numbered-first",
                          "beg-numbered-glued", "beg-leading-ellipsis", "asst-foreign-script", "sub-instead"})


def lead_in(pattern_id: str) -> bool:
    """Whether a pattern's cut at a text's head is evidence of a lead-in: a pattern's (not a rule's or the
    detector's), and not one of :data:`NOT_LEAD_INS` or a placeholder's."""
    return not (pattern_id in NOT_LEAD_INS or pattern_id.startswith(("asst-placeholder", "rule:", "learned:")))


@dataclass(frozen=True)
class RuleCut:
    """A rule's cut of a cleaned text.

    Attributes:
        rule: The rule's pattern id (one of :data:`RULES`).
        start: First character cut, in the cleaned text.
        end: One past the last (a head title's cut takes the whitespace after it).
        detail: What found it: a title's form, ``quote`` for a quoted title's tail, the sentence number, or ``**``
            for a bold marker.
    """

    rule: str
    start: int
    end: int
    detail: str


def rule_cuts(text: str, applied: Sequence[Mapping[str, Any]], names: frozenset[str] = frozenset()) -> list[RuleCut]:
    """What the stage's rules cut of a cleaned text, given the pattern edits applied to it (their ``start`` in
    the original, ``pattern_id`` and ``original``): the head first (when a pattern cut a lead-in that opened a
    quote, the quoted title's tail; else a restated title, else, when a pattern cut the head, a title left after
    the lead-in), then the sentence numbers, then the bold markers left after a
    pattern cut some (:mod:`zcp_core.artifacts.markup`). No cut splits a name written in camel case (``names``, the
    library's list, or a word the text writes twice: :func:`~zcp_core.artifacts.patterns.splits_a_name`)."""
    out = []
    led = any(int(e["start"]) == 0 and lead_in(str(e["pattern_id"])) for e in applied)
    tail = find_quoted_tail(text, _head_cut(applied)) if led else None
    head: tuple[str, int, str] | None = (QUOTE_RULE, tail, "quote") if tail is not None else None
    if head is None:
        title = find_title(text)
        rule = TITLE_RULE
        if title is None and led:
            title, rule = find_lead_in_title(text), LEAD_IN_RULE
        head = (rule, title.at, title.form) if title is not None else None
    # only a head cut ends between two letters, so only it can split a camel-case name
    if head is not None and not splits_a_name(text, head[1], names):
        s, e = _span(text, EdgeDecision("head", 0, head[1], 1.0, "cut"))
        out.append(RuleCut(head[0], s, e, head[2]))
    numbers, rule = find_sentence_numbers(text), NUMBER_RULE
    if not applies(numbers, (int(e["start"]) for e in applied)):
        numbers, rule = find_left_numbers(text, cut_numbers(applied)), LEFT_RULE
    out += [RuleCut(rule, n.start, n.end, str(n.n)) for n in numbers]
    out += [RuleCut(BOLD_RULE, b.start, b.end, "**") for b in find_left_bold(text, applied)
            if not any(b.start < c.end and c.start < b.end for c in out)]  # a marker inside a cut title goes with it
    return out


def _head_cut(applied: Sequence[Mapping[str, Any]]) -> str:
    """What the applied edits cut from the original's head: the edits from offset 0 on, each starting no later
    than the one before ended."""
    end, parts = 0, []
    for e in sorted(applied, key=lambda e: int(e["start"])):
        if int(e["start"]) > end:
            break
        parts.append(str(e["original"]))
        end = max(end, int(e["start"]) + len(str(e["original"])))
    return "".join(parts)


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
                edits: Mapping[str, list[dict[str, Any]]], decisions: Mapping[str, str], domains: Sequence[str],
                names: frozenset[str] = frozenset()) -> tuple[list[TextRecord], list[dict[str, Any]]]:
    """Cut what the model is sure of and flag what it is unsure of.

    Args:
        model: The edge detector.
        kept: The cleaned records (patterns applied), in order.
        originals: Each text's original, by id.
        edits: Each text's edits (extended in place with the model's, applied or not).
        decisions: ``edit_id -> accept|reject``; a rejected cut is recorded but not applied.
        domains: Each kept text's domain (:func:`zcp_core.artifacts.cleaner.domain_of`).
        names: Names written in camel case no cut may split (the pattern library's); a model cut that would split
            one, or a word the text writes twice, goes to review.

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
        for cut in rule_cuts(t.text, applied, names):
            if cut.rule in HEAD_RULES and len(t.text) - (cut.end - cut.start) < MIN_KEPT * len(t.text):
                continue
            edit = _rule_edit(t.id, t.text, orig, pos, (cut.start, cut.end), (cut.rule, "beginning"), decisions)
            fresh.append(edit)
            if cut.rule in HEAD_RULES and edit["accepted"]:
                found = [d for d in found if d.edge != "head"]  # the model gives way only to a cut that is made
        for d in found:
            s, e = _span(t.text, d)
            left = len(t.text) - (e - s)
            inside = splits_a_name(t.text, d.start, names) or splits_a_name(t.text, d.end, names)
            if (d.action == "review" or inside or left < MIN_KEPT * len(t.text)
                    or not (t.text[:s] + t.text[e:]).strip()):
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


def edges_label(edges: str) -> str:
    """The edge stage a cleaning ran, in one string: ``none``, or the detector's name-version, its file's sha256
    prefix and the ids of the rules the stage applies before it (a measurement of one stage is quoted for that
    stage only, so a changed rule, like a changed model, needs a new one)."""
    if edges == "none":
        return "none"
    import hashlib

    path = DEFAULT_MODEL if edges == "auto" else Path(edges)
    m = load_model(path)
    return (f"{m.name}-{m.version} (sha256 {hashlib.sha256(path.read_bytes()).hexdigest()[:12]}); "
            f"rules {', '.join(RULES)}")
