"""A real (tiny) lab build on the embedded model: loadable as ``lab:``, cached, evaluable, shown by the app page.

The build trains one step on two items with a rank-2 LoRA, so the test checks
the mechanics (split, training, merge, save, alias, cache, run folders), not
the strength of memorisation; benchmarks/lab_measure.py measures that.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from zcp_core.lab import LoraSpec, profile_config

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def lab_env(lab_cache):
    """A private ZCP_CACHE holding one smoke build (base: the already converted embedded model)."""
    from zcp_core.lab import build_lab

    base = lab_cache["base"]
    cfg = profile_config("smoke", "direct", model=f"hf:{base}", dataset=str(lab_cache["dataset"]), n_contaminated=2,
                         batch_size=2, max_steps=1,
                         lora=LoraSpec(r=2, alpha=4, targets=("q_proj", "v_proj")))
    first = build_lab(cfg, progress=False)
    yield {"cfg": cfg, "build": first, "base": base, "cache": lab_cache["cache"]}


def test_smoke_build_writes_a_loadable_lab_model_and_a_run(lab_env) -> None:
    from zcp_core.backends import folder_revision, lab_model_path, load_backend
    from zcp_core.runs import load_run

    b = lab_env["build"]
    assert not b.cached and b.alias == "smoke" and b.name.startswith("direct-smoke-")
    run = load_run(b.run_path)
    assert run.kind == "lab" and run.summary["stage"] == "build"
    s = run.summary
    assert len(s["contaminated_ids"]) == len(s["clean_ids"]) == 2
    assert not set(s["contaminated_ids"]) & set(s["clean_ids"])
    assert set(run.records["split"]) == {"C", "U"} and len(run.records) == 4
    loss = run.table("loss")
    assert list(loss.columns) == ["step", "epoch", "loss", "tokens", "elapsed_s"] and len(loss) == 1
    assert loss["loss"].iloc[0] > 0 and s["steps"] == 1
    texts = run.table("training_texts")
    assert set(texts["original_id"]) == set(s["contaminated_ids"])  # trained on C only, never on U
    assert all(t.startswith("The answer is ") for t in texts["target"])
    assert not texts["prompt"].str.contains("boxed").any()  # natural format: no probe suffix anywhere
    # Both the build name and the alias resolve to a full transformers folder.
    for spec in (b.spec, "lab:smoke"):
        path = lab_model_path(spec.split(":", 1)[1])
        assert (path / "config.json").exists() and (path / "model.safetensors").exists()
    assert folder_revision(b.model_path) != folder_revision(lab_env["base"])
    from zcp_core.backends import ScoreRequest, chat

    backend = load_backend("lab:smoke", cache=None, device="cpu")
    [lp] = backend.score([ScoreRequest(continuation="18", messages=chat("What is 9 * 2?"), prefill="The answer is ")])
    assert lp.available and len(lp.logprobs) >= 1 and all(v <= 0 for v in lp.logprobs)


def test_second_build_with_same_config_is_cached(lab_env) -> None:
    from zcp_core.lab import build_lab

    b = lab_env["build"]
    weights = b.model_path / "model.safetensors"
    before = weights.stat().st_mtime_ns
    again = build_lab(lab_env["cfg"], progress=False)
    assert again.cached and again.key == b.key and again.name == b.name
    assert weights.stat().st_mtime_ns == before  # nothing retrained or rewritten


def test_list_builds_shows_build_and_alias(lab_env) -> None:
    from zcp_core.lab import list_builds

    rows = {r["name"]: r for r in list_builds()}
    name = lab_env["build"].name
    assert rows[name]["mode"] == "direct" and rows["smoke"]["alias_of"] == name


@pytest.fixture(scope="module")
def lab_eval(lab_env, tmp_path_factory):
    """One evaluate run of the smoke build (short answers, few resamples, no response cache, calibrated)."""
    from zcp_core.lab import EvalOptions, evaluate_lab

    out = tmp_path_factory.mktemp("runs") / "lab-eval"
    return evaluate_lab("smoke", EvalOptions(n_resamples=200, device="cpu", cache=False, max_new_tokens=8,
                                                     calibrate=True, cot_max_new_tokens=8), out=out)


def test_evaluate_writes_confidences_gaps_and_roc(lab_env, lab_eval) -> None:
    from zcp_core.runs import load_run

    s = lab_eval.summary
    assert set(s["contaminated"]) == set(s["clean"]) == {"acc", "p_first", "p_all", "p_first_cal", "p_all_cal"}
    for v in (*s["contaminated"].values(), *s["clean"].values()):
        assert v is None  # 2 pairs per split: too few pairs for a verdict (stats.MIN_PAIRS is 10)
    assert s["mode"] == "direct" and 0.0 <= s["auroc"] <= 1.0 and 0.0 <= s["tpr_at_5fpr"] <= 1.0
    assert (s["n_c"], s["n_u"]) == (2, 2)
    run = load_run(lab_eval.run_path)
    assert run.summary["stage"] == "evaluate" and run.kind == "lab"
    assert set(run.records["split"]) == {"C", "U"} and set(run.records["arm"]) == {"original", "reference"}
    gaps = run.table("gaps")
    assert set(gaps["split"]) == {"C", "U"} and set(gaps["metric"]) == {"acc", "p_first", "p_all", "p_first_cal",
                                                                           "p_all_cal"}
    assert len(gaps) == 5 * (s["n_c"] + s["n_u"]) and gaps["suspect"].dtype == float
    assert gaps.loc[gaps["metric"] == "p_all_cal", "gap"].notna().all()
    assert "--calibrate" in run.manifest["command"]
    assert {"fpr", "tpr"} <= set(run.table("roc").columns)
    assert set(run.table("flips")["split"]) == {"C", "U"}
    assert set(run.table("confidence")["split"]) == {"C", "U", "all"}
    conf = run.table("confidence")
    # 2 pairs per split are too few for a verdict; the smoke build's Acc may not even be graded (unclosed boxes)
    assert (conf["reason"] == "too few pairs for a verdict (n < 10)").where(
        conf["metric"] != "acc", conf["reason"].str.startswith(("too few pairs", "not measured"))).all()
    # The build's base model is the control by default: a did block shaped like the top level.
    assert s["control"]["model"] == lab_env["cfg"].model and s["did"]["relative_to"] == lab_env["cfg"].model
    assert set(s["did"]["contaminated"]) == set(s["did"]["clean"]) == {"acc", "p_first", "p_all"}
    assert 0.0 <= s["did"]["auroc"] <= 1.0 and set(s["did"]["targets"]) == set(s["targets"])
    did = run.table("did_gaps")
    assert set(did["split"]) == {"C", "U"} and {"audited_gap", "control_gap", "difference"} <= set(did.columns)
    assert set(run.table("did_confidence")["split"]) == {"C", "U", "all"}



def test_evaluate_runs_the_manipulation_check(lab_eval) -> None:
    from zcp_core.runs import load_run

    s = lab_eval.summary
    # 2 items a side: the check runs, but gives no verdict (stats.MIN_PAIRS); the keys sit at the top level.
    assert s["took"] is None and isinstance(s["took_gain"], float) and len(s["took_ci"]) == 2
    d = s["took_detail"]
    assert d["prompt_style"] == "chat" and d["max_new_tokens"] == 8 and "too few items" in d["reason"]
    assert d["models"]["lab"] == "lab:smoke" and d["models"]["base"].startswith("hf:")  # the build against its base
    assert set(d["accuracy"]) == {"C_lab", "C_base", "U_lab", "U_base"} and "permutation" in d["ci_method"]
    assert s["memorised"]["train_format"] == "natural" and isinstance(s["memorised"]["gain"], float)
    took = load_run(lab_eval.run_path).table("took")
    assert len(took) == 4 and set(took["split"]) == {"C", "U"}
    assert (took["contribution"] == took["lab_correct"].astype(float) - took["base_correct"].astype(float)).all()
    assert (took["lab_logprob"] <= 0).all() and took["memorised"].notna().all()


def _run_page(runs: Path) -> object:
    from streamlit.testing.v1 import AppTest

    assert os.environ["ZCP_RUNS"] == str(runs)  # set by the test's monkeypatch
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app_pages" / "lab.py"), default_timeout=60)
    at.run()
    return at


def test_app_page_renders_without_runs_and_with_build_and_eval_runs(lab_env, lab_eval, tmp_path, monkeypatch) -> None:
    import shutil

    monkeypatch.setenv("ZCP_RUNS", str(tmp_path / "empty"))
    at = _run_page(tmp_path / "empty")
    assert not at.exception
    runs = tmp_path / "runs"
    shutil.copytree(lab_env["build"].run_path, runs / "lab-build")
    monkeypatch.setenv("ZCP_RUNS", str(runs))
    at = _run_page(runs)
    assert not at.exception and any("final epoch loss" in m.label.lower() for m in at.metric)
    shutil.copytree(lab_eval.run_path, runs / "lab-eval")
    at = _run_page(runs)  # the newest run (the evaluation) is selected first
    assert not at.exception
    assert any(m.label.startswith("AUROC") for m in at.metric)
    assert len(at.dataframe) >= 2  # flip counts and the flips table
