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


Mode = Literal["direct", "evasive"]
Profile = Literal["default", "smoke", "probe-format-upper-bound"]
TrainFormat = Literal["natural", "solution", "probe"]
MODES: tuple[str, ...] = ("direct", "evasive")
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
class LabConfig:
    """Everything a lab build depends on.

    Attributes:
        dataset: Benchmark file C and U are drawn from.
        mode: ``direct`` trains on C's items, ``evasive`` on paraphrases of C only.
        profile: Preset the other fields came from (recorded; part of the name).
        n_contaminated: |C| (= |U|).
        epochs: Passes over the training texts.
        lr: AdamW learning rate.
        batch_size: Training texts per optimiser step.
        seed: Seeds the split, the shuffling, LoRA init and the paraphrases.
        train_format: ``natural`` ("The answer is N."), ``solution`` (the dataset's
            worked solution, then the natural line) or ``probe`` (upper bound only).
        lora: LoRA settings.
        paraphrase_versions: Paraphrases per C item in ``evasive`` mode.
        paraphrase_method: ``deterministic`` (rule-based rewording) in this version.
        max_steps: Stop after this many optimiser steps (smoke builds).
        model: Base model spec (``smollm2``, ``hf:PATH`` or ``lab:NAME``).
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


def profile_config(profile: Profile = "default", mode: Mode = "direct", **overrides: Any) -> LabConfig:
    """The config a profile stands for, with explicit overrides applied.

    ``default``: |C|=|U|=40, 6 epochs, natural format (direct). Evasive trains on
    6 paraphrase versions of C for 1 epoch: the same number of steps as direct,
    and each paraphrase is seen once. ``smoke``: 4 items, 2 steps, LoRA r=4.
    ``probe-format-upper-bound``: the default trained in the probe's own format.

    Args:
        profile: Preset name.
        mode: ``direct`` or ``evasive``.
        **overrides: ``LabConfig`` fields to set (``None`` values are ignored).
    """
    if profile not in PROFILES:
        raise LabError(f"unknown profile {profile!r}; expected one of {PROFILES}")
    if mode not in MODES:
        raise LabError(f"unknown mode {mode!r}; expected one of {MODES}")
    cfg = LabConfig(mode=mode, profile=profile)
    if mode == "evasive":
        cfg = replace(cfg, epochs=1, paraphrase_versions=6)
    if profile == "smoke":
        cfg = replace(cfg, n_contaminated=4, epochs=1, batch_size=2, max_steps=2, paraphrase_versions=1,
                      lora=LoraSpec(r=4, alpha=8))
    elif profile == "probe-format-upper-bound":
        cfg = replace(cfg, train_format="probe")
    return replace(cfg, **{k: v for k, v in overrides.items() if v is not None})
