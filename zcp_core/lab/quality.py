"""Detection quality of one detector on one contamination kind: AUROC, its bootstrap CIs, TPR at 5% FPR.

Pure functions over per-item scores (higher = more likely a member of C);
:mod:`zcp_core.lab.matrix` feeds them. The AUROC and the ROC come from
scikit-learn; the bootstrap resamples C and U separately (stratified), so
every replicate has both classes, and its replicates are exact AUROCs of the
resampled items (see :func:`auroc_ci`).

The matrix table (:data:`ROW_COLUMNS`), one row per kind and detector:
    kind, detector: the build (``none`` = the untouched model) and the detector id.
    auroc: AUROC of the per-item scores, C positive, U negative (NaN with ``reason`` when not measured).
    auroc_ci: percentile bootstrap 95% CI ``[lo, hi]``.
    auroc_ci_fw: the same bootstrap at the Bonferroni level ``0.05 / family_size``, so that a kind's
        detectors are judged family-wise (a null row should contain 0.5).
    family_size: detectors with a measured AUROC in that kind.
    tpr_at_5fpr: highest TPR over thresholds with FPR <= 5% (ties kept together).
    c_contaminated, c_clean: the method's Contamination Confidence on C and on U (NaN with ``c_reason``
        where the method has none, or a split is too small for a verdict).
    n_c, n_u: items with a finite score on each side.
    reason, c_reason: why ``auroc`` / the confidences are NaN ("" when measured).
    took, took_gain: the kind's manipulation check (:mod:`zcp_core.lab.took`): whether its build took, and
        the full-CoT gain on C over U (None for the untouched model, or where the check did not run).
    auroc_p: the exact two-sided permutation p of the C/U labels for this AUROC (the Mann-Whitney
        distribution over mid-rank sums, ties included; :func:`exact_auroc_p`).
    auroc_p_holm: that p Holm-adjusted across every cell the matrix reading uses (all kinds and detectors
        with a measured AUROC, :data:`OUTSIDE_FAMILY` excepted; NaN outside the family).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

ALPHA = 0.05
FPR_TARGET = 0.05
N_BOOT = 2000
ROW_COLUMNS = ("kind", "detector", "auroc", "auroc_ci", "auroc_ci_fw", "family_size", "tpr_at_5fpr",
               "c_contaminated", "c_clean", "n_c", "n_u", "reason", "c_reason", "took", "took_gain", "auroc_p",
               "auroc_p_holm")
#: Detectors shown but kept out of the Holm family: full-CoT accuracy on twins restates the manipulation check.
OUTSIDE_FAMILY = ("cot_acc",)
NO_SCORES = "no finite score on C or on U"
NAN_PAIR = (math.nan, math.nan)


@dataclass(frozen=True)
class Quality:
    """AUROC, CIs and TPR at 5% FPR of one score on C vs U.

    Attributes:
        auroc: Area under the ROC curve (NaN when a side has no finite score).
        auroc_ci: Bootstrap CI at level ``1 - ALPHA``.
        auroc_ci_fw: Bootstrap CI at the Bonferroni level ``1 - ALPHA / family_size``.
        tpr_at_5fpr: TPR at FPR <= 5%.
        n_pos: Finite C scores.
        n_neg: Finite U scores.
        reason: Why the figures are NaN ("" when measured).
    """

    auroc: float
    auroc_ci: tuple[float, float]
    auroc_ci_fw: tuple[float, float]
    tpr_at_5fpr: float
    n_pos: int
    n_neg: int
    reason: str = ""


def bonferroni_alpha(family_size: int, alpha: float = ALPHA) -> float:
    """The per-detector level that keeps a family of ``family_size`` CIs at ``alpha`` family-wise."""
    if family_size < 1:
        raise ValueError(f"a family needs at least one detector, got {family_size}")
    return alpha / family_size


def _finite(xs: Sequence[float]) -> Any:
    import numpy as np

    a = np.asarray(list(xs), dtype=float)
    return a[~np.isnan(a)]


def tpr_at_fpr(pos: Sequence[float], neg: Sequence[float], fpr: float = FPR_TARGET) -> float:
    """Highest TPR over the thresholds of scikit-learn's ROC curve whose FPR is at most ``fpr``.

    Every threshold is kept (``drop_intermediate=False``), so no point under the
    target is skipped; tied scores stay on one threshold. NaN when a side is empty.
    """
    import numpy as np
    from sklearn.metrics import roc_curve

    p, n = _finite(pos), _finite(neg)
    if p.size == 0 or n.size == 0:
        return math.nan
    y = np.r_[np.ones(p.size), np.zeros(n.size)]
    f, t, _ = roc_curve(y, np.r_[p, n], drop_intermediate=False)
    return float(t[f <= fpr + 1e-12].max())


def auroc_ci(pos: Sequence[float], neg: Sequence[float], alphas: Sequence[float] = (ALPHA,),
             n_boot: int = N_BOOT, seed: int = 0) -> list[tuple[float, float]]:
    """Percentile bootstrap CIs of the AUROC, one per level in ``alphas``, from the same replicates.

    C and U are resampled separately with replacement. A replicate's AUROC is
    ``c_b @ W @ u_b / (n_pos * n_neg)`` where ``W[i, j]`` is 1, 0.5 or 0 as C
    item i scores above, level with or below U item j and ``c_b``, ``u_b`` count
    how often each item was drawn: exactly scikit-learn's AUROC of the
    resampled items, for every replicate at once.

    Returns:
        ``[(lo, hi), ...]`` in the order of ``alphas``; NaNs when a side has no finite score.
    """
    import numpy as np

    p, n = _finite(pos), _finite(neg)
    if p.size == 0 or n.size == 0:
        return [NAN_PAIR for _ in alphas]
    aucs = bootstrap_aurocs(p, n, n_boot, seed)
    return [(float(np.quantile(aucs, a / 2)), float(np.quantile(aucs, 1 - a / 2))) for a in alphas]


def bootstrap_aurocs(pos: Any, neg: Any, n_boot: int = N_BOOT, seed: int = 0) -> Any:
    """The ``n_boot`` bootstrap replicates of the AUROC (a numpy array; see :func:`auroc_ci`)."""
    import numpy as np

    p, n = np.asarray(pos, dtype=float), np.asarray(neg, dtype=float)
    w = (p[:, None] > n[None, :]) + 0.5 * (p[:, None] == n[None, :])
    rng = np.random.default_rng(seed)
    cp = rng.multinomial(p.size, np.full(p.size, 1 / p.size), size=n_boot)
    cn = rng.multinomial(n.size, np.full(n.size, 1 / n.size), size=n_boot)
    return ((cp @ w) * cn).sum(axis=1) / (p.size * n.size)


def quality(pos: Sequence[float], neg: Sequence[float], family_size: int = 1, n_boot: int = N_BOOT,
            seed: int = 0) -> Quality:
    """AUROC (scikit-learn), its 95% and family-wise bootstrap CIs, and TPR at 5% FPR of C vs U scores.

    Args:
        pos: Scores of C items (NaN = not scored; dropped).
        neg: Scores of U items.
        family_size: Detectors measured on the same kind (Bonferroni).
        n_boot: Bootstrap replicates.
        seed: Bootstrap seed.
    """
    import numpy as np
    from sklearn.metrics import roc_auc_score

    p, n = _finite(pos), _finite(neg)
    if p.size == 0 or n.size == 0:
        return Quality(math.nan, NAN_PAIR, NAN_PAIR, math.nan, int(p.size), int(n.size), NO_SCORES)
    auc = float(roc_auc_score(np.r_[np.ones(p.size), np.zeros(n.size)], np.r_[p, n]))
    ci, ci_fw = auroc_ci(p, n, (ALPHA, bonferroni_alpha(family_size)), n_boot, seed)
    return Quality(auc, ci, ci_fw, tpr_at_fpr(p, n), int(p.size), int(n.size))


def matrix_rows(scores: pd.DataFrame, confidences: pd.DataFrame, n_boot: int = N_BOOT, seed: int = 0) -> pd.DataFrame:
    """The matrix table (:data:`ROW_COLUMNS`) from per-item scores and per-method confidences.

    Args:
        scores: ``kind, detector, id, split, score, reason``: one row per item (``split`` ``C``/``U``);
            ``reason`` says why a score is NaN.
        confidences: ``kind, detector, c_contaminated, c_clean, c_reason``: one row per kind and detector.
        n_boot: Bootstrap replicates.
        seed: Bootstrap seed.

    Returns:
        One row per (kind, detector) of ``confidences``, in its order. The family of a kind is its
        detectors with at least one finite score on each side.
    """
    import pandas as pd

    measured = scores[scores["score"].notna()]
    both = measured.groupby(["kind", "detector"])["split"].nunique()
    family = both[both == 2].groupby(level="kind").size().to_dict()
    rows = []
    for c in confidences.itertuples(index=False):
        g = scores[(scores["kind"] == c.kind) & (scores["detector"] == c.detector)]
        q = quality(g.loc[g["split"] == "C", "score"].tolist(), g.loc[g["split"] == "U", "score"].tolist(),
                    max(family.get(c.kind, 1), 1), n_boot, seed)
        why = q.reason
        if why:  # the item-level reasons (e.g. "no LLM judge") say more than "no finite score"
            why = "; ".join(sorted({str(r) for r in g["reason"] if r})) or why
        rows.append({"kind": c.kind, "detector": c.detector, "auroc": q.auroc, "auroc_ci": list(q.auroc_ci),
                     "auroc_ci_fw": list(q.auroc_ci_fw), "family_size": int(family.get(c.kind, 0)),
                     "tpr_at_5fpr": q.tpr_at_5fpr, "c_contaminated": c.c_contaminated, "c_clean": c.c_clean,
                     "n_c": q.n_pos, "n_u": q.n_neg, "reason": why, "c_reason": c.c_reason})
    return with_exact_p(pd.DataFrame(rows, columns=[c for c in ROW_COLUMNS if not c.startswith("auroc_p")]),
                        scores)


def rank_sum_distribution(pos: Sequence[float], neg: Sequence[float]) -> tuple[Any, int, int] | None:
    """The exact null distribution of the C items' doubled mid-rank sum: ``(probabilities, mean, observed)``.

    Mid-ranks are halves, so doubled they are integers; index ``s`` of the array is the doubled sum ``s`` and
    the doubled mean ``k (N + 1)`` is an integer too. A dynamic programme over items counts every labelling
    exactly (sizes up to a few hundred items). None when a side has no finite score.
    """
    import numpy as np
    from scipy.stats import rankdata

    p, n = _finite(pos), _finite(neg)
    if p.size == 0 or n.size == 0:
        return None
    ranks2 = np.rint(2 * rankdata(np.r_[p, n])).astype(np.int64)
    k, total = p.size, int(ranks2.sum())
    # counts[j, s]: labellings of j items as C with doubled rank sum s (floats: up to C(n, k) ~ 1e23 is fine)
    counts = np.zeros((k + 1, total + 1))
    counts[0, 0] = 1.0
    for r in ranks2:
        counts[1:, r:] += counts[:-1, :total + 1 - r].copy()
    return counts[k] / counts[k].sum(), k * (p.size + n.size + 1), int(ranks2[:k].sum())


def exact_auroc_p(pos: Sequence[float], neg: Sequence[float]) -> float:
    """Exact two-sided permutation p of an AUROC under random C/U labels, ties included.

    The AUROC is a function of the C items' mid-rank sum (:func:`rank_sum_distribution`); p is the share of
    labellings whose rank sum is at least as far from its mean as the observed one.
    """
    import numpy as np

    got = rank_sum_distribution(pos, neg)
    if got is None:
        return math.nan
    dist, mean, obs = got
    far = np.abs(np.arange(dist.size) - mean) >= abs(obs - mean) - 1e-9
    return float(min(1.0, dist[far].sum()))


def holm(ps: Sequence[float]) -> Any:
    """Holm-adjusted p-values (step-down, monotone); NaN stays NaN and is not counted in the family."""
    import numpy as np

    pv = np.asarray(ps, dtype=float)
    out = np.full(pv.shape, np.nan)
    idx = np.flatnonzero(np.isfinite(pv))
    m, running = idx.size, 0.0
    for rank, i in enumerate(idx[np.argsort(pv[idx], kind="stable")]):
        running = max(running, min(1.0, (m - rank) * pv[i]))
        out[i] = running
    return out


def with_exact_p(table: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """``table`` (matrix rows) with ``auroc_p`` and ``auroc_p_holm`` from the per-item ``scores``."""
    out = table.copy()
    ps = []
    for r in out.itertuples(index=False):
        g = scores[(scores["kind"] == r.kind) & (scores["detector"] == r.detector)]
        ps.append(exact_auroc_p(g.loc[g["split"] == "C", "score"].tolist(), g.loc[g["split"] == "U", "score"].tolist()))
    out["auroc_p"] = ps
    family = [p if d not in OUTSIDE_FAMILY else math.nan for p, d in zip(ps, out["detector"])]
    out["auroc_p_holm"] = holm(family)
    return out


def json_rows(table: pd.DataFrame) -> list[dict[str, Any]]:
    """The table as JSON-ready dicts: NaN becomes ``None``, CIs ``[lo, hi]`` lists."""
    def clean(v: Any) -> Any:
        if hasattr(v, "tolist"):  # numpy arrays (a parquet list cell) and numpy scalars
            v = v.tolist()
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        if isinstance(v, float) and math.isnan(v):
            return None
        return v

    return [{k: clean(v) for k, v in r.items()} for r in table.to_dict("records")]
