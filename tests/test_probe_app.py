"""The probe app page renders with no runs, with a real probe run, and tells the story of the bundled examples."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
PAGE = str(ROOT / "app_pages" / "probe.py")
EXAMPLES = ROOT / "data" / "examples"


@pytest.fixture(scope="module")
def runs_root(smollm2, gsm8k_items, tmp_path_factory):
    import torch

    from zcp_core.probe import ProbeConfig, run_probe
    from zcp_core.reference import perturb_gsm8k

    before = torch.get_num_threads()
    torch.set_num_threads(1)  # shared 2-core box: avoid thread oversubscription stalls
    try:
        twins = list(perturb_gsm8k(gsm8k_items[:6]).items)[:3]
        keep = {t.original_id for t in twins}
        original = [it for it in gsm8k_items[:6] if it.id in keep]
        root = tmp_path_factory.mktemp("probe_runs")
        cfg = ProbeConfig(metrics=("acc", "con", "p_first", "p_all"), ratios=(0.0, 1.0), cot_tokens=6,
                          max_new_tokens=8, n_resamples=200)
        run_probe(smollm2, original, twins, cfg, out=root / "probe-3", model_spec="smollm2")
    finally:
        torch.set_num_threads(before)
    return root


def test_page_without_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("ZCP_RUNS", str(tmp_path))
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception
    assert any("No probe runs" in i.value for i in at.info)


def test_page_with_a_probe_run(runs_root, monkeypatch):
    monkeypatch.setenv("ZCP_RUNS", str(runs_root))
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception
    assert at.title[0].value == "Zero-CoT probe"
    # Three pairs: the page shows why there is no confidence instead of a number.
    assert at.metric[0].value == "–"
    assert any("too few pairs for a verdict (n < 10)" in w.value for w in at.warning)
    subheaders = [s.value for s in at.subheader]
    for h in ("Contamination Confidence per metric", "Items", "Truncation curve"):
        assert h in subheaders
    assert "Sample-size curve" not in subheaders  # three pairs make no curve: no empty section for it
    # confidence table, item browser, flips table; the flips table keeps full-CoT columns (a CoT was generated)
    assert len(at.dataframe) == 3
    browser = at.dataframe[1].value
    assert list(browser.columns[:3]) == ["Item", "Flagged", "Flip"] and len(browser) == 3
    assert browser["Flagged"].tolist() == sorted(browser["Flagged"].tolist(), reverse=True)  # flagged first
    flips = at.dataframe[2].value
    assert "Correct with full CoT (original)" in flips.columns and len(flips) == 3
    assert len(at.get("plotly_chart")) >= 5  # no accuracy chart: at 12 tokens no box closes, so Acc is not measured


def test_one_click_opens_an_item_side_by_side(runs_root, monkeypatch):
    """Selecting a row of the item browser opens the item: both questions, answers, P_* and raw completions."""
    monkeypatch.setenv("ZCP_RUNS", str(runs_root))
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    first = at.dataframe[1].value.iloc[0]["Item"]
    at.session_state["item_browser"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert f"**{first}**" in text and "**original**" in text and "**twin**" in text
    assert "Gold:" in text and "Prediction:" in text and ":orange-background[" in text  # changed numbers marked
    assert "nan" not in text.split() and "Prediction: nan" not in text  # no parsed answer reads "no answer parsed"
    assert len(at.code) >= 2  # both raw completions
    assert any("P(all answer tokens)" in c.value for c in at.caption)
    arm_lines = [c.value for c in at.caption if c.value.startswith("P(first answer token) ") and " · " in c.value]
    assert len(arm_lines) == 2 and "P_all" not in " ".join(arm_lines)  # each arm's P_* in words


@pytest.fixture
def example_runs(tmp_path, monkeypatch) -> Path:
    """The two bundled example probe runs (made by scripts/make_examples.py), copied where the app looks."""
    runs = tmp_path / "runs"
    for name in ("probe-lab-direct", "probe-smollm2-lab-items"):
        assert (EXAMPLES / name / "manifest.json").exists(), f"bundled example {name} missing"
        shutil.copytree(EXAMPLES / name, runs / name)
    monkeypatch.setenv("ZCP_RUNS", str(runs))
    return runs


def _open(at: AppTest, run_name: str) -> AppTest:
    labels = list(at.selectbox[0].options)  # the run labels, as shown
    at.selectbox[0].set_value(next(i for i, lab in enumerate(labels) if lab.startswith(run_name))).run()
    return at


def test_example_run_of_the_contaminated_model(example_runs):
    """probe-lab-direct: labelled as an example, flagged items first, one click shows both sides of a pair."""
    from zcp_core.probe.browse import show_completion
    from zcp_core.runs import load_run

    run = load_run(example_runs / "probe-lab-direct")
    items = run.table("items")
    at = AppTest.from_file(PAGE, default_timeout=60).run()  # it opens on the contaminated run, unasked
    assert not at.exception
    label = next(i.value for i in at.info if "**Example run**" in i.value)
    assert "scripts/make_examples.py" in label and "zcp probe --model lab:direct" in label
    # the portable command (as on the release card): bundled files by their checkout path, which exist, no --out
    for name in ("lab-direct-items.jsonl", "lab-direct-twins.jsonl"):
        shown = next(w.strip("`") for w in label.split() if w.strip("`").endswith(name))
        assert (ROOT / shown).exists(), shown
    assert "--out" not in label
    from zcp_core.report import fmt_c

    assert at.metric[0].value == fmt_c(run.summary["headline"]["value"], bool(run.summary["headline"].get("bound")))
    assert at.metric[2].value == str(run.summary["flagged"]) and run.summary["flagged"] > 0
    # the number and its reading agree; the flagged count says how many flags are trained-on (C) items
    assert at.metric[0].proto.delta == "evidence of contamination"
    split = {json.loads(x)["id"]: json.loads(x)["split"]
             for x in (EXAMPLES / "lab-direct-items.jsonl").read_text().splitlines() if x.strip()}
    n_c = int(items.loc[items["flagged"], "pair_id"].map(split).eq("C").sum())
    n_u = int(run.summary["flagged"]) - n_c
    assert at.metric[2].proto.delta == f"{n_c} trained on (C), {n_u} held out (U)" and n_c > 0
    explained = " ".join(m.value for m in at.markdown)
    for words in ("role-permutation test", "exact McNemar test", "Bayes factor", "prior", "C = 0.5", "no evidence"):
        assert words in explained
    assert any(b.label.startswith("Open smollm2 on the same items") for b in at.button)
    # the confidence table speaks words, and keeps tiny p-values readable instead of rounding them to 0
    conf = at.dataframe[0].value
    assert {"Bayes factor bound", "p-value", "Confidence C", "Pairs"} <= set(conf.columns) and "bf10" not in conf.columns
    assert conf.loc[conf["Metric"] == "P(all answer tokens)", "p-value"].iloc[0] == "3.3e-05"
    # test names, effects and directions in words; no missing value shown as None/nan
    # one test on every metric: said once beside the table, not repeated in a column (the table fits 1,280 px)
    assert "Test" not in conf.columns
    assert any(c.value == "Test on every metric: role-permutation test (which of an item's questions plays the "
               "original)." for c in at.caption)
    assert conf.loc[conf["Metric"] == "P(all answer tokens)", "Confidence C"].iloc[0] == "≥ 0.999"
    # Acc is not measured (the lab model writes words in its boxes): no row, and the page says why
    assert "Accuracy (Acc)" not in set(conf["Metric"])
    page = " ".join([*(m.value for m in at.markdown), *(c.value for c in at.caption)])
    assert "accuracy (Acc): 79 of 80 answers hold no number or never close their box" in page
    assert not conf.astype(str).isin(["None", "nan", "NaN"]).any().any()
    browser = at.dataframe[1].value
    n_flagged = int(items["flagged"].sum())
    assert browser["Flagged"].tolist() == [True] * n_flagged + [False] * (len(items) - n_flagged)
    # every item says whether it was trained on (C) or held out (U)
    assert set(browser["Trained on"]) == {"C (trained on)", "U (held out)"}
    # 80 pairs give only N = 50 and N = 80: no sample-size curve from two points, and no empty section for it
    assert "Sample-size curve" not in [h.value for h in at.subheader]
    assert not any("No curve" in i.value for i in at.info)

    at.session_state["item_browser"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    pair = str(browser.iloc[0]["Item"])
    row = items[items["pair_id"] == pair].iloc[0]
    assert bool(row["flagged"]) and row["item_q"] <= 0.1
    text = " ".join(m.value for m in at.markdown)
    assert f"**{pair}** · flagged · trained on (C)" in text
    # both questions, with their changed numbers highlighted (the first words are never a number)
    for question in (row["question"], row["reference_question"]):
        assert question.split()[0] in text
    assert text.count(":orange-background[") >= 2
    recs = run.records.query("ratio == 0 and pair_id == @pair")
    twins = recs[recs["arm"] == "reference"].sort_values("twin")["completion"].tolist()
    # the original's zero-CoT answer, then each of its twins' in twin order
    want = ["\\boxed{" + c for c in [*recs.loc[recs["arm"] == "original", "completion"], *twins]]
    assert [c.value for c in at.code][:len(want)] == [show_completion(c) for c in
                                                      [*recs.loc[recs["arm"] == "original", "completion"], *twins]]
    assert len(want) == len(twins) + 1 == row["n_twins"] + 1  # the original, then every twin (the spare too)
    # the open item stays open on the untouched model's run of the same items
    next(b for b in at.button if b.label.startswith("Open smollm2 on the same items")).click().run()
    assert not at.exception and at.metric[3].value == "smollm2"
    assert f"**{pair}** · not flagged" in " ".join(m.value for m in at.markdown)


def test_example_run_of_the_clean_model(example_runs):
    """The untouched model on the same items, one click from the contaminated one: no flag, C about 0.5."""
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    next(b for b in at.button if b.label.startswith("Open smollm2 on the same items")).click().run()
    assert not at.exception
    assert at.metric[3].value == "smollm2" and at.metric[0].proto.delta == "no evidence"
    assert any("**Example run**" in i.value for i in at.info)
    assert at.metric[2].value == "0"
    assert abs(float(at.metric[0].value) - 0.5) < 0.05
    assert at.dataframe[1].value["Flagged"].sum() == 0


def test_lab_page_on_the_example_evaluate_runs(tmp_path, monkeypatch):
    """The lab page (app_pages/lab.py) on the bundled default-build evaluate runs: C on C against U, words for
    column labels, the example label, and the clean base model beside the lab model on the same split."""
    from zcp_core.runs import load_run

    runs = tmp_path / "runs"
    for name in ("lab-eval-direct", "lab-eval-direct-smollm2"):
        shutil.copytree(EXAMPLES / name, runs / name)
    monkeypatch.setenv("ZCP_RUNS", str(runs))
    run = load_run(runs / "lab-eval-direct")
    at = _open(AppTest.from_file(str(ROOT / "app_pages" / "lab.py"), default_timeout=60).run(), "lab-eval-direct ")
    assert not at.exception
    assert any("**Example run**" in i.value and "zcp lab evaluate" in i.value for i in at.info)
    assert at.metric[0].value == f"{run.summary['auroc']:.3f}"
    frames = [d.value for d in at.dataframe]
    evidence = next(f for f in frames if "Bayes factor" in f.columns)
    assert {"Split", "Metric", "p-value", "Confidence"} <= set(evidence.columns) and "bf10" not in evidence.columns
    compare = next(f for f in frames if {"Model", "C on C (trained on)"} <= set(f.columns))
    p_all = "P(all answer tokens)"
    lab_pp = compare[compare["Model"].str.startswith("lab:direct") & (compare["Metric"] == p_all)].iloc[0]
    clean_pp = compare[compare["Model"].str.startswith("smollm2") & (compare["Metric"] == p_all)].iloc[0]
    conf = run.table("confidence").set_index(["split", "metric"])["confidence"]
    assert lab_pp["C on C (trained on)"] == f"{conf[('C', 'p_all')]:.3f}" == "0.995"
    assert float(clean_pp["C on C (trained on)"]) < 0.6
    assert "1.000" not in evidence.to_string()  # C is a bound below 1, never shown as certainty
    counts = next(f for f in frames if "Original only" in f.columns)
    assert counts.set_index("Split").loc["C", "Original only"] > counts.set_index("Split").loc["U", "Original only"]


def test_display_helpers_golden():
    """The pure helpers behind the pages and notebooks: paired records only, curve points, evidence text,
    side-by-side tables, and a static PNG of a plotly figure."""
    import pandas as pd

    from zcp_core.lab import viz as vl
    from zcp_core.probe import viz as vp

    records = pd.DataFrame({"arm": ["original", "original", "reference"], "pair_id": ["a", "b", "a"],
                            "ratio": [0.0] * 3, "p_all": [0.9, 0.8, 0.1], "id": ["a", "b", "a-ref"]})
    assert vp.paired_records(records)["pair_id"].tolist() == ["a", "a"]  # b has no twin
    assert vp.curve_points(pd.DataFrame({"n": [50, 80, 50]})) == 2 < vp.MIN_CURVE_POINTS
    assert vp.curve_points(pd.DataFrame(columns=["n"])) == 0
    ev = vp.format_evidence(pd.DataFrame({"p": [1.080334e-07, 0.30637, float("nan")],
                                          "bf10": [212285.68, 1.015, 3.2e7]}))
    assert ev["p"].tolist() == ["1.1e-07", "0.306", "–"]  # the report rules: a missing p is a dash
    assert ev["bf10"].tolist() == ["212,285.7", "1.0", "32,000,000.0"]
    tests = {m: pd.DataFrame({"arm": ["original", "paraphrased"], "metric": ["p_all"] * 2, "n": [80, 80],
                              "confidence": [c, 0.1], "p": [0.01, 0.5], "bf10": [9.0, 1.0],
                              "direction": ["original>reference"] * 2}) for m, c in (("lab", 0.99), ("clean", 0.5))}
    assert vp.compare_confidence(tests)[["metric", "model", "confidence"]].values.tolist() == [
        ["p_all", "lab", 0.99], ["p_all", "clean", 0.5]]
    items = {"clean": pd.DataFrame({"pair_id": ["a", "b"], "p_all_gap": [0.0, 0.1], "flagged": [False, False]}),
             "lab": pd.DataFrame({"pair_id": ["b", "a"], "p_all_gap": [0.0, 0.7], "flagged": [False, True]})}
    gaps = vp.pair_gaps(items, {"a": "C", "b": "U"})
    assert gaps.to_dict("list") == {"pair_id": ["a", "b"], "split": ["C", "U"], "gap clean": [0.0, 0.1],
                                    "flagged clean": [False, False], "gap lab": [0.7, 0.0],
                                    "flagged lab": [True, False]}
    conf = pd.DataFrame({"split": ["C", "U", "all"], "metric": ["acc"] * 3, "confidence": [0.99, 0.5, 0.9]})
    table = vl.compare_models({"lab": conf}, {"lab": {"acc": {"auroc": 0.8}}})
    assert table.values.tolist() == [["lab", "accuracy (Acc)", "0.990", "0.500", "0.800"]]
    assert list(table.columns) == ["Model", "Metric", "C on C (trained on)", "C on U (held out)", "AUROC (gap, C vs U)"]
    png = vp.static_png(vp.pair_gap_figure(gaps, "clean", "lab"), width=4, height=3, dpi=50)
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and (png[16:20], png[20:24]) == ((200).to_bytes(4, "big"),
                                                                             (150).to_bytes(4, "big"))


def test_probe_page_shows_the_comparison_relative_to_the_control(example_runs):
    """A run with a control (here the example's own records as the control: every difference is 0)."""
    import json

    from zcp_core.probe.control import control_summary
    from zcp_core.runs import load_run

    path = example_runs / "probe-lab-direct"
    run = load_run(path)
    block, did, _ = control_summary(run.records, run.records.copy(), ("acc", "p_first", "p_all"), "lab:direct",
                                    {"n_resamples": 500})
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["summary"] |= {"control": block, "did": did}
    (path / "manifest.json").write_text(json.dumps(manifest))
    at = _open(AppTest.from_file(PAGE, default_timeout=60).run(), "probe-lab-direct")
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "Control model lab:direct" in text and "relative to the control" in text
    for name in ("Accuracy (Acc)", "P(first answer token)", "P(all answer tokens)"):
        assert f"{name} relative to the control: audited gap" in text
    assert text.count("difference +0.000 (95% CI") == 3 and text.count("Contamination Confidence 0.500") >= 3


@pytest.mark.parametrize(("name", "kind"), [("lab-dose", "solution"), ("lab-dose-paper", "paper")])
def test_lab_page_on_the_example_dose_run(tmp_path, monkeypatch, name, kind):
    """The lab page on a bundled dose run: the example label, the dose figure, and each point's took row."""
    from zcp_core.runs import load_run

    runs = tmp_path / "runs"
    shutil.copytree(EXAMPLES / name, runs / name)
    monkeypatch.setenv("ZCP_RUNS", str(runs))
    run = load_run(runs / name)
    at = _open(AppTest.from_file(str(ROOT / "app_pages" / "lab.py"), default_timeout=60).run(), f"{name} ")
    assert not at.exception
    assert any("**Example run**" in i.value and "zcp lab dose" in i.value for i in at.info)
    kinds = run.manifest["summary"]["kinds"]
    assert kinds == [kind]
    assert any(kind in m.value and "exposures per C item 2, 6, 12" in m.value for m in at.markdown)
    assert len(at.get("plotly_chart")) == 1
    took = at.dataframe[0].value
    assert len(took) == len(run.table("took")) == 3 * len(kinds)  # 3 doses a kind, each with its check


def test_split_of_a_lab_model_comes_from_the_same_build(tmp_path, monkeypatch):
    """A lab evaluate run of another build of lab:direct (another revision, another split) never labels the
    probe run's items; the bundled split file of the example does."""
    from types import SimpleNamespace

    import pandas as pd

    from zcp_core.app.kit import lab_split_of
    from zcp_core.runs import RunSpec, write_run

    monkeypatch.setenv("ZCP_RUNS", str(tmp_path))
    probe = SimpleNamespace(manifest=json.loads((EXAMPLES / "probe-lab-direct" / "manifest.json").read_text()))
    bundled = {json.loads(x)["id"]: json.loads(x)["split"]
               for x in (EXAMPLES / "lab-direct-items.jsonl").read_text().splitlines() if x.strip()}
    old = pd.DataFrame({"id": list(bundled), "split": ["U" if s == "C" else "C" for s in bundled.values()]})
    spec = RunSpec(kind="lab", config={}, model="lab:direct", model_revision="another-build")
    write_run(tmp_path / "old-eval", spec, old, {"stage": "evaluate"})
    assert lab_split_of(probe) == bundled  # the other build's opposite split is ignored
    same = RunSpec(kind="lab", config={}, model="lab:direct", model_revision=probe.manifest["model_revision"])
    write_run(tmp_path / "same-eval", same, old, {"stage": "evaluate"})
    assert lab_split_of(probe) == dict(zip(old["id"], old["split"]))  # the same build's run is read
