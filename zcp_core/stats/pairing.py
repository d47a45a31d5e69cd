"""Matching originals with their reference twins by ``original_id``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from zcp_core.errors import DataError

if TYPE_CHECKING:
    from zcp_core.schema import Item


@dataclass(frozen=True)
class ItemPair:
    """An original item and its reference twin."""

    original_id: str
    reference_id: str


@dataclass(frozen=True)
class Pairing:
    """How originals were matched with reference twins.

    Attributes:
        pairs: Matched pairs, in the originals' order (an original with K twins has K pairs, in twin order).
        unpaired_original: Originals with no twin; left out of the test and counted.
    """

    pairs: tuple[ItemPair, ...]
    unpaired_original: tuple[str, ...]


def pair_items(original_ids: Sequence[str], reference: Sequence[Item]) -> Pairing:
    """Match each original id with the reference items whose ``original_id`` names it (K twins: one pair each,
    told apart by ``metadata["twin"]``, 1..K).

    Raises:
        DataError: A duplicated original id, a reference item without an
            ``original_id``, two reference items naming the same original, or
            one naming an id that is not among the originals.
    """
    where = "reference set"
    seen: set[str] = set()
    for oid in original_ids:
        if oid in seen:
            raise DataError("original set", None, "id", f"duplicate original id {oid!r}; ids must be unique")
        seen.add(oid)
    twin: dict[str, dict[int, str]] = {}
    for it in reference:
        if not it.original_id:
            raise DataError(where, None, "original_id",
                            f"reference item {it.id!r} has no original_id, so it cannot be paired")
        k = int(it.metadata.get("twin") or 1)
        if k in twin.get(it.original_id, {}):
            raise DataError(where, None, "original_id",
                            f"original_id {it.original_id!r} is claimed by reference items "
                            f"{twin[it.original_id][k]!r} and {it.id!r} as the same twin; each original may have "
                            "one twin per number (metadata twin: 1..K, from `zcp reference build --twins K`)")
        if it.original_id not in seen:
            raise DataError(where, None, "original_id",
                            f"reference item {it.id!r} names original_id {it.original_id!r}, "
                            "which is not in the original set (wrong file, or a different --limit?)")
        twin.setdefault(it.original_id, {})[k] = it.id
    pairs = tuple(ItemPair(oid, twin[oid][k]) for oid in original_ids if oid in twin for k in sorted(twin[oid]))
    unpaired = tuple(oid for oid in original_ids if oid not in twin)
    return Pairing(pairs=pairs, unpaired_original=unpaired)
