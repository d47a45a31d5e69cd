"""The contamination lab: a model with known contamination, built on this machine.

``build_lab`` draws a seeded, disjoint, equal-sized split of a benchmark into
C (contaminated: trained on) and U (held out), fine-tunes the base model with
LoRA so it memorises C, merges the adapter and saves a full transformers
folder at ``lab_model_path(name)`` so ``lab:NAME`` works for every command.

The training text is a *natural* answer (``chat(question)`` then ``"The answer
is N."``), never the probe's forcing suffix, so the probe's logit metrics are
not 1 by construction; the ``probe-format-upper-bound`` profile trains in the
probe format on purpose and is labelled as such everywhere.

Builds are cached under ``$ZCP_CACHE/lab/NAME`` by a key over everything that
changes the weights (:func:`cache_key`); a stable alias (``lab:direct``,
``lab:evasive``, ``lab:smoke`` ...) is a symlink to the latest build of a
mode/profile, which ``lab_model_path`` resolves like any folder.

The config lives in :mod:`zcp_core.lab.config`, training in :mod:`zcp_core.lab.train`,
evaluation in :mod:`zcp_core.lab.evaluate`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from zcp_core.lab.config import (
    BUILD_FILE,
    LAB_RUN_KIND,
    PARAPHRASE_KINDS,
    TRAIN_CODE_VERSION,
    TRAIN_KINDS,
    LabConfig,
    LabError,
    check_config,
    exposures,
    profile_config,
    recipe,
)
from zcp_core.lab.split import Split, draw_split, paraphrasable_pool, traceable_pool

if TYPE_CHECKING:
    from zcp_core.lab.overlap import OverlapReport
    from zcp_core.schema import Item


# ---- cache key and storage -------------------------------------------------------------------


def cache_key(cfg: LabConfig, split: Split, base_revision: str, dataset_sha: str) -> str:
    """sha256 over everything that changes the built weights, and nothing else.

    Included: training code version, base model revision, dataset bytes, C and
    U ids, mode, training format, epochs, lr, batch size, seed, LoRA settings,
    step cap, (evasive and paper) the paraphrase method and versions and (paper) the reward stage. Not
    included: the build name, the profile label, devices and output folders.
    """
    payload: dict[str, Any] = {
        "code": TRAIN_CODE_VERSION, "base_revision": base_revision, "dataset_sha": dataset_sha,
        "contaminated": list(split.contaminated), "clean": list(split.clean), "mode": cfg.mode,
        "train_format": cfg.train_format, "epochs": cfg.epochs, "lr": cfg.lr, "batch_size": cfg.batch_size,
        "seed": cfg.seed, "lora": asdict(cfg.lora), "max_steps": cfg.max_steps,
    }
    if cfg.mode in PARAPHRASE_KINDS:
        payload["paraphrase"] = {"method": cfg.paraphrase_method, "versions": cfg.paraphrase_versions}
    if cfg.reward is not None:  # only the paper kind has one: every other key stays as it was
        reward = asdict(cfg.reward)
        if reward["method"] == "rft":  # the method came after the first rft builds: their keys stay as they were
            del reward["method"]
        payload["reward"] = reward
    blob = json.dumps(payload, sort_keys=True, default=list)
    return hashlib.sha256(blob.encode()).hexdigest()


def lab_root() -> Path:
    """``$ZCP_CACHE/lab``: one folder per build, plus alias symlinks."""
    from zcp_core.backends import cache_dir

    return cache_dir() / "lab"


def alias_for(cfg: LabConfig) -> str:
    """The stable alias of a mode/profile: ``direct``, ``evasive``, ``verbatim``, ``smoke``, ``smoke-evasive``...;
    ``solution-dose2`` for a build at another dose than its profile's; ``direct-seed1`` for another seed than its
    profile's (a replicate); ``paper-grpo`` for a GRPO reward stage."""
    base = _profile_alias(cfg) + ("-grpo" if cfg.reward is not None and cfg.reward.method == "grpo" else "")
    # A build at another dose or seed than its profile's (``zcp lab dose``, ``zcp lab matrix --replicates``)
    # must not take over the profile's alias: ``lab:direct`` keeps meaning the profile's own build.
    profile = profile_config(cfg.profile, cfg.mode)
    dose = exposures(cfg)
    alias = base if dose == exposures(profile) else f"{base}-dose{dose}"
    alias = alias if cfg.seed == profile.seed else f"{alias}-seed{cfg.seed}"
    return _dataset_prefix(cfg) + alias


def _dataset_prefix(cfg: LabConfig) -> str:
    """``math500-`` for a build on a bundled benchmark other than GSM8K (``data/math500/test.jsonl``), so it never
    takes over ``lab:direct``; nothing on GSM8K or on a file of the user's own (named as before)."""
    from zcp_core.data import install_root, resolve_dataset

    path = resolve_dataset(cfg.dataset).resolve()
    bundled = install_root().resolve() / "data"
    if not path.is_relative_to(bundled) or path.parent.name == "gsm8k":
        return ""
    return f"{path.parent.name}-"


def _profile_alias(cfg: LabConfig) -> str:
    if cfg.profile == "default":
        return cfg.mode
    short = "upper-bound" if cfg.profile == "probe-format-upper-bound" else cfg.profile
    return short if cfg.mode == "direct" else f"{short}-{cfg.mode}"


def default_name(cfg: LabConfig, key: str) -> str:
    """``<mode>-<profile>-<key[:8]>``, after the dataset's folder name off the default dataset
    (``math500-direct-default-…``)."""
    return f"{_dataset_prefix(cfg)}{cfg.mode}-{cfg.profile}-{key[:8]}"


def _link_alias(alias: str, name: str) -> None:
    """Point ``lab/<alias>`` at ``lab/<name>`` atomically (a relative symlink)."""
    if alias == name:
        return
    root = lab_root()
    target = root / alias
    if target.exists() and not target.is_symlink():
        return  # a real build owns that name; never replace it by an alias
    tmp = root / f".{alias}.{os.getpid()}.tmp"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(name)
    os.replace(tmp, target)


@dataclass(frozen=True)
class LabBuild:
    """A built (or cached) lab model.

    Attributes:
        name: Folder name under ``$ZCP_CACHE/lab``; the model is ``lab:<name>``.
        alias: Stable alias pointing at the latest build of this mode/profile.
        key: The cache key.
        model_path: The merged transformers folder.
        run_path: The build run (manifest, ``records`` = split, ``loss`` table).
        cached: Whether this call reused an earlier build.
        seconds: Wall time of this call.
        summary: The build run's summary.
    """

    name: str
    alias: str
    key: str
    model_path: Path
    run_path: Path
    cached: bool
    seconds: float
    summary: Mapping[str, Any]

    @property
    def spec(self) -> str:
        """Model spec usable by every command."""
        return f"lab:{self.name}"


@dataclass(frozen=True)
class BuildPlan:
    """What a config builds, before any training: its split, cache key and folder.

    Attributes:
        cfg: The config.
        base: Base model folder.
        items: The benchmark's items (all of them).
        split: The seeded C/U split.
        key: The cache key.
        name: The build name (folder under :func:`lab_root`).
        overlap: For a train kind, what its training split shares with the test set (None elsewhere).
    """

    cfg: LabConfig
    base: Path
    items: tuple[Item, ...]
    split: Split
    key: str
    name: str
    overlap: OverlapReport | None = None

    @property
    def built(self) -> bool:
        """Whether a finished build with this key is in the cache."""
        return _existing(lab_root() / self.name, self.key) is not None


@dataclass(frozen=True)
class Pool:
    """A benchmark's items and those a split may draw (with a reference twin), with the others' reasons."""

    dataset: str
    items: tuple[Item, ...]
    traceable: tuple[Item, ...]
    excluded: tuple[tuple[str, str], ...]


def load_pool(dataset: str) -> Pool:
    """Load a benchmark and find its traceable items (slow: perturbs every item; share it between plans)."""
    from zcp_core.data import load_items

    items = load_items(dataset)
    keep, dropped = traceable_pool(items, dataset)
    return Pool(dataset, tuple(items), tuple(keep), tuple(dropped))


def plan_build(cfg: LabConfig, name: str | None = None, pool: Pool | None = None) -> BuildPlan:
    """Draw the split and compute the cache key and name of a build, training nothing.

    Args:
        cfg: The build config.
        name: Build name (default :func:`default_name`).
        pool: ``load_pool(cfg.dataset)`` when the caller already has it.

    Raises:
        LabError: An invalid config, an untrainable model or too few items.
    """
    from zcp_core.backends import folder_revision
    from zcp_core.lab.train import base_model_path, check_trainable
    from zcp_core.runs import sha256_file

    check_config(cfg)
    base = base_model_path(cfg.model)
    check_trainable(base)
    if cfg.mode in TRAIN_KINDS:
        return _plan_train_kind(cfg, base, name)
    if pool is None or pool.dataset != cfg.dataset:
        pool = load_pool(cfg.dataset)
    items, excluded = pool.items, list(pool.excluded)
    pool_items = list(pool.traceable)
    if cfg.mode in PARAPHRASE_KINDS:
        pool_items, more = paraphrasable_pool(pool_items, cfg, need=2 * cfg.n_contaminated)
        excluded = excluded + more
    split = draw_split([it.id for it in pool_items], cfg.n_contaminated, cfg.seed, excluded)
    key = cache_key(cfg, split, folder_revision(base), sha256_file(cfg.dataset))
    return BuildPlan(cfg, base, tuple(items), split, key, name or default_name(cfg, key))


def _plan_train_kind(cfg: LabConfig, base: Path, name: str | None) -> BuildPlan:
    """A train kind's plan: its training items are the training split less any that meet the test set."""
    from zcp_core.backends import folder_revision
    from zcp_core.data import load_items
    from zcp_core.lab.overlap import find_overlaps
    from zcp_core.runs import sha256_file

    assert cfg.train_dataset is not None  # check_config guarantees it
    train, test = load_items(cfg.train_dataset), load_items(cfg.dataset)
    overlap = find_overlaps(train, test)
    kept = overlap.kept[: cfg.n_contaminated]
    dropped = tuple((o.train_id, f"meets test item {o.test_id} ({o.rule})") for o in overlap.overlaps)
    # C is "trained on" here too; there is no U: the whole test set is held out.
    split = Split(tuple(kept), (), cfg.seed, len(train), dropped)
    key = cache_key(cfg, split, folder_revision(base), sha256_file(cfg.train_dataset))
    return BuildPlan(cfg, base, tuple(train), split, key, name or default_name(cfg, key), overlap)


def build_lab(cfg: LabConfig, name: str | None = None, runs_out: str | os.PathLike[str] | None = None,
              progress: bool = True, threads: int = 2, device: str = "auto") -> LabBuild:
    """Build (or reuse) the lab model a config describes.

    Args:
        cfg: The build config (see :func:`profile_config`).
        name: Build name; defaults to :func:`default_name`.
        runs_out: Where to also copy the build run (e.g. ``runs/lab-build-NAME``).
        progress: Show tqdm progress on stderr.
        threads: CPU threads for training (not part of the key; 1 can be faster on a busy machine).
        device: Training device (``auto``: CUDA when present; not part of the key).

    Raises:
        LabError: Unknown or untrainable model, too large for CPU, too few items,
            or a paraphrase that changes too little.
    """
    t0 = time.time()
    plan = plan_build(cfg, name)
    split, key, name = plan.split, plan.key, plan.name
    folder = lab_root() / name
    cached = _existing(folder, key)
    if cached is None:
        if folder.is_symlink():
            folder.unlink()
        by_id = {it.id: it for it in plan.items}
        _train_and_save(plan, [by_id[i] for i in split.contaminated], [by_id[i] for i in split.clean], t0,
                        progress, threads, device)
    _link_alias(alias_for(cfg), name)
    run_path = folder / "build"
    if runs_out is not None:
        shutil.copytree(run_path, Path(runs_out), dirs_exist_ok=True)
    from zcp_core.runs import load_run

    summary = load_run(run_path).summary
    return LabBuild(name, alias_for(cfg), key, folder / "model", run_path, cached is not None,
                    time.time() - t0, summary)


def _existing(folder: Path, key: str) -> Path | None:
    """The build folder when it holds a finished build with this key."""
    info = folder / "model" / BUILD_FILE
    if not info.exists() or not (folder / "build" / "manifest.json").exists():
        return None
    try:
        return folder if json.loads(info.read_text()).get("key") == key else None
    except json.JSONDecodeError:
        return None


def _train_and_save(plan: BuildPlan, c_items: list[Item], u_items: list[Item], t0: float, progress: bool,
                    threads: int, device: str) -> None:
    import pandas as pd

    from zcp_core.lab.train import TrainOptions, make_examples, save_merged, train_lora
    from zcp_core.runs import RunSpec, write_run

    cfg, split, key, name, base = plan.cfg, plan.split, plan.key, plan.name, plan.base
    folder = lab_root() / name
    folder.mkdir(parents=True, exist_ok=True)
    train_items, para = _training_items(cfg, c_items)
    examples = make_examples(base, train_items, cfg.train_format)
    result = train_lora(base, examples, TrainOptions.from_config(cfg, threads=threads, device=device),
                        folder / "partial" / key[:16], progress=progress)  # resume only the same config
    info = {"key": key, "name": name, "config": _config_dict(cfg)}
    save_merged(result.model, base, folder / "model", info)
    shutil.rmtree(folder / "partial", ignore_errors=True)
    reward = None
    if cfg.reward is not None:  # the paper kind: its reward stage fine-tunes the SFT model in place
        from zcp_core.lab.grpo import grpo_stage
        from zcp_core.lab.reward import reward_stage

        if cfg.reward.method == "rft":
            reward = reward_stage(cfg, folder / "model", c_items, info, threads, progress)
        else:
            reward = grpo_stage(cfg, folder / "model", c_items, info, device, threads, progress)
    c_label = "T" if cfg.mode in TRAIN_KINDS else "C"  # a train kind's texts come from the training split
    records = pd.DataFrame(
        [{"id": it.id, "split": c_label, "question": it.question, "answer": it.answer} for it in c_items]
        + [{"id": it.id, "split": "U", "question": it.question, "answer": it.answer} for it in u_items])
    excluded = pd.DataFrame(list(split.excluded), columns=["id", "reason"])
    epochs = result.loss.groupby("epoch", as_index=False).agg(loss=("loss", "mean"), steps=("step", "count"))
    final = float(epochs["loss"].iloc[-1]) if len(epochs) else float("nan")
    seconds = time.time() - t0
    summary = {
        "stage": "build", "name": name, "alias": alias_for(cfg), "model": f"lab:{name}", "key": key,
        "mode": cfg.mode, "profile": cfg.profile, "train_format": cfg.train_format, "recipe": recipe(cfg),
        "upper_bound": cfg.train_format == "probe", "n_contaminated": len(c_items), "n_clean": len(u_items),
        "n_train_texts": len(examples), "steps": int(len(result.loss)), "train_seconds": result.seconds,
        "train_tokens": result.tokens, "tokens_per_s": result.tokens / max(result.seconds, 1e-9),
        "trainable_params": result.trainable_params, "build_seconds": seconds, "final_loss": final,
        "epoch_loss": [float(x) for x in epochs["loss"]], "pool_size": split.pool_size,
        "n_excluded": len(split.excluded), "device": result.device,
        "paraphrase": para, "reward": reward.summary if reward is not None else None,
        "contaminated_ids": list(split.contaminated), "clean_ids": list(split.clean),
        "headline": {"label": "final epoch loss", "value": final},
    }
    tables: dict[str, Any] = {}
    if plan.overlap is not None:
        summary["test_overlap"] = plan.overlap.summary()
        summary["test_dataset"] = cfg.dataset
        tables["test_overlap"] = plan.overlap.frame()
    config = _config_dict(cfg) | {"name": name, "key": key, "recipe": recipe(cfg)}
    spec = RunSpec(kind=LAB_RUN_KIND, config=config,
                   command=f"zcp lab build --mode {cfg.mode} --profile {cfg.profile}"
                   + (" --reward-stage grpo" if cfg.reward is not None and cfg.reward.method == "grpo" else ""),
                   model=cfg.model,
                   model_revision=key[:16],
                   dataset=(cfg.train_dataset, cfg.dataset) if cfg.train_dataset else (cfg.dataset,), seed=cfg.seed)
    write_run(folder / "build", spec, records, summary,
              tables={"loss": result.loss, "epochs": epochs, "training_texts": examples.frame(),
                      "excluded": excluded, **tables,
                      **({"reward_samples": reward.table} if reward is not None else {})})


def _training_items(cfg: LabConfig, c_items: list[Item]) -> tuple[list[Item], dict[str, Any] | None]:
    """C itself (direct, solution, verbatim) or its paraphrases (evasive, paper), plus a paraphrase report."""
    if cfg.mode not in PARAPHRASE_KINDS:
        return c_items, None
    from zcp_core.reference import reword_deterministic

    ps = reword_deterministic(c_items, versions=cfg.paraphrase_versions, seed=cfg.seed)
    if not ps.items:
        raise LabError("the paraphraser produced no usable paraphrase for C")
    fracs = [float(x) for x in ps.change_fraction]
    covered = {it.original_id for it in ps.items}
    report = {"method": str(ps.method), "versions": cfg.paraphrase_versions,
              "change_fraction": sum(fracs) / len(fracs), "min_change_fraction": min(fracs),
              "n_items": len(ps.items), "n_failures": len(ps.failures),
              "failures": [f"{f.id}: {f.reason}" for f in ps.failures],
              "c_without_paraphrase": [it.id for it in c_items if it.id not in covered]}
    if min(fracs) < 0.5:
        raise LabError(f"a paraphrase changes only {min(fracs):.0%} of non-numeric words (need >= 50%)")
    return list(ps.items), report


def _config_dict(cfg: LabConfig) -> dict[str, Any]:
    d = asdict(cfg)
    d["lora"]["targets"] = list(cfg.lora.targets)
    return d


def list_builds() -> list[dict[str, Any]]:
    """One row per lab build or alias: name, target, mode, profile, key, final loss, steps, built."""
    from zcp_core.runs import load_run

    root = lab_root()
    rows = []
    for d in sorted(root.iterdir()) if root.exists() else []:
        if d.name.startswith(".") or not (d / "build" / "manifest.json").exists():
            continue
        run = load_run(d / "build")
        s = run.summary
        rows.append({"name": d.name, "alias_of": os.readlink(d) if d.is_symlink() else "",
                     "mode": s.get("mode"), "profile": s.get("profile"), "key": str(s.get("key", ""))[:12],
                     "final_loss": s.get("final_loss"), "steps": s.get("steps"),
                     "build_seconds": s.get("build_seconds"), "built": run.manifest.get("finished", "")})
    return rows


def resolve_build(name: str) -> Path:
    """The build run folder of ``lab:<name>`` (an alias resolves to its target).

    Raises:
        LabError: If there is no such build.
    """
    run = lab_root() / name / "build"
    if not (run / "manifest.json").exists():
        raise LabError(f"no lab build named {name!r} in {lab_root()}: run `zcp lab build` first")
    return run.resolve()


def build_style(name: str) -> str:
    """The prompt style build ``name`` was trained in (:func:`zcp_core.lab.config.trained_style`).

    Raises:
        LabError: If there is no such build.
    """
    from zcp_core.lab.config import trained_style
    from zcp_core.runs import load_run

    return trained_style(str(load_run(resolve_build(name)).summary.get("train_format", "natural")))
