"""``zcp guided``: the Time-Travel guided-instruction probe on one or two partitions.

Example::

    zcp guided --model smollm2 --dataset data/gsm8k/test.jsonl --split-name test --dataset-name GSM8K \\
        --out runs/guided-test --limit 20 --json
    zcp guided --model lab:smoke --dataset data/gsm8k/test.jsonl --split-name test --dataset-name GSM8K \\
        --compare-dataset data/gsm8k/train_sample.jsonl --compare-split-name train --out runs/guided-both
"""

from __future__ import annotations

import argparse
from typing import Any

from zcp_core.cli.common import add_common, add_model, add_overwrite, claim_out, emit, log, positive_int
from zcp_core.cli.data import add_fields, fields_from_args

SINGLE_KEYS = ("partition", "n", "prompt_style", "rouge_l", "p", "confidence", "exact", "near_exact", "contaminated")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``guided`` command."""
    p = sub.add_parser("guided", help="Time-Travel guided-instruction probe (guided vs general completions)")
    add_model(p)
    p.add_argument("--dataset", required=True, help="benchmark file (partition 1)")
    p.add_argument("--split-name", default="test", help="partition name used in the guided prompt")
    p.add_argument("--dataset-name", required=True, help="dataset name used in the guided prompt (e.g. GSM8K)")
    p.add_argument("--compare-dataset", default=None, help="a second partition of the same dataset")
    p.add_argument("--compare-split-name", default="train", help="name of the second partition")
    p.add_argument("--out", required=True, help="run folder to write")
    add_overwrite(p)
    p.add_argument("--limit", type=positive_int, default=None, help="first N instances of each partition")
    p.add_argument("--task", default="auto", choices=["auto", "classification", "nli", "summarization", "math", "open"])
    p.add_argument("--math-mode", default="question", choices=["question", "question-solution"],
                   help="cut the question, or use the question as first piece and the solution as second")
    p.add_argument("--pair-field", default=None, help="NLI: metadata field holding sentence 2 (e.g. hypothesis)")
    p.add_argument("--prompt-style", default="auto", choices=["auto", "chat", "completion"],
                   help="chat: the paper's instructions through the chat template; completion: plain text to "
                        "continue, no template ('<dataset>, <split> split:\\n<first piece>' vs the first piece "
                        "alone). auto (default): chat where the model has a chat template, completion otherwise "
                        "and for lab builds trained on raw text (verbatim)"),
    p.add_argument("--judge", default=None,
                   help="'rule' for the model-free judge (the default), or a judge model spec other than the "
                        "audited model (the paper's judge is a different, stronger model)")
    p.add_argument("--allow-self-judge", action="store_true",
                   help="allow --judge to name the audited model (or 'self'); small models cannot do the job")
    p.add_argument("--min-exact", type=int, default=1, help="rule: contaminated with at least this many exact")
    p.add_argument("--min-near-exact", type=int, default=2, help="rule: ... or at least this many near-exact")
    p.add_argument("--metric", default="rouge_l", choices=["rouge_l", "edit_sim"],
                   help="score the paired permutation test compares")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-new-tokens", type=int, default=64)
    p.add_argument("--n-resamples", type=int, default=10_000)
    add_fields(p)
    add_common(p)
    p.set_defaults(func=run)


_REFUSE_SELF = ("--judge {} is the audited model; the paper's judge is a different, stronger model. Use the default "
                "rule judge, name another model with --judge, or pass --allow-self-judge.")


def _self_judge_asked(args: argparse.Namespace) -> bool:
    """Whether ``--judge`` names the audited model; refused (before any model loads) without the opt-in."""
    from zcp_core.errors import ZcpError

    asked = args.judge in ("self", args.model)
    if asked and not args.allow_self_judge:
        raise ZcpError(_REFUSE_SELF.format(args.judge))
    return asked


def _judge(args: argparse.Namespace, backend: Any) -> tuple[Any, str, str]:
    """(judge backend or None, judge mode, judge name) from ``--judge`` and ``--allow-self-judge``."""
    from zcp_core.errors import ZcpError

    if args.judge in (None, "rule"):
        return None, "rule", "rule"
    if _self_judge_asked(args):
        return backend, "self", args.model
    from zcp_core.cli.common import backend_from_args

    judge = backend_from_args(args, args.judge)
    if getattr(judge, "model_id", None) == getattr(backend, "model_id", object()):  # another spec, same model
        if not args.allow_self_judge:
            raise ZcpError(_REFUSE_SELF.format(args.judge))
        return backend, "self", args.judge
    return judge, "model", args.judge


def prompt_style(spec: str, backend: Any, asked: str = "auto") -> str:
    """The prompt style to probe in: ``asked`` unless ``auto``, else what the model was tuned for.

    A lab build follows the kind it was trained in (raw text: ``completion``); any other model gets ``chat``
    when it has a chat template (a remote server without a tokenizer here is taken as a chat server).
    """
    if asked != "auto":
        return asked
    from zcp_core.backends.spec import parse_model_spec
    from zcp_core.guided import default_prompt_style

    ms = parse_model_spec(spec)
    if ms.kind == "lab":
        from zcp_core.lab.build import build_style

        if build_style(ms.target) == "completion":
            return "completion"
    tok = getattr(backend, "tokenizer", None)
    return default_prompt_style(tok is None or bool(getattr(tok, "chat_template", None)))


def run_text(folder: Any) -> str:
    """The text the CLI prints for a written run: its report (:func:`zcp_core.guided.report.report`)."""
    from zcp_core.guided.report import report
    from zcp_core.runs import load_run

    return report(load_run(folder)).to_text() + f"\nrun: {folder}"


def run(args: argparse.Namespace) -> int:
    """Probe the partition(s), write the run and print the summary."""
    from zcp_core.cli.common import backend_from_args
    from zcp_core.guided import GuidedConfig, PartitionRule, run_partition, split_dataset, write_guided_run
    from zcp_core.runs import RunSpec

    fields = fields_from_args(args)
    _self_judge_asked(args)  # refuse a self-judge before loading anything
    claim_out(args, args.out, "guided")
    backend = backend_from_args(args)
    judge, judge_mode, judge_name = _judge(args, backend)
    style = prompt_style(args.model, backend, args.prompt_style)
    rule = PartitionRule(args.min_exact if args.min_exact >= 0 else None,
                         args.min_near_exact if args.min_near_exact >= 0 else None)
    parts = [(args.dataset, args.split_name)]
    if args.compare_dataset:
        parts.append((args.compare_dataset, args.compare_split_name))
    results = []
    for path, name in parts:
        split = split_dataset(path, task=args.task, math_mode=args.math_mode, seed=args.seed, limit=args.limit,
                              fields=fields, pair_field=args.pair_field)
        task = split.instances[0].task if split.instances else "math"
        cfg = GuidedConfig(dataset_name=args.dataset_name, split_name=name, task=task, math_mode=args.math_mode,
                           seed=args.seed, max_new_tokens=args.max_new_tokens, metric=args.metric,
                           n_resamples=args.n_resamples, rule=rule, prompt_style=style)  # type: ignore[arg-type]
        log(f"{name}: {len(split.instances)} instances ({len(split.skipped)} skipped) from {path}")
        results.append(run_partition(backend, split, cfg, judge=judge, judge_mode=judge_mode))  # type: ignore[arg-type]
    config = {**{k: v for k, v in vars(args).items() if k != "func"}, "judge": judge_name, "judge_mode": judge_mode,
              "prompt_style": style, "prompt_style_asked": args.prompt_style}
    spec = RunSpec(kind="guided", config=config, model=args.model, model_revision=getattr(backend, "revision", None),
                   dataset=tuple(p for p, _ in parts), seed=args.seed)
    folder = write_guided_run(args.out, spec, results)
    log(f"wrote {folder}")
    sums = [dict(r.summary) for r in results]
    if len(sums) == 1:
        out: dict[str, Any] = {k: sums[0][k] for k in SINGLE_KEYS}
    else:
        out = {"partitions": [{k: s[k] for k in SINGLE_KEYS} for s in sums],
               "side_by_side": {s["partition"]: {k: s[k] for k in SINGLE_KEYS if k != "partition"} for s in sums}}
    out["judge"] = {"name": judge_name, "mode": judge_mode}
    out["prompt_style"] = style
    emit(args, out, run_text(folder))
    return 0
