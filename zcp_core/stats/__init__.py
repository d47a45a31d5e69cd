"""Statistics of the product, by concept (pure numpy/scipy, imported inside the functions that need them).

* :mod:`~zcp_core.stats.confidence`: Contamination Confidence from a p-value, and :class:`TestResult`.
* :mod:`~zcp_core.stats.paired`: paired tests of an original against one twin (McNemar, sign flips,
  bootstrap).
* :mod:`~zcp_core.stats.ktwins`: the benchmark test against K twins per item (which of the K + 1
  questions plays the original), exact at every K.
* :mod:`~zcp_core.stats.itemp`: per-item p-values calibrated on the run's own twins, and BH flags.
* :mod:`~zcp_core.stats.pairing` and :mod:`~zcp_core.stats.roc`: matching twins; AUROC and shares.

Everything below is importable from ``zcp_core.stats`` as before the split.
"""

from zcp_core.stats.confidence import (
    C_CAP,
    MC_FLOOR_RESAMPLES,
    MCNEMAR_CI,
    MIN_PAIRS,
    P_FLOOR,
    TOO_FEW_PAIRS,
    Direction,
    TestName,
    TestResult,
    _Evidence,
    _finish,
    bf10_from_p,
    confidence_from_p,
    min_pairs_reason,
)
from zcp_core.stats.itemp import ItemPValues, bh_flags, conformal_item_pvalues
from zcp_core.stats.ktwins import ScoreKind, role_permutation_test
from zcp_core.stats.paired import (
    BOOTSTRAP_CI,
    CONTINUOUS_TESTS,
    EXACT_MAX_N,
    PERMUTATION_CI,
    ContinuousTest,
    log_binom_sf,
    mcnemar_test,
    paired_bootstrap_test,
    paired_permutation_test,
    paired_test,
    sign_flip_counts,
    sign_flip_pvalues,
    sign_flip_test,
)
from zcp_core.stats.pairing import ItemPair, Pairing, pair_items
from zcp_core.stats.roc import RocCurve, auroc, roc_curve, tpr_at_fpr, wilson_interval

__all__ = [
    "BOOTSTRAP_CI", "CONTINUOUS_TESTS", "C_CAP", "EXACT_MAX_N", "MCNEMAR_CI", "MC_FLOOR_RESAMPLES", "MIN_PAIRS",
    "PERMUTATION_CI", "P_FLOOR", "TOO_FEW_PAIRS", "ContinuousTest", "Direction", "ItemPValues", "ItemPair",
    "Pairing", "RocCurve", "ScoreKind", "TestName", "TestResult", "_Evidence", "_finish", "auroc", "bf10_from_p",
    "bh_flags", "confidence_from_p", "conformal_item_pvalues", "log_binom_sf", "mcnemar_test",
    "min_pairs_reason", "pair_items", "paired_bootstrap_test", "paired_permutation_test", "paired_test",
    "role_permutation_test", "roc_curve", "sign_flip_counts", "sign_flip_pvalues", "sign_flip_test",
    "tpr_at_fpr", "wilson_interval",
]
