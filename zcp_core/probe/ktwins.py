"""Statistics of a probe with K twins per item, read from its records: the benchmark test, per-item p, flags.

With K twins the paired statistic of a metric is the original's value minus the mean of its twins'.

* **Benchmark test** (:func:`twin_test`): under "the model treats the original like its twins" the
  original is exchangeable with its twins, so the null permutes which of an item's ``K_i + 1`` questions
  plays the original (:mod:`zcp_core.stats.ktwins`): exact on the lattice for Acc and Con, enumerated or
  Monte Carlo for the P metrics. At K = 1 the probe keeps the exact McNemar and sign-flip tests, which are
  the same tests.
* **Per item** (:func:`item_pvalues`): the original's standardised score against its twins but the
  spare, compared with every other item's twins scored the same way (conformal p,
  :mod:`zcp_core.stats.itemp`), and the exact within-item rank p beside it.
* **Flags** (:func:`bh_flags`): Benjamini-Hochberg discoveries at level q over the items with a p.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

from zcp_core.stats.itemp import bh_flags

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.stats import ItemPValues, ScoreKind, TestResult

__all__ = ["DEFAULT_FDR", "DEFAULT_FLAG_METRIC", "DEFAULT_TWINS", "FLAG_METRICS", "MIN_ITEM_TWINS", "FlagMetric",
           "FlagRule", "TwinScores", "bh_flags", "item_pvalues", "pseudo_null_pvalues", "twin_scores",
           "twin_test"]

FlagMetric = Literal["p_all", "p_first", "p_all_cal", "p_first_cal", "p_all_net", "p_first_net", "acc"]
FLAG_METRICS: tuple[str, ...] = get_args(FlagMetric)
DEFAULT_FDR = 0.1
#: Twins each original is scored against by default (``zcp probe --twins K``; the probe builds K + 1, the last
#: being the spare); chosen by measurement, see the docs.
DEFAULT_TWINS = 4
DEFAULT_FLAG_METRIC = "p_all"
#: Per-item p needs this many distinct twins: one the original is scored against, and the spare.
MIN_ITEM_TWINS = 2
#: Columns of the per-item p table (:func:`item_pvalues`).
ITEM_COLUMNS = ("pair_id", "n_twins", "comparators", "item_score", "item_p", "item_rank_p", "calibration_size")
# log P of a probability of 0 (a token the model never emits) is -inf; floor it like the tests floor p.
_LOG_FLOOR = math.log(1e-300)


@dataclass(frozen=True)
class FlagRule:
    """How items are flagged: BH at ``fdr`` on ``metric``'s per-item p, or the paper's rule for ``acc``.

    Attributes:
        metric: ``p_all`` (default), ``p_first`` (or their calibrated forms), or ``acc``: original right and
            every twin wrong, with no false-discovery control.
        fdr: The BH level q, in (0, 1).
    """

    metric: FlagMetric = DEFAULT_FLAG_METRIC  # type: ignore[assignment]
    fdr: float = DEFAULT_FDR

    def __post_init__(self) -> None:
        if self.metric not in FLAG_METRICS:
            raise ValueError(f"flag metric must be one of {FLAG_METRICS}, got {self.metric!r}")
        if not 0.0 < float(self.fdr) < 1.0:
            raise ValueError(f"--fdr must lie in (0, 1), got {self.fdr}")

    @property
    def controlled(self) -> bool:
        """Whether the flags carry a false-discovery rate (every metric but ``acc``)."""
        return self.metric != "acc"


@dataclass(frozen=True)
class TwinScores:
    """One metric's r = 0 scores per item: the original's and its twins' (finite ones, in twin order).

    Attributes:
        pair_ids: Items with a finite original score and at least one finite twin score.
        original: The original's score per item.
        twins: The twins' scores per item, in twin order.
    """

    pair_ids: tuple[str, ...]
    original: tuple[float, ...]
    twins: tuple[tuple[float, ...], ...]

    @property
    def max_twins(self) -> int:
        """The most twins an item has (0 without items)."""
        return max((len(t) for t in self.twins), default=0)


def twin_scores(records: pd.DataFrame, metric: str, suspect_arm: str = "original") -> TwinScores:
    """Each item's original and distinct twin scores on ``metric`` at r = 0 (bools as 0/1; NaN scores dropped).

    A twin whose question repeats an earlier twin of the same item is left out: it is not a second draw.
    """
    import pandas as pd

    z = records[records["ratio"] == 0.0]
    s = z[z["arm"] == suspect_arm].drop_duplicates("pair_id").set_index("pair_id")[metric]
    s = pd.to_numeric(s.astype("Float64"), errors="coerce").astype(float)
    ref = z[z["arm"] == "reference"]
    order = pd.to_numeric(ref["twin"], errors="coerce").fillna(1) if "twin" in ref else 1
    ref = ref.assign(_n=order, _v=pd.to_numeric(ref[metric].astype("Float64"), errors="coerce").astype(float))
    ref = ref.sort_values(["pair_id", "_n"], kind="stable")
    if "question" in ref:  # a repeated twin (runs made before twins were distinct) counts once
        ref = ref.drop_duplicates(["pair_id", "question"], keep="first")
    groups = {pid: tuple(float(v) for v in g["_v"] if math.isfinite(v)) for pid, g in ref.groupby("pair_id")}
    ids, orig, twins = [], [], []
    for pid, x in s.items():
        tw = groups.get(pid, ())
        if math.isfinite(x) and tw:
            ids.append(str(pid))
            orig.append(float(x))
            twins.append(tw)
    return TwinScores(tuple(ids), tuple(orig), tuple(twins))


def twin_test(scores: TwinScores, metric: str, kind: ScoreKind, prior: float = 0.5, n_resamples: int = 10_000,
              seed: int = 0) -> TestResult:
    """The benchmark test of ``metric``: the role-permutation test at K >= 2 (see the module docstring)."""
    from zcp_core.stats import role_permutation_test

    return role_permutation_test(scores.original, scores.twins, metric, kind, n_resamples, seed, prior)


def _logged(v: float) -> float:
    return max(math.log(v), _LOG_FLOOR) if v > 0 else _LOG_FLOOR


def item_pvalues(records: pd.DataFrame, metric: str, suspect_arm: str = "original") -> pd.DataFrame:
    """Per-item one-sided p of "the original scores above its own twins" on a P metric (r = 0 rows).

    The original is scored against its twins but the last (the spare); the p is its conformal p against
    every other item's twins (:func:`zcp_core.stats.conformal_item_pvalues`). P metrics are compared as log
    probabilities; the calibrated ones are already log-ratios.

    Returns:
        One row per item with at least :data:`MIN_ITEM_TWINS` twin scores: ``pair_id``, ``n_twins``,
        ``comparators``, ``item_score``, ``item_p`` (conformal), ``item_rank_p`` (exact, within the item)
        and ``calibration_size``.
    """
    import pandas as pd

    from zcp_core.stats import conformal_item_pvalues

    sc = twin_scores(records, metric, suspect_arm)
    f = (lambda v: v) if metric.endswith(("_cal", "_net")) else _logged
    keep = [i for i, t in enumerate(sc.twins) if len(t) >= MIN_ITEM_TWINS]
    if not keep:
        return pd.DataFrame(columns=list(ITEM_COLUMNS))
    sets = [tuple(f(v) for v in sc.twins[i]) for i in keep]
    res = conformal_item_pvalues([f(sc.original[i]) for i in keep], [s[:-1] for s in sets], sets)
    return _item_table([sc.pair_ids[i] for i in keep], sets, res)


def _item_table(pair_ids: list[str], sets: list[tuple[float, ...]], res: ItemPValues) -> pd.DataFrame:
    """The per-item p table of :func:`item_pvalues` (and of a pseudo-null draw), columns :data:`ITEM_COLUMNS`."""
    import pandas as pd

    return pd.DataFrame({"pair_id": pair_ids, "n_twins": [len(s) for s in sets], "comparators": res.comparators,
                         "item_score": res.score, "item_p": res.p, "item_rank_p": res.rank_p,
                         "calibration_size": res.calibration_size})[list(ITEM_COLUMNS)]


def pseudo_null_pvalues(records: pd.DataFrame, metric: str, seed: int = 0) -> pd.DataFrame:
    """One pseudo-null draw of per-item p: a random twin of each item plays the original against its other twins.

    The model never saw which question is "original" here, so the draw is a null from the run's own answers,
    with no new model calls. Draws of one run share its answers, so they are not independent.

    Returns:
        The columns of :func:`item_pvalues`, one row per item with at least :data:`MIN_ITEM_TWINS` + 1 twins
        (the stand-in and at least two others, so it is scored against as many comparators as an original).
    """
    import numpy as np
    import pandas as pd

    from zcp_core.stats import conformal_item_pvalues

    sc = twin_scores(records, metric, "original")
    f = (lambda v: v) if metric.endswith(("_cal", "_net")) else _logged
    keep = [i for i, t in enumerate(sc.twins) if len(t) >= MIN_ITEM_TWINS + 1]
    if not keep:
        return pd.DataFrame(columns=list(ITEM_COLUMNS))
    rng = np.random.default_rng(seed)
    sets = [tuple(f(v) for v in sc.twins[i]) for i in keep]
    roles = [int(rng.integers(len(s))) for s in sets]
    res = conformal_item_pvalues([s[r] for s, r in zip(sets, roles)],
                                 [s[:r] + s[r + 1:] for s, r in zip(sets, roles)], sets)
    return _item_table([sc.pair_ids[i] for i in keep], sets, res)
