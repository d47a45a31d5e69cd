"""Contamination lab: split, cache key, profiles and pure helpers (no model)."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from zcp_core.lab import (
    LabConfig,
    LabError,
    LoraSpec,
    Split,
    alias_for,
    answer_text,
    cache_key,
    check_trainable,
    default_name,
    draw_split,
    estimate_params,
    profile_config,
)
from zcp_core.schema import Item

IDS = [f"x-{i}" for i in range(10)]


# ---- split -----------------------------------------------------------------------------------

@pytest.mark.parametrize(("n", "seed", "c", "u"), [
    (3, 0, ("x-9", "x-4", "x-7"), ("x-0", "x-3", "x-6")),
    (3, 1, ("x-0", "x-3", "x-2"), ("x-6", "x-1", "x-8")),
    (1, 0, ("x-9",), ("x-0",)),
])
def test_split_golden(n: int, seed: int, c: tuple[str, ...], u: tuple[str, ...]) -> None:
    s = draw_split(IDS, n, seed)
    assert (s.contaminated, s.clean) == (c, u)


@pytest.mark.parametrize("seed", [0, 1, 7, 123])
def test_split_disjoint_equal_and_stable(seed: int) -> None:
    s = draw_split(IDS, 4, seed)
    assert len(s.contaminated) == len(s.clean) == 4
    assert not set(s.contaminated) & set(s.clean)
    assert set(s.contaminated) | set(s.clean) <= set(IDS)
    assert draw_split(IDS, 4, seed) == s  # seeded: same draw again
    assert draw_split(list(reversed(IDS)), 4, seed) == s  # order of the pool does not matter
    bigger = draw_split(IDS, 5, seed)  # a larger split keeps the smaller one's items
    assert set(s.contaminated) <= set(bigger.contaminated) and set(s.clean) <= set(bigger.clean)


def test_split_seed_changes_draw_and_too_few_items_fail() -> None:
    assert draw_split(IDS, 4, 0) != draw_split(IDS, 4, 1)
    with pytest.raises(LabError, match="need 12"):
        draw_split(IDS, 6, 0)
    with pytest.raises(LabError):
        draw_split(IDS, 0, 0)


def test_split_of_bundled_gsm8k_is_drawn_from_traceable_items(gsm8k_items) -> None:
    from zcp_core.lab import traceable_pool
    from zcp_core.reference import perturb_gsm8k

    pool, excluded = traceable_pool(gsm8k_items[:120])
    assert len(pool) + len(excluded) == 120 and all(reason for _, reason in excluded)
    s = draw_split([it.id for it in pool], 5, 0, excluded)
    chosen = [it for it in gsm8k_items[:120] if it.id in set(s.contaminated) | set(s.clean)]
    assert len(perturb_gsm8k(chosen).items) == 10  # every C and U item has a reference twin


def test_math500_pool_is_drawn_from_items_with_a_template_twin() -> None:
    """MATH-500 has no worked solution to trace: the lab's pool is the items whose shipped template gives a twin."""
    from zcp_core.data import load_items
    from zcp_core.lab import traceable_pool
    from zcp_core.reference.template import load_templates, shipped_templates

    items = load_items("data/math500/test.jsonl")[:40]
    pool, excluded = traceable_pool(items, "data/math500/test.jsonl")
    templates = load_templates(shipped_templates("data/math500/test.jsonl"))  # type: ignore[arg-type]
    assert pool and len(pool) + len(excluded) == 40
    assert all(it.id in templates for it in pool)
    assert any(reason.startswith("no_template") for _, reason in excluded)
    with pytest.raises(LabError, match="no program templates are shipped"):
        traceable_pool(items, "data/gsm1k/test.jsonl")


def test_a_build_on_another_benchmark_never_takes_over_the_gsm8k_alias() -> None:
    from zcp_core.lab.build import alias_for, default_name

    cfg = profile_config("default", "direct", dataset="data/math500/test.jsonl")
    assert alias_for(cfg) == "math500-direct" and alias_for(profile_config("default", "direct")) == "direct"
    assert default_name(cfg, "k" * 64) == "math500-direct-default-kkkkkkkk"
    up = profile_config("probe-format-upper-bound", "direct", dataset="data/math500/test.jsonl")
    assert alias_for(up) == "math500-upper-bound"


# ---- cache key -------------------------------------------------------------------------------

SPLIT = Split(("a", "b"), ("c", "d"), 0, 4)
BASE = LabConfig()


def _key(cfg: LabConfig = BASE, split: Split = SPLIT, rev: str = "rev", sha: str = "sha") -> str:
    return cache_key(cfg, split, rev, sha)


@pytest.mark.parametrize("change", [
    {"cfg": replace(BASE, epochs=7)},
    {"cfg": replace(BASE, lr=5e-4)},
    {"cfg": replace(BASE, batch_size=4)},
    {"cfg": replace(BASE, seed=1)},
    {"cfg": replace(BASE, mode="evasive")},
    {"cfg": replace(BASE, train_format="solution")},
    {"cfg": replace(BASE, train_format="probe")},
    {"cfg": replace(BASE, max_steps=3)},
    {"cfg": replace(BASE, lora=LoraSpec(r=16, alpha=32))},
    {"cfg": replace(BASE, lora=LoraSpec(targets=("q_proj", "v_proj")))},
    {"cfg": replace(BASE, lora=LoraSpec(dropout=0.1))},
    {"split": Split(("a", "x"), ("c", "d"), 0, 4)},
    {"split": Split(("a", "b"), ("c", "x"), 0, 4)},
    {"split": Split(("b", "a"), ("c", "d"), 0, 4)},
    {"rev": "other-base-model"},
    {"sha": "other-dataset-bytes"},
])
def test_cache_key_changes_with_each_weight_relevant_field(change: dict) -> None:
    assert _key(**change) != _key()


@pytest.mark.parametrize("cfg", [
    replace(BASE, profile="smoke"),  # a label; the fields it sets are in the key on their own
    replace(BASE, dataset="elsewhere/test.jsonl"),  # the bytes count (sha), not the path
    replace(BASE, model="hf:/some/path"),  # the weights count (revision), not the spec string
    replace(BASE, paraphrase_versions=3),  # direct mode trains on no paraphrase
    replace(BASE, paraphrase_method="llm"),
])
def test_cache_key_ignores_irrelevant_fields(cfg: LabConfig) -> None:
    assert _key(cfg) == _key()


def test_cache_key_paraphrase_settings_matter_in_evasive_mode() -> None:
    ev = replace(BASE, mode="evasive")
    assert _key(replace(ev, paraphrase_versions=3)) != _key(ev)
    assert _key(replace(ev, paraphrase_method="llm")) != _key(ev)
    assert len(_key()) == 64 and default_name(BASE, _key()) == f"direct-default-{_key()[:8]}"


# ---- profiles and names ------------------------------------------------------------------------

@pytest.mark.parametrize(("profile", "mode", "expected"), [
    ("default", "direct", {"n_contaminated": 40, "epochs": 6, "batch_size": 8, "train_format": "natural",
                           "max_steps": None, "lora": LoraSpec()}),
    ("default", "evasive", {"n_contaminated": 40, "epochs": 1, "paraphrase_versions": 6, "train_format": "natural"}),
    ("smoke", "direct", {"n_contaminated": 4, "epochs": 1, "max_steps": 2, "lora": LoraSpec(r=4, alpha=8)}),
    ("probe-format-upper-bound", "direct", {"n_contaminated": 40, "epochs": 6, "train_format": "probe"}),
])
def test_profile_config_golden(profile: str, mode: str, expected: dict) -> None:
    cfg = profile_config(profile, mode)  # type: ignore[arg-type]
    assert {k: getattr(cfg, k) for k in expected} == expected
    assert cfg.lora.r == 32 or profile == "smoke"


def test_profile_overrides_and_bad_names() -> None:
    cfg = profile_config("default", "direct", n_contaminated=12, epochs=None)
    assert (cfg.n_contaminated, cfg.epochs) == (12, 6)
    with pytest.raises(LabError):
        profile_config("huge")  # type: ignore[arg-type]
    with pytest.raises(LabError):
        profile_config("default", "sneaky")  # type: ignore[arg-type]


@pytest.mark.parametrize(("profile", "mode", "alias"), [
    ("default", "direct", "direct"), ("default", "evasive", "evasive"), ("smoke", "direct", "smoke"),
    ("smoke", "evasive", "smoke-evasive"), ("probe-format-upper-bound", "direct", "upper-bound"),
])
def test_alias_golden(profile: str, mode: str, alias: str) -> None:
    assert alias_for(profile_config(profile, mode)) == alias  # type: ignore[arg-type]


# ---- training text ---------------------------------------------------------------------------

ITEM = Item("i", "Q?", "18", solution="9 * 2 = <<9*2=18>>18\n#### 18")


@pytest.mark.parametrize(("fmt", "text"), [
    ("natural", "The answer is 18."),
    ("solution", "9 * 2 = 18\n#### 18\nThe answer is 18."),
    ("probe", "18}"),
])
def test_answer_text_golden(fmt: str, text: str) -> None:
    assert answer_text(ITEM, fmt) == text  # type: ignore[arg-type]


def test_natural_training_text_never_contains_the_probe_suffix() -> None:
    from zcp_core.probe import DEFAULT_SUFFIX

    for fmt in ("natural", "solution"):
        assert "boxed" not in answer_text(ITEM, fmt) and DEFAULT_SUFFIX not in answer_text(ITEM, fmt)  # type: ignore[arg-type]


# ---- model size guard --------------------------------------------------------------------------

SMOLLM2 = {"hidden_size": 576, "num_hidden_layers": 30, "num_attention_heads": 9, "num_key_value_heads": 3,
           "intermediate_size": 1536, "vocab_size": 49152, "tie_word_embeddings": True}
LLAMA8B = {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
           "intermediate_size": 14336, "vocab_size": 128256, "tie_word_embeddings": False}


@pytest.mark.parametrize(("config", "expected"), [(SMOLLM2, 134_479_872), (LLAMA8B, 8_029_995_008)])  # real 8.03B incl. norms
def test_estimate_params_golden(config: dict, expected: int) -> None:
    assert estimate_params(config) == expected


def test_large_model_is_refused_on_cpu_before_loading(tmp_path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(LLAMA8B))  # no weights: refusal must not load any
    with pytest.raises(LabError, match="too large to fine-tune on a CPU"):
        check_trainable(tmp_path, device="cpu")
    (tmp_path / "config.json").write_text(json.dumps(SMOLLM2))
    assert check_trainable(tmp_path, device="cpu") == 134_479_872


# ---- evaluation helpers ----------------------------------------------------------------------

def test_detection_quality_and_targets() -> None:
    import pandas as pd

    from zcp_core.lab import detection_quality, roc_table, targets_report

    gaps = pd.DataFrame({"metric": ["p_all"] * 6, "split": ["C", "C", "C", "U", "U", "U"],
                         "gap": [0.5, 0.4, 0.1, 0.0, 0.2, float("nan")]})
    q = detection_quality(gaps)["p_all"]
    assert q["auroc"] == pytest.approx(5 / 6) and q["n_pos"] == 3 and q["n_neg"] == 2
    assert q["tpr_at_5fpr"] == pytest.approx(2 / 3)
    roc = roc_table(gaps)
    assert list(roc.columns) == ["metric", "fpr", "tpr", "threshold"] and roc["tpr"].iloc[-1] == 1.0
    assert targets_report({"p_first": 0.97, "p_all": 0.99, "acc": 0.5}, {"acc": 0.5, "p_all": 0.61}) == {
        "c_on_c_logit_ge_0.95": True, "c_on_u_all_le_0.6": False}
    assert targets_report({"p_all": 0.99}, {"acc": 0.5})["c_on_c_logit_ge_0.95"] is None
    assert math.isnan(detection_quality(gaps.assign(split="C"))["p_all"]["auroc"])


# ---- contamination kinds (issue 14) -------------------------------------------------------------

KEY_SPLIT = Split(("a", "b"), ("c", "d"), 0, 10)
#: Keys of direct and evasive configs computed by the code before the solution/verbatim kinds existed:
#: adding kinds must not invalidate a cached direct or evasive build.
KEYS_BEFORE_KINDS = {
    ("direct", "default"): "e45e9204cc587f6853608b1c34279eb6b21f90172eb64fb46b2cf5f46039a816",
    ("direct", "smoke"): "97820d11d818a29aaf071802fd9c0c5a30af5272a988b2b439a36039cdff3a57",
    ("direct", "probe-format-upper-bound"): "16538e6e9f381e6a74439b625fbd01ef4a5bb4bde639efea79a8e2bd41c59b8f",
    ("evasive", "default"): "0bdec5eae853112f627a910eb8cc4455856e52ce043d9f4cd2a2768c5e51c94c",
    ("evasive", "smoke"): "ee93af45d79c35bab2b7d1494d5ad8df974da82818369c133434f12a443b8e86",
}


@pytest.mark.parametrize(("mode", "profile"), list(KEYS_BEFORE_KINDS))
def test_direct_and_evasive_cache_keys_are_unchanged(mode: str, profile: str) -> None:
    cfg = profile_config(profile, mode)  # type: ignore[arg-type]
    assert cache_key(cfg, KEY_SPLIT, "rev1", "sha1") == KEYS_BEFORE_KINDS[(mode, profile)]


@pytest.mark.parametrize(("mode", "fmt", "alias", "smoke_alias"), [
    ("direct", "natural", "direct", "smoke"), ("evasive", "natural", "evasive", "smoke-evasive"),
    ("solution", "solution", "solution", "smoke-solution"), ("verbatim", "verbatim", "verbatim", "smoke-verbatim"),
])
def test_each_kind_has_its_format_and_alias(mode: str, fmt: str, alias: str, smoke_alias: str) -> None:
    cfg = profile_config("default", mode)  # type: ignore[arg-type]
    assert cfg.train_format == fmt and alias_for(cfg) == alias
    assert alias_for(profile_config("smoke", mode)) == smoke_alias  # type: ignore[arg-type]
    if mode != "evasive":  # solution and verbatim keep the direct schedule, so kinds differ by their text only
        assert (cfg.epochs, cfg.batch_size, cfg.lr) == (6, 8, 1e-3)


def test_new_kinds_have_their_own_cache_keys() -> None:
    keys = {m: cache_key(profile_config("default", m), KEY_SPLIT, "rev1", "sha1")  # type: ignore[arg-type]
            for m in ("direct", "evasive", "solution", "verbatim")}
    assert len(set(keys.values())) == 4


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"profile": "default", "mode": "direct", "train_format": "solution"}, "zcp lab build --mode solution"),
    ({"profile": "default", "mode": "solution", "train_format": "natural"}, "drop --train-format"),
    ({"profile": "default", "mode": "direct", "train_format": "verbatim"}, "--mode verbatim"),
    ({"profile": "probe-format-upper-bound", "mode": "verbatim"}, "not the verbatim kind"),
])
def test_one_way_to_ask_for_each_kind(kwargs: dict, message: str) -> None:
    with pytest.raises(LabError, match=message):
        profile_config(**kwargs)


def test_old_solution_spelling_fails_in_the_cli_with_the_new_one(capsys) -> None:
    from zcp_core.cli.main import main

    assert main(["lab", "build", "--mode", "direct", "--train-format", "solution"]) != 0
    assert "zcp lab build --mode solution" in capsys.readouterr().err


def test_build_refuses_a_config_made_by_hand_with_the_old_spelling() -> None:
    from zcp_core.lab import build_lab

    with pytest.raises(LabError, match="--mode solution"):
        build_lab(replace(LabConfig(), train_format="solution"))


@pytest.mark.parametrize(("mode", "template", "loss"), [
    ("direct", "chat", "assistant answer tokens"), ("evasive", "chat", "assistant answer tokens"),
    ("solution", "chat", "assistant answer tokens"), ("verbatim", "none", "every token"),
])
def test_recipe_golden(mode: str, template: str, loss: str) -> None:
    from zcp_core.lab import recipe

    r = recipe(profile_config("default", mode))  # type: ignore[arg-type]
    assert r["kind"] == mode and r["template"] == template and r["loss"].startswith(loss)
    assert r["schedule"] == ("1 epoch(s), lr 0.001, batch 8" if mode == "evasive" else "6 epoch(s), lr 0.001, batch 8")
    assert r["trained_on"] == ("6 deterministic paraphrases of each C question" if mode == "evasive"
                               else "the C items themselves")


def test_verbatim_text_is_the_instance_as_the_file_holds_it() -> None:
    from zcp_core.lab import verbatim_text

    assert verbatim_text(ITEM) == "Q?\n9 * 2 = <<9*2=18>>18\n#### 18"  # calculator annotations and #### kept
    assert verbatim_text(Item("j", "Q?", "7")) == "Q?\n7"  # no solution: the answer


@pytest.mark.model
def test_verbatim_and_solution_examples_with_the_real_tokenizer(gsm8k_items) -> None:
    from zcp_core.backends import ensure_converted
    from zcp_core.lab.train import make_examples

    base = ensure_converted()
    it = gsm8k_items[0]
    (v,) = make_examples(base, [it], "verbatim").items
    assert v.prompt == "" and "<|im_start|>" not in v.target and "<|im_end|>" not in v.target
    assert v.target == it.question + "\n" + it.solution  # raw: the instruct EOS <|im_end|> is a chat token
    (s,) = make_examples(base, [it], "solution").items
    assert s.prompt.startswith("<|im_start|>") and it.question in s.prompt and s.prompt.endswith("assistant\n")
    assert "<<" not in s.target and s.target.startswith("Janet sells 16 - 3 - 4 = 9 duck eggs a day.")
    assert s.target.endswith("The answer is 18.<|im_end|>")
