"""Answer-first rate (AFR): chains generated with and without the gold answer shown, kept if correct, matched by id and screened (dAFR)."""

from __future__ import annotations

from zcp_core.afr.adapters import COLUMNS, load_chains, question_uid, think_text
from zcp_core.afr.answer_find import answer_pattern, find_all, find_answer, mentions_answer, parse_number
from zcp_core.afr.browse import (
    ChainSegment,
    ChainView,
    chain_keys,
    chain_segments,
    chain_table,
    chain_view,
    segments_html,
)
from zcp_core.afr.chains import (
    BOX_PREFILL,
    CONDITIONS,
    ChainConfig,
    Problem,
    dry_run,
    generate_chains,
    load_problems,
    prompt_for,
    requests_for,
    save_chains,
    sft_records,
)
from zcp_core.afr.filter import (
    FILTER_DESCRIPTIONS,
    FILTERS,
    KEEP_MODES,
    KeepVerdict,
    digits_only,
    filter_dir,
    filter_warnings,
    grade_records,
    keep_correct,
    read_records,
    records_frame,
    write_records,
)
from zcp_core.afr.profile import (
    compare,
    comparison_line,
    comparison_text,
    profile,
    profile_line,
    profile_summary,
    profile_text,
    write_profile_run,
)
from zcp_core.afr.rate import afr_frame, afr_stats, bootstrap_afr, chain_afr, find_block, histogram
from zcp_core.afr.report import (
    PAPER_DENOMINATOR,
    forced_warnings,
    report,
    screen_line,
    screen_line_all,
    screen_line_own,
    screen_report,
    screen_summary,
    write_screen_run,
)
from zcp_core.afr.screen import (
    ArmInfo,
    check_equal_arms,
    excise,
    excision_control,
    resolve_arms,
    restore_excised,
    screen,
)
from zcp_core.afr.viz import afr_ci_figure, chain_html, group_column, position_histogram

__all__ = [
    "BOX_PREFILL", "COLUMNS", "CONDITIONS", "FILTERS", "FILTER_DESCRIPTIONS", "KEEP_MODES", "PAPER_DENOMINATOR",
    "ArmInfo", "ChainConfig", "ChainSegment", "ChainView", "chain_keys", "chain_segments", "chain_table", "chain_view",
    "segments_html", "KeepVerdict", "Problem", "afr_ci_figure", "afr_frame", "afr_stats", "answer_pattern",
    "bootstrap_afr", "chain_afr", "chain_html", "check_equal_arms", "compare", "comparison_line", "comparison_text",
    "digits_only", "dry_run", "excise", "excision_control", "filter_dir", "filter_warnings", "find_all",
    "find_answer", "find_block", "forced_warnings", "generate_chains", "grade_records", "group_column", "histogram",
    "keep_correct", "load_chains", "load_problems", "mentions_answer", "parse_number", "position_histogram",
    "profile", "profile_line", "profile_summary", "profile_text", "prompt_for", "question_uid", "read_records",
    "records_frame", "report", "requests_for", "resolve_arms", "restore_excised", "save_chains", "screen", "screen_line",
    "screen_line_all", "screen_line_own", "screen_report", "screen_summary", "sft_records", "think_text",
    "write_profile_run", "write_records", "write_screen_run",
]
