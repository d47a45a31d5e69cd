"""Detector shortcut analysis: splits, metrics, save/reload, exact SHAP, attack, closed loop (bundled sample)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from zcp_core.schema import TextRecord

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = sorted(str(p) for p in (ROOT / "data" / "detectrl_sample").glob("*.json"))
CLAUDE = [p for p in SAMPLE if "Claude" in p]


@pytest.fixture(scope="module")
def sample_records():
    from zcp_core.detector import load_texts_for_detector

    return load_texts_for_detector(SAMPLE)


@pytest.fixture(scope="module")
def library():
    from zcp_core.artifacts import load_library

    return load_library()


@pytest.fixture(scope="module")
def compared(sample_records, library):
    from zcp_core.detector import CompareConfig, TfidfConfig, compare

    cfg = CompareConfig(explain_n=30, explain_attacked=3,
                        detector_config=TfidfConfig(max_word_features=8000, max_char_features=8000))
    return compare(sample_records, library, cfg)


@pytest.fixture(scope="module")
def small_detector(sample_records):
    from zcp_core.detector import TfidfConfig, split_texts, train_detector

    split = split_texts(sample_records, 0.3, 0)
    return train_detector(split.train, "tfidf", TfidfConfig(max_word_features=5000, max_char_features=5000)), split


def _rec(i: str, text: str, label: str = "llm") -> TextRecord:
    return TextRecord(i, text, label)


def test_dedup_records_every_drop_with_reason() -> None:
    from zcp_core.detector import dedup_texts

    dd = dedup_texts([_rec("a", "x"), _rec("b", "y", "human"), _rec("c", "x"), _rec("d", "y", "llm")])
    assert [r.id for r in dd.records] == ["a", "b"]
    assert dd.n_records == 4 and dd.n_unique == 2
    df = dd.duplicates_frame()
    assert list(df["id"]) == ["c", "d"] and list(df["kept_id"]) == ["a", "b"]
    assert list(df["reason"]) == ["duplicate_text", "duplicate_text_label_conflict"]


def test_split_is_deduplicated_disjoint_stratified_and_seeded(sample_records) -> None:
    from zcp_core.detector import split_texts

    doubled = list(sample_records) + [TextRecord(r.id + "-copy", r.text, r.label) for r in sample_records[:50]]
    s = split_texts(doubled, 0.3, seed=7)
    train, test = {r.text for r in s.train}, {r.text for r in s.test}
    assert not train & test
    assert len(s.train) + len(s.test) == s.dedup.n_unique == len({r.text for r in sample_records})
    assert len(s.dedup.duplicates) == len(doubled) - s.dedup.n_unique
    n_h = sum(r.label == "human" for r in s.dedup.records)
    assert sum(r.label == "human" for r in s.test) == round(0.3 * n_h)
    again = split_texts(list(reversed(doubled)), 0.3, seed=7)
    assert {r.text for r in again.test} == test  # side depends on (seed, text), not input order
    assert {r.text for r in split_texts(doubled, 0.3, seed=8).test} != test


def test_detectrl_overlap_counts(shared_data: Path) -> None:
    from zcp_core.detector import dedup_texts, load_texts_for_detector

    files = sorted(str(p) for p in (shared_data / "detectrl").glob("*/*_test.json"))
    dd = dedup_texts(load_texts_for_detector(files))
    assert (dd.n_records, dd.n_unique) == (18_080, 14_703)
    assert Counter(r.label for r in dd.records) == {"llm": 8_668, "human": 6_035}


@pytest.mark.parametrize(("labels", "scores", "fpr", "tpr", "threshold"), [
    # 100 humans at 0..0.99, 1 false positive allowed at 1%: threshold = second-highest human score 0.98
    (["human"] * 100 + ["llm"] * 4, [i / 100 for i in range(100)] + [0.5, 0.985, 0.99, 1.2], 0.01, 0.75, 0.98),
    # 200 humans: 2 false positives allowed, so the third-highest human score (0.7) is the threshold
    (["human"] * 200 + ["llm"] * 2, [0.0] * 197 + [0.9, 0.8, 0.7] + [0.75, 0.65], 0.01, 0.5, 0.7),
    (["human"] * 100 + ["llm"] * 2, [0.0] * 100 + [0.0, 0.1], 0.01, 0.5, 0.0),  # ties at the threshold are not hits
])
def test_tpr_at_fpr_golden(labels, scores, fpr, tpr, threshold) -> None:
    from zcp_core.detector import tpr_at_fpr

    t = tpr_at_fpr(labels, scores, fpr)
    assert t.tpr == pytest.approx(tpr) and t.threshold == pytest.approx(threshold)


@pytest.mark.parametrize(("n_human", "fpr", "estimable"), [(99, 0.01, False), (100, 0.01, True),
                                                            (9_999, 0.0001, False), (10_000, 0.0001, True)])
def test_tpr_at_fpr_needs_enough_humans(n_human, fpr, estimable) -> None:
    from zcp_core.detector import tpr_at_fpr

    t = tpr_at_fpr(["human"] * n_human + ["llm"], [0.0] * n_human + [1.0], fpr)
    assert (t.tpr is not None) is estimable
    if not estimable:
        assert "not estimable" in t.reason and f"{round(1 / fpr):,}" in t.reason


def test_compute_metrics_small_case() -> None:
    from zcp_core.detector import compute_metrics

    m = compute_metrics(["human", "human", "llm", "llm"], [0.1, 0.6, 0.4, 0.9])
    assert m.roc_auc == pytest.approx(0.75) and m.accuracy == pytest.approx(0.5) and m.f1 == pytest.approx(0.5)
    assert m.tpr_at_1pct_fpr is None and m.tpr_at_001pct_fpr is None and "10,000" in m.notes


def test_tfidf_save_reload_identical_without_pickle(small_detector, tmp_path: Path) -> None:
    import numpy as np

    from zcp_core.detector import load_detector

    det, split = small_detector
    folder = det.save(tmp_path / "det")
    assert sorted(p.name for p in folder.iterdir()) == ["detector.json", "weights.npz"]
    texts = [r.text for r in split.test]
    again = load_detector(folder)
    assert np.array_equal(again.margin(texts), det.margin(texts))


def test_detector_separates_sample(small_detector) -> None:
    from zcp_core.detector import compute_metrics, score_frame

    det, split = small_detector
    sf = score_frame(det, split.test)
    assert compute_metrics(list(sf["label"]), list(sf["p_llm"])).roc_auc > 0.9


@pytest.mark.parametrize("text", ["Here is a 6 sentence abstract:  We  study\nsolitons.", "İstanbul ÉTÉ  naïve... ok",
                                  "a", "  spaced   out\t\ttabs  "])
def test_ngram_occurrences_match_sklearn_and_offsets(small_detector, text: str) -> None:
    from zcp_core.detector import char_occurrences, word_occurrences

    det, _ = small_detector
    words = word_occurrences(text, (1, 2))
    chars = char_occurrences(text, (3, 5))
    assert Counter(g for g, _ in words) == Counter(det.word_vec.build_analyzer()(text))
    assert Counter(g for g, _ in chars) == Counter(det.char_vec.build_analyzer()(text))
    for gram, offs in words:
        assert "".join(text[o] for o in dict.fromkeys(offs)).lower() == gram.replace(" ", "")


def test_linear_shap_additivity_and_token_mapping(small_detector, library) -> None:
    import numpy as np

    from zcp_core.artifacts import artifact_spans
    from zcp_core.detector import linear_shap, linear_token_attributions

    det, split = small_detector
    recs = list(split.test[:12]) + [_rec("opener", "Here is a 6 sentence abstract for the article: We study waves.")]
    texts = [r.text for r in recs]
    phi, base = linear_shap(det, texts)
    assert base == pytest.approx(det.intercept)
    assert np.allclose(phi.sum(1) + base, det.margin(texts), atol=1e-9)
    a = linear_token_attributions(det, recs, lambda t: artifact_spans(t, library))
    assert np.allclose(a.texts["phi_sum"] + a.texts["base_value"], det.margin(texts), atol=1e-9)
    assert np.allclose(a.tokens.groupby("id", sort=False)["attribution"].sum().loc[a.texts["id"]],
                       a.texts["phi_sum"], atol=1e-9)  # all feature mass lands on tokens
    t = a.tokens[a.tokens["id"] == "opener"].set_index("token")
    assert list(t.index[:4]) == ["Here", "is", "a", "6"]
    assert t.loc["sentence", "in_artifact"] and not t.loc["waves", "in_artifact"]
    assert t.loc["sentence", "start"] == 12 and t.loc["sentence", "end"] == 20


def test_attack_counts_on_sample(compared) -> None:
    n_human = sum(r.label == "human" for r in compared.split.test)
    att = compared.attack.set_index("trained_on")
    assert list(att.index) == ["original", "cleaned"]
    assert (att["n"] == n_human).all()
    assert ((att["classified_human"] + att["classified_llm"]) == n_human).all()
    assert ((att["before_human"] + att["before_llm"]) == n_human).all()
    # the shortcut: the prefix moves the original-trained detector more than the cleaned-trained one
    assert att.loc["original", "classified_llm"] > att.loc["cleaned", "classified_llm"]
    assert att.loc["original", "mean_p_llm_after"] > att.loc["original", "mean_p_llm_before"]


def test_compare_shares_and_cleaned_split(compared) -> None:
    shares = compared.artifact_shares()
    assert shares["original"] > shares["cleaned"] > 0
    train = {r.text for r in compared.cleaned_train}
    assert not train & {r.text for r in compared.cleaned_test}
    dropped = set(compared.cleaning.dropped["id"])
    assert not dropped & {r.id for r in compared.cleaned_train + compared.cleaned_test}


def test_compare_run_tables(compared, tmp_path: Path) -> None:
    from zcp_core.detector import detector_scorer, write_compare_run
    from zcp_core.runs import load_run

    folder = write_compare_run(tmp_path / "run", compared, {"dataset": CLAUDE})
    run = load_run(folder)
    assert run.kind == "detector" and run.summary["headline"]["value"] == pytest.approx(compared.artifact_shares()
                                                                                        ["original"])
    for name in ("metrics", "attack", "top_tokens", "token_attributions", "text_attributions", "dropped", "split"):
        assert run.has_table(name)
    assert set(run.records.columns) >= {"id", "p_llm_original", "p_llm_cleaned", "artifact_share_original"}
    top = run.table("top_tokens")
    assert top[top["detector"] == "original"]["is_artifact"].any()
    score = detector_scorer(folder)
    texts = [r.text for r in compared.split.test[:5]]
    assert score(texts) == pytest.approx(list(compared.detectors["original"].predict_proba(texts)))


def test_scorer_feeds_cleaner_under_cleaning_flags(small_detector, library) -> None:
    from zcp_core.artifacts import clean
    from zcp_core.detector import detector_scorer

    det, split = small_detector
    recs = [r for r in split.test if r.label == "llm"][:20]
    res = clean(recs, library, scorer=detector_scorer(det))
    assert "residual_score" in set(res.flags["kind"])


def test_cross_domain_table_shape(library) -> None:
    from zcp_core.detector import CROSS_COLUMNS, TfidfConfig, cross_domain

    df = cross_domain(SAMPLE[:2], library, "tfidf", TfidfConfig(max_word_features=3000, max_char_features=3000))
    assert list(df.columns) == CROSS_COLUMNS and len(df) == 2 * 2 * 2 * 2
    assert set(df["train_domain"]) == {"ChatGPT", "Claude-instant"}
    assert df["in_domain"].sum() == 8 and df["roc_auc"].notna().all()


def test_cli_train_cleaned_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from zcp_core.cli.main import main

    assert main(["detector", "train", "--data", *CLAUDE, "--cleaned", "--out", str(tmp_path / "t"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["form"] == "cleaned" and out["metrics"]["tpr_at_001pct_fpr"] is None
    assert (tmp_path / "t" / "detector" / "weights.npz").exists()


def test_modules_import_light() -> None:
    code = ("import zcp_core.detector, zcp_core.detector.data, zcp_core.detector.metrics, zcp_core.detector.compare, "
            "zcp_core.detector.runs, zcp_core.detector.transformer, zcp_core.detector.explain, zcp_core.detector.attack, "
            "zcp_core.detector.viz, zcp_core.cli.detector; import sys; print([m for m in ('torch','transformers',"
            "'shap','sklearn','streamlit','ray','pandas','scipy','plotly') if m in sys.modules])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.stdout.strip() == "[]", r.stderr


def test_cli_compare_prints_attack_table_and_shares(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from zcp_core.cli.main import main
    from zcp_core.runs import load_run

    out = tmp_path / "cmp"
    assert main(["detector", "compare", "--data", *CLAUDE, "--explain-n", "10", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Called human" in text and "Share of |SHAP| on artifact spans" in text
    run = load_run(out)
    assert run.summary["n_records"] == 150 and run.manifest["config"]["command"] == "compare"
    assert (out / "detectors" / "original" / "weights.npz").exists()
    assert (out / "detectors" / "cleaned" / "weights.npz").exists()
