"""The contamination lab: a model with known contamination (LoRA on a seeded C split), built and evaluated on this machine."""

from __future__ import annotations

from zcp_core.lab.build import (
    LabBuild,
    alias_for,
    build_lab,
    cache_key,
    default_name,
    lab_root,
    list_builds,
    resolve_build,
)
from zcp_core.lab.config import MODES, PROFILES, LabConfig, LabError, LoraSpec, profile_config
from zcp_core.lab.evaluate import (
    EvalOptions,
    LabEvaluation,
    detection_quality,
    evaluate_lab,
    format_table,
    roc_table,
    targets_report,
)
from zcp_core.lab.split import Split, draw_split, traceable_pool
from zcp_core.lab.train import answer_text, check_trainable, estimate_params

__all__ = [
    "EvalOptions", "LabBuild", "LabConfig", "LabError", "LabEvaluation", "LoraSpec", "MODES", "PROFILES", "Split",
    "alias_for", "answer_text", "build_lab", "cache_key", "check_trainable", "default_name", "detection_quality",
    "draw_split", "estimate_params", "evaluate_lab", "format_table", "lab_root", "list_builds", "profile_config",
    "resolve_build", "roc_table", "targets_report", "traceable_pool",
]
