"""Reference items: isomorphic numeric twins, LLM-generated twins checked by two judges, and paraphrases."""

from __future__ import annotations

from zcp_core.reference.llm import build_reference_llm, parse_generation, parse_verdict
from zcp_core.reference.numbers import ExprError, eval_steps, find_numbers, render_like, safe_eval
from zcp_core.reference.numeric import CALC, failure_kind, fix_articles, perturb_gsm8k, perturb_item
from zcp_core.reference.paraphrase import (
    MIN_CHANGE,
    nonnumeric_change_fraction,
    numbers_kept,
    paraphrase_llm,
    reword_deterministic,
    reword_one,
)
from zcp_core.reference.trace import trace_item

__all__ = [
    "CALC", "ExprError", "MIN_CHANGE", "build_reference_llm", "eval_steps", "failure_kind", "find_numbers",
    "fix_articles", "nonnumeric_change_fraction", "numbers_kept", "paraphrase_llm", "parse_generation",
    "parse_verdict", "perturb_gsm8k", "perturb_item", "render_like", "reword_deterministic", "reword_one",
    "safe_eval", "trace_item",
]
