"""The lab's C/U split: seeded, disjoint, equal-sized, drawn from items with a reference twin.

"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from zcp_core.lab.config import LAB_AMBIGUITY, LabError

if TYPE_CHECKING:
    from zcp_core.lab.config import LabConfig
    from zcp_core.schema import Item


@dataclass(frozen=True)
class Split:
    """A seeded C/U split.

    Attributes:
        contaminated: Ids of C (trained on), in draw order.
        clean: Ids of U (held out), in draw order.
        seed: The seed.
        pool_size: Items the split was drawn from.
        excluded: ``(id, reason)`` for items left out of the pool (e.g. no traceable reference).
    """

    contaminated: tuple[str, ...]
    clean: tuple[str, ...]
    seed: int
    pool_size: int
    excluded: tuple[tuple[str, str], ...] = ()


def draw_split(ids: Sequence[str], n: int, seed: int, excluded: Sequence[tuple[str, str]] = ()) -> Split:
    """Draw disjoint C and U of ``n`` ids each, stably for a seed.

    Ids are ordered by ``sha256(seed:id)``, so the draw does not depend on the
    Python version or on the order of the pool, and a larger ``n`` keeps the
    smaller split's items. Draws alternate between C and U.

    Raises:
        LabError: If the pool holds fewer than ``2n`` distinct ids.
    """
    pool = sorted(set(ids), key=lambda i: hashlib.sha256(f"{seed}:{i}".encode()).hexdigest())
    if n < 1 or 2 * n > len(pool):
        raise LabError(f"cannot draw |C|=|U|={n} from {len(pool)} items (need {2 * n})")
    chosen = pool[: 2 * n]
    return Split(tuple(chosen[0::2]), tuple(chosen[1::2]), seed, len(pool), tuple(excluded))


def traceable_pool(items: Sequence[Item], dataset: str | None = None) -> tuple[list[Item], list[tuple[str, str]]]:
    """Items with a reference twin, and the others with reasons.

    The twin is numeric (``perturb_gsm8k``) where the items carry traceable worked solutions (GSM8K); where none
    traces and ``dataset`` has shipped program templates (MATH-500), it is a template twin at seed 0. The split is
    drawn from these items only, so evaluation never loses a C or U item to a failed twin.
    """
    from zcp_core.reference import perturb_gsm8k

    ref = perturb_gsm8k(list(items), ambiguity=LAB_AMBIGUITY)
    if not ref.items and dataset is not None:
        return template_pool(items, dataset)
    ok = {it.original_id for it in ref.items}
    reasons = {f.id: _failure_reason(f) for f in ref.failures}
    keep = [it for it in items if it.id in ok]
    dropped = [(it.id, reasons.get(it.id, "no reference twin")) for it in items if it.id not in ok]
    return keep, dropped


def template_pool(items: Sequence[Item], dataset: str) -> tuple[list[Item], list[tuple[str, str]]]:
    """Items with a template twin (the dataset's shipped templates, seed 0, twin 1), and the others with reasons.

    Raises:
        LabError: When the dataset has no shipped templates.
    """
    from zcp_core.reference.template import load_templates, shipped_templates
    from zcp_core.reference.template_build import template_twins

    path = shipped_templates(dataset)
    if path is None:
        raise LabError(f"{dataset}: no item traces to a numeric twin and no program templates are shipped for it, "
                       "so the lab has no twins to probe against")
    ref = template_twins(list(items), load_templates(path), seed=0, twins=1)[0]
    ok = {it.original_id for it in ref.items}
    reasons = {f.id: _failure_reason(f) for f in ref.failures}
    return ([it for it in items if it.id in ok],
            [(it.id, reasons.get(it.id, "no template twin")) for it in items if it.id not in ok])


def paraphrasable_pool(items: Sequence[Item], cfg: LabConfig, need: int | None = None
                       ) -> tuple[list[Item], list[tuple[str, str]]]:
    """For evasive builds: items with at least one paraphrase changing >= 50% of non-numeric words.

    Items are checked in the split's draw order (``sha256(seed:id)``) and the
    check stops once ``need`` items passed, so the draw equals filtering the
    whole pool first, at a fraction of the cost. Both C and U come from this
    pool, so every C item is really trained on (through its paraphrases).
    """
    from zcp_core.reference import reword_deterministic

    ordered = sorted(items, key=lambda it: hashlib.sha256(f"{cfg.seed}:{it.id}".encode()).hexdigest())
    keep: list[Item] = []
    dropped: list[tuple[str, str]] = []
    for it in ordered:
        if need is not None and len(keep) >= need:
            break
        if reword_deterministic([it], versions=cfg.paraphrase_versions, seed=cfg.seed).items:
            keep.append(it)
        else:
            dropped.append((it.id, "evasive: no paraphrase changes >= 50% of the non-numeric words"))
    return keep, dropped


def _failure_reason(f: Any) -> str:
    for attr in ("reason", "message"):
        if hasattr(f, attr):
            return str(getattr(f, attr))
    return str(f)
