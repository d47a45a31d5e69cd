"""The detector-by-kind matrix: golden tables for its statistics, and one real smoke matrix on the embedded model."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from zcp_core.lab import LabError, MatrixOptions, auroc_ci, bonferroni_alpha, matrix_rows, quality, tpr_at_fpr
from zcp_core.lab.quality import bootstrap_aurocs, json_rows

POS = [0.9, 0.8, 0.7, 0.4]
NEG = [0.6, 0.5, 0.3, 0.2]


# ---- AUROC, CIs, TPR at 5% FPR ------------------------------------------------------------------

@pytest.mark.parametrize(("pos", "neg", "auroc", "tpr"), [
    (POS, NEG, 14 / 16, 0.75),  # 0.4 beats two negatives; above 0.6 (FPR 0): three of four positives
    ([1, 1, 0, 0], [0, 0, 1, 0], 10 / 16, 0.0),  # ties count half; the only FPR-0 threshold keeps no positive
    ([3, 2], [1, 0], 1.0, 1.0),
    ([0, 1], [2, 3], 0.0, 0.0),
    ([1, math.nan, 2], [0, math.nan], 1.0, 1.0),  # NaN scores are dropped
])
def test_quality_golden(pos: list, neg: list, auroc: float, tpr: float) -> None:
    q = quality(pos, neg)
    assert q.auroc == pytest.approx(auroc) and q.tpr_at_5fpr == pytest.approx(tpr)
    assert q.n_pos == sum(not math.isnan(x) for x in pos) and q.reason == ""


@pytest.mark.parametrize(("pos", "neg", "tpr"), [
    ([5, 4, 3, 2, 1], [4.5] + [0] * 19, 1.0),  # one negative in twenty above the positives' floor: FPR 5% allowed
    ([5, 4, 3, 2, 1], [4.5, 4.5] + [0] * 18, 0.2),  # two are 10%: only the threshold above 4.5 stays
    ([1, 1], [1] + [0] * 19, 1.0),  # a tie block at FPR exactly 5%
    ([1, 1], [1, 1] + [0] * 18, 0.0),  # a tie block is never split to reach 5%
])
def test_tpr_at_5fpr_golden(pos: list, neg: list, tpr: float) -> None:
    assert tpr_at_fpr(pos, neg, 0.05) == pytest.approx(tpr)


def test_bootstrap_replicates_are_sklearn_aurocs_of_the_resampled_items() -> None:
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(3)
    p, n = rng.normal(0.5, 1, 7).round(1), rng.normal(0, 1, 9).round(1)  # rounded: ties happen
    reps = bootstrap_aurocs(p, n, n_boot=200, seed=11)
    draw = np.random.default_rng(11)  # the same draws, made explicit
    cp = draw.multinomial(p.size, np.full(p.size, 1 / p.size), size=200)
    cn = draw.multinomial(n.size, np.full(n.size, 1 / n.size), size=200)
    for b in range(200):
        rp, rn = np.repeat(p, cp[b]), np.repeat(n, cn[b])
        y = np.r_[np.ones(rp.size), np.zeros(rn.size)]
        assert reps[b] == pytest.approx(roc_auc_score(y, np.r_[rp, rn]))


def test_auroc_ci_golden_and_family_wise_is_wider() -> None:
    q = quality(POS, NEG, family_size=4, n_boot=2000, seed=0)
    assert q.auroc_ci == pytest.approx((0.5, 1.0)) and q.auroc_ci_fw == pytest.approx((0.4375, 1.0))
    lo, hi = q.auroc_ci
    assert q.auroc_ci_fw[0] <= lo <= q.auroc <= hi <= q.auroc_ci_fw[1]
    assert auroc_ci([3, 2], [1, 0], (0.05, 0.01)) == [(1.0, 1.0), (1.0, 1.0)]  # perfect separation: no spread


@pytest.mark.parametrize(("m", "alpha"), [(1, 0.05), (2, 0.025), (8, 0.00625)])
def test_bonferroni_golden(m: int, alpha: float) -> None:
    assert bonferroni_alpha(m) == pytest.approx(alpha)


def test_bonferroni_needs_a_family() -> None:
    with pytest.raises(ValueError, match="at least one"):
        bonferroni_alpha(0)


def test_null_scores_give_a_ci_around_one_half() -> None:
    rng = np.random.default_rng(0)
    hits = 0
    for s in range(40):  # scores unrelated to the split: the 95% CI should hold 0.5 about 95% of the time
        q = quality(rng.normal(size=40), rng.normal(size=40), family_size=8, seed=s, n_boot=500)
        hits += q.auroc_ci_fw[0] <= 0.5 <= q.auroc_ci_fw[1]
    assert hits >= 38


def test_quality_without_scores_says_why() -> None:
    q = quality([math.nan], [0.1])
    assert math.isnan(q.auroc) and math.isnan(q.auroc_ci[0]) and q.reason == "no finite score on C or on U"


# ---- the table -----------------------------------------------------------------------------------

def _scores() -> pd.DataFrame:
    rows = []
    for kind, shift in (("direct", 1.0), ("none", 0.0)):
        for i, (p, n) in enumerate(zip(POS, NEG)):
            rows += [{"kind": kind, "detector": "a", "id": f"c{i}", "split": "C", "score": p + shift, "reason": ""},
                     {"kind": kind, "detector": "a", "id": f"u{i}", "split": "U", "score": n, "reason": ""},
                     {"kind": kind, "detector": "j", "id": f"c{i}", "split": "C", "score": math.nan, "reason": "no judge"},
                     {"kind": kind, "detector": "j", "id": f"u{i}", "split": "U", "score": math.nan, "reason": "no judge"}]
    return pd.DataFrame(rows)


def test_matrix_rows_golden() -> None:
    conf = pd.DataFrame([
        {"kind": "direct", "detector": "a", "c_contaminated": 0.99, "c_clean": 0.5, "c_reason": ""},
        {"kind": "direct", "detector": "j", "c_contaminated": math.nan, "c_clean": math.nan, "c_reason": "count"},
        {"kind": "none", "detector": "a", "c_contaminated": 0.4, "c_clean": 0.6, "c_reason": ""},
        {"kind": "none", "detector": "j", "c_contaminated": math.nan, "c_clean": math.nan, "c_reason": "count"},
    ])
    t = matrix_rows(_scores(), conf, n_boot=500, seed=0)
    assert list(t["kind"]) == ["direct", "direct", "none", "none"] and list(t["detector"]) == ["a", "j", "a", "j"]
    assert list(t["auroc"].round(4).fillna(-1)) == [1.0, -1, 0.875, -1]
    assert list(t["tpr_at_5fpr"].fillna(-1)) == [1.0, -1, 0.75, -1]
    assert list(t["family_size"]) == [1, 1, 1, 1]  # the unmeasured judge is no test, so not in the family
    assert list(t["reason"]) == ["", "no judge", "", "no judge"]
    assert list(t["n_c"]) == [4, 0, 4, 0] and t.loc[0, "c_contaminated"] == 0.99 and t.loc[1, "c_reason"] == "count"
    rows = json_rows(t)
    assert rows[1]["auroc"] is None and rows[1]["auroc_ci"] == [None, None] and rows[0]["auroc_ci"] == [1.0, 1.0]
    assert isinstance(rows[2]["auroc_ci_fw"], list) and rows[2]["n_c"] == 4


def _table() -> pd.DataFrame:
    return pd.DataFrame([
        {"kind": "verbatim", "detector": "min_k", "auroc": 0.95, "auroc_ci_fw": [0.8, 1.0], "auroc_ci": [0.85, 1.0]},
        {"kind": "verbatim", "detector": "zlib", "auroc": 0.6, "auroc_ci_fw": [0.4, 0.8], "auroc_ci": [0.45, 0.75]},
        {"kind": "direct", "detector": "min_k", "auroc": 0.25, "auroc_ci_fw": [0.1, 0.45], "auroc_ci": [0.15, 0.4]},
        {"kind": "direct", "detector": "zlib", "auroc": math.nan, "auroc_ci_fw": [math.nan, math.nan],
         "auroc_ci": [math.nan, math.nan], "reason": "no judge"},
        {"kind": "none", "detector": "min_k", "auroc": 0.3, "auroc_ci_fw": [0.1, 0.45], "auroc_ci": [0.15, 0.4]},
        {"kind": "none", "detector": "zlib", "auroc": 0.5, "auroc_ci_fw": [0.3, 0.7], "auroc_ci": [0.35, 0.65]},
    ])


def test_matrix_reading_golden() -> None:
    from zcp_core.lab.report import matrix_reading

    assert matrix_reading(_table()) == [
        "verbatim: caught by Min-K% probability (family-wise CI above 0.5).",
        "direct: no detector catches it family-wise. Inverted (family-wise CI below 0.5): Min-K% probability.",
        "Untouched model: false alarm by Min-K% probability.",
    ]


def test_matrix_figure_is_kinds_by_detectors_with_the_ci_in_the_hover() -> None:
    from zcp_core.lab.viz import matrix_figure

    hm = matrix_figure(_table()).data[0]
    assert list(hm.y) == ["verbatim", "direct", "none"] and list(hm.x) == ["Min-K% probability", "zlib ratio"]
    assert hm.z[0][0] == 0.95 and hm.z[1][1] is None and hm.text[1][1] == "–"
    # an AUROC is not a difference: its intervals read unsigned
    assert "95% CI [0.850, 1.000]" in hm.customdata[0][0] and "family-wise CI [0.800, 1.000]" in hm.customdata[0][0]


def test_options_refuse_unknown_kinds_and_detectors() -> None:
    with pytest.raises(LabError, match="unknown kinds or detectors"):
        MatrixOptions(kinds=("direct", "pretrain"))
    with pytest.raises(LabError, match="unknown kinds or detectors"):
        MatrixOptions(detectors=("min_k", "perplexity"))


def test_defaults_are_the_issue_s_lists() -> None:
    o = MatrixOptions()
    assert o.kinds == ("direct", "evasive", "verbatim", "solution", "none")
    assert o.detectors == ("zcp_acc", "zcp_p_first", "zcp_p_all", "guided_rouge", "guided_minus_general",
                           "guided_judge", "min_k", "zlib", "cot_acc")
    assert o.took and o.cot_max_new_tokens == 256  # the issue's full-CoT cap


# ---- end to end on the embedded model ------------------------------------------------------------

ROW_KEYS = {"kind", "detector", "auroc", "auroc_ci", "auroc_ci_fw", "tpr_at_5fpr", "c_contaminated", "c_clean"}


@pytest.fixture(scope="module")
def smoke_env(lab_cache):
    """A private ZCP_CACHE and a 60-item GSM8K file; builds are tiny (1 step, rank-2 LoRA, |C| = |U| = 2)."""
    from zcp_core.lab import LoraSpec

    build = (("dataset", str(lab_cache["dataset"])), ("model", f"hf:{lab_cache['base']}"), ("n_contaminated", 2),
             ("max_steps", 1), ("lora", LoraSpec(r=2, alpha=4, targets=("q_proj", "v_proj"))))
    return {"build": build, "cache": lab_cache["cache"]}


@pytest.mark.model
def test_missing_build_names_the_command_to_run(smoke_env) -> None:
    from zcp_core.lab import run_matrix

    opts = MatrixOptions(kinds=("solution", "none"), detectors=("min_k",), profile="smoke", build=smoke_env["build"])
    with pytest.raises(LabError, match="(?s)no cached build for solution.*zcp lab build --mode solution --profile smoke --dataset"):
        run_matrix(opts, progress=False)


@pytest.mark.model
@pytest.mark.heavy
def test_smoke_matrix_end_to_end(smoke_env, tmp_path) -> None:
    from zcp_core.lab import DETECTORS, run_matrix
    from zcp_core.lab.matrix import BASELINE_NO_C, JUDGE_NO_C
    from zcp_core.runs import load_run

    opts = MatrixOptions(kinds=("verbatim", "none"), profile="smoke", build=smoke_env["build"], missing="build",
                         n_resamples=200, n_boot=200, max_new_tokens=6, guided_max_new_tokens=8, device="cpu",
                         cot_max_new_tokens=8)
    res = run_matrix(opts, out=tmp_path / "m", progress=False)
    rows = res.summary["rows"]
    assert [(r["kind"], r["detector"]) for r in rows] == [(k, d) for k in ("verbatim", "none") for d in DETECTORS]
    for r in rows:
        assert ROW_KEYS <= set(r)
        if r["detector"] == "guided_judge":  # the rule judge without --judge: measured, with no Confidence
            assert r["c_contaminated"] is None and r["c_reason"] == JUDGE_NO_C
        assert 0.0 <= r["auroc"] <= 1.0 and r["n_c"] == 2 and r["n_u"] == 2, r
        assert r["auroc_ci_fw"][0] <= r["auroc_ci"][0] <= r["auroc"] <= r["auroc_ci"][1] <= r["auroc_ci_fw"][1]
        assert r["family_size"] == 9
        if r["kind"] == "none":
            assert r["took"] is None and r["took_gain"] is None  # no build, no check
        else:  # 2 items a side: the check runs, but gives no verdict
            assert r["took"] is None and isinstance(r["took_gain"], float)
        if r["detector"] == "cot_acc":
            assert r["c_contaminated"] is None and "too few pairs" in r["c_reason"]
        if r["detector"] in ("min_k", "zlib"):
            assert r["c_contaminated"] is None and r["c_reason"] == BASELINE_NO_C
        if r["detector"].startswith("zcp_") or r["detector"] == "guided_minus_general":
            # 2 pairs: no verdict (the smoke build's zero-CoT Acc may not even be graded: unclosed boxes)
            assert r["c_contaminated"] is None and ("too few pairs" in r["c_reason"] or (
                r["detector"] == "zcp_acc" and "never close their box" in r["c_reason"]))
    run = load_run(res.run_path)
    assert run.manifest["kind"] == "lab" and run.summary["stage"] == "matrix"
    assert set(run.records["detector"]) == set(DETECTORS) and len(run.records) == 2 * 9 * 4
    took = run.table("took").set_index("kind")
    assert took.loc["verbatim", "prompt_style"] == "completion" and "too few items" in took.loc["verbatim", "reason"]
    assert 0.0 <= took.loc["verbatim", "c_lab"] <= 1.0 and took.loc["none", "reason"].startswith("no build")
    assert "took" in run.table("matrix").columns
    builds = run.table("builds").set_index("kind")
    assert builds.loc["verbatim", "split_sha"] == builds.loc["none", "split_sha"]  # the same C and U items
    assert builds.loc["none", "model"].startswith("hf:") and builds.loc["verbatim", "model"].startswith("lab:")
    guided = run.table("guided")
    assert len(guided) == 2 * 4
    # Time-Travel follows the style each kind was trained in: raw text -> completion; the chat model -> chat.
    style = guided.groupby("kind")["prompt_style"].unique().map(list).to_dict()
    assert style == {"verbatim": ["completion"], "none": ["chat"]}
    assert guided.loc[guided["kind"] == "verbatim", "guided_prompt"].str.startswith("GSM8K, ").all()
    # The verbatim build records its recipe, and trained on raw text without a chat template.
    b = load_run(smoke_env["cache"] / "lab" / builds.loc["verbatim", "build"] / "build")
    assert b.manifest["config"]["recipe"]["template"] == "none" and b.summary["recipe"]["kind"] == "verbatim"
    texts = b.table("training_texts")
    assert (texts["prompt"] == "").all() and not texts["target"].str.contains("<|im_start|>", regex=False).any()
    assert texts["target"].str.contains("####").all()
    # A rerun resumes: the build is reused and the model calls come from the response cache, so nothing changes.
    again = run_matrix(opts, progress=False)
    assert again.summary["rows"] == rows
    # The lab page shows the run as a heatmap with its reading.
    from apphelp import render_page

    mp = pytest.MonkeyPatch()
    try:
        at = render_page("lab.py", tmp_path, mp)
    finally:
        mp.undo()
    # the matrix table and the manipulation check's table, under its own heading
    assert any("Untouched model" in m.value for m in at.markdown) and len(at.dataframe) == 2
    assert "Did each build take?" in [h.value for h in at.subheader]


DOSES = [  # kind, dose -> LabConfig overrides (exposures per C item)
    ("direct", 2, (("epochs", 2),)),
    ("solution", 12, (("epochs", 12),)),
    ("evasive", 2, (("paraphrase_versions", 2), ("epochs", 1))),
    ("paper", 12, (("paraphrase_versions", 12), ("epochs", 1))),
]


@pytest.mark.parametrize(("kind", "dose", "overrides"), DOSES)
def test_dose_overrides(kind, dose, overrides) -> None:
    from zcp_core.lab.config import exposures, profile_config
    from zcp_core.lab.dose import dose_overrides

    assert dose_overrides(kind, dose) == overrides
    assert exposures(profile_config("default", kind, **dict(overrides))) == dose


def test_dose_refuses_the_untouched_model_and_nonsense() -> None:
    from zcp_core.lab.dose import dose_overrides

    with pytest.raises(LabError, match="no dose"):
        dose_overrides("none", 2)
    with pytest.raises(LabError, match=">= 1"):
        dose_overrides("direct", 0)


def test_a_build_at_another_dose_keeps_the_profile_alias_free() -> None:
    from zcp_core.lab.build import alias_for
    from zcp_core.lab.config import profile_config

    assert [alias_for(profile_config("default", k)) for k in ("direct", "evasive", "paper")] == [
        "direct", "evasive", "paper"]
    assert alias_for(profile_config("default", "solution", epochs=2)) == "solution-dose2"
    assert alias_for(profile_config("default", "paper", paraphrase_versions=12)) == "paper-dose12"
    assert alias_for(profile_config("smoke", "direct", epochs=3)) == "smoke-dose3"


def test_a_replicate_build_keeps_the_profile_alias_free() -> None:
    """`zcp lab matrix --replicates` builds seeds 1, 2...: lab:direct must keep meaning the profile's own build."""
    from zcp_core.lab.build import alias_for
    from zcp_core.lab.config import profile_config

    assert alias_for(profile_config("default", "direct", seed=0)) == "direct"
    assert alias_for(profile_config("default", "direct", seed=1)) == "direct-seed1"
    assert alias_for(profile_config("default", "solution", epochs=2, seed=2)) == "solution-dose2-seed2"


@pytest.mark.model
def test_smoke_dose_run_and_its_page(smoke_env, tmp_path, monkeypatch) -> None:
    from streamlit.testing.v1 import AppTest

    from zcp_core.lab.dose import run_dose
    from zcp_core.runs import load_run

    # One cheap detector and no manipulation check: the matrix smoke test above covers both; this one the doses.
    opts = MatrixOptions(detectors=("min_k",), profile="smoke", build=smoke_env["build"], missing="build",
                         n_boot=200, device="cpu", took=False)
    res = run_dose(("direct",), (2, 1), opts, out=tmp_path / "runs" / "dose", progress=False)
    t = res.table
    assert sorted(set(t["dose"])) == [1, 2] and set(t["detector"]) == {"min_k"} and len(t) == 2
    builds = load_run(res.run_path).table("builds")
    assert builds["key"].nunique() == 2 and list(builds["dose"]) == [1, 2]  # one build per dose
    assert res.summary["stage"] == "dose" and [r["dose"] for r in res.summary["took"]] == [1, 2]
    assert "--doses 1,2" in load_run(res.run_path).manifest["command"]
    monkeypatch.setenv("ZCP_RUNS", str(tmp_path / "runs"))
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app_pages" / "lab.py"),
                           default_timeout=60).run()
    assert not at.exception
    assert any("Dose points 2 (direct (direct answers)): exposures per C item 1, 2" in m.value for m in at.markdown)


def test_exact_auroc_p_matches_every_labelling_and_scipy() -> None:
    import itertools

    import numpy as np
    from scipy.stats import mannwhitneyu, rankdata

    from zcp_core.lab.quality import exact_auroc_p

    rng = np.random.default_rng(36)
    for _ in range(10):  # ties on purpose: scores from {0, 1, 2, 3}
        pos, neg = rng.integers(0, 4, 6).astype(float), rng.integers(0, 4, 5).astype(float)
        r = rankdata(np.r_[pos, neg])
        mean, obs = 6 * r.sum() / 11, r[:6].sum()
        sums = [r[list(c)].sum() for c in itertools.combinations(range(11), 6)]
        brute = sum(abs(x - mean) >= abs(obs - mean) - 1e-9 for x in sums) / len(sums)
        assert exact_auroc_p(pos, neg) == pytest.approx(brute, abs=1e-12)
    a, b = rng.normal(0.3, 1, 40), rng.normal(0, 1, 40)  # no ties: scipy's exact test is the same test
    assert exact_auroc_p(a, b) == pytest.approx(mannwhitneyu(a, b, method="exact").pvalue, rel=1e-9)


def test_holm_golden() -> None:
    from zcp_core.lab.quality import holm

    out = holm([0.01, 0.04, 0.03, float("nan"), 0.005])
    assert out[[0, 1, 2, 4]].tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02]) and np.isnan(out[3])


def test_the_bundled_matrix_reads_by_holm_adjusted_exact_p() -> None:
    """The issue's figures: verbatim's full-CoT check and guided-minus-general at p 0.0069 and 0.0068, and direct's
    P_all not significant once the 48 cells are Holm-corrected."""
    import pandas as pd

    from zcp_core.lab.report import matrix_reading

    run = Path(__file__).resolve().parent.parent / "data" / "examples" / "lab-matrix"
    t = pd.read_parquet(run / "matrix.parquet").set_index(["kind", "detector"])
    assert t.loc[("verbatim", "cot_acc"), "auroc_p"] == pytest.approx(0.0069, abs=5e-5)
    assert t.loc[("verbatim", "guided_minus_general"), "auroc_p"] == pytest.approx(0.0068, abs=5e-5)
    assert np.isnan(t.loc[("verbatim", "cot_acc"), "auroc_p_holm"])  # outside the family
    assert int(t["auroc_p_holm"].notna().sum()) == 48
    assert 0.05 < t.loc[("direct", "zcp_p_all"), "auroc_p_holm"] < 0.2
    reading = matrix_reading(t.reset_index())
    assert reading[0].startswith("direct: no detector catches it (none has an exact p")
    assert reading[1].startswith("evasive: caught by ZCP P(all answer tokens)")
