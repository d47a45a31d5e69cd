"""How many contaminated items a release leaves in: an estimate from the run's per-item p-values.

Storey's estimator of the share of null items (items whose original does not stand out among its twins),

    pi0 = #{p > lambda} / ((1 - lambda) m),

reads the p-values above ``lambda``, where contaminated items' p are rare, as the flat tail of the nulls'
uniform p. Over the ``m`` items with a p, about ``m (1 - pi0)`` are contaminated. The release leaves in the
items it keeps, so the estimate is taken over those: ``max(0, m_kept - #{kept p > lambda} / (1 - lambda))``.
Under ``--replace flagged`` every replaced item is a discovery with ``p <= q <= lambda``, and this is
``max(0, m (1 - pi0) - replaced)``; under ``--replace covered`` it also credits the unflagged items replaced.

Items without a p (fewer than two twins, or no score) are not counted. It is an estimate: it assumes the
null p are uniform (conformal p are, up to items not being exactly exchangeable) and that contaminated
items' p rarely exceed ``lambda``; its 95% interval resamples items with replacement (seeded).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: Storey's lambda: p above it are read as the nulls' flat tail.
STOREY_LAMBDA = 0.5
#: Bootstrap resamples of the interval, and its seed (the same run gives the same interval).
N_BOOT = 2000
BOOT_SEED = 0
METHOD = "storey"


@dataclass(frozen=True)
class Leftover:
    """The estimated number of contaminated items a release leaves in.

    Attributes:
        method: ``storey``: Storey's estimator of the null share at ``lam``.
        lam: Storey's lambda.
        tested: Items with a p (the only ones counted).
        pi0: The estimated null share among them (at most 1).
        contaminated: ``tested (1 - pi0)``: the estimated contaminated items among them.
        kept: Items with a p that the release keeps.
        left: The estimated contaminated items among the kept ones (at least 0).
        left_ci: Its bootstrap 95% percentile interval over items.
        n_boot: Bootstrap resamples.
        seed: Their seed.
    """

    method: str
    lam: float
    tested: int
    pi0: float
    contaminated: float
    kept: int
    left: float
    left_ci: tuple[float, float]
    n_boot: int
    seed: int


def _left(above: Any, kept: Any, lam: float) -> Any:
    """``max(0, m_kept - #{kept p > lam} / (1 - lam))`` along the last axis (boolean arrays)."""
    import numpy as np

    k, a = np.asarray(kept), np.asarray(above)
    return np.maximum(0.0, k.sum(axis=-1) - (a & k).sum(axis=-1) / (1.0 - lam))


def storey_leftover(p: Sequence[float], replaced: Sequence[bool], lam: float = STOREY_LAMBDA,
                    n_boot: int = N_BOOT, seed: int = BOOT_SEED) -> Leftover | None:
    """Storey's estimate of the contaminated items left among the items a release keeps.

    Args:
        p: Each item's p (NaN: no p; such items are not counted).
        replaced: Whether the release replaced the item, in the same order.
        lam: Storey's lambda, in (0, 1).
        n_boot: Bootstrap resamples of items for the 95% interval.
        seed: The bootstrap's seed.

    Returns:
        A :class:`Leftover`, or None when no item has a p.
    """
    import numpy as np

    if not 0.0 < lam < 1.0:
        raise ValueError(f"Storey's lambda must lie in (0, 1), got {lam}")
    pv, rep = np.asarray(p, dtype=float), np.asarray(replaced, dtype=bool)
    if pv.shape != rep.shape:
        raise ValueError(f"{pv.size} p-values but {rep.size} replaced marks")
    ok = np.isfinite(pv)
    m = int(ok.sum())
    if not m:
        return None
    above, kept = pv[ok] > lam, ~rep[ok]
    pi0 = min(1.0, float(above.sum()) / ((1.0 - lam) * m))
    idx = np.random.default_rng(seed).integers(0, m, size=(n_boot, m))
    boot = _left(above[idx], kept[idx], lam)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return Leftover(METHOD, lam, m, pi0, m * (1.0 - pi0), int(kept.sum()), float(_left(above, kept, lam)),
                    (float(lo), float(hi)), n_boot, seed)


def leftover_text(est: Leftover | None, controlled: bool) -> str:
    """The card's sentence on the contaminated items the release leaves in (an estimate, its method named)."""
    from zcp_core.report import fmt_count, fmt_num, fmt_value_ci

    if est is None:
        return ("No estimate of the contaminated items left: " + ("no item has a p." if controlled else
                "the acc rule gives no per-item p."))
    return (f"Estimated contaminated items left in the release: {fmt_num(est.left, 1)} (bootstrap 95% interval "
            f"{fmt_value_ci(*est.left_ci, digits=1)} over items) of the {fmt_count(est.kept)} kept items with a p. "
            f"It is an estimate (Storey's null share pi0 at lambda = {est.lam:g}: {fmt_num(est.pi0)}, so about "
            f"{fmt_num(est.contaminated, 1)} of the {fmt_count(est.tested)} items with a p are contaminated), not a "
            "count; items without a p are not counted.")
