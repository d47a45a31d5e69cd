"""Time-Travel guided instruction: guided vs general completions, ROUGE-L overlap, a bootstrap partition test, and an LLM judge."""

from __future__ import annotations

from zcp_core.guided.instances import (
    GuidedInstance,
    build_prompt,
    clean_completion,
    cut_bounds,
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
    "FEW_SHOT", "JUDGE_MODES", "GuidedConfig", "GuidedInstance", "PartitionRule", "build_prompt", "clean_completion",
    "cut_bounds", "edit_similarity", "exact_match", "final_label", "highlight_overlap", "instance_seed",
    "instances_frame", "judge_prompt", "lcs_mask", "levenshtein", "normalise", "parse_judge_label", "partition_test",
    "rouge_l", "rule_judge", "run_partition", "sentence_spans", "split_dataset", "split_items", "split_text",
    "split_texts", "write_guided_run",
]
