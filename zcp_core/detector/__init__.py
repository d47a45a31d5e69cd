"""Generated-text detectors (TF-IDF and transformer), SHAP token attributions, the prefix attack, and detector runs."""

from __future__ import annotations

from zcp_core.detector.attack import DEFAULT_PREFIX, AttackConfig, format_attack_table, prefix_attack
from zcp_core.detector.base import Detector, DetectorKind
from zcp_core.detector.compare import CompareConfig, CompareResult, attack_verdict, compare
from zcp_core.detector.data import dedup_texts, load_texts_for_detector, split_texts
from zcp_core.detector.explain import (
    Attributions,
    char_occurrences,
    explain,
    linear_shap,
    linear_token_attributions,
    top_tokens,
    word_occurrences,
)
from zcp_core.detector.factory import detector_scorer, load_detector, score_frame, train_detector
from zcp_core.detector.metrics import compute_metrics, tpr_at_fpr
from zcp_core.detector.runs import (
    CROSS_COLUMNS,
    cross_domain,
    cross_domain_run,
    format_cross_domain,
    train_run,
    write_compare_run,
)
from zcp_core.detector.tfidf import TfidfConfig, TfidfDetector
from zcp_core.detector.transformer import TransformerConfig, TransformerDetector, resolve_checkpoint

__all__ = [
    "AttackConfig", "Attributions", "CROSS_COLUMNS", "CompareConfig", "CompareResult", "DEFAULT_PREFIX", "Detector",
    "DetectorKind", "TfidfConfig", "TfidfDetector", "TransformerConfig", "TransformerDetector", "attack_verdict",
    "char_occurrences", "compare", "compute_metrics", "cross_domain", "cross_domain_run", "dedup_texts",
    "detector_scorer", "explain", "format_attack_table", "format_cross_domain", "linear_shap",
    "linear_token_attributions", "load_detector", "load_texts_for_detector", "prefix_attack", "resolve_checkpoint",
    "score_frame", "split_texts", "top_tokens", "tpr_at_fpr", "train_detector", "train_run", "word_occurrences",
    "write_compare_run",
]
