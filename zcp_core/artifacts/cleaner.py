"""Clean artifacts out of texts, recording every edit so it can be undone.

A rejection (``drop_text``) drops the text; a text that cannot be repaired by
cutting (an unfilled placeholder, an assistant's self-description, a refusal
inside the story: ``hold_back``), or one whose edits cut every character of it
(:data:`EMPTIED`), is held back, dropped with its reason, unless
``CleanConfig.held_back`` is ``keep`` (then it stays, flagged); a reviewer
puts a held-back text back by rejecting its edit. ``strip_sentence`` removes from the
match to the next ``.``, ``?``, ``!`` or ``:`` (or to the close of a bold title the match opens,
``…style:**Title**``); ``strip_match`` removes only
the match; ``flag`` never edits. Edited texts are scanned again until nothing
more matches (:mod:`zcp_core.artifacts.rescan`: a cut can uncover a second
leftover). Each edit keeps its span in the original text and the removed
characters, so :func:`undo` restores the original exactly.
Accept/reject decisions per ``edit_id`` are respected; over-cleaning (text
shrank a lot, or sentence/token counts far from the human median of its
domain) and under-cleaning are flagged.

Under-cleaning: a residual scorer (e.g. a detector) scores every edited text,
and only the most AI-like are marked, as the paper re-cleans only the most
AI-like samples. The rule is ``top_share`` (default: the top 10% of residual
scores, i.e. the ``ceil(share × scored)`` highest; texts tied with the last of
them are marked too) or ``threshold`` (score above a value the user sets).
:attr:`CleanResult.under_cleaning` says which rule ran and how many it marked.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Literal, Mapping, Sequence

# TERMINATORS, sentence_end and undo moved to edits.py; re-exported so this module's public names stay.
from zcp_core.artifacts.edits import (  # noqa: F401
    DROP_ACTIONS,
    TERMINATORS,
    apply_edits,
    edit_span,
    sentence_end,
    undo,
)
from zcp_core.artifacts.patterns import FAMILY_ORDER, PatternLibrary
from zcp_core.artifacts.rescan import rescan_text
from zcp_core.artifacts.scanner import compiled_for, scan
from zcp_core.artifacts.shards import Engine

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.schema import TextRecord

Decision = Literal["accept", "reject"]
#: How the under-cleaning flag picks texts: the top share of residual scores, or a score threshold.
ResidualRule = Literal["top_share", "threshold"]
#: What happens to a text a ``hold_back`` pattern matches: taken out of the release (``drop``) or kept, flagged.
HeldBack = Literal["drop", "keep"]
EDIT_COLUMNS = ["edit_id", "id", "pattern_id", "family", "action", "start", "end", "original", "replacement",
                "accepted", "applied", "stage", "score"]
DROPPED_COLUMNS = ["id", "pattern_id", "reason", "original_text", "kind"]
#: The pattern id a held-back text carries when the edits cut every character of it (no pattern's own).
EMPTIED = "cleaner:emptied"
FLAG_COLUMNS = ["id", "kind", "value", "threshold"]
# DetectRL file stems name the domain; human data_type values are the domain's own name.
DOMAIN_BY_STEM = {"arxiv": "abstract", "xsum": "document", "writing_prompt": "story", "yelp_review": "content"}
_SENTENCE_END = re.compile(r"[.!?]+(?:\s|$)")


@dataclass(frozen=True)
class CleanConfig:
    """Thresholds for over- and under-cleaning flags.

    Attributes:
        shrink_ratio: Flag when cleaned length / original length is below this.
        count_low: Flag when sentence or token count / human median is below this.
        count_high: ... or above this.
        residual_rule: ``top_share`` (mark the most AI-like share of the scored texts) or ``threshold``.
        residual_top_share: The share ``top_share`` marks (0.10: the top 10% of residual scores).
        residual_threshold: ``threshold``: mark when the residual AI-likelihood is above this.
        held_back: ``drop`` (default) takes a text that cannot be repaired out, with its reason; ``keep`` leaves
            it in, flagged ``pattern:<id>``.
        edges: The learned edge detector run after the patterns (:mod:`zcp_core.artifacts.edges`): ``none``
            (default here), ``auto`` (the bundled DetectRL model; ``zcp clean``'s default) or a model file.
    """

    shrink_ratio: float = 0.5
    count_low: float = 1 / 3
    count_high: float = 3.0
    residual_rule: ResidualRule = "top_share"
    residual_top_share: float = 0.10
    residual_threshold: float = 0.5
    held_back: HeldBack = "drop"
    edges: str = "none"

    def __post_init__(self) -> None:
        if self.held_back not in ("drop", "keep"):
            raise ValueError(f"held_back must be 'drop' or 'keep', got {self.held_back!r}")
        if self.residual_rule not in ("top_share", "threshold"):
            raise ValueError(f"residual_rule must be 'top_share' or 'threshold', got {self.residual_rule!r}")
        if not 0 < self.residual_top_share <= 1:
            raise ValueError(f"residual_top_share must be in (0, 1], got {self.residual_top_share}")

    def residual_rule_text(self) -> str:
        """The under-cleaning rule in words (audit card, summaries)."""
        if self.residual_rule == "threshold":
            return f"residual score above {self.residual_threshold:g} (a threshold set by the user)"
        return (f"top {100 * self.residual_top_share:g}% of residual scores among the scored (edited) texts: the "
                f"ceil({self.residual_top_share:g} x scored) most AI-like, and any tied with the last of them")


def under_cleaning_marks(scores: Sequence[float], cfg: CleanConfig) -> tuple[list[bool], float]:
    """Which scored texts the under-cleaning flag marks, and the score cut it used.

    ``top_share`` marks the ``ceil(share × n)`` highest scores (and ties with
    the lowest of them); ``threshold`` marks scores above the threshold.
    """
    vals = [float(x) for x in scores]
    if cfg.residual_rule == "threshold":
        return [v > cfg.residual_threshold for v in vals], cfg.residual_threshold
    if not vals:
        return [], math.nan
    # round() first: 0.1 * 30 is 3.0000000000000004 in floating point, whose ceil would be 4.
    k = max(1, math.ceil(round(cfg.residual_top_share * len(vals), 9)))
    cut = sorted(vals, reverse=True)[k - 1]
    return [v >= cut for v in vals], cut


@dataclass(frozen=True)
class CleanResult:
    """What :func:`clean` returns.

    Attributes:
        texts: Cleaned records, dropped ones excluded (input order).
        edits: ``edit_id, id, pattern_id, family, action, start, end, original,
            replacement, accepted, applied, stage, score`` (offsets into the original text;
            ``applied`` is False for rejected or overlapped edits; ``score`` is the edge detector's, NaN for a
            pattern's).
        dropped: ``id, pattern_id, reason, original_text, kind`` (``rejected``: the text is a refusal or
            no text; ``held_back``: it cannot be repaired by cutting).
        flags: ``id, kind, value, threshold`` (over/under-cleaning and
            flag-only pattern hits; a ``residual_score`` flag's threshold is the cut its rule used).
        library_sha256: Hash of the pattern library used.
        under_cleaning: The under-cleaning rule and its outcome: ``rule``, ``rule_text``, ``assessed``
            (False without a scorer), ``scored``, ``marked``, ``cut``.
    """

    texts: tuple[TextRecord, ...]
    edits: pd.DataFrame
    dropped: pd.DataFrame
    flags: pd.DataFrame
    library_sha256: str = ""
    under_cleaning: Mapping[str, Any] = field(default_factory=dict)


def propose_edits(texts: Sequence[TextRecord], matches: pd.DataFrame) -> list[dict[str, Any]]:
    """One proposed edit per distinct span of non-flag matches (before decisions and overlap resolution).

    ``matches`` must be in scan order (family order within a text), so a span
    several patterns share is credited to the first of them.
    """
    by_id = {t.id: t.text for t in texts}
    out = []
    seen: set[tuple[str, int, int]] = set()
    for m in matches.itertuples(index=False):
        if m.action == "flag":
            continue
        text = by_id[m.id]
        s, e = edit_span(text, int(m.start), int(m.end), str(m.action))
        if (m.id, s, e) in seen:
            continue  # several patterns, one span: one edit, credited to the first pattern in family order
        seen.add((m.id, s, e))
        out.append({"edit_id": f"{m.id}:{m.pattern_id}:{int(m.start)}", "id": str(m.id),
                    "pattern_id": str(m.pattern_id), "family": str(m.family), "action": str(m.action),
                    "start": s, "end": e, "original": text[s:e], "replacement": "", "match": str(m.match),
                    "stage": 0})
    return out


def _resolve(edits: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
    """Mark which accepted edits of one text apply; return them and whether the text is dropped."""
    drop = next((e for e in edits if e["accepted"] and e["action"] in DROP_ACTIONS), None)
    last_end = -1
    rank = {f: i for i, f in enumerate(FAMILY_ORDER)}  # ties go to the first-match-wins family
    for e in sorted(edits, key=lambda x: (x["start"], -x["end"], rank[x["family"]], x["edit_id"])):
        if drop is not None:
            e["applied"] = e is drop
        elif e["accepted"] and e["start"] >= last_end:
            e["applied"] = True
            last_end = e["end"]
        else:
            e["applied"] = False
    return edits, drop is not None


def domain_of(t: TextRecord) -> str:
    """The text's domain: metadata ``domain``, a human text's data_type, or the DetectRL file stem in its id."""
    if t.metadata.get("domain"):
        return str(t.metadata["domain"])
    if t.label == "human" and t.data_type:
        return t.data_type
    for stem, dom in DOMAIN_BY_STEM.items():
        if stem in t.id:
            return dom
    return ""


def counts(text: str) -> tuple[int, int]:
    """(sentences, whitespace tokens) of a text."""
    return max(1, len(_SENTENCE_END.findall(text.strip() + " "))), len(text.split())


def human_medians(texts: Sequence[TextRecord]) -> dict[str, tuple[float, float]]:
    """Median (sentences, tokens) of human texts per domain; key ``""`` pools all domains."""
    groups: dict[str, list[tuple[int, int]]] = {}
    for t in texts:
        if t.label == "human":
            c = counts(t.text)
            groups.setdefault(domain_of(t), []).append(c)
            groups.setdefault("", []).append(c)
    return {d: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v)) for d, v in groups.items()}


def _flags(orig: TextRecord, cleaned: str, medians: dict[str, tuple[float, float]], cfg: CleanConfig) -> list[dict]:
    out = []
    ratio = len(cleaned) / max(1, len(orig.text))
    if ratio < cfg.shrink_ratio:
        out.append({"id": orig.id, "kind": "shrunk", "value": round(ratio, 4), "threshold": cfg.shrink_ratio})
    med = medians.get(domain_of(orig)) or medians.get("")
    if med:
        for kind, n, m in zip(("sentences_far", "tokens_far"), counts(cleaned), med, strict=True):
            r = n / m if m else 0.0
            if r < cfg.count_low or r > cfg.count_high:
                thr = cfg.count_low if r < cfg.count_low else cfg.count_high
                out.append({"id": orig.id, "kind": kind, "value": round(r, 4), "threshold": round(thr, 4)})
    return out


def clean(
    texts: Sequence[TextRecord],
    library: PatternLibrary,
    decisions: Mapping[str, Decision] | None = None,
    scorer: Callable[[list[str]], list[float]] | None = None,
    config: CleanConfig | None = None,
    engine: Engine = "local",
    rescan: bool = True,
) -> CleanResult:
    """Clean artifacts out of texts.

    Args:
        texts: Records to clean (ids unique).
        library: Pattern library.
        decisions: ``edit_id -> accept|reject``; edits not listed are accepted.
        scorer: Optional residual AI-likelihood scorer over cleaned texts
            (under-cleaning flags); called once with all edited texts.
        config: Flag thresholds and the under-cleaning rule.
        engine: ``local`` or ``ray`` for the scan step (identical results).
        rescan: Scan each edited text again and clean what the first pass
            uncovered (see :mod:`zcp_core.artifacts.rescan`); False gives the
            single pass of earlier versions.

    Returns:
        A :class:`CleanResult`.
    """
    import pandas as pd

    cfg = config or CleanConfig()
    if cfg.held_back == "keep":  # a hold-back pattern then only flags; the library's hash is unchanged
        library = replace(library, patterns=tuple(replace(p, action="flag") if p.action == "hold_back" else p
                                                  for p in library.patterns))
    decisions = decisions or {}
    unknown = sorted(set(decisions.values()) - {"accept", "reject"})
    if unknown:
        raise ValueError(f"decisions must be 'accept' or 'reject', got {unknown}")
    matches = scan(texts, library, mode="all", engine=engine)
    per_text: dict[str, list[dict[str, Any]]] = {}
    for e in propose_edits(texts, matches):
        e["accepted"] = decisions.get(e["edit_id"], "accept") == "accept"
        per_text.setdefault(e["id"], []).append(e)
    medians = human_medians(texts)
    kept, all_edits, dropped, flags = [], [], [], []
    kept_edits: dict[str, list[dict[str, Any]]] = {}
    edited_ids: list[str] = []
    compiled = compiled_for(library)
    pass_flags: set[tuple[str, str]] = set()
    for t in texts:
        edits, is_dropped = _resolve(per_text.get(t.id, []))
        if rescan and not is_dropped:
            edits, later, is_dropped = rescan_text(t.id, t.text, edits, compiled, decisions)
            pass_flags.update(later)
        all_edits.extend(edits)
        if not is_dropped:
            kept_edits[t.id] = edits
        applied = [e for e in edits if e["applied"]]
        if is_dropped:
            d = next(e for e in applied if e["action"] in DROP_ACTIONS)
            held = d["action"] == "hold_back"
            reason = f"{'held back: ' if held else ''}{d['family']} ({d['pattern_id']}): {d['match'][:120]!r}"
            dropped.append({"id": t.id, "pattern_id": d["pattern_id"], "reason": reason, "original_text": t.text,
                            "kind": "held_back" if held else "rejected"})
            continue
        new = apply_edits(t.text, applied) if applied else t.text
        if applied and not new.strip():
            # every sentence was an artifact: an empty text released as data is no repair; rejecting any one of
            # its edits puts it back
            if cfg.held_back == "drop":
                dropped.append({"id": t.id, "pattern_id": EMPTIED, "original_text": t.text, "kind": "held_back",
                                "reason": f"held back: nothing is left after cleaning ({len(applied)} edits cut "
                                          f"every character)"})
                continue
            flags.append({"id": t.id, "kind": EMPTIED, "value": 1.0, "threshold": float("nan")})
        kept.append(replace(t, text=new, metadata={**dict(t.metadata), "n_edits": len(applied)}))
        if applied:
            edited_ids.append(t.id)
            flags.extend(_flags(t, new, medians, cfg))
    if cfg.edges != "none":
        from zcp_core.artifacts.edges import load_model
        from zcp_core.artifacts.edges_apply import apply_edges

        before = {id(e) for e in all_edits}
        kept, review = apply_edges(load_model(None if cfg.edges == "auto" else cfg.edges), kept,
                                   {t.id: t.text for t in texts}, kept_edits, decisions, [domain_of(t) for t in kept],
                                   library.names)
        flags.extend(review)
        learned = [e for es in kept_edits.values() for e in es if id(e) not in before]
        all_edits.extend(learned)
        edited_ids.extend(sorted({e["id"] for e in learned if e["applied"]} - set(edited_ids)))
    first = {(str(m.id), f"pattern:{m.pattern_id}") for m in matches[matches["action"] == "flag"].itertuples()}
    for m in matches[matches["action"] == "flag"].itertuples(index=False):
        flags.append({"id": str(m.id), "kind": f"pattern:{m.pattern_id}", "value": 1.0, "threshold": float("nan")})
    for rid, kind in sorted(pass_flags - first):  # flag-only matches a re-scan pass found in a cleaned text
        flags.append({"id": rid, "kind": kind, "value": 1.0, "threshold": float("nan")})
    under = {"rule": cfg.residual_rule, "rule_text": cfg.residual_rule_text(), "assessed": scorer is not None,
             "scored": 0, "marked": 0, "cut": None}
    if scorer is not None and edited_ids:
        by_id = {t.id: t.text for t in kept}
        scores = [float(x) for x in scorer([by_id[i] for i in edited_ids])]
        marks, cut = under_cleaning_marks(scores, cfg)
        for rid, sc, marked in zip(edited_ids, scores, marks, strict=True):
            if marked:
                flags.append({"id": rid, "kind": "residual_score", "value": sc, "threshold": cut})
        under.update(scored=len(scores), marked=sum(marks), cut=cut)
    edits_df = pd.DataFrame(all_edits, columns=EDIT_COLUMNS).astype({"start": "int64", "end": "int64",
                                                                     "accepted": "bool", "applied": "bool",
                                                                     "stage": "int64", "score": "float64"})
    return CleanResult(
        texts=tuple(kept), edits=edits_df, dropped=pd.DataFrame(dropped, columns=DROPPED_COLUMNS),
        flags=pd.DataFrame(flags, columns=FLAG_COLUMNS).astype({"value": "float64", "threshold": "float64"}),
        library_sha256=library.sha256, under_cleaning=under,
    )
