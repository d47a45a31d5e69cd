"""The contamination lab: models with known contamination of several kinds, and the detector-by-kind matrix.

Each kind is a LoRA recipe on a seeded C split, built and evaluated on this machine.
"""

from __future__ import annotations

from zcp_core.lab.build import (
    BuildPlan,
    LabBuild,
    alias_for,
    build_lab,
    cache_key,
    default_name,
    lab_root,
    list_builds,
    plan_build,
    resolve_build,
)
from zcp_core.lab.config import (
    KIND_FORMAT,
    MODES,
    PROFILES,
    LabConfig,
    LabError,
    LoraSpec,
    check_config,
    profile_config,
    recipe,
)
from zcp_core.lab.evaluate import (
    EvalOptions,
    LabEvaluation,
    detection_quality,
    evaluate_lab,
    pair_split,
    roc_table,
    targets_report,
)
from zcp_core.lab.matrix import DETECTORS, KINDS, MatrixOptions, MatrixResult, run_matrix
from zcp_core.lab.quality import ROW_COLUMNS, Quality, auroc_ci, bonferroni_alpha, matrix_rows, quality, tpr_at_fpr
from zcp_core.lab.split import Split, draw_split, traceable_pool
from zcp_core.lab.train import answer_text, check_trainable, estimate_params, verbatim_text

__all__ = [
    "BuildPlan", "DETECTORS", "EvalOptions", "KINDS", "KIND_FORMAT", "LabBuild", "LabConfig", "LabError",
    "LabEvaluation", "LoraSpec", "MODES", "MatrixOptions", "MatrixResult", "PROFILES", "Quality", "ROW_COLUMNS",
    "Split", "alias_for", "answer_text", "auroc_ci", "bonferroni_alpha", "build_lab", "cache_key", "check_config",
    "check_trainable", "default_name", "detection_quality", "draw_split", "estimate_params", "evaluate_lab",
    "lab_root", "list_builds", "matrix_rows", "pair_split", "plan_build",
    "profile_config", "quality", "recipe", "resolve_build", "roc_table", "run_matrix", "targets_report",
    "tpr_at_fpr", "traceable_pool", "verbatim_text",
]
