"""LoRA training for the contamination lab (peft), resumable per epoch.

Examples are ``chat(question)`` rendered with the model's chat template plus
an assistant answer; the loss covers the answer tokens only. The ``verbatim``
kind is the exception: the raw instance text (:func:`verbatim_text`), no
template, loss on every token. After training
the adapter is merged into the base weights and saved as a plain transformers
folder (model + tokenizer), so the lab model needs no peft at inference.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from zcp_core.lab.config import LabError, resolve_device

if TYPE_CHECKING:
    from zcp_core.lab.config import LabConfig, TrainFormat
    from zcp_core.schema import Item

#: Largest model the lab trains on a CPU (parameters), so a big model fails fast instead of hanging.
CPU_PARAM_LIMIT = 1.0e9
_CALC = re.compile(r"<<[^<>]*>>")


def base_model_path(spec: str) -> Path:
    """The local weights the lab fine-tunes, from the one spec parser (:func:`zcp_core.backends.local_weights`).

    Raises:
        LabError: For remote specs (``openai:``, ``vllm:``) or a missing folder, with the reason.
    """
    from zcp_core.backends import local_weights
    from zcp_core.errors import BackendUnavailable, ModelSpecError

    try:
        return local_weights(spec)
    except (BackendUnavailable, ModelSpecError) as e:
        raise LabError(f"the lab fine-tunes local weights (smollm2, hf:PATH or lab:NAME): {e}") from e


def estimate_params(config: dict[str, Any]) -> int:
    """Parameter count of a decoder-only transformer from its ``config.json`` (approximate).

    Counts embeddings (twice when untied), attention projections (with grouped
    KV heads) and a gated MLP per layer; norms and biases are ignored.
    """
    cfg = config.get("text_config", config)
    h = int(cfg["hidden_size"])
    layers = int(cfg["num_hidden_layers"])
    heads = int(cfg.get("num_attention_heads", 1))
    kv = int(cfg.get("num_key_value_heads") or heads)
    hd = int(cfg.get("head_dim") or h // heads)
    inter = int(cfg.get("intermediate_size") or 4 * h)
    experts = int(cfg.get("num_local_experts") or cfg.get("num_experts") or 1)
    vocab = int(cfg.get("vocab_size", 0))
    attn = 2 * h * heads * hd + 2 * h * kv * hd
    mlp = 3 * h * inter * experts
    embed = vocab * h * (1 if cfg.get("tie_word_embeddings", config.get("tie_word_embeddings", False)) else 2)
    return layers * (attn + mlp) + embed


def check_trainable(path: Path, device: str = "auto") -> int:
    """Refuse (before loading anything) a model too large to fine-tune on a CPU.

    Returns:
        The estimated parameter count.

    Raises:
        LabError: On a CPU-only machine when the model exceeds :data:`CPU_PARAM_LIMIT`.
    """
    n = estimate_params(json.loads((path / "config.json").read_text()))
    if n > CPU_PARAM_LIMIT and resolve_device(device) == "cpu":
        raise LabError(
            f"{path.name} has about {n / 1e9:.1f}B parameters: too large to fine-tune on a CPU "
            f"(limit {CPU_PARAM_LIMIT / 1e9:.0f}B). Run the lab on a CUDA machine, or use the embedded smollm2.")
    return n


# ---- examples ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Example:
    """One training text: the rendered prompt and the answer the loss is computed on."""

    id: str
    original_id: str
    prompt: str
    target: str


@dataclass(frozen=True)
class Examples:
    """Training texts, in order; ``frame()`` gives the ``training_texts`` table."""

    items: tuple[Example, ...]
    train_format: str

    def __len__(self) -> int:
        return len(self.items)

    def frame(self) -> Any:
        """DataFrame with columns ``id, original_id, prompt, target, train_format``."""
        import pandas as pd

        rows = [{"id": e.id, "original_id": e.original_id, "prompt": e.prompt, "target": e.target,
                 "train_format": self.train_format} for e in self.items]
        return pd.DataFrame(rows, columns=["id", "original_id", "prompt", "target", "train_format"])


def answer_text(item: Item, train_format: TrainFormat) -> str:
    """The assistant answer trained on (before the chat template closes the turn).

    ``natural``: ``"The answer is N."``; ``solution``: the worked solution
    without calculator annotations, then that line; ``probe``: ``"N}"`` (the
    prompt then ends with the probe's forcing suffix and ``{``); ``sample``: the
    item's solution as written (a sampled chain of the paper kind's reward stage).
    """
    if train_format == "probe":
        return item.answer + "}"
    if train_format == "sample":  # the paper kind's reward stage: the model's own correct chain, as written
        return item.solution or f"The answer is {item.answer}."
    line = f"The answer is {item.answer}."
    if train_format == "solution" and item.solution:
        return _CALC.sub("", item.solution).strip() + "\n" + line
    return line


def verbatim_text(item: Item) -> str:
    """The ``verbatim`` kind's training text: the instance as the dataset file holds it, no chat template.

    The question, a newline, then the solution field untouched (GSM8K: with its
    ``<<...>>`` calculator annotations and the ``#### N`` line); the answer for
    an item without a solution.
    """
    return item.question + "\n" + (item.solution if item.solution else item.answer)


def make_examples(base: Path, items: Sequence[Item], train_format: TrainFormat) -> Examples:
    """Render training texts with the base model's chat template.

    The target is what the template puts after the generation prompt for the
    assistant answer (e.g. ``The answer is 18.<|im_end|>``), so the model also
    learns to close its turn. In ``probe`` format (upper-bound profile only)
    the prompt is exactly the probe's: question plus its instruction, then
    the forcing suffix and ``{``. In ``verbatim`` format the prompt is empty and
    the target is :func:`verbatim_text` alone: no special token at all, since
    the instruct tokenizer's EOS (``<|im_end|>``) is itself a chat-template token.
    """
    from transformers import AutoTokenizer

    from zcp_core.backends import chat

    tok = AutoTokenizer.from_pretrained(base)
    if train_format == "verbatim":
        return Examples(tuple(Example(it.id, it.original_id or it.id, "", verbatim_text(it)) for it in items),
                        train_format)
    suffix, instruction = "", ""
    if train_format == "probe":
        from zcp_core.probe import DEFAULT_INSTRUCTION, DEFAULT_SUFFIX

        suffix, instruction = DEFAULT_SUFFIX + "{", "\n" + DEFAULT_INSTRUCTION
    out = []
    for it in items:
        user = [{"role": m.role, "content": m.content} for m in chat(it.question + instruction)]
        prompt = str(tok.apply_chat_template(user, tokenize=False, add_generation_prompt=True)) + suffix
        ans = answer_text(it, train_format)
        target = ans + (tok.eos_token or "")
        if not suffix:
            full = str(tok.apply_chat_template(user + [{"role": "assistant", "content": ans}], tokenize=False))
            if full.startswith(prompt) and ans in full[len(prompt):]:
                target = full[len(prompt):].rstrip("\n")
        out.append(Example(it.id, it.original_id or it.id, prompt, target))
    return Examples(tuple(out), train_format)


# ---- training ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainOptions:
    """Training hyper-parameters (a view of :class:`~zcp_core.lab.LabConfig`)."""

    epochs: int
    lr: float
    batch_size: int
    seed: int
    r: int
    alpha: int
    dropout: float
    targets: tuple[str, ...]
    max_steps: int | None = None
    threads: int = 2
    device: str = "auto"

    @classmethod
    def from_config(cls, cfg: LabConfig, threads: int = 2, device: str = "auto") -> TrainOptions:
        """Options from a lab config."""
        return cls(cfg.epochs, cfg.lr, cfg.batch_size, cfg.seed, cfg.lora.r, cfg.lora.alpha, cfg.lora.dropout,
                   tuple(cfg.lora.targets), cfg.max_steps, threads, device)


@dataclass(frozen=True)
class TrainResult:
    """What training returns.

    Attributes:
        model: The peft model (adapter not merged).
        loss: DataFrame ``step, epoch, loss, tokens, elapsed_s`` (one row per optimiser step).
        seconds: Training wall time of this process (resumed epochs excluded).
        tokens: Tokens processed by this process.
        trainable_params: LoRA parameters.
        device: ``cpu`` or ``cuda``.
    """

    model: Any
    loss: Any
    seconds: float
    tokens: int
    trainable_params: int
    device: str


def _batches(n: int, batch_size: int, seed: int, epoch: int) -> list[list[int]]:
    order = list(range(n))
    random.Random(f"{seed}:{epoch}").shuffle(order)
    return [order[i : i + batch_size] for i in range(0, n, batch_size)]


def _encode(tok: Any, examples: Examples) -> list[tuple[list[int], int]]:
    """Token ids of prompt+target and the number of prompt tokens (masked out of the loss; 0 for verbatim)."""
    enc = []
    for e in examples.items:
        p = tok(e.prompt, add_special_tokens=False).input_ids
        t = tok(e.target, add_special_tokens=False).input_ids
        enc.append((p + t, len(p)))
    return enc


def _collate(enc: list[tuple[list[int], int]], pad: int) -> tuple[Any, Any, Any]:
    import torch

    width = max(len(ids) for ids, _ in enc)
    ids = torch.full((len(enc), width), pad, dtype=torch.long)
    mask = torch.zeros_like(ids)
    labels = torch.full_like(ids, -100)
    for b, (seq, n_prompt) in enumerate(enc):
        ids[b, : len(seq)] = torch.tensor(seq)
        mask[b, : len(seq)] = 1
        labels[b, n_prompt : len(seq)] = torch.tensor(seq[n_prompt:])
    return ids, mask, labels


def train_lora(base: Path, examples: Examples, opts: TrainOptions, checkpoint_dir: Path | None = None,
               progress: bool = True) -> TrainResult:
    """Fine-tune a LoRA adapter on ``examples`` (loss on targets only).

    After each epoch the adapter and optimiser state are saved under
    ``checkpoint_dir``; a rerun resumes from the last finished epoch (the
    shuffle of each epoch is seeded, so a resumed run trains the same steps).

    Args:
        base: Base model folder.
        examples: Training texts.
        opts: Hyper-parameters.
        checkpoint_dir: Where per-epoch checkpoints go (``None``: no resume).
        progress: Show a tqdm bar on stderr.
    """
    import pandas as pd
    import torch
    from peft import LoraConfig, get_peft_model, get_peft_model_state_dict, set_peft_model_state_dict
    from tqdm.auto import tqdm
    from transformers import AutoModelForCausalLM, AutoTokenizer

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    device = resolve_device(opts.device)
    if device == "cpu":
        torch.set_num_threads(opts.threads)
    torch.manual_seed(opts.seed)
    tok = AutoTokenizer.from_pretrained(base)
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    dtype = torch.bfloat16 if device == "cuda" else torch.float32
    model = AutoModelForCausalLM.from_pretrained(base, dtype=dtype)
    model.to(device)  # type: ignore[arg-type]
    lora = LoraConfig(r=opts.r, lora_alpha=opts.alpha, lora_dropout=opts.dropout, target_modules=list(opts.targets),
                      task_type="CAUSAL_LM")
    model = get_peft_model(model, lora)  # type: ignore[assignment]
    params = [p for p in model.parameters() if p.requires_grad]
    trainable = sum(p.numel() for p in params)
    optim = torch.optim.AdamW(params, lr=opts.lr)
    enc = _encode(tok, examples)
    plan = [(e, b) for e in range(opts.epochs) for b in _batches(len(enc), opts.batch_size, opts.seed, e)]
    if opts.max_steps is not None:
        plan = plan[: opts.max_steps]
    rows: list[dict[str, Any]] = []
    start_epoch = _resume(checkpoint_dir, model, optim, rows, set_peft_model_state_dict)
    todo = [(s, e, b) for s, (e, b) in enumerate(plan) if e >= start_epoch]
    t0, tokens = time.time(), 0
    model.train()
    bar = tqdm(todo, desc="lab train", unit="step", disable=not progress)
    for step, epoch, batch in bar:
        ids, mask, labels = (x.to(device) for x in _collate([enc[i] for i in batch], pad))
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        optim.step()
        optim.zero_grad(set_to_none=True)
        tokens += int(mask.sum())
        rows.append({"step": step, "epoch": epoch, "loss": float(loss.detach()), "tokens": int(mask.sum()),
                     "elapsed_s": time.time() - t0})
        bar.set_postfix(epoch=epoch, loss=f"{rows[-1]['loss']:.3f}")
        last_of_epoch = step + 1 == len(plan) or plan[step + 1][0] != epoch
        if checkpoint_dir is not None and last_of_epoch and step + 1 < len(plan):
            _checkpoint(checkpoint_dir, epoch, model, optim, rows, get_peft_model_state_dict)
    bar.close()
    model.eval()
    loss_df = pd.DataFrame(rows, columns=["step", "epoch", "loss", "tokens", "elapsed_s"])
    return TrainResult(model, loss_df, time.time() - t0, tokens, trainable, device)


def _checkpoint(folder: Path, epoch: int, model: Any, optim: Any, rows: list[dict[str, Any]], get_state: Any) -> None:
    import torch

    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".epoch-{epoch}.pt.tmp"
    torch.save({"epoch": epoch, "adapter": get_state(model), "optim": optim.state_dict(), "rows": rows}, tmp)
    os.replace(tmp, folder / "last.pt")


def _resume(folder: Path | None, model: Any, optim: Any, rows: list[dict[str, Any]], set_state: Any) -> int:
    """Load the last epoch checkpoint; return the first epoch still to train."""
    if folder is None or not (folder / "last.pt").exists():
        return 0
    import torch

    ck = torch.load(folder / "last.pt", weights_only=False)
    set_state(model, ck["adapter"])
    optim.load_state_dict(ck["optim"])
    rows.extend(ck["rows"])
    return int(ck["epoch"]) + 1


def save_merged(model: Any, base: Path, out: Path, info: dict[str, Any]) -> Path:
    """Merge the adapter into the base weights and save model + tokenizer to ``out`` atomically.

    ``info`` (the build key and config) is written as ``lab_build.json`` in the
    folder, which also makes the backend's folder revision differ per build.
    """
    import torch
    from transformers import AutoTokenizer

    from zcp_core.lab.config import BUILD_FILE

    merged = model.merge_and_unload()
    merged = merged.to(device="cpu", dtype=torch.float32)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    merged.save_pretrained(tmp, safe_serialization=True)
    AutoTokenizer.from_pretrained(base).save_pretrained(tmp)
    (tmp / BUILD_FILE).write_text(json.dumps(info, indent=2, sort_keys=True, default=str))
    if out.exists():
        shutil.rmtree(out)
    os.replace(tmp, out)
    return out
