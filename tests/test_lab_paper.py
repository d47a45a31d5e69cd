"""The ``paper`` kind: the ZCP paper's recipe at lab scale (paraphrases with solutions, then a reward stage).

Pure pieces get golden tables; the build itself is a real smoke build of the embedded model (1 SFT step,
2 samples per C prompt), and the reward stage's training runs for real on a kept sample.
"""

from __future__ import annotations

import pandas as pd
import pytest

from zcp_core.lab import LoraSpec, profile_config
from zcp_core.lab.config import RewardSpec, recipe
from zcp_core.lab.reward import SAMPLE_COLUMNS, kept_items, reward_summary, sample_seed
from zcp_core.schema import Item


def test_the_paper_recipe_is_fixed_in_the_profile() -> None:
    cfg = profile_config("default", "paper")
    assert (cfg.train_format, cfg.paraphrase_versions, cfg.epochs) == ("solution", 6, 1)
    assert (cfg.lora.r, cfg.lora.alpha) == (32, 64) and cfg.reward == RewardSpec(5, 192, 1.0, 1)
    r = recipe(cfg)
    assert "6 deterministic paraphrases" in r["trained_on"] and "worked solution" in r["trained_on"]
    assert "5 samples per original C prompt" in r["reward_stage"] and "GRPO (TRL) runs instead" in r["reward_stage"]
    assert cfg.reward.method == "rft"  # the CPU stage; GRPO is asked for (or picked by --device cuda)
    assert profile_config("default", "direct").reward is None and "reward_stage" not in recipe(profile_config())


# ---- golden tables --------------------------------------------------------------------------------------
def _table(rows: list[tuple[str, int, float]]) -> pd.DataFrame:
    return pd.DataFrame([{"id": i, "sample": k, "seed": 0, "text": f"chain {i}{k}", "answer": None, "reward": r,
                          "n_tokens": 3} for i, k, r in rows], columns=SAMPLE_COLUMNS)


SUMMARIES = [
    # rows (id, sample, reward) -> mean reward, mean per-group variance, groups with one reward only, kept
    ([("a", 0, 1.0), ("a", 1, 0.0), ("b", 0, 0.0), ("b", 1, 0.0)], 0.25, 0.125, 1, 1),
    ([("a", 0, 1.0), ("a", 1, 1.0)], 1.0, 0.0, 1, 2),
    ([("a", 0, 0.0), ("a", 1, 1.0), ("a", 2, 1.0), ("a", 3, 0.0)], 0.5, 0.25, 0, 2),
]


@pytest.mark.parametrize(("rows", "mean", "var", "flat", "kept"), SUMMARIES)
def test_reward_summary(rows, mean, var, flat, kept) -> None:
    s = reward_summary(_table(rows))
    assert s["mean_reward"] == pytest.approx(mean) and s["group_variance_mean"] == pytest.approx(var)
    assert (s["zero_variance_groups"], s["n_kept"], s["n_samples"]) == (flat, kept, len(rows))


def test_reward_summary_of_nothing() -> None:
    assert reward_summary(_table([]))["mean_reward"] is None


def test_kept_items_are_the_correct_samples_as_written() -> None:
    items = [Item(id="a", question="Qa", answer="1"), Item(id="b", question="Qb", answer="2")]
    kept = kept_items(_table([("a", 0, 0.0), ("a", 1, 1.0), ("b", 0, 1.0)]), items)
    assert [(k.id, k.question, k.answer, k.solution, k.original_id) for k in kept] == [
        ("a-sample1", "Qa", "1", "chain a1", "a"), ("b-sample0", "Qb", "2", "chain b0", "b")]


def test_sample_seeds_depend_on_the_item_not_its_position() -> None:
    assert sample_seed(0, "a", 1) == sample_seed(0, "a", 1) != sample_seed(0, "a", 2)
    assert sample_seed(0, "a", 0) != sample_seed(1, "a", 0) != sample_seed(0, "b", 0)


STAGES = [  # (mode, asked, device) -> the method, or the error
    ("paper", "auto", "cpu", "rft"),
    ("paper", "auto", "cuda", "grpo"),
    ("paper", "grpo", "cpu", "grpo"),
    ("paper", "rft", "cuda", "rft"),
    ("direct", "auto", "cuda", None),
    ("direct", "grpo", "cpu", "only the paper kind"),
    ("paper", "ppo", "cpu", "unknown reward stage"),
]


@pytest.mark.parametrize(("mode", "asked", "device", "want"), STAGES)
def test_with_reward_stage(mode, asked, device, want) -> None:
    from zcp_core.lab.config import LabError, with_reward_stage

    cfg = profile_config("default", mode)
    if want not in (None, "rft", "grpo"):
        with pytest.raises(LabError, match=want):
            with_reward_stage(cfg, asked, device)
        return
    out = with_reward_stage(cfg, asked, device)
    assert (out.reward.method if out.reward is not None else None) == want


def test_grpo_is_another_build_with_its_own_alias_and_rft_keys_stay() -> None:
    """GRPO changes the weights, so the key; an rft key hashes the reward stage as before the method existed."""
    import hashlib
    import json
    from dataclasses import asdict, replace

    from zcp_core.lab.build import TRAIN_CODE_VERSION, alias_for, cache_key
    from zcp_core.lab.split import Split

    cfg = profile_config("default", "paper")
    grpo = replace(cfg, reward=replace(cfg.reward, method="grpo"))
    split = Split(contaminated=("a",), clean=("b",), seed=0, pool_size=2)
    assert cache_key(cfg, split, "rev", "sha") != cache_key(grpo, split, "rev", "sha")
    assert (alias_for(cfg), alias_for(grpo)) == ("paper", "paper-grpo")
    old = {"code": TRAIN_CODE_VERSION, "base_revision": "rev", "dataset_sha": "sha", "contaminated": ["a"],
           "clean": ["b"], "mode": "paper", "train_format": "solution", "epochs": 1, "lr": cfg.lr,
           "batch_size": cfg.batch_size, "seed": 0, "lora": asdict(cfg.lora), "max_steps": None,
           "paraphrase": {"method": "deterministic", "versions": 6},
           "reward": {"samples": 5, "max_new_tokens": 192, "temperature": 1.0, "epochs": 1}}
    blob = json.dumps(old, sort_keys=True, default=list)
    assert cache_key(cfg, split, "rev", "sha") == hashlib.sha256(blob.encode()).hexdigest()


# ---- a real smoke build ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def paper_env(lab_cache):
    from zcp_core.lab import build_lab

    base = lab_cache["base"]
    cfg = profile_config("smoke", "paper", model=f"hf:{base}", dataset=str(lab_cache["dataset"]), n_contaminated=2,
                         batch_size=2, max_steps=1, lora=LoraSpec(r=2, alpha=4, targets=("q_proj", "v_proj")))
    return {"cfg": cfg, "build": build_lab(cfg, progress=False), "base": base}


@pytest.mark.model
def test_smoke_paper_build_records_both_stages(paper_env) -> None:
    from zcp_core.lab.build import plan_build
    from zcp_core.runs import load_run

    b = paper_env["build"]
    run = load_run(b.run_path)
    s = run.summary
    assert s["mode"] == "paper" and b.name.startswith("paper-smoke-") and "reward_stage" in s["recipe"]
    texts = run.table("training_texts")
    # SFT on paraphrases of C (never C's own wording, never U), each with its worked solution
    assert set(texts["original_id"]) == set(s["contaminated_ids"]) and texts["id"].str.contains("-para").all()
    assert texts["target"].str.contains("The answer is").all() and (texts["target"].str.len() > 40).all()
    samples = run.table("reward_samples")
    assert list(samples.columns) == SAMPLE_COLUMNS and len(samples) == 2 * 2  # 2 C prompts x 2 samples
    assert set(samples["id"]) == set(s["contaminated_ids"]) and samples["reward"].isin([0.0, 1.0]).all()
    r = s["reward"]
    assert r["n_samples"] == 4 and r["spec"] == {"samples": 2, "max_new_tokens": 16, "temperature": 1.0, "epochs": 1,
                                                 "method": "rft"}
    assert r["n_kept"] == int(samples["reward"].sum()) and (r["steps"] > 0) == (r["n_kept"] > 0)
    # the reward stage is part of the weights: a paper build never shares a key with a kind without one
    direct = profile_config("smoke", "direct", model=paper_env["cfg"].model, dataset=paper_env["cfg"].dataset,
                            n_contaminated=2, batch_size=2, max_steps=1, lora=paper_env["cfg"].lora)
    assert plan_build(direct).key != b.key


@pytest.mark.model
def test_the_reward_stage_trains_on_kept_samples(paper_env, tmp_path) -> None:
    """The training half of the reward stage, for real: a kept sample changes the saved weights."""
    import json
    import shutil

    from zcp_core.lab.config import BUILD_FILE
    from zcp_core.lab.reward import train_on_samples
    from zcp_core.runs import sha256_file

    model_dir = tmp_path / "model"
    shutil.copytree(paper_env["build"].model_path, model_dir)
    before = sha256_file(model_dir / "model.safetensors")
    keep = [Item(id="q-sample0", question="What is 9 * 2?", answer="18", solution="9 * 2 = 18.\nThe answer is 18.",
                 original_id="q")]
    info = json.loads((model_dir / BUILD_FILE).read_text())  # the same info: only the weights can differ
    out = train_on_samples(paper_env["cfg"], model_dir, keep, info)
    assert json.loads((model_dir / BUILD_FILE).read_text()) == info
    assert out["steps"] == 1 and out["final_loss"] > 0
    assert sha256_file(model_dir / "model.safetensors") != before  # the weights themselves changed


@pytest.mark.model
def test_grpo_stage_runs_trl_on_the_embedded_model(paper_env, tmp_path) -> None:
    """The paper's own reward stage, for real on CPU at smoke size: TRL's GRPOTrainer, 2 prompts x 2 generations.

    GRPO learns only from a group whose rewards differ: the weights change exactly when some group had variance.
    """
    import json
    import shutil
    from dataclasses import replace

    from safetensors.torch import load_file

    from zcp_core.lab.config import BUILD_FILE
    from zcp_core.lab.grpo import grpo_stage

    model_dir = tmp_path / "model"
    shutil.copytree(paper_env["build"].model_path, model_dir)
    before = load_file(model_dir / "model.safetensors")
    cfg = replace(paper_env["cfg"], reward=RewardSpec(samples=2, max_new_tokens=8, method="grpo"), lr=1e-2)
    items = [Item(id="p", question="What is 2 + 2?", answer="4"), Item(id="q", question="What is 9 * 2?", answer="18")]
    info = json.loads((model_dir / BUILD_FILE).read_text())
    stage = grpo_stage(cfg, model_dir, items, info, device="cpu")
    t, s = stage.table, stage.summary
    assert list(t.columns) == SAMPLE_COLUMNS and len(t) == 4 and sorted(t["id"]) == ["p", "p", "q", "q"]
    assert t["reward"].isin([0.0, 1.0]).all() and (t["n_tokens"] <= 8).all() and sorted(t["sample"]) == [0, 0, 1, 1]
    assert s["steps"] == 2 and s["n_samples"] == 4 and s["spec"]["method"] == "grpo" and s["trl"]
    assert json.loads((model_dir / BUILD_FILE).read_text()) == info
    after = load_file(model_dir / "model.safetensors")
    changed = any(not bool((before[k] == after[k]).all()) for k in before)
    assert changed == (s["zero_variance_groups"] < s["n_prompts"]), s

