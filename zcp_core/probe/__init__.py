"""The Zero-CoT probe: answer with no chain of thought on originals and reference twins, and turn the paired evidence into a Contamination Confidence."""

from __future__ import annotations

from zcp_core.probe.analysis import (
    CONFIDENCE_KEYS,
    confidence_from_tests,
    confidence_summary,
    enforce_min_pairs,
    enforce_min_pairs_table,
    item_gaps,
    sample_size_curve,
    tests_table,
    truncation_curve,
)
from zcp_core.probe.config import (
    DEFAULT_INSTRUCTION,
    DEFAULT_SUFFIX,
    METRICS,
    PROMPT_INSTRUCTIONS,
    RECORD_COLUMNS,
    AnswerFormat,
    ProbeConfig,
    ProbeResult,
)
from zcp_core.probe.flags import item_flags
from zcp_core.probe.measure import cot_prefix, probe_items
from zcp_core.probe.release import release, undo_release
from zcp_core.probe.run import load_item_set, run_probe

__all__ = [
    "AnswerFormat", "CONFIDENCE_KEYS", "DEFAULT_INSTRUCTION", "DEFAULT_SUFFIX", "METRICS", "PROMPT_INSTRUCTIONS", "ProbeConfig",
    "ProbeResult", "RECORD_COLUMNS", "confidence_from_tests", "confidence_summary", "cot_prefix", "enforce_min_pairs",
    "enforce_min_pairs_table", "item_flags", "item_gaps", "load_item_set", "probe_items", "release", "run_probe",
    "sample_size_curve", "tests_table", "truncation_curve", "undo_release",
]
