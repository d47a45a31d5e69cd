"""Reference items: isomorphic numeric twins, LLM-generated twins checked by two judges, and paraphrases."""

from __future__ import annotations

from zcp_core.reference.card import TwinCard, twin_card
from zcp_core.reference.distinct import twins_per_item_histogram
from zcp_core.reference.draw import answer_digits, candidates, draw_value
from zcp_core.reference.llm import build_reference_llm, judge_conflicts, parse_generation, parse_verdict
from zcp_core.reference.load import load_reference
from zcp_core.reference.numbers import ExprError, eval_steps, find_numbers, render_like, safe_eval
from zcp_core.reference.numeric import (
    METHOD_NUMERIC,
    ReferenceFailure,
    ReferenceSet,
    failure_kind,
    perturb_gsm8k,
    perturb_item,
)
from zcp_core.reference.paraphrase import (
    MIN_CHANGE,
    nonnumeric_change_fraction,
    numbers_kept,
    paraphrase_llm,
    reword_deterministic,
    reword_one,
)
from zcp_core.reference.rewrite import fix_articles
from zcp_core.reference.trace import CALC, trace_item
from zcp_core.reference.verify import reexecute

__all__ = [
    "CALC", "ExprError", "METHOD_NUMERIC", "MIN_CHANGE", "ReferenceFailure", "ReferenceSet", "TwinCard",
    "answer_digits", "build_reference_llm", "candidates", "draw_value", "eval_steps", "failure_kind",
    "find_numbers", "fix_articles", "judge_conflicts", "load_reference", "nonnumeric_change_fraction", "numbers_kept",
    "paraphrase_llm", "parse_generation", "parse_verdict", "perturb_gsm8k", "perturb_item", "reexecute",
    "render_like", "reword_deterministic", "reword_one", "safe_eval", "trace_item", "twin_card",
    "twins_per_item_histogram",
]
