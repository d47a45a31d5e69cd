"""An item's K twins without repeats: twin k is drawn until it differs from twins 1..k-1.

``zcp reference build --twins K`` once drew each twin independently (seeded by seed, item and twin), so an item
with few valid twins got the same one several times (GSM8K test, K = 4: 653 repeats in 2,892 twins), and a probe
scoring "K twins" scored fewer. Here twin 1 is drawn as before (nothing to avoid, so K = 1 results stay valid);
twin k > 1 is drawn with its own seed avoiding every earlier twin's question text and substitution, then, when
none is left, with up to :data:`REDRAWS` fresh seeds. Only the twin itself must be new: the balance rules' other
side, which only has to have a valid twin, may have it among the earlier ones. An item stops at the first twin it cannot make, so its
twins are numbered 1..n without gaps, and the failure of twin n + 1 (kind ``distinct``) says how many it got and
why not more. The generators (:mod:`~zcp_core.reference.numeric`, :mod:`~zcp_core.reference.template_build`)
call :func:`next_distinct`; :func:`twins_per_item_histogram` and :func:`repeats` read a built set.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from zcp_core.schema import Item

REDRAWS = 3  # fresh seeds a twin k > 1 gets after its own seed's draws are all taken by earlier twins


def substitution_key(substitutions: Mapping[str, Any]) -> str:
    """A substitution (``metadata["substitutions"]``: old -> new) as one comparable string."""
    return json.dumps(substitutions, sort_keys=True, default=str)


@dataclass(frozen=True)
class Avoid:
    """What an item's earlier twins took: their question texts and their substitutions.

    Attributes:
        questions: The earlier twins' questions.
        substitutions: Their :func:`substitution_key`.
    """

    questions: frozenset[str] = frozenset()
    substitutions: frozenset[str] = frozenset()

    @classmethod
    def of(cls, twins: Iterable[Item]) -> Avoid:
        """What ``twins`` took."""
        twins = list(twins)
        return cls(frozenset(t.question for t in twins),
                   frozenset(substitution_key(t.metadata.get("substitutions") or {}) for t in twins))

    def taken(self, question: str, substitutions: Mapping[str, Any]) -> bool:
        """Whether a twin with ``question`` or ``substitutions`` would repeat an earlier one."""
        return question in self.questions or substitution_key(substitutions) in self.substitutions


def next_distinct(make: Callable[[Avoid, int], Item], earlier: Sequence[Item], twin: int,
                  redraws: int = REDRAWS) -> Item:
    """Twin number ``twin`` of an item, new against ``earlier`` (its twins 1..twin-1).

    Args:
        make: Builds a twin avoiding an :class:`Avoid`, on redraw ``r`` (0: the twin's own seed); raises
            ``ValueError`` with the reason when it has none.
        earlier: The item's twins so far.
        twin: The number of the twin wanted.
        redraws: Fresh seeds after the first (twin 1, with nothing to avoid, gets no redraw: it stays as it was).

    Raises:
        ValueError: Twin 1's own reason; for a later twin, kind ``distinct`` with how many the item has and the
            last draw's reason.
    """
    avoid = Avoid.of(earlier)
    why = ""
    for r in range(redraws + 1 if earlier else 1):
        try:
            made = make(avoid, r)
        except ValueError as e:
            why = str(e)
            continue
        if not avoid.taken(made.question, made.metadata.get("substitutions") or {}):  # the generators' own
            return made  # filter should make this always true; a repeat is never let through
        why = "repeat: the generator returned an earlier twin"
    if not earlier:
        raise ValueError(why)
    raise ValueError(f"distinct: the item has {len(earlier)} distinct twin{'s' if len(earlier) > 1 else ''}; "
                     f"twin {twin} found none new in {redraws + 1} seeds (last: {why})")


def twins_per_item_histogram(reference_items: Iterable[Item], originals: Iterable[Item] | None = None
                             ) -> dict[int, int]:
    """How many items have n distinct twins (distinct question texts), by n ascending.

    Args:
        reference_items: Twins of any number of items (``original_id`` set), e.g. every set of a K build.
        originals: The items built from; with them, items without any twin count under 0.
    """
    per: defaultdict[str, set[str]] = defaultdict(set)
    for t in reference_items:
        per[str(t.original_id)].add(t.question)
    counts = Counter(len(qs) for qs in per.values())
    if originals is not None:
        counts[0] += sum(it.id not in per for it in originals)
    return dict(sorted(counts.items()))


def repeats(reference_items: Iterable[Item]) -> int:
    """Twins whose question repeats an earlier twin of the same item."""
    seen: set[tuple[str, str]] = set()
    out = 0
    for t in reference_items:
        key = (str(t.original_id), t.question)
        out += key in seen
        seen.add(key)
    return out
