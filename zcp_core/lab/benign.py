"""Benign fine-tunes: lab kinds trained on a benchmark's training split, never on a test item.

Nearly every model a user audits was fine-tuned on data like the benchmark's training split. A probe that
flags such a model on the test split is useless, so the lab builds two such models on purpose
(``train-solution``: question to worked solution; ``train-direct``: question to "The answer is N.") and the
probe must read them clean on the test set.

Two things make the build a fair null:

- **It saw no test item** (:func:`zcp_core.lab.overlap.find_overlaps`). No training question equals a test question by content
  hash, and no training text shares a word 13-gram with a test question (the GPT-3 decontamination rule).
  A training item that does is dropped before training, with its overlap recorded: GSM8K's train split holds
  near-twins of test items.
- **It moved** (:func:`benign_check`). ``memorised``: the mean per-token log-probability of the build's own
  training texts, lab minus base, paired by text, with a 95% Student-t CI; a CI that does not lie above 0
  makes every reading of the build "uninformative: the fine-tune did not move the model". Beside it,
  full-CoT accuracy on a seeded sample of test items, lab minus base, with the exact McNemar interval.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zcp_core.lab.overlap import NGRAM, Overlap, OverlapReport, find_overlaps, question_hash

__all__ = ["NGRAM", "UNMOVED", "BenignCheck", "BenignOptions", "Overlap", "OverlapReport", "accuracy_difference",
           "benign_check", "check_sample", "check_train_build", "find_overlaps", "paired_t_interval",
           "question_hash"]

if TYPE_CHECKING:

    from zcp_core.schema import Item

UNMOVED = "uninformative: the fine-tune did not move the model"


# ---- the manipulation check of a train kind ------------------------------------------------------


@dataclass(frozen=True)
class BenignCheck:
    """A train kind's check: ``summary`` (``memorised``, ``cot_accuracy``, ``moved``) and two tables.

    ``memorised`` columns: ``id, lab_logprob, base_logprob, memorised``. ``cot`` columns: ``id, lab_correct,
    base_correct, lab_answer, base_answer, lab_tokens, base_tokens``.
    """

    summary: dict[str, Any]
    memorised: Any
    cot: Any


def paired_t_interval(diffs: Sequence[float], level: float = 0.95) -> dict[str, Any]:
    """Mean of paired differences with its Student-t CI and the one-sided p of a mean above 0."""
    from scipy import stats

    d = [float(x) for x in diffs if not math.isnan(float(x))]
    if len(d) < 2:
        return {"mean": None, "ci": [None, None], "p_above_0": None, "n": len(d)}
    r = stats.ttest_1samp(d, 0.0, alternative="greater")
    ci = stats.ttest_1samp(d, 0.0).confidence_interval(level)
    return {"mean": float(sum(d) / len(d)), "ci": [float(ci.low), float(ci.high)], "p_above_0": float(r.pvalue),
            "n": len(d)}


def accuracy_difference(lab: Sequence[bool], base: Sequence[bool]) -> dict[str, Any]:
    """Paired accuracy, lab minus base: the risk difference with its exact McNemar 95% CI and two-sided p."""
    from scipy import stats

    from zcp_core.intervals import mcnemar_bounds

    n = len(lab)
    b = sum(1 for x, y in zip(lab, base, strict=True) if x and not y)
    c = sum(1 for x, y in zip(lab, base, strict=True) if y and not x)
    if n == 0:
        return {"lab": None, "base": None, "difference": None, "ci": [None, None], "p": None, "n": 0}
    lo, hi, _ = mcnemar_bounds(b, c, n)
    p = float(stats.binomtest(b, b + c, 0.5).pvalue) if b + c else 1.0
    return {"lab": sum(map(bool, lab)) / n, "base": sum(map(bool, base)) / n, "difference": (b - c) / n,
            "ci": [float(lo), float(hi)], "p": p, "n": n, "lab_only": b, "base_only": c}


def check_sample(test: Sequence[Item], n: int, seed: int = 0) -> list[Item]:
    """A seeded sample of ``n`` test items, stable for a seed (ordered by ``sha256(seed:id)``)."""
    return sorted(test, key=lambda it: hashlib.sha256(f"{seed}:{it.id}".encode()).hexdigest())[:n]


def benign_check(lab: Any, base: Any, base_path: Any, train: Sequence[Item], test: Sequence[Item],
                 train_format: str, max_new_tokens: int = 256, progress: bool = False) -> BenignCheck:
    """Did the fine-tune move the model, and what did it do to full-CoT accuracy on test items?

    Args:
        lab: Backend of the train-kind build.
        base: Backend of its base model.
        base_path: Local folder of the base (its tokenizer renders the training texts).
        train: The training items the build was trained on.
        test: The test items of the accuracy check (a sample: :func:`check_sample`).
        train_format: The build's training format.
        max_new_tokens: Full-CoT cap (greedy).
        progress: Show progress bars.
    """
    import pandas as pd

    from zcp_core.lab.config import trained_style
    from zcp_core.lab.took import cot_answers, text_logprobs

    lab_lp = text_logprobs(lab, base_path, train, train_format)
    base_lp = text_logprobs(base, base_path, train, train_format)
    mem = pd.DataFrame({"id": [it.id for it in train], "lab_logprob": lab_lp, "base_logprob": base_lp})
    mem["memorised"] = mem["lab_logprob"] - mem["base_logprob"]
    moved = paired_t_interval(mem["memorised"].tolist())
    style = trained_style(train_format)
    la = cot_answers(lab, test, style, max_new_tokens, progress)
    ba = cot_answers(base, test, style, max_new_tokens, progress)
    cot = pd.DataFrame({"id": [it.id for it in test], "lab_correct": la["correct"].to_numpy(),
                        "base_correct": ba["correct"].to_numpy(), "lab_answer": la["answer"].to_numpy(),
                        "base_answer": ba["answer"].to_numpy(), "lab_tokens": la["n_tokens"].to_numpy(),
                        "base_tokens": ba["n_tokens"].to_numpy()})
    is_moved = moved["ci"][0] is not None and moved["ci"][0] > 0
    summary = {
        "moved": is_moved, "verdict": "the fine-tune moved the model" if is_moved else UNMOVED,
        "memorised": {**moved, "train_format": train_format,
                      "what": "mean per-token logprob of the build's own training texts, lab minus base, paired "
                              "by text (Student t)"},
        "cot_accuracy": {**accuracy_difference(cot["lab_correct"].tolist(), cot["base_correct"].tolist()),
                         "prompt_style": style, "max_new_tokens": max_new_tokens, "decoding": "greedy",
                         "what": "full-CoT accuracy on a seeded sample of test items, lab minus base "
                                 "(exact McNemar interval)"},
    }
    return BenignCheck(summary, mem, cot)


@dataclass(frozen=True)
class BenignOptions:
    """How a train kind's check runs.

    Attributes:
        n_test: Test items in the full-CoT accuracy sample.
        seed: Seed of that sample.
        max_new_tokens: Full-CoT cap (greedy).
        device: Device of the models.
        batch_size: Requests per batch.
        cache: Use the persistent response cache.
    """

    n_test: int = 80
    seed: int = 0
    max_new_tokens: int = 256
    device: str = "auto"
    batch_size: int = 16
    cache: bool = True


def check_train_build(name: str, opts: BenignOptions | None = None, out: str | Any = None,
                      progress: bool = False) -> BenignCheck:
    """Run :func:`benign_check` on train-kind build ``name`` and (with ``out``) write its run.

    The run's ``records`` are the accuracy sample (``cot``); its tables are ``memorised`` and the build's
    ``test_overlap``; its summary carries the build's overlap block, so the run alone says the build saw no
    test item and whether it moved.

    Raises:
        LabError: Unknown build, or a build that is not a train kind.
    """
    import time

    import pandas as pd

    from zcp_core.backends import load_backend
    from zcp_core.data import load_items
    from zcp_core.lab.build import resolve_build
    from zcp_core.lab.config import TRAIN_KINDS, LabError
    from zcp_core.lab.train import base_model_path
    from zcp_core.runs import RunSpec, load_run, write_run

    opts = opts or BenignOptions()
    t0 = time.time()
    run = load_run(resolve_build(name))
    cfg, s = dict(run.manifest.get("config", {})), run.summary
    if s.get("mode") not in TRAIN_KINDS:
        raise LabError(f"lab:{name} is a {s.get('mode')} build; this check is for the train kinds {TRAIN_KINDS} "
                       f"(`zcp lab evaluate` probes the others on C and U)")
    trained = set(s.get("contaminated_ids", []))
    train = [it for it in load_items(cfg["train_dataset"]) if it.id in trained]
    test = check_sample(load_items(cfg["dataset"]), opts.n_test, opts.seed)
    cache = "default" if opts.cache else None
    lab = load_backend(f"lab:{name}", cache=cache, device=opts.device, batch_size=opts.batch_size)
    base_spec = str(cfg.get("model") or "smollm2")
    base = load_backend(base_spec, cache=cache, device=opts.device, batch_size=opts.batch_size)
    chk = benign_check(lab, base, base_model_path(base_spec), train, test, str(s.get("train_format")),
                       opts.max_new_tokens, progress)
    summary = {**chk.summary, "stage": "benign-check", "name": name, "mode": s.get("mode"), "model": f"lab:{name}",
               "base": base_spec, "test_overlap": s.get("test_overlap"), "n_train_texts": len(train),
               "check_seconds": time.time() - t0,
               "headline": {"label": "memorised (lab - base, mean logprob per token)",
                            "value": chk.summary["memorised"]["mean"]}}
    if out is not None:
        overlap = run.table("test_overlap") if run.has_table("test_overlap") else pd.DataFrame()
        spec = RunSpec(kind="lab", config={"name": name, **vars(opts)},
                       command=f"zcp lab evaluate --name {name}", model=f"lab:{name}",
                       model_revision=str(s.get("key", ""))[:16], dataset=(cfg["train_dataset"], cfg["dataset"]),
                       seed=opts.seed)
        write_run(out, spec, chk.cot, summary, tables={"memorised": chk.memorised, "test_overlap": overlap})
    return BenignCheck(summary, chk.memorised, chk.cot)
