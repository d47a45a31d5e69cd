"""Train kinds: fine-tunes on a benchmark's training split that must never have seen a test item.

Golden checks of the overlap rule on the bundled data (GSM8K's train split holds a near-twin of a test item),
of the paired intervals against scipy, and one real tiny build with its check on the embedded model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zcp_core.lab import LoraSpec, profile_config
from zcp_core.lab.benign import (
    UNMOVED,
    accuracy_difference,
    check_sample,
    find_overlaps,
    paired_t_interval,
    question_hash,
)
from zcp_core.lab.config import TRAIN_EPOCHS, TRAIN_SAMPLE, LabError, check_config
from zcp_core.schema import Item

ROOT = Path(__file__).resolve().parent.parent


def _item(i: str, q: str, sol: str = "", ans: str = "1") -> Item:
    return Item(id=i, question=q, answer=ans, solution=sol or None)


def test_the_bundled_train_split_holds_one_near_twin_of_a_test_item_and_the_rule_drops_it() -> None:
    from zcp_core.data import load_items

    train, test = load_items(ROOT / TRAIN_SAMPLE), load_items(ROOT / "data/gsm8k/test.jsonl")
    rep = find_overlaps(train, test)
    assert (rep.n_train, rep.n_test, len(rep.kept)) == (300, 1319, 299)
    [o] = rep.overlaps
    stamps = next(it for it in train if it.id == o.train_id)
    assert "snowflake design" in stamps.question and o.rule == "13-gram" and o.n_shared == 13
    assert "snowflake design" in next(it for it in test if it.id == o.test_id).question
    assert rep.summary()["dropped"] == [o.train_id] and len(rep.frame()) == 1


def test_overlap_golden_cases() -> None:
    q = "Ann has 3 apples and buys 4 more apples at the store on a sunny day. How many apples does she have?"
    test = [_item("t1", q)]
    rep = find_overlaps([
        _item("same", "  ann HAS 3 apples and buys 4 more apples at the store on a sunny day.  How many apples "
                      "does she have?"),                                   # the same question, layout folded
        _item("solution", "Bob has 2 pears.", sol=q),                     # the test question inside a solution
        _item("short", "Ann has 3 apples and buys 4 more apples"),         # 9 shared words: no 13-gram
        _item("clean", "A train leaves at 5 pm."),
    ], test)
    rules = {(o.train_id, o.rule) for o in rep.overlaps}
    assert ("same", "question hash") in rules and ("same", "13-gram") in rules and ("solution", "13-gram") in rules
    assert rep.kept == ("short", "clean") and rep.dropped == ("same", "solution")
    assert question_hash("A  b\nC") == question_hash("a b c")


def test_paired_t_interval_is_scipys() -> None:
    from scipy import stats

    d = [0.3, 0.1, -0.2, 0.5, 0.4, 0.0, 0.25]
    r = paired_t_interval(d)
    ci = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
    assert r["ci"] == pytest.approx([ci.low, ci.high]) and r["mean"] == pytest.approx(sum(d) / len(d))
    assert r["p_above_0"] == pytest.approx(stats.ttest_1samp(d, 0.0, alternative="greater").pvalue)
    assert paired_t_interval([1.0])["ci"] == [None, None]


def test_accuracy_difference_golden() -> None:
    lab = [True, True, True, False, True, False]
    base = [False, False, True, False, True, True]
    r = accuracy_difference(lab, base)
    assert (r["lab_only"], r["base_only"], r["n"]) == (2, 1, 6)
    assert r["difference"] == pytest.approx(1 / 6) and r["lab"] == pytest.approx(4 / 6)
    assert r["p"] == pytest.approx(1.0) and r["ci"][0] < 0 < r["ci"][1]


def test_check_sample_is_seeded_and_stable() -> None:
    items = [_item(f"i{k}", f"q{k}") for k in range(50)]
    a, b = check_sample(items, 10, 0), check_sample(list(reversed(items)), 10, 0)
    assert [it.id for it in a] == [it.id for it in b] and len(a) == 10
    assert [it.id for it in check_sample(items, 10, 1)] != [it.id for it in a]


def test_the_matrix_refuses_train_kinds_with_the_reason() -> None:
    from zcp_core.lab.matrix import MatrixOptions

    with pytest.raises(LabError, match="saw neither C nor U"):
        MatrixOptions(kinds=("direct", "train-direct"))


def test_train_kinds_config() -> None:
    cfg = profile_config("default", "train-direct")
    assert (cfg.epochs, cfg.train_dataset, cfg.train_format, cfg.n_contaminated) == (TRAIN_EPOCHS, TRAIN_SAMPLE,
                                                                                    "natural", 300)
    assert profile_config("default", "train-solution").train_format == "solution"
    from dataclasses import replace

    with pytest.raises(LabError, match="training split"):
        check_config(replace(profile_config("default", "direct"), train_dataset=TRAIN_SAMPLE))
    with pytest.raises(LabError, match="drop --train-format"):
        profile_config("default", "train-solution", train_format="natural")


@pytest.mark.model
def test_a_train_kind_builds_on_the_training_split_and_its_check_runs(lab_cache, tmp_path, monkeypatch) -> None:
    """A real one-step build: it trains on train items only, records the overlap, its check writes a run, and
    the lab page shows that run."""
    from zcp_core.lab import build_lab
    from zcp_core.lab.benign import BenignOptions, check_train_build
    from zcp_core.lab.report import report
    from zcp_core.runs import load_run

    cfg = profile_config("smoke", "train-direct", model=f"hf:{lab_cache['base']}", n_contaminated=2, batch_size=2,
                         max_steps=1, lora=LoraSpec(r=2, alpha=4, targets=("q_proj", "v_proj")))
    b = build_lab(cfg, progress=False)
    run = load_run(b.run_path)
    assert run.manifest["datasets"][0]["path"].endswith("train_sample.jsonl")
    texts = run.table("training_texts")
    assert len(texts) == 2 and set(run.records["split"]) == {"T"}
    test_qs = {json.loads(x)["question"] for x in (ROOT / "data/gsm8k/test.jsonl").read_text().splitlines()}
    assert not any(q in p for p in texts["prompt"] for q in test_qs)
    assert run.summary["test_overlap"]["n_overlaps"] == 1 and len(run.table("test_overlap")) == 1
    assert "dropped for meeting a test item" in report(run).to_text()

    chk = check_train_build(b.name, BenignOptions(n_test=2, max_new_tokens=8), out=tmp_path / "runs" / "check")
    s = load_run(tmp_path / "runs" / "check").summary
    assert s["stage"] == "benign-check" and s["memorised"]["n"] == 2 and s["cot_accuracy"]["n"] == 2
    assert s["verdict"] in (UNMOVED, "the fine-tune moved the model") and len(chk.cot) == 2
    assert "Train-kind check" in report(load_run(tmp_path / "runs" / "check")).to_text()
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ZCP_RUNS", str(tmp_path / "runs"))
    at = AppTest.from_file(str(ROOT / "app_pages" / "lab.py"), default_timeout=60).run()
    assert not at.exception
    assert any("Full-CoT answers on the sampled test items" in h.value for h in at.subheader)
    assert any("dropped before training" in h.value for h in at.subheader)
    with pytest.raises(LabError, match="train kinds"):
        cfg2 = profile_config("smoke", "direct", model=f"hf:{lab_cache['base']}", dataset=str(lab_cache["dataset"]),
                              n_contaminated=2, batch_size=2, max_steps=1,
                              lora=LoraSpec(r=2, alpha=4, targets=("q_proj", "v_proj")))
        check_train_build(build_lab(cfg2, progress=False).name, BenignOptions(n_test=2, max_new_tokens=8))
