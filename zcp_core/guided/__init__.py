"""Time-Travel guided instruction: guided vs general completions (chat or completion style), ROUGE-L overlap, a
sign-flip permutation partition test, and a judge (rule or LLM)."""

from __future__ import annotations

from zcp_core.guided.instances import (
    PROMPT_STYLES,
    GuidedInstance,
    PromptStyle,
    build_prompt,
    clean_completion,
    completion_prompt,
    cut_bounds,
    default_prompt_style,
    instance_seed,
    sentence_spans,
    split_items,
    split_text,
    split_texts,
)
from zcp_core.guided.judge import FEW_SHOT, PartitionRule, final_label, judge_prompt, parse_judge_label, rule_judge
from zcp_core.guided.overlap import edit_similarity, exact_match, lcs_mask, levenshtein, normalise, rouge_l
from zcp_core.guided.run import (
    JUDGE_MODES,
    GuidedConfig,
    instances_frame,
    partition_test,
    run_partition,
    split_dataset,
    write_guided_run,
)
from zcp_core.guided.viz import highlight_overlap

__all__ = [
    "FEW_SHOT", "JUDGE_MODES", "PROMPT_STYLES", "GuidedConfig", "GuidedInstance", "PartitionRule", "PromptStyle",
    "build_prompt", "clean_completion", "completion_prompt", "cut_bounds", "default_prompt_style", "edit_similarity", "exact_match", "final_label", "highlight_overlap", "instance_seed",
    "instances_frame", "judge_prompt", "lcs_mask", "levenshtein", "normalise", "parse_judge_label", "partition_test",
    "rouge_l", "rule_judge", "run_partition", "sentence_spans", "split_dataset", "split_items", "split_text",
    "split_texts", "write_guided_run",
]
