"""Artifact scanner and cleaner for generated-text benchmarks (DetectRL and friends).

Light to import: only the pattern-library names are loaded here; the scanner
and cleaner live in :mod:`zcp_core.artifacts.scanner` and
:mod:`zcp_core.artifacts.cleaner`.

"""

from __future__ import annotations

from zcp_core.artifacts.browse import (
    ReviewEvent,
    TextView,
    load_review,
    record_review,
    review_state,
    run_review_state,
    text_table,
    text_view,
    undo_review,
)
from zcp_core.artifacts.cleaner import CleanConfig, CleanResult, clean, under_cleaning_marks, undo
from zcp_core.artifacts.patterns import (
    FAMILY_ORDER,
    HIGH_PRECISION,
    Family,
    Pattern,
    PatternError,
    PatternLibrary,
    PatternTimeout,
    compile_library,
    load_library,
)
from zcp_core.artifacts.reclean import reclean, reclean_requests
from zcp_core.artifacts.release import (
    RunInputs,
    export_run,
    load_decisions,
    run_decisions,
    save_decisions,
    write_clean_run,
    write_scan_run,
)
from zcp_core.artifacts.scanner import Span, artifact_spans, dedupe_texts, family_table, scan, summarize

__all__ = [
    "CleanConfig", "CleanResult", "FAMILY_ORDER", "Family", "HIGH_PRECISION", "Pattern", "PatternError",
    "PatternLibrary", "PatternTimeout", "ReviewEvent", "RunInputs", "Span", "TextView", "artifact_spans", "clean",
    "compile_library", "dedupe_texts", "export_run", "family_table", "load_decisions", "load_library", "load_review",
    "reclean", "reclean_requests", "record_review", "review_state", "run_decisions", "run_review_state",
    "save_decisions", "scan", "summarize", "text_table", "text_view", "under_cleaning_marks", "undo", "undo_review",
    "write_clean_run", "write_scan_run",
]
