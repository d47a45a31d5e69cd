"""Artifact scanner and cleaner for generated-text benchmarks (DetectRL and friends).

Light to import: only the pattern-library names are loaded here; the scanner
and cleaner live in :mod:`zcp_core.artifacts.scanner` and
:mod:`zcp_core.artifacts.cleaner`.
"""

from __future__ import annotations

from zcp_core.artifacts.patterns import (
    FAMILY_ORDER,
    HIGH_PRECISION,
    Family,
    Pattern,
    PatternError,
    PatternLibrary,
    compile_library,
    load_library,
)

__all__ = [
    "FAMILY_ORDER", "HIGH_PRECISION", "Family", "Pattern", "PatternError", "PatternLibrary",
    "compile_library", "load_library",
]
