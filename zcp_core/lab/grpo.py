"""The ``paper`` kind's reward stage as the paper ran it: GRPO with TRL (for a GPU).

ZCP paper, Appendix E: after SFT, GRPO with an accuracy reward and 5 sampled
trajectories per prompt. :func:`grpo_stage` runs TRL's ``GRPOTrainer`` on the
40 original C prompts with the build's LoRA settings and the numbers of
:class:`~zcp_core.lab.config.RewardSpec` (``samples`` generations per prompt,
``max_new_tokens``, ``temperature``, ``epochs``) and the build's learning rate
(the SFT stage's, ``cfg.lr``: 1e-3 for LoRA, where TRL's default is 1e-6 for
full fine-tuning); every other GRPO setting is TRL's default, recorded with
TRL's version. It is built by ``zcp lab build`` only (alias ``paper-grpo``);
``zcp lab matrix`` and ``zcp lab dose`` build the rft stage on any device. One optimiser step sees one
prompt's group, so a group whose rewards are all alike moves nothing.

It is chosen by ``RewardSpec.method == "grpo"`` (``zcp lab build --mode paper
--device cuda`` picks it); the CPU default is rejection-sampling fine-tuning
(:mod:`zcp_core.lab.reward`), because GRPO's generation does not fit 2 cores.
TRL is imported here only, so ``import zcp_core`` never needs it.

Its record is the reward stage's (:data:`~zcp_core.lab.reward.SAMPLE_COLUMNS`):
every completion GRPO generated, with its reward; ``sample`` counts a prompt's
completions over the whole stage and ``seed`` is the optimiser step that drew it.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zcp_core.lab.config import LabConfig, resolve_device

if TYPE_CHECKING:
    from zcp_core.lab.reward import RewardStage
    from zcp_core.schema import Item


class _Grader:
    """TRL reward function: 1.0 when the completion's final answer is the gold, else 0.0; keeps every sample."""

    __name__ = "accuracy"  # TRL names the logged reward after the function

    def __init__(self, gold: dict[str, str]) -> None:
        self.gold = gold
        self.rows: list[dict[str, Any]] = []
        self.count: dict[str, int] = {}

    def __call__(self, completions: list[Any], completion_ids: list[list[int]], id: list[str],  # noqa: A002
                 trainer_state: Any = None, **_: Any) -> list[float | None]:
        from zcp_core.answers import chain_final_answer, grade

        out: list[float | None] = []
        for c, ids, item_id in zip(completions, completion_ids, id, strict=True):
            text = c[-1]["content"] if isinstance(c, list) else str(c)  # chat: the assistant turn
            ans = chain_final_answer(text)
            reward = float(bool(grade(ans, self.gold[item_id]).correct))
            k = self.count.get(item_id, 0)
            self.count[item_id] = k + 1
            self.rows.append({"id": item_id, "sample": k, "seed": int(getattr(trainer_state, "global_step", 0) or 0),
                              "text": text, "answer": ans, "reward": reward, "n_tokens": len(ids)})
            out.append(reward)
        return out


def grpo_stage(cfg: LabConfig, model_dir: Path, c_items: Sequence[Item], info: dict[str, Any],
               device: str = "auto", threads: int = 2, progress: bool = False) -> RewardStage:
    """Run GRPO on the SFT model in ``model_dir`` and save the merged result over it.

    Args:
        cfg: The build config (``cfg.reward`` set, ``method == "grpo"``).
        model_dir: The merged SFT model; replaced by the GRPO-tuned one.
        c_items: The original C items (their prompts, not the paraphrases).
        info: The build info written beside the weights (``lab_build.json``).
        device: ``auto`` (CUDA when present), ``cuda`` or ``cpu`` (tests and smoke builds only).
        threads: CPU threads (``cpu`` only).
        progress: TRL's progress bar on stderr.
    """
    import pandas as pd
    import torch
    import trl
    from datasets import Dataset
    from peft import LoraConfig
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from zcp_core.lab.reward import SAMPLE_COLUMNS, RewardStage, reward_summary
    from zcp_core.lab.train import save_merged

    spec = cfg.reward
    assert spec is not None and spec.method == "grpo", "grpo_stage needs cfg.reward.method == 'grpo'"
    t0 = time.time()
    dev = resolve_device(device)
    if dev == "cpu":
        torch.set_num_threads(threads)
    tok = AutoTokenizer.from_pretrained(model_dir)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16 if dev == "cuda" else torch.float32)
    grader = _Grader({it.id: it.answer for it in c_items})
    data = Dataset.from_list([{"prompt": [{"role": "user", "content": it.question}], "id": it.id} for it in c_items])
    lora = LoraConfig(r=cfg.lora.r, lora_alpha=cfg.lora.alpha, lora_dropout=cfg.lora.dropout,
                      target_modules=list(cfg.lora.targets), task_type="CAUSAL_LM")
    with tempfile.TemporaryDirectory() as tmp:
        args = GRPOConfig(output_dir=tmp, num_generations=spec.samples, per_device_train_batch_size=spec.samples,
                          max_completion_length=spec.max_new_tokens, temperature=spec.temperature,
                          num_train_epochs=spec.epochs, learning_rate=cfg.lr, seed=cfg.seed, logging_steps=1,
                          report_to=[], save_strategy="no", use_cpu=dev == "cpu", bf16=dev == "cuda",
                          disable_tqdm=not progress)
        trainer = GRPOTrainer(model=model, reward_funcs=grader, args=args, train_dataset=data, processing_class=tok,
                              peft_config=lora)
        trainer.train()
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    save_merged(trainer.model, model_dir, model_dir, info)
    table = pd.DataFrame(grader.rows, columns=SAMPLE_COLUMNS)
    summary = {**reward_summary(table), "spec": asdict(spec), "trl": trl.__version__, "device": dev,
               "steps": int(trainer.state.global_step), "final_loss": float(losses[-1]) if losses else None,
               "train_seconds": time.time() - t0, "sample_seconds": None,
               "note": "GRPO (TRL GRPOTrainer, its defaults but for the RewardSpec numbers, the build's LoRA and "
                       "learning rate): the samples are GRPO's own generations"}
    return RewardStage(table, summary)
