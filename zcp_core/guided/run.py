"""Run the Time-Travel probe on a partition, test it, and write a ``guided`` run.

One partition (e.g. GSM8K test) goes through: split (``zcp_core.guided``) ->
one batched generate call with the guided and general prompts -> overlap
scores -> judge (the model-free rule by default, or one batched call to a
judge model that is not the audited one; ``self`` is an explicit opt-in;
the summary records which judge ran) -> the paired sign-flip permutation
test of guided vs general overlap (``zcp_core.stats``; it holds its size at
small n, where the paired bootstrap does not; no verdict below
``stats.MIN_PAIRS`` instances) and the partition rule. Prompts come in the
``chat`` or the ``completion`` style (:class:`GuidedConfig`); the summary
records which. Two partitions (e.g. test and train) are run the same way
and reported side by side, as the paper reports per partition.

Records table (``records.parquet``), one row per instance and partition:
``partition``, ``id``, ``task``, ``unit``, ``n_units``, ``cut``, ``fraction``,
``label``, ``first_piece``, ``second_piece``, ``guided_prompt``,
``general_prompt``, ``guided_raw`` / ``general_raw`` (model output),
``guided`` / ``general`` (after :func:`zcp_core.guided.clean_completion`),
``rouge_l_guided``, ``rouge_l_general``, ``exact_guided``, ``exact_general``,
``edit_sim_guided``, ``edit_sim_general``, ``bleurt_guided``,
``bleurt_general`` (NaN when skipped), ``judge_raw``, ``judge_label``,
``judge_parsed``, ``match_label`` (final exact / near_exact / none) and
``match_reason``. Tables ``partitions`` (one row per partition, the
side-by-side view) and ``skipped`` (``partition``, ``id``, ``reason``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from zcp_core.guided.instances import (
    MathMode,
    PromptStyle,
    SplitResult,
    Task,
    build_prompt,
    clean_completion,
    completion_prompt,
)
from zcp_core.guided.judge import PartitionRule, judge_pairs, rule_judge

if TYPE_CHECKING:
    from zcp_core.stats import TestResult

Metric = Literal["rouge_l", "edit_sim"]
#: ``rule`` (model-free; the default), ``model`` (a judge backend other than the audited model, e.g. a stronger
#: one, as in the paper) or ``self`` (the audited model judges its own completions: an explicit opt-in, since a
#: small audited model cannot do the job).
JudgeMode = Literal["rule", "model", "self"]
JUDGE_MODES: tuple[str, ...] = ("rule", "model", "self")
ALPHA = 0.05


@dataclass(frozen=True)
class GuidedConfig:
    """How one partition is probed.

    Attributes:
        dataset_name: Name used in the guided prompt (``GSM8K``).
        split_name: Partition name used in the guided prompt (``test``).
        task: Prompt variant.
        math_mode: For problems: cut the question, or question -> solution.
        seed: Seeds the per-instance cuts and the permutation test.
        max_new_tokens: Completion budget (greedy decoding).
        metric: Overlap score the partition test compares.
        n_resamples: Random sign vectors of the permutation test (above ``stats.EXACT_MAX_N`` instances).
        rule: Judge-count rule for the partition verdict.
        judge_max_new_tokens: Completion budget of the judge.
        partition: Label of this partition in results ("" means ``split_name``); differs from
            ``split_name`` when two subsets of one split are compared (e.g. a lab's C and U).
        prompt_style: ``chat`` (the paper's instructions through the chat template) or ``completion``
            (plain text to continue, no template; see :func:`zcp_core.guided.completion_prompt`).
    """

    dataset_name: str
    split_name: str
    task: Task = "math"
    math_mode: MathMode = "question"
    seed: int = 0
    max_new_tokens: int = 64
    metric: Metric = "rouge_l"
    n_resamples: int = 10_000
    rule: PartitionRule = field(default_factory=PartitionRule)
    judge_max_new_tokens: int = 8
    partition: str = ""
    prompt_style: PromptStyle = "chat"

    @property
    def label(self) -> str:
        """The partition's name in records and summaries."""
        return self.partition or self.split_name


@dataclass(frozen=True)
class PartitionResult:
    """One probed partition: per-instance records, skipped instances and the summary.

    ``summary`` has the CLI's single-partition shape: ``partition``, ``n``,
    ``rouge_l`` (``guided``, ``general``), ``p``, ``confidence``, ``exact``,
    ``near_exact``, ``contaminated``, ``headline`` and ``details``.
    """

    records: Any
    skipped: Any
    summary: Mapping[str, Any]


def partition_test(guided: Sequence[float], general: Sequence[float], metric: str = "rouge_l",
                   n_resamples: int = 10_000, seed: int = 0) -> TestResult:
    """Paired one-sided sign-flip permutation test of guided > general overlap (``zcp_core.stats``).

    It holds its size at every n (the paired bootstrap is anti-conservative at
    small n); the CI is the Student-t 95% interval of the mean difference.
    """
    from zcp_core.stats import paired_permutation_test

    return paired_permutation_test(list(guided), list(general), metric=metric, n_resamples=n_resamples, seed=seed)


def _mean(xs: Sequence[float]) -> float:
    vals = [float(x) for x in xs if x is not None and not math.isnan(float(x))]
    return sum(vals) / len(vals) if vals else math.nan


def _generate(backend: Any, split: SplitResult, cfg: GuidedConfig, progress: bool) -> tuple[list, list, list, list]:
    from zcp_core.backends import GenerateRequest, SamplingParams, chat

    params = SamplingParams(max_new_tokens=cfg.max_new_tokens, temperature=0.0)
    make = completion_prompt if cfg.prompt_style == "completion" else build_prompt
    guided_p = [make(i, "guided", cfg.dataset_name, cfg.split_name) for i in split.instances]
    general_p = [make(i, "general", cfg.dataset_name, cfg.split_name) for i in split.instances]
    # One call for both prompt kinds: the backend batches, sorts and caches the whole lot.
    if cfg.prompt_style == "completion":
        reqs = [GenerateRequest(prompt=p, params=params) for p in guided_p + general_p]
    else:
        reqs = [GenerateRequest(messages=chat(p), params=params, thinking="off") for p in guided_p + general_p]
    outs = backend.generate(reqs, progress=progress) if reqs else []
    n = len(split.instances)
    return guided_p, general_p, [o.text for o in outs[:n]], [o.text for o in outs[n:]]


def _judge_backend(backend: Any, judge: Any, judge_mode: JudgeMode) -> Any:
    """The backend that judges, or None for the rule; refuses the audited model unless ``self`` is asked for."""
    if judge_mode not in JUDGE_MODES:
        raise ValueError(f"unknown judge mode {judge_mode!r}; expected one of {JUDGE_MODES}")
    if judge_mode == "rule":
        return None
    if judge_mode == "self":
        return backend
    same = judge is backend or (judge is not None and getattr(judge, "model_id", None) is not None
                                and getattr(judge, "model_id", None) == getattr(backend, "model_id", None))
    if judge is None or same:
        raise ValueError("judge_mode='model' needs a judge backend other than the audited model; pass judge=..., "
                         "use judge_mode='rule', or judge_mode='self' to let the audited model judge itself")
    return judge


def run_partition(backend: Any, split: SplitResult, cfg: GuidedConfig, judge: Any = None,
                  judge_mode: JudgeMode = "rule", progress: bool = True) -> PartitionResult:
    """Probe one partition end to end.

    Args:
        backend: The model under audit.
        split: Instances from :func:`zcp_core.guided.split_items` / :func:`~zcp_core.guided.split_texts`.
        cfg: Probe settings.
        judge: Judge backend for ``judge_mode="model"``; it must not be the audited model.
        judge_mode: ``rule`` (exact string / edit similarity >= 0.85; the default), ``model`` (the LLM
            judge ``judge``) or ``self`` (the audited model judges itself; opt-in).
        progress: Show progress bars.

    Raises:
        ValueError: For ``model`` without a judge, or with the audited model as judge.
    """
    import pandas as pd

    from zcp_core.guided.overlap import bleurt_scores, bleurt_status, score_pairs

    jb = _judge_backend(backend, judge, judge_mode)  # checked before any generation
    inst = split.instances
    guided_p, general_p, guided_raw, general_raw = _generate(backend, split, cfg, progress)
    guided = [clean_completion(t, i, cfg.prompt_style) for t, i in zip(guided_raw, inst, strict=True)]
    general = [clean_completion(t, i, cfg.prompt_style) for t, i in zip(general_raw, inst, strict=True)]
    refs = [i.second_piece for i in inst]
    cols: dict[str, list] = {**score_pairs(guided, refs, "_guided"), **score_pairs(general, refs, "_general")}
    bstat = bleurt_status()
    if bstat.available and inst:
        cols["bleurt_guided"] = bleurt_scores(guided, refs, bstat)
        cols["bleurt_general"] = bleurt_scores(general, refs, bstat)
    else:
        cols["bleurt_guided"] = cols["bleurt_general"] = [math.nan] * len(inst)
    if jb is None:
        judged = rule_judge(cols["exact_guided"], cols["edit_sim_guided"])
        judge_name = "rule"
    else:
        judged = judge_pairs(jb, refs, guided, cols["exact_guided"], cfg.judge_max_new_tokens, progress)
        judge_name = str(getattr(jb, "model_id", "model"))
    rows = []
    for k, i in enumerate(inst):
        rows.append({
            "partition": cfg.label, "id": i.id, "task": i.task, "unit": i.unit, "n_units": i.n_units,
            "cut": i.cut, "fraction": i.fraction, "label": i.label, "first_piece": i.first_piece,
            "second_piece": i.second_piece, "guided_prompt": guided_p[k], "general_prompt": general_p[k],
            "guided_raw": guided_raw[k], "general_raw": general_raw[k], "guided": guided[k], "general": general[k],
            **{c: v[k] for c, v in cols.items()},
            "judge_raw": judged[k].raw, "judge_label": judged[k].judge_label, "judge_parsed": judged[k].parsed,
            "match_label": judged[k].label, "match_reason": judged[k].reason,
        })
    records = pd.DataFrame(rows, columns=RECORD_COLUMNS)
    skipped = pd.DataFrame([{"partition": cfg.label, "id": s.id, "reason": s.reason} for s in split.skipped],
                           columns=["partition", "id", "reason"])
    summary = summarise(records, cfg, judge_name, bstat.reason, len(split.skipped), judge_mode)
    return PartitionResult(records, skipped, summary)


RECORD_COLUMNS = [
    "partition", "id", "task", "unit", "n_units", "cut", "fraction", "label", "first_piece", "second_piece",
    "guided_prompt", "general_prompt", "guided_raw", "general_raw", "guided", "general",
    "rouge_l_guided", "exact_guided", "edit_sim_guided", "rouge_l_general", "exact_general", "edit_sim_general",
    "bleurt_guided", "bleurt_general", "judge_raw", "judge_label", "judge_parsed", "match_label", "match_reason",
]


def summarise(records: Any, cfg: GuidedConfig, judge_name: str = "", bleurt_reason: str = "",
              n_skipped: int = 0, judge_mode: str = "") -> dict[str, Any]:
    """The partition summary (CLI ``--json`` shape) from a records table.

    ``contaminated`` is the judge-count rule (the paper's Algorithm 2);
    ``details.overlap_significant`` is the paired test at alpha 0.05 (Algorithm 1, with the sign-flip
    permutation test in place of the paper's bootstrap).
    """
    g, r = records[f"{cfg.metric}_guided"].tolist(), records[f"{cfg.metric}_general"].tolist()
    test = partition_test(g, r, cfg.metric, cfg.n_resamples, cfg.seed)
    labels = records["match_label"].tolist()
    n_exact, n_near = labels.count("exact"), labels.count("near_exact")
    contaminated = cfg.rule.verdict(n_exact, n_near)
    conf = test.confidence
    from zcp_core.stats import min_pairs_reason

    too_few = min_pairs_reason(len(records))  # the product's one minimum-sample rule (stats.MIN_PAIRS instances)
    return {
        "partition": cfg.label,
        "n": int(len(records)),
        "prompt_style": cfg.prompt_style,
        "rouge_l": {"guided": _mean(records["rouge_l_guided"]), "general": _mean(records["rouge_l_general"])},
        # Below stats.MIN_PAIRS instances there is no verdict: p and C are withheld, the reason is given.
        "p": None if too_few else test.p,
        "confidence": None if too_few else conf,
        "reason": too_few,
        "exact": n_exact,
        "near_exact": n_near,
        "contaminated": contaminated,
        "headline": {"label": f"Contamination Confidence ({cfg.label}, guided vs general {cfg.metric})",
                     "value": None if too_few else conf, **({"reason": too_few} if too_few else {})},
        "details": {
            "dataset_name": cfg.dataset_name, "split_name": cfg.split_name, "task": cfg.task,
            "math_mode": cfg.math_mode, "metric": cfg.metric, "prompt_style": cfg.prompt_style,
            "test": test.to_dict(), "overlap_significant": bool(not too_few and test.p < ALPHA and test.mean_diff > 0),
            "edit_sim": {"guided": _mean(records["edit_sim_guided"]), "general": _mean(records["edit_sim_general"])},
            "exact_match": {"guided": int(records["exact_guided"].sum()),
                            "general": int(records["exact_general"].sum())},
            "bleurt": {"status": bleurt_reason, "guided": _mean(records["bleurt_guided"]),
                       "general": _mean(records["bleurt_general"])},
            "judge": {"model": judge_name, "mode": judge_mode,
                      "unparsed": int((~records["judge_parsed"].astype(bool)).sum()),
                      "corrected": int((records["match_reason"] != "").sum())},
            "rule": cfg.rule.describe(), "n_skipped": n_skipped, "max_new_tokens": cfg.max_new_tokens,
            "seed": cfg.seed, "n_resamples": cfg.n_resamples,
            "note": too_few,
        },
    }


def side_by_side(summaries: Sequence[Mapping[str, Any]]) -> Any:
    """One row per partition: n, mean overlaps, mean difference, CI, p, Confidence, judge counts, verdicts."""
    import pandas as pd

    rows = []
    for s in summaries:
        d = s.get("details", {})
        t = d.get("test", {})
        rows.append({
            "partition": s["partition"], "n": s["n"], "prompt_style": s.get("prompt_style", "chat"),
            "rouge_l_guided": s["rouge_l"]["guided"],
            "rouge_l_general": s["rouge_l"]["general"], "metric": d.get("metric", "rouge_l"),
            "mean_diff": t.get("mean_diff"), "ci_low": t.get("ci_low"), "ci_high": t.get("ci_high"),
            "p": s["p"], "confidence": s["confidence"], "reason": s.get("reason", ""), "exact": s["exact"],
            "near_exact": s["near_exact"],
            "contaminated": s["contaminated"], "overlap_significant": d.get("overlap_significant"),
        })
    return pd.DataFrame(rows)


def combined_summary(results: Sequence[PartitionResult]) -> dict[str, Any]:
    """The run summary: one partition's summary as is, or ``partitions`` + ``side_by_side`` for several."""
    if len(results) == 1:
        return dict(results[0].summary)
    sums = [dict(r.summary) for r in results]
    rated = [s for s in sums if s["confidence"] is not None]
    if not rated:
        reason = next((s["reason"] for s in sums if s.get("reason")), "no partition could be tested")
        headline = {"label": "max Contamination Confidence over partitions", "value": None, "reason": reason}
    else:
        best = max(rated, key=lambda s: s["confidence"])
        headline = {"label": f"max Contamination Confidence over partitions ({best['partition']})",
                    "value": best["confidence"]}
    return {"partitions": sums, "side_by_side": side_by_side(sums).to_dict("records"), "headline": headline}


def write_guided_run(out: str, spec: Any, results: Sequence[PartitionResult]) -> Any:
    """Write a ``guided`` run folder holding every partition's records, side by side and skipped tables."""
    import pandas as pd

    from zcp_core.runs import write_run

    records = pd.concat([r.records for r in results], ignore_index=True)
    skipped = pd.concat([r.skipped for r in results], ignore_index=True)
    tables = {"partitions": side_by_side([r.summary for r in results]), "skipped": skipped}
    return write_run(out, spec, records, combined_summary(results), tables=tables)


def split_dataset(path: str, task: Task | Literal["auto"] = "auto", math_mode: MathMode = "question", seed: int = 0,
                  limit: int | None = None, fields: Any = None, pair_field: str | None = None) -> SplitResult:
    """Load a dataset file and split its first ``limit`` instances.

    ``auto`` picks ``math`` for problem sets, ``classification`` for labelled
    text corpora and ``open`` for unlabelled ones.
    """
    from zcp_core.data import load_dataset
    from zcp_core.guided.instances import split_items, split_texts

    ds = load_dataset(path, fields=fields)
    if ds.kind == "items":
        return split_items(ds.items[:limit], seed=seed, math_mode=math_mode)
    texts = ds.texts[:limit]
    if task in ("auto", "math"):
        task = "classification" if any(t.label for t in texts) else "open"
    return split_texts(texts, task=task, seed=seed, pair_field=pair_field)  # type: ignore[arg-type]


def instances_frame(split: SplitResult) -> Any:
    """The split as a table: ``id``, ``unit``, ``n_units``, ``cut``, ``fraction``, ``label``, both pieces."""
    import pandas as pd

    cols = ["id", "unit", "n_units", "cut", "fraction", "label", "first_piece", "second_piece"]
    return pd.DataFrame([{c: getattr(i, c) for c in cols} for i in split.instances], columns=cols)
