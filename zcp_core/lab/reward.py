"""The ``paper`` kind's reward stage: rejection-sampling fine-tuning on C's original prompts.

The ZCP paper (Appendix E) follows its SFT stage with GRPO: 5 sampled
trajectories per prompt and an accuracy reward. GRPO's generation does not fit
2 CPU cores, so on CPU the reward stage is its closest cheap relative, fixed in
advance (:class:`~zcp_core.lab.config.RewardSpec`): sample ``samples``
full-chain completions per original C prompt, grade each (reward 1 if its final
answer is the gold, else 0), and fine-tune on the correct ones as written.

The record keeps every sample with its reward and, per prompt (a GRPO group),
the reward variance: a group whose samples all score alike gives GRPO no
gradient, so the share of such groups says how much a GRPO stage could have
moved the model at all.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zcp_core.lab.config import LabConfig, RewardSpec

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.schema import Item

#: Columns of the ``reward_samples`` table of a paper build.
SAMPLE_COLUMNS = ["id", "sample", "seed", "text", "answer", "reward", "n_tokens"]


@dataclass(frozen=True)
class RewardStage:
    """What the reward stage did: every sample (``table``, :data:`SAMPLE_COLUMNS`) and its summary."""

    table: pd.DataFrame
    summary: dict[str, Any]


def sample_seed(seed: int, item_id: str, k: int) -> int:
    """The seed of sample ``k`` of an item: from the build seed and the item's id only (order-free)."""
    return int(hashlib.sha256(f"{seed}:{item_id}:{k}".encode()).hexdigest()[:8], 16)


def sample_rewards(backend: Any, items: Sequence[Item], spec: RewardSpec, seed: int,
                   progress: bool = False) -> pd.DataFrame:
    """``spec.samples`` sampled full-chain answers per item, each graded (reward 1 correct, 0 not).

    Returns:
        One row per sample, in item order then sample order (:data:`SAMPLE_COLUMNS`).
    """
    import pandas as pd

    from zcp_core.answers import chain_final_answer, grade
    from zcp_core.backends import GenerateRequest, SamplingParams, chat

    keys = [(it, k, sample_seed(seed, it.id, k)) for it in items for k in range(spec.samples)]
    reqs = [GenerateRequest(messages=chat(it.question), thinking="off",
                            params=SamplingParams(max_new_tokens=spec.max_new_tokens, temperature=spec.temperature,
                                                  seed=s)) for it, _, s in keys]
    outs = backend.generate(reqs, progress=progress) if reqs else []
    rows = []
    for (it, k, s), o in zip(keys, outs, strict=True):
        ans = chain_final_answer(o.text)
        rows.append({"id": it.id, "sample": k, "seed": s, "text": o.text, "answer": ans,
                     "reward": float(bool(grade(ans, it.answer).correct)), "n_tokens": int(o.n_tokens)})
    return pd.DataFrame(rows, columns=SAMPLE_COLUMNS)


def reward_summary(table: pd.DataFrame) -> dict[str, Any]:
    """Mean reward, per-group (per-prompt) reward variance and how many groups GRPO could learn from."""
    if table.empty:
        return {"n_prompts": 0, "n_samples": 0, "mean_reward": None, "group_variance_mean": None,
                "zero_variance_groups": 0, "n_kept": 0}
    var = table.groupby("id", sort=False)["reward"].var(ddof=0)
    return {"n_prompts": int(var.size), "n_samples": int(len(table)), "mean_reward": float(table["reward"].mean()),
            "group_variance_mean": float(var.mean()), "zero_variance_groups": int((var == 0).sum()),
            "n_kept": int(table["reward"].sum())}


def kept_items(table: pd.DataFrame, items: Sequence[Item]) -> list[Item]:
    """The correct samples as training items: the item's question, its gold, the sample's text as solution."""
    from zcp_core.schema import Item

    by_id = {it.id: it for it in items}
    return [Item(id=f"{r.id}-sample{r.sample}", question=by_id[r.id].question, answer=by_id[r.id].answer,
                 solution=r.text, source="lab-reward", original_id=r.id)
            for r in table.itertuples() if r.reward > 0]


def reward_stage(cfg: LabConfig, model_dir: Path, c_items: Sequence[Item], info: dict[str, Any],
                 threads: int = 2, progress: bool = False) -> RewardStage:
    """Run the reward stage on the SFT model in ``model_dir`` and save the result over it.

    Args:
        cfg: The build config (``cfg.reward`` set).
        model_dir: The merged SFT model; replaced by the fine-tuned one when any sample was correct.
        c_items: The original C items (their prompts, not the paraphrases).
        info: The build info written beside the weights (``lab_build.json``).
        threads: CPU threads for training.
        progress: tqdm on stderr.
    """
    import time

    from zcp_core.backends import load_backend

    assert cfg.reward is not None, "reward_stage needs cfg.reward"
    t0 = time.time()
    backend = load_backend(f"hf:{model_dir}", cache=None, device="cpu")
    table = sample_rewards(backend, c_items, cfg.reward, cfg.seed, progress)
    del backend
    summary: dict[str, Any] = {**reward_summary(table), "spec": asdict(cfg.reward),
                               "sample_seconds": time.time() - t0, "steps": 0, "final_loss": None}
    keep = kept_items(table, c_items)
    if not keep:
        summary["note"] = "no sample was correct: the reward stage trained nothing"
        return RewardStage(table, summary)
    return RewardStage(table, summary | train_on_samples(cfg, model_dir, keep, info, threads, progress))


def train_on_samples(cfg: LabConfig, model_dir: Path, keep: Sequence[Item], info: dict[str, Any],
                     threads: int = 2, progress: bool = False) -> dict[str, Any]:
    """Fine-tune the model in ``model_dir`` on the kept samples (the build's LoRA settings,
    ``cfg.reward.epochs``) and save the merged result over it; returns steps, seconds and final loss."""
    from dataclasses import replace

    from zcp_core.lab.train import TrainOptions, make_examples, save_merged, train_lora

    assert cfg.reward is not None, "train_on_samples needs cfg.reward"
    examples = make_examples(model_dir, keep, "sample")
    opts = replace(TrainOptions.from_config(cfg, threads=threads), epochs=cfg.reward.epochs)
    result = train_lora(model_dir, examples, opts, None, progress=progress)
    save_merged(result.model, model_dir, model_dir, info)
    return {"steps": int(len(result.loss)), "train_seconds": result.seconds,
            "final_loss": float(result.loss["loss"].iloc[-1]) if len(result.loss) else None}
