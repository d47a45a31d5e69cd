"""Time-Travel guided probe: splitter, overlap, judge parsing, partition rule, bootstrap, end to end, app page."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from zcp_core.guided import (
    FEW_SHOT,
    GuidedConfig,
    GuidedInstance,
    PartitionRule,
    build_prompt,
    clean_completion,
    completion_prompt,
    cut_bounds,
    default_prompt_style,
    edit_similarity,
    exact_match,
    final_label,
    instance_seed,
    judge_prompt,
    lcs_mask,
    levenshtein,
    normalise,
    parse_judge_label,
    partition_test,
    rouge_l,
    rule_judge,
    run_partition,
    sentence_spans,
    split_dataset,
    split_items,
    split_text,
    split_texts,
    write_guided_run,
)
from zcp_core.schema import Item, TextRecord
from zcp_core.stats import MC_FLOOR_RESAMPLES

ROOT = Path(__file__).resolve().parent.parent
TEN = "One. Two is here. Three now. Four? Five! Six. Seven ok. Eight. Nine. Ten."
FOX = "The quick brown fox jumps over the lazy dog"


# ---- splitter --------------------------------------------------------------------------------
@pytest.mark.parametrize("n,bounds", [(0, (0, 0)), (1, (0, 0)), (2, (1, 1)), (3, (2, 2)), (4, (2, 2)),
                                      (5, (2, 3)), (6, (3, 4)), (10, (4, 7)), (20, (8, 14))])
def test_cut_bounds_golden(n, bounds):
    assert cut_bounds(n) == bounds


@pytest.mark.parametrize("iid,seed,cut,first", [
    ("a", 0, 6, "One. Two is here. Three now. Four? Five! Six."),
    ("b", 0, 4, "One. Two is here. Three now. Four?"),
    ("c", 0, 4, "One. Two is here. Three now. Four?"),
    ("d", 0, 6, "One. Two is here. Three now. Four? Five! Six."),
])
def test_split_golden_sentences(iid, seed, cut, first):
    f, s, unit, n, c, frac = split_text(TEN, iid, seed)
    assert (unit, n, c, f) == ("sentence", 10, cut, first)
    assert f + " " + s == TEN  # nothing lost or added at the cut
    assert 0.4 <= frac <= 0.7


@pytest.mark.parametrize("iid,seed,first,second", [
    ("w1", 0, "The quick brown fox jumps", "over the lazy dog"),
    ("w2", 7, "The quick brown fox jumps", "over the lazy dog"),
])
def test_one_sentence_splits_by_words(iid, seed, first, second):
    f, s, unit, n, cut, _ = split_text(FOX, iid, seed)
    assert (f, s, unit, n, cut) == (first, second, "word", 9, 5)


def test_split_is_seeded_and_per_instance():
    ids = [f"gsm8k-test-{i}" for i in range(40)]
    fracs = [split_text(TEN, i, 0)[5] for i in ids]
    assert fracs == [split_text(TEN, i, 0)[5] for i in ids]  # reproducible
    assert len(set(fracs)) == len(ids)  # every instance draws its own fraction
    assert len({split_text(TEN, i, 0)[4] for i in ids}) > 1  # ...and so is cut at different points
    assert fracs != [split_text(TEN, i, 1)[5] for i in ids]  # the run seed matters
    assert instance_seed(0, "a") != instance_seed(0, "b")


@pytest.mark.parametrize("n", range(2, 31))
def test_cut_respects_bounds(n):
    text = " ".join(f"Sentence number {k} is here." for k in range(n))
    for i in range(15):
        _, _, unit, units, cut, frac = split_text(text, f"id{i}", 3)
        assert unit == "sentence" and units == n
        assert 0.4 - 1e-9 <= cut / n <= 0.7 + 1e-9
        assert 0.4 <= frac <= 0.7


@pytest.mark.parametrize("text,n", [
    ("Dr. Smith paid $1.50. He said \"Hi.\" Then he left! Was it 3? Yes.", 5),
    ("It costs 2.5 dollars. Mr. Lee buys e.g. apples.", 2),
    ("No terminal punctuation here", 1),
])
def test_sentence_spans(text, n):
    assert len(sentence_spans(text)) == n


def test_too_short_is_skipped_with_reason_and_labels_kept():
    texts = [TextRecord("t1", TEN, "human"), TextRecord("t2", "word", "llm"), TextRecord("t3", FOX, "llm")]
    res = split_texts(texts, task="classification", seed=0)
    assert [i.id for i in res.instances] == ["t1", "t3"]
    assert [i.label for i in res.instances] == ["human", "llm"]
    assert res.skipped[0].id == "t2" and "too short" in res.skipped[0].reason
    assert "Label: human" in build_prompt(res.instances[0], "guided", "DetectRL", "test")
    assert "Label: human" in build_prompt(res.instances[0], "general", "DetectRL", "test")


def test_math_modes():
    it = Item("gsm8k-test-1", "Ann has 3 pens. She buys 2 more. How many pens does she have?", "5",
              solution="3+2=5\n#### 5", source="gsm8k")
    q = split_items([it], seed=0).instances[0]
    assert (q.task, q.unit, q.n_units) == ("math", "sentence", 3)
    assert q.first_piece + " " + q.second_piece == it.question
    qs = split_items([it], math_mode="question-solution").instances[0]
    assert (qs.first_piece, qs.second_piece, qs.unit) == (it.question, it.solution, "question-solution")
    assert "Solution:" in build_prompt(qs, "guided", "GSM8K", "test")
    nosol = split_items([Item("x", "Q one. Q two.", "1")], math_mode="question-solution")
    assert not nosol.instances and "no solution" in nosol.skipped[0].reason


def test_nli_pair_field():
    rec = TextRecord("n1", "A man plays a guitar.", "entailment", metadata={"hypothesis": "A person plays music."})
    inst = split_texts([rec], task="nli", pair_field="hypothesis").instances[0]
    assert (inst.first_piece, inst.second_piece, inst.unit) == ("A man plays a guitar.", "A person plays music.", "pair")
    prompt = build_prompt(inst, "guided", "SNLI", "validation")
    assert "Sentence 1: A man plays a guitar.\nLabel: entailment\nSentence 2:" in prompt


@pytest.mark.parametrize("task", ["classification", "nli", "summarization", "math", "open"])
def test_guided_names_dataset_and_split_general_does_not(task):
    inst = GuidedInstance("i", "First bit.", "Second bit.", "", task, "sentence", 2, 1, 0.5)  # type: ignore[arg-type]
    guided = build_prompt(inst, "guided", "MyData", "validation")
    general = build_prompt(inst, "general", "MyData", "validation")
    assert "MyData" in guided and "validation" in guided
    assert "MyData" not in general and "validation" not in general
    assert "First bit." in guided and "First bit." in general and "Second bit." not in guided
    assert "Label:" not in guided and "Label:" not in general  # no label, no label line
    if task == "classification":
        assert "following label" not in general


@pytest.mark.parametrize("raw,clean", [
    ("Second Piece: How many?", "How many?"),
    ('"How many?"', "How many?"),
    ("First Piece: Ann has 3 pens.\nSecond Piece: How many?", "How many?"),
    ("Ann has 3 pens. How many?", "How many?"),
    ("Something else.", "Something else."),
])
def test_clean_completion(raw, clean):
    inst = GuidedInstance("i", "Ann has 3 pens.", "How many?", "", "math", "sentence", 2, 1, 0.5)
    assert clean_completion(raw, inst) == clean


# ---- completion style --------------------------------------------------------------------------
@pytest.mark.parametrize("unit,kind,prompt", [
    ("sentence", "guided", "GSM8K, test split:\nAnn has 3 pens."),
    ("sentence", "general", "Ann has 3 pens."),
    ("word", "guided", "GSM8K, test split:\nAnn has 3 pens."),
    ("question-solution", "guided", "GSM8K, test split:\nAnn has 3 pens.\n"),
    ("question-solution", "general", "Ann has 3 pens.\n"),
    ("pair", "general", "Ann has 3 pens.\n"),
])
def test_completion_prompts_golden(unit, kind, prompt):
    inst = GuidedInstance("i", "Ann has 3 pens.", "How many?", "", "math", unit, 2, 1, 0.5)
    assert completion_prompt(inst, kind, "GSM8K", "test") == prompt


@pytest.mark.parametrize("template,raw_text,style", [
    (True, False, "chat"), (False, False, "completion"), (True, True, "completion"), (False, True, "completion"),
])
def test_default_prompt_style_rule(template, raw_text, style):
    assert default_prompt_style(template, raw_text) == style


@pytest.mark.parametrize("raw,style,clean", [
    (" How many?\nAnn had 3 + 2 = 5 pens.\n#### 5", "completion", "How many?"),
    ("\n\n How many?\nmore", "completion", "How many?"),  # leading blank lines are not the line end
    ("Second Piece: How many?\nmore", "chat", "How many?\nmore"),
])
def test_clean_completion_cuts_a_plain_continuation_at_its_line_end(raw, style, clean):
    inst = GuidedInstance("i", "Ann has 3 pens.", "How many?", "", "math", "sentence", 2, 1, 0.5)
    assert clean_completion(raw, inst, style) == clean


def test_clean_completion_keeps_a_solution_whole():
    inst = GuidedInstance("i", "Ann has 3 pens.", "3+2=5\n#### 5", "", "math", "question-solution", 2, 1, 0.5)
    assert clean_completion("3+2=5\n#### 5\n", inst, "completion") == "3+2=5\n#### 5"


# ---- overlap ---------------------------------------------------------------------------------
@pytest.mark.parametrize("a,b,dist,sim", [
    ("", "", 0, 1.0), ("abc", "abc", 0, 1.0), ("abc", "", 3, 0.0), ("kitten", "sitting", 3, 1 - 3 / 7),
    ("flaw", "lawn", 2, 0.5), ("abcd", "abdc", 2, 0.5), ("a", "b", 1, 0.0), ("ab", "abcd", 2, 0.5),
])
def test_edit_similarity_golden(a, b, dist, sim):
    assert levenshtein(a, b) == dist == levenshtein(b, a)
    assert edit_similarity(a, b) == pytest.approx(sim)


@pytest.mark.parametrize("cand,ref,same", [
    ("How many  pens?", "how many pens?", True), ("How many pens", "How many pens?", False),
    ("", "", False), ("ＡＢＣ", "abc", True),
])
def test_exact_match(cand, ref, same):
    assert exact_match(cand, ref) is same


def test_rouge_l_and_lcs():
    assert rouge_l(["a b c d"], ["a b c d"]) == [1.0]
    assert rouge_l(["x y"], ["a b"]) == [0.0]
    assert rouge_l(["a b c"], ["a b c d"])[0] == pytest.approx(2 * 1 * 0.75 / 1.75)
    ma, mb = lcs_mask("How many apples ?".split(), "how many red apples".split())
    assert ma == [True, True, True, False] and mb == [True, True, False, True]
    assert normalise("  A\n b ") == "a b"


def test_highlight_escapes_html():
    from zcp_core.guided import highlight_overlap

    ref, cand = highlight_overlap("<b>x</b> y", "<b>x</b> z")
    assert "<b>" not in ref.replace("<mark>", "") and "&lt;b&gt;" in ref
    assert ref.startswith("<mark>&lt;b&gt;x&lt;/b&gt;</mark>") and "<mark>z" not in cand


# ---- judge and rule --------------------------------------------------------------------------
@pytest.mark.parametrize("exact,near,verdict", [
    (0, 0, False), (1, 0, True), (0, 1, False), (0, 2, True), (2, 5, True), (0, 3, True),
])
def test_partition_rule_default(exact, near, verdict):
    assert PartitionRule().verdict(exact, near) is verdict


@pytest.mark.parametrize("rule,exact,near,verdict", [
    (PartitionRule(2, 3), 1, 2, False), (PartitionRule(2, 3), 2, 0, True), (PartitionRule(2, 3), 0, 3, True),
    (PartitionRule(None, 1), 5, 0, False), (PartitionRule(1, None), 0, 9, False), (PartitionRule(None, None), 9, 9, False),
])
def test_partition_rule_configurable(rule, exact, near, verdict):
    assert rule.verdict(exact, near) is verdict


@pytest.mark.parametrize("text,label,parsed", [
    ("exact", "exact", True), ("Exact.", "exact", True), ("near-exact", "near_exact", True),
    ("**Near exact**", "near_exact", True), ("near_exact", "near_exact", True), ("nearly exact", "near_exact", True),
    ("none", "none", True), ("Label: none", "none", True), ("not exact", "none", True), ("inexact", "none", True),
    ("No, it is different", "none", True), ("The candidate is an exact match.", "exact", True),
    ("Exact\nnone", "exact", True), ("", "none", False), ("yes", "none", False),
    ("You compare a candidate text", "none", False),
])
def test_parse_judge_label(text, label, parsed):
    p = parse_judge_label(text)
    assert (p.label, p.parsed) == (label, parsed)


@pytest.mark.parametrize("judge,is_exact,label,changed", [
    ("exact", True, "exact", False), ("none", True, "exact", True), ("exact", False, "near_exact", True),
    ("near_exact", False, "near_exact", False), ("none", False, "none", False),
])
def test_final_label(judge, is_exact, label, changed):
    lab, why = final_label(judge, is_exact)
    assert lab == label and bool(why) is changed


def test_judge_prompt_has_negative_examples():
    assert {s.label for s in FEW_SHOT} == {"exact", "near_exact", "none"}
    assert sum(s.label == "none" for s in FEW_SHOT) >= 2
    p = judge_prompt("REF TEXT", "CAND TEXT")
    assert p.endswith("Reference: REF TEXT\nCandidate: CAND TEXT\nLabel:") and "Label: none" in p


def test_rule_judge():
    out = rule_judge([True, False, False], [1.0, 0.9, 0.5])
    assert [j.label for j in out] == ["exact", "near_exact", "none"]


# ---- partition test (via zcp_core.stats) -----------------------------------------------------
def test_partition_test_is_the_sign_flip_permutation_test():
    general = [0.1 * (k % 5) for k in range(30)]
    up = partition_test([g + 0.3 for g in general], general, seed=0)
    assert up.test == "permutation"
    assert up.mean_diff == pytest.approx(0.3) and up.p == pytest.approx(1 / (MC_FLOOR_RESAMPLES + 1))  # at the floor: redrawn to 30,000
    assert up.confidence > 0.99 and up.direction == "original>reference"
    assert up.ci_low == pytest.approx(0.3) and up.ci_high == pytest.approx(0.3)
    noisy_g = [g + (0.2 if k % 2 else -0.1) for k, g in enumerate(general)]
    a, b = partition_test(noisy_g, general, seed=5), partition_test(noisy_g, general, seed=5)
    assert a == b and a.ci_low < 0.05 < a.ci_high and 0 < a.p < 0.5  # seeded, reproducible
    flat = partition_test(general, general)
    assert flat.p > 0.5 and flat.confidence == 0.5
    down = partition_test(general, [g + 0.2 for g in general])
    assert down.direction == "reference>original" and down.confidence == 0.5
    # Exact at small n: 5 pairs all up give p = 2**-5 (the bootstrap would give about 1/(B+1)).
    five = partition_test([1.0, 0.9, 0.8, 0.7, 0.6], [0.5] * 5)
    assert five.p == pytest.approx(1 / 32)


# ---- end to end on the embedded model --------------------------------------------------------
@pytest.fixture(scope="module")
def e2e_run(smollm2, tmp_path_factory):
    split = split_dataset(str(ROOT / "data/gsm8k/test.jsonl"), limit=2, seed=0)
    cfg = GuidedConfig("GSM8K", "test", max_new_tokens=6, judge_max_new_tokens=3, n_resamples=2000)
    res = run_partition(smollm2, split, cfg, progress=False)
    from zcp_core.runs import RunSpec

    out = tmp_path_factory.mktemp("runs") / "guided-e2e"
    write_guided_run(str(out), RunSpec("guided", {"limit": 2}, model="smollm2"), [res])
    return res, out


@pytest.mark.model
def test_end_to_end_smollm2(e2e_run):
    from zcp_core.runs import load_run

    res, out = e2e_run
    s = res.summary
    assert {"partition", "n", "rouge_l", "p", "confidence", "exact", "near_exact", "contaminated", "headline"} <= set(s)
    assert s["n"] == 2 and set(s["rouge_l"]) == {"guided", "general"}
    assert isinstance(s["contaminated"], bool)
    # 2 instances are below the product's minimum sample: no p, no confidence, and the reason instead.
    assert s["p"] is None and s["confidence"] is None and s["reason"] == "too few pairs for a verdict (n < 10)"
    assert s["headline"]["value"] is None and s["headline"]["reason"] == s["reason"]
    assert 0 < s["details"]["test"]["p"] <= 1  # the test itself is still stored, for the record
    assert s["details"]["bleurt"]["status"].startswith(("skipped", "used"))
    run = load_run(out)
    rec = run.records
    assert run.kind == "guided" and list(rec["id"]) == ["gsm8k-2b2e3f9639f6", "gsm8k-de563650cee0"]
    assert rec["guided_prompt"].str.contains("test split of the GSM8K dataset").all()
    assert not rec["general_prompt"].str.contains("GSM8K").any()
    assert ((rec["rouge_l_guided"] >= 0) & (rec["rouge_l_guided"] <= 1)).all()
    assert rec["match_label"].isin(["exact", "near_exact", "none"]).all()
    assert (rec["guided_raw"].str.len() > 0).all()
    assert run.table("partitions").loc[0, "partition"] == "test"
    # run_partition's default judge is the model-free rule, never the audited model
    assert s["details"]["judge"] == {"model": "rule", "mode": "rule", "unparsed": 0, "corrected": 0}
    assert rec["judge_raw"].str.startswith("rule: edit_sim=").all()


@pytest.mark.model
def test_model_judge_must_not_be_the_audited_model(smollm2):
    split = split_dataset(str(ROOT / "data/gsm8k/test.jsonl"), limit=1, seed=0)
    cfg = GuidedConfig("GSM8K", "test", max_new_tokens=2, n_resamples=100)
    for judge in (None, smollm2):  # no judge at all, or the audited model passed as its own judge
        with pytest.raises(ValueError, match="other than the audited model"):
            run_partition(smollm2, split, cfg, judge=judge, judge_mode="model", progress=False)
    res = run_partition(smollm2, split, cfg, judge_mode="self", progress=False)  # the explicit opt-in
    assert res.summary["details"]["judge"]["mode"] == "self"
    assert res.summary["details"]["judge"]["model"] == smollm2.model_id


@pytest.mark.model
def test_cli_without_judge_uses_and_records_the_rule_judge(tmp_path, capsys):
    from zcp_core.cli.main import main
    from zcp_core.runs import load_run

    out = tmp_path / "run"
    assert main(["guided", "--model", "smollm2", "--dataset", str(ROOT / "data/gsm8k/test.jsonl"), "--split-name",
                 "test", "--dataset-name", "GSM8K", "--out", str(out), "--limit", "2", "--max-new-tokens", "4",
                 "--n-resamples", "200", "--device", "cpu"]) == 0
    text = capsys.readouterr().out
    assert "Judge: the model-free rule" in text and f"run: {out}" in text  # the run's report, in words
    run = load_run(out)
    assert (run.manifest["config"]["judge"], run.manifest["config"]["judge_mode"]) == ("rule", "rule")
    assert run.summary["details"]["judge"]["model"] == "rule"
    assert run.records["judge_raw"].str.startswith("rule: ").all()
    # smollm2 has a chat template: the default style is chat, recorded in the run
    assert run.manifest["config"]["prompt_style"] == "chat" and run.summary["prompt_style"] == "chat"
    assert run.records["guided_prompt"].str.contains("test split of the GSM8K dataset").all()


@pytest.mark.model
def test_cli_completion_style(tmp_path, capsys):
    from zcp_core.cli.main import main
    from zcp_core.runs import load_run

    out = tmp_path / "run"
    assert main(["guided", "--model", "smollm2", "--dataset", str(ROOT / "data/gsm8k/test.jsonl"), "--split-name",
                 "test", "--dataset-name", "GSM8K", "--out", str(out), "--limit", "2", "--max-new-tokens", "4",
                 "--n-resamples", "200", "--device", "cpu", "--prompt-style", "completion", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["prompt_style"] == "completion" and data["partition"] == "test"
    run = load_run(out)
    assert run.manifest["config"]["prompt_style"] == "completion"
    assert run.manifest["config"]["prompt_style_asked"] == "completion"
    assert run.summary["details"]["prompt_style"] == "completion"
    assert run.summary["details"]["test"]["test"] == "permutation"
    rec = run.records
    assert (rec["guided_prompt"] == "GSM8K, test split:\n" + rec["first_piece"]).all()
    assert (rec["general_prompt"] == rec["first_piece"]).all()
    assert not rec["guided"].str.contains("\n").any()  # a plain continuation ends at the instance's line end


def test_cli_refuses_the_audited_model_as_judge_before_loading_it(tmp_path, capsys):
    from zcp_core.cli.main import main

    for judge in ("smollm2", "self"):
        rc = main(["guided", "--model", "smollm2", "--dataset", str(ROOT / "data/gsm8k/test.jsonl"),
                   "--dataset-name", "GSM8K", "--out", str(tmp_path / "r"), "--judge", judge])
        err = capsys.readouterr().err
        assert rc == 1 and "is the audited model" in err and "--allow-self-judge" in err
    assert not (tmp_path / "r").exists()


@pytest.mark.model
def test_cli_json_shape(tmp_path, capsys):
    from zcp_core.cli.main import main

    out = tmp_path / "run"
    rc = main(["guided", "--model", "smollm2", "--dataset", str(ROOT / "data/gsm8k/test.jsonl"), "--split-name",
               "test", "--dataset-name", "GSM8K", "--out", str(out), "--limit", "1", "--max-new-tokens", "4",
               "--judge", "rule", "--n-resamples", "500", "--device", "cpu", "--json",
               "--compare-dataset", str(ROOT / "data/gsm8k/train_sample.jsonl"), "--compare-split-name", "train"])
    assert rc == 0
    data = json.loads(capsys.readouterr().out)
    keys = {"partition", "n", "prompt_style", "rouge_l", "p", "confidence", "exact", "near_exact", "contaminated"}
    assert [set(p) for p in data["partitions"]] == [keys, keys]
    assert set(data["side_by_side"]) == {"test", "train"}
    from zcp_core.runs import load_run

    rec = load_run(out).records
    assert sorted(set(rec["partition"])) == ["test", "train"] and len(rec) == 2


def test_import_is_light():
    code = ("import zcp_core.guided, zcp_core.guided.run, zcp_core.guided.judge, zcp_core.guided.overlap, "
            "zcp_core.guided.viz, zcp_core.cli.guided, sys; print([m for m in ('torch','transformers','shap',"
            "'sklearn','streamlit','ray','pandas','scipy','plotly') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


# ---- app page --------------------------------------------------------------------------------
def test_page_without_runs(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ZCP_RUNS", str(tmp_path))
    at = AppTest.from_file(str(ROOT / "app_pages/guided.py"), default_timeout=60)
    at.run()
    assert not at.exception
    assert any("No guided runs" in i.value for i in at.info)


@pytest.mark.model
def test_page_with_run(e2e_run, monkeypatch):
    from streamlit.testing.v1 import AppTest

    _, out = e2e_run
    monkeypatch.setenv("ZCP_RUNS", str(out.parent))
    at = AppTest.from_file(str(ROOT / "app_pages/guided.py"), default_timeout=60)
    at.run()
    assert not at.exception
    assert [m.label for m in at.metric] == ["Contamination Confidence"]
    at.selectbox(key="guided_instance").set_value(1).run()
    assert not at.exception
    # Two instances: the page withholds the number and never calls the overlap "significantly" higher.
    assert at.metric[0].value == "–"
    assert any("too few pairs for a verdict" in m.value and "significantly" not in m.value for m in at.markdown)
