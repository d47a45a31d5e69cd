"""Hold a report set out of the texts a pattern library was developed on.

A pattern library tuned on a development set says nothing new about a text it
was tuned against. :func:`hold_out` removes from the report set every text
that also occurs in the development set (exact match after whitespace
normalisation) and counts near-duplicates: kept texts that share their first
or last ``edge_chars`` characters with a development text (same source
passage, lightly edited), which are kept but reported apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from zcp_core.schema import TextRecord

EDGE_CHARS = 120
_WS = re.compile(r"\s+")


def normalise_ws(text: str) -> str:
    """Collapse every whitespace run to one space and strip the ends (the key of "the same text")."""
    return _WS.sub(" ", text).strip()


@dataclass(frozen=True)
class HeldOut:
    """A report set with the development texts taken out.

    Attributes:
        kept: report texts whose normalised text is not in the development set.
        removed: report texts that are (dropped from every figure).
        near_duplicate_ids: ids of kept texts sharing their first or last
            ``edge_chars`` normalised characters with a development text.
        edge_chars: the edge length used for near-duplicates.
    """

    kept: tuple[TextRecord, ...]
    removed: tuple[TextRecord, ...]
    near_duplicate_ids: frozenset[str]
    edge_chars: int

    @property
    def near_duplicates(self) -> tuple[TextRecord, ...]:
        """The kept texts counted as near-duplicates of a development text."""
        return tuple(t for t in self.kept if t.id in self.near_duplicate_ids)


def hold_out(report: Sequence[TextRecord], dev: Sequence[TextRecord], edge_chars: int = EDGE_CHARS) -> HeldOut:
    """Remove from ``report`` every text also in ``dev``; flag near-duplicates among the rest.

    Args:
        report: the texts figures are reported on.
        dev: the texts the patterns were developed on.
        edge_chars: a kept text whose first or last ``edge_chars`` normalised
            characters equal a development text's is a near-duplicate.
    """
    dev_norm = {normalise_ws(t.text) for t in dev}
    heads = {n[:edge_chars] for n in dev_norm}
    tails = {n[-edge_chars:] for n in dev_norm}
    kept, removed, near = [], [], set()
    for t in report:
        n = normalise_ws(t.text)
        if n in dev_norm:
            removed.append(t)
            continue
        kept.append(t)
        if n[:edge_chars] in heads or n[-edge_chars:] in tails:
            near.add(t.id)
    return HeldOut(tuple(kept), tuple(removed), frozenset(near), edge_chars)
