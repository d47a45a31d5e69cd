"""Replicate builds of the lab matrix: the stratified exact test, the pooled table, and a tiny real run."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from zcp_core.lab.matrix import MatrixOptions
from zcp_core.lab.quality import exact_auroc_p
from zcp_core.lab.replicates import replicate_table, stratified_exact_p


def _brute(strata: list[tuple[list[float], list[float]]]) -> float:
    """Every within-stratum relabelling, enumerated: the share as far from the mean as the observed sum."""
    from scipy.stats import rankdata

    per = []
    observed = 0.0
    for pos, neg in strata:
        r = rankdata(np.r_[pos, neg])
        k, n = len(pos), len(pos) + len(neg)
        mean = k * (n + 1) / 2
        observed += r[:k].sum() - mean
        per.append([r[list(c)].sum() - mean for c in itertools.combinations(range(n), k)])
    totals = [sum(x) for x in itertools.product(*per)]
    return sum(abs(t) >= abs(observed) - 1e-9 for t in totals) / len(totals)


def test_stratified_p_is_the_exact_p_on_one_stratum_and_enumerates_two() -> None:
    rng = np.random.default_rng(7)
    for _ in range(6):  # ties on purpose
        pos, neg = rng.integers(0, 4, 5).astype(float).tolist(), rng.integers(0, 4, 4).astype(float).tolist()
        assert stratified_exact_p([(pos, neg)]) == pytest.approx(exact_auroc_p(pos, neg), abs=1e-12)
        pos2, neg2 = rng.integers(0, 3, 4).astype(float).tolist(), rng.integers(0, 3, 4).astype(float).tolist()
        assert stratified_exact_p([(pos, neg), (pos2, neg2)]) == pytest.approx(_brute([(pos, neg), (pos2, neg2)]),
                                                                               abs=1e-12)
    assert math.isnan(stratified_exact_p([([], [1.0])]))
    # two replicates that each lean the same way pool to a smaller p than either alone
    a = ([3.0, 4.0, 5.0, 2.5], [1.0, 2.0, 0.0, 3.5])
    assert stratified_exact_p([a, a]) < exact_auroc_p(*a)


def test_replicate_table_golden() -> None:
    rec, tab = [], []
    for shift in (3.0, 3.0, 0.0):  # the leak is caught in two replicates of three
        ids = [f"i{j}" for j in range(12)]
        score = [shift + j % 6 * 0.1 for j in range(6)] + [j % 6 * 0.1 for j in range(6)]
        rec.append(pd.DataFrame({"kind": "direct", "detector": "min_k", "id": ids, "split": ["C"] * 6 + ["U"] * 6,
                                 "score": score}))
        c, u = score[:6], score[6:]
        a = float(np.mean([(x > y) + 0.5 * (x == y) for x in c for y in u]))
        tab.append(pd.DataFrame({"kind": ["direct"], "detector": ["min_k"], "auroc": [a],
                                 "auroc_p_holm": [exact_auroc_p(c, u)]}))
    t = replicate_table(rec, tab, single=("evasive",))
    row = t.iloc[0]
    assert (row["replicates"], row["caught"], row["inverted"], bool(row["single_build"])) == (3, 2, 0, False)
    assert (row["auroc_min"], row["auroc_median"], row["auroc_max"]) == (0.5, 1.0, 1.0)
    strata = [(x["score"][:6].tolist(), x["score"][6:].tolist()) for x in rec]
    assert row["pooled_p"] == pytest.approx(stratified_exact_p(strata)) and row["pooled_p_holm"] == row["pooled_p"]
    assert row["reading"] == "caught"


def test_replicates_figure_marks_caught_cells_and_single_builds() -> None:
    from zcp_core.lab.viz import replicates_figure

    rows = [{"kind": k, "detector": d, "replicates": n, "single_build": n == 1, "auroc_median": a, "auroc_min": lo,
             "auroc_max": hi, "caught": c, "inverted": 0, "pooled_p": p, "pooled_p_holm": ph, "reading": r}
            for k, d, n, a, lo, hi, c, p, ph, r in (
                ("direct", "zcp_p_all", 3, 0.745, 0.69, 0.789, 2, 4e-11, 1.7e-9, "caught"),
                ("direct", "min_k", 3, 0.438, 0.35, 0.44, 0, 0.016, 0.64, ""),
                ("evasive", "zcp_p_all", 1, 0.732, 0.732, 0.732, 1, 2.8e-4, 0.011, "caught"),
                ("evasive", "min_k", 1, 0.553, 0.553, 0.553, 0, 0.42, 1.0, ""))]
    fig = replicates_figure(pd.DataFrame(rows))
    heat = fig.data[0]
    assert list(heat.y) == ["direct", "evasive (single build)"]
    assert [list(r) for r in heat.text] == [["0.745*", "0.438"], ["0.732*", "0.553"]]
    assert "range 0.690–0.789 over 3 builds" in heat.customdata[0][0] and "caught by 2 of 3" in heat.customdata[0][0]


@pytest.mark.model
def test_smoke_replicates_build_each_seed_and_pool(lab_cache, tmp_path, monkeypatch) -> None:
    from zcp_core.lab import LoraSpec
    from zcp_core.lab.replicates import run_replicates
    from zcp_core.runs import load_run

    build = (("dataset", str(lab_cache["dataset"])), ("model", f"hf:{lab_cache['base']}"), ("n_contaminated", 2),
             ("max_steps", 1), ("lora", LoraSpec(r=2, alpha=4, targets=("q_proj", "v_proj"))))
    opts = MatrixOptions(kinds=("direct", "none"), detectors=("min_k",), profile="smoke", build=build,
                         missing="build", n_boot=100, device="cpu", took=False)
    res = run_replicates(opts, 2, out=tmp_path / "runs" / "rep", single=("none",), progress=False)
    builds = pd.DataFrame(res.summary["builds"])
    direct = builds[builds["kind"] == "direct"]
    assert list(direct["replicate"]) == [0, 1] and direct["key"].nunique() == 2  # one build per seed
    assert list(builds.loc[builds["kind"] == "none", "replicate"]) == [0]  # single build: replicate 0 only
    # replicate 1 has its own alias; the profile's alias keeps naming the seed-0 build
    lab = lab_cache["cache"] / "lab"
    assert [(lab / a).resolve().name for a in ("smoke", "smoke-seed1")] == list(direct["build"])
    run = load_run(tmp_path / "runs" / "rep")
    t = run.table("replicates")
    assert set(t["kind"]) == {"direct", "none"}
    assert dict(zip(t["kind"], t["replicates"])) == {"direct": 2, "none": 1}
    assert "--replicates 2" in run.manifest["command"] and (tmp_path / "runs" / "rep" / "replicate-1").is_dir()
    from zcp_core.lab.report import report

    rep = report(run)
    text = rep.to_text()
    assert "single build" in text and "Replicates caught" in text
    # every replicate's manipulation check is said, kind by kind (here unchecked: took=False)
    assert [s for s in rep.sentences if s.startswith("direct")] == [
        "direct (direct answers): replicate 0 manipulation check not run; replicate 1 manipulation check not run."]
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ZCP_RUNS", str(tmp_path / "runs"))
    page = Path(__file__).resolve().parent.parent / "app_pages" / "lab.py"
    at = AppTest.from_file(str(page), default_timeout=60).run()
    assert not at.exception
    assert any(h.value == "Lab matrix, 2 replicates" for h in at.subheader)
