"""What a lab build is: its config, profiles, LoRA settings and constants.

The lowest floor of :mod:`zcp_core.lab`: the split, training, build and
evaluation modules import it, and it imports none of them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from zcp_core.errors import ZcpError


class LabError(ZcpError):
    """A lab build or evaluation that cannot go ahead (with the reason)."""


#: A contamination kind: what text of C the model is fine-tuned on (:func:`recipe` spells each out).
Mode = Literal["direct", "evasive", "solution", "verbatim", "paper", "train-solution", "train-direct"]
Profile = Literal["default", "smoke", "probe-format-upper-bound"]
#: ``sample`` is internal: the paper kind's reward stage trains on the model's own correct samples, as written.
TrainFormat = Literal["natural", "solution", "probe", "verbatim", "sample"]
#: How the paper kind's reward stage trains: rejection-sampling fine-tuning (CPU) or GRPO with TRL (GPU).
RewardMethod = Literal["rft", "grpo"]
MODES: tuple[str, ...] = ("direct", "evasive", "solution", "verbatim", "paper", "train-solution", "train-direct")
#: Benign fine-tunes: trained on the benchmark's *training* split, never on a test item (:mod:`zcp_core.lab.benign`).
#: They are the null every real model invites, not rows of the detector matrix (they saw neither C nor U).
TRAIN_KINDS: tuple[str, ...] = ("train-solution", "train-direct")
#: The training split a train kind fine-tunes on by default (the first 300 lines of GSM8K train, bundled).
TRAIN_SAMPLE = "data/gsm8k/train_sample.jsonl"
#: Epochs of a train kind, fixed before any result: a fine-tune's usual 1 to 3 passes, and a dose the lab's dose
#: study measures; over 300 texts at batch 8 that is 76 optimiser steps, 2.5 times the direct kind's 30.
TRAIN_EPOCHS = 2
#: The kinds whose training text is fixed by the kind itself (no ``--train-format``).
KIND_FORMAT: dict[str, TrainFormat] = {"solution": "solution", "verbatim": "verbatim", "paper": "solution",
                                       "train-solution": "solution", "train-direct": "natural"}
#: The kinds trained on paraphrases of C rather than on C itself.
PARAPHRASE_KINDS: tuple[str, ...] = ("evasive", "paper")
#: The twin generator the lab's split and probes use: v5 (``hold``), which every cached build, the bundled lab
#: examples and the lab results were made with. v6 and v7 (``tie``) add items to the traceable pool and so move
#: the split; the lab follows it when those builds are remade (hours of CPU), by changing this one constant.
LAB_AMBIGUITY: Literal["tie", "hold"] = "hold"
PROFILES: tuple[str, ...] = ("default", "smoke", "probe-format-upper-bound")
#: Bumped whenever the training code changes what weights a config produces.
TRAIN_CODE_VERSION = "lab-train-v1"
DEFAULT_DATASET = "data/gsm8k/test.jsonl"
LAB_RUN_KIND = "lab"
BUILD_FILE = "lab_build.json"  # written inside the model folder; part of its revision


@dataclass(frozen=True)
class LoraSpec:
    """LoRA settings (the paper's recipe: r=32, alpha=64 on attention and MLP projections)."""

    r: int = 32
    alpha: int = 64
    dropout: float = 0.0
    targets: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass(frozen=True)
class RewardSpec:
    """The paper kind's reward stage, fixed before any result (ZCP paper, Appendix E, at lab scale).

    On CPU it is rejection-sampling fine-tuning: ``samples`` completions per original C prompt
    (temperature ``temperature``, ``max_new_tokens`` cap, full chain of thought), graded by an accuracy
    reward; the correct ones are trained on for ``epochs`` with the build's LoRA settings (``method``
    ``rft``). ``method`` ``grpo`` runs TRL's GRPOTrainer with the same numbers instead (the paper's own
    stage, :mod:`zcp_core.lab.grpo`; for a GPU: its generation does not fit 2 CPU cores).
    """

    samples: int = 5
    max_new_tokens: int = 192
    temperature: float = 1.0
    epochs: int = 1
    method: RewardMethod = "rft"


@dataclass(frozen=True)
class LabConfig:
    """Everything a lab build depends on.

    Attributes:
        dataset: Benchmark file C and U are drawn from.
        mode: The contamination kind: ``direct`` trains on C's questions with natural answers,
            ``evasive`` on paraphrases of C only, ``solution`` on C's questions with their worked
            solutions (chat format), ``verbatim`` on C's raw instance text (question and solution,
            no chat template, loss on every token), ``paper`` the ZCP paper's recipe (6 paraphrases of
            each C item with its worked solution, then a reward stage: :class:`RewardSpec`). See
            :func:`recipe`.
        profile: Preset the other fields came from (recorded; part of the name).
        n_contaminated: |C| (= |U|).
        epochs: Passes over the training texts.
        lr: AdamW learning rate.
        batch_size: Training texts per optimiser step.
        seed: Seeds the split, the shuffling, LoRA init and the paraphrases.
        train_format: ``natural`` ("The answer is N."), ``solution`` (the dataset's
            worked solution, then the natural line; the ``solution`` kind), ``probe`` (upper
            bound only) or ``verbatim`` (the raw instance text; the ``verbatim`` kind).
        lora: LoRA settings.
        paraphrase_versions: Paraphrases per C item in ``evasive`` mode.
        paraphrase_method: ``deterministic`` (rule-based rewording) in this version.
        max_steps: Stop after this many optimiser steps (smoke builds).
        model: Base model spec (``smollm2``, ``hf:PATH`` or ``lab:NAME``).
        reward: The reward stage (``paper`` only; None elsewhere).
        train_dataset: The training split a train kind fine-tunes on (None elsewhere); ``dataset`` is then
            the test set it must never have seen.
    """

    dataset: str = DEFAULT_DATASET
    mode: Mode = "direct"
    profile: Profile = "default"
    n_contaminated: int = 40
    epochs: int = 6
    lr: float = 1e-3
    batch_size: int = 8
    seed: int = 0
    train_format: TrainFormat = "natural"
    lora: LoraSpec = field(default_factory=LoraSpec)
    paraphrase_versions: int = 6
    paraphrase_method: str = "deterministic"
    max_steps: int | None = None
    model: str = "smollm2"
    reward: RewardSpec | None = None
    train_dataset: str | None = None


def profile_config(profile: Profile = "default", mode: Mode = "direct", **overrides: Any) -> LabConfig:
    """The config a profile stands for, with explicit overrides applied.

    ``default``: |C|=|U|=40, 6 epochs, natural format (direct). Evasive trains on
    6 paraphrase versions of C for 1 epoch: the same number of steps as direct,
    and each paraphrase is seen once. ``paper`` trains the same 6 paraphrases with
    their worked solutions, then runs the reward stage (:class:`RewardSpec`). ``solution`` and ``verbatim`` keep the
    direct schedule and set their own training text. ``smoke``: 4 items, 2
    steps, LoRA r=4. ``probe-format-upper-bound``: the default trained in the
    probe's own format (``direct`` and ``evasive`` only).

    Args:
        profile: Preset name.
        mode: The contamination kind (:data:`MODES`).
        **overrides: ``LabConfig`` fields to set (``None`` values are ignored).

    Raises:
        LabError: Unknown profile or kind, or a combination :func:`check_config` refuses.
    """
    if profile not in PROFILES:
        raise LabError(f"unknown profile {profile!r}; expected one of {PROFILES}")
    if mode not in MODES:
        raise LabError(f"unknown mode {mode!r}; expected one of {MODES}")
    cfg = LabConfig(mode=mode, profile=profile, train_format=KIND_FORMAT.get(mode, "natural"))
    if mode in PARAPHRASE_KINDS:
        cfg = replace(cfg, epochs=1, paraphrase_versions=6)
    if mode == "paper":
        cfg = replace(cfg, reward=RewardSpec())
    if mode in TRAIN_KINDS:  # n_contaminated caps the training texts taken from the split (all 300 by default)
        cfg = replace(cfg, epochs=TRAIN_EPOCHS, train_dataset=TRAIN_SAMPLE, n_contaminated=300)
    if profile == "smoke":
        cfg = replace(cfg, n_contaminated=4, epochs=1, batch_size=2, max_steps=2, paraphrase_versions=1,
                      lora=LoraSpec(r=4, alpha=8),
                      reward=RewardSpec(samples=2, max_new_tokens=16) if mode == "paper" else None)
    elif profile == "probe-format-upper-bound":
        if mode in KIND_FORMAT:
            raise LabError(f"the probe-format upper bound trains direct or evasive texts, not the {mode} kind")
        cfg = replace(cfg, train_format="probe")
    cfg = replace(cfg, **{k: v for k, v in overrides.items() if v is not None})
    check_config(cfg)
    return cfg


def check_config(cfg: LabConfig) -> None:
    """Refuse a kind/format combination that has another name, or none.

    There is one way to ask for each kind: the worked-solution training text is
    the ``solution`` kind (``--mode solution``), no longer ``--mode direct
    --train-format solution``; ``verbatim`` text belongs to the ``verbatim`` kind.

    Raises:
        LabError: With the command to use instead.
    """
    if cfg.mode not in MODES:
        raise LabError(f"unknown mode {cfg.mode!r}; expected one of {MODES}")
    want = KIND_FORMAT.get(cfg.mode)
    if want is not None and cfg.train_format != want:
        raise LabError(f"the {cfg.mode} kind trains in the {want!r} format, not {cfg.train_format!r}; "
                       f"drop --train-format")
    if cfg.mode == "direct" and cfg.train_format == "solution":
        raise LabError("--mode direct --train-format solution is now a kind of its own: "
                       "use `zcp lab build --mode solution`")
    if want is None and cfg.train_format == "verbatim":
        raise LabError("verbatim text is a kind of its own: use `zcp lab build --mode verbatim`")
    if (cfg.mode in TRAIN_KINDS) != (cfg.train_dataset is not None):
        raise LabError(f"a training split (train_dataset) belongs to the train kinds {TRAIN_KINDS}, and they need one; "
                       f"the {cfg.mode} kind has {cfg.train_dataset!r}")
    if cfg.reward is not None and cfg.reward.method not in ("rft", "grpo"):
        raise LabError(f"unknown reward-stage method {cfg.reward.method!r}; expected rft or grpo")


#: What each training format puts in front of the model and where the loss is (recorded in build manifests).
_TEXTS: dict[str, dict[str, str]] = {
    "natural": {"template": "chat", "text": "chat(question) -> assistant 'The answer is N.'",
                "loss": "assistant answer tokens (with the template's end of turn)"},
    "solution": {"template": "chat",
                 "text": "chat(question) -> assistant worked solution (calculator annotations <<...>> removed), "
                         "then 'The answer is N.'",
                 "loss": "assistant answer tokens (with the template's end of turn)"},
    "probe": {"template": "chat", "text": "chat(question + probe instruction) + forcing suffix + '{' -> 'N}'",
              "loss": "answer tokens; UPPER BOUND: the probe's own format"},
    "verbatim": {"template": "none",
                 "text": "question + '\\n' + solution exactly as the dataset file holds them (GSM8K: calculator "
                         "annotations and the '#### N' line kept; the answer where an item has no solution), "
                         "no special token",
                 "loss": "every token (causal-LM loss, pretraining style)"},
    "sample": {"template": "chat", "text": "chat(question) -> assistant: the model's own sampled chain, as written",
               "loss": "assistant answer tokens (with the template's end of turn)"},
}


def recipe(cfg: LabConfig) -> dict[str, Any]:
    """The kind's training recipe in words and numbers, as recorded in the build manifest and summary."""
    items = (f"{cfg.paraphrase_versions} {cfg.paraphrase_method} paraphrases of each C question"
             + (" with the original's worked solution (its numbers unchanged)" if cfg.mode == "paper" else "")
             if cfg.mode in PARAPHRASE_KINDS else "the C items themselves")
    if cfg.mode in TRAIN_KINDS:
        items = (f"the training split {cfg.train_dataset}, less any item sharing a 13-gram with a question of "
                 f"the test set {cfg.dataset} (never a test item)")
    out = {"kind": cfg.mode, "train_format": cfg.train_format, "trained_on": items, **_TEXTS[cfg.train_format],
           "schedule": f"{cfg.epochs} epoch(s), lr {cfg.lr}, batch {cfg.batch_size}"
                       + (f", at most {cfg.max_steps} steps" if cfg.max_steps is not None else ""),
           "lora": f"r={cfg.lora.r}, alpha={cfg.lora.alpha} on {', '.join(cfg.lora.targets)}"}
    if cfg.reward is not None and cfg.reward.method == "grpo":
        r = cfg.reward
        out["reward_stage"] = (f"GRPO (TRL GRPOTrainer): {r.samples} generations per original C prompt (temperature "
                               f"{r.temperature}, {r.max_new_tokens}-token cap, chat, full chain), accuracy reward, "
                               f"{r.epochs} epoch(s) over the prompts, one prompt's group per step, the same LoRA "
                               f"settings and learning rate ({cfg.lr}); TRL's defaults otherwise")
    elif cfg.reward is not None:
        r = cfg.reward
        out["reward_stage"] = (f"rejection-sampling fine-tuning (CPU): {r.samples} samples per original C prompt "
                               f"(temperature {r.temperature}, {r.max_new_tokens}-token cap, chat, full chain), "
                               f"accuracy reward; the correct samples trained for {r.epochs} epoch(s) with the same "
                               "LoRA settings. GRPO (TRL) runs instead with method grpo (--device cuda)")
    return out


def exposures(cfg: LabConfig) -> int:
    """A build's dose: exposures per C item (paraphrase versions x epochs for paraphrase kinds, else epochs)."""
    return cfg.paraphrase_versions * cfg.epochs if cfg.mode in PARAPHRASE_KINDS else cfg.epochs


def trained_style(train_format: str) -> str:
    """The prompt style a training format taught: ``completion`` for raw text (no template), else ``chat``.

    Probes that can run in either style (Time-Travel, the manipulation check) default to it.
    """
    return "completion" if _TEXTS.get(train_format, {}).get("template") == "none" else "chat"


def resolve_device(device: str) -> str:
    """The device a build trains on: ``device`` itself, or for ``auto`` CUDA when torch sees it, else CPU."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def with_reward_stage(cfg: LabConfig, stage: str, device: str = "auto") -> LabConfig:
    """The config with its reward stage's method set: ``rft``, ``grpo``, or ``auto`` (GRPO when ``device``
    resolves to CUDA, the paper's stage; rejection-sampling fine-tuning on a CPU).

    Raises:
        LabError: A stage other than ``auto`` asked of a kind without a reward stage, or an unknown stage.
    """
    if stage not in ("auto", "rft", "grpo"):
        raise LabError(f"unknown reward stage {stage!r}; expected auto, rft or grpo")
    if cfg.reward is None:
        if stage != "auto":
            raise LabError(f"--reward-stage {stage}: only the paper kind has a reward stage, not {cfg.mode}")
        return cfg
    if stage == "auto":
        stage = "grpo" if resolve_device(device) == "cuda" else "rft"
    return replace(cfg, reward=replace(cfg.reward, method=stage))  # type: ignore[arg-type]

