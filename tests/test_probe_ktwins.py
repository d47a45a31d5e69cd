"""K twins per item, read from probe records: the benchmark test, per-item p-values, BH flags, pairing and the
release gate (the statistics themselves are tested in test_stats_ktwins.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from zcp_core.probe.analysis import item_gaps, metric_tests
from zcp_core.probe.flags import flags_summary, item_flags
from zcp_core.probe.ktwins import FlagRule, bh_flags, item_pvalues, twin_scores


def _records(orig: np.ndarray, twins: np.ndarray, acc_o: np.ndarray | None = None,
             acc_t: np.ndarray | None = None) -> pd.DataFrame:
    """Probe records: item i's original scores orig[i], its twins twins[i, :] (P_all and P_first alike)."""
    n, k = twins.shape
    acc_o = np.zeros(n, bool) if acc_o is None else acc_o
    acc_t = np.zeros((n, k), bool) if acc_t is None else acc_t
    rows = []
    for i in range(n):
        base = {"pair_id": f"q{i}", "ratio": 0.0, "question": "?", "gold": "1", "con": pd.NA, "cot_text": None,
                "cot_correct": pd.NA, "logprob_reason": "", "grade_status": "ok"}
        rows.append({**base, "arm": "original", "id": f"q{i}", "pred": "1", "acc": bool(acc_o[i]),
                     "p_all": orig[i], "p_first": orig[i], "twin": pd.NA})
        for j in range(k):
            rows.append({**base, "arm": "reference", "id": f"q{i}-ref{j + 1}", "question": f"twin {j + 1} of q{i}",
                         "pred": "2", "acc": bool(acc_t[i, j]), "p_all": twins[i, j], "p_first": twins[i, j],
                         "twin": j + 1})
    df = pd.DataFrame(rows)
    df["twin"] = df["twin"].astype("Int64")
    return df


def _null(n: int, k: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Exchangeable original and twins: log P ~ N(mu_i, sigma_i), with item-level spread of both."""
    rng = np.random.default_rng(seed)
    mu, sigma = rng.normal(-3, 1.5, n), rng.gamma(4, 0.15, n)
    logs = mu[:, None] + sigma[:, None] * rng.standard_normal((n, k + 1))
    return np.exp(logs[:, 0]), np.exp(logs[:, 1:])


@pytest.mark.parametrize("k", [2, 4, 8])
def test_item_p_is_calibrated_under_exchangeable_twins(k: int) -> None:
    # 2,000 null items: the share below 0.05 has a binomial SD of 0.5 points; the bounds are 4 SDs wide.
    orig, twins = _null(2000, k, seed=k)
    p = item_pvalues(_records(orig, twins), "p_all")["item_p"]
    assert len(p) == 2000 and 0.03 <= float((p < 0.05).mean()) <= 0.07
    assert 0.07 <= float((p < 0.1).mean()) <= 0.13


def test_item_p_finds_memorised_items_and_bh_flags_them() -> None:
    orig, twins = _null(400, 4, seed=1)
    orig[:40] = np.minimum(orig[:40] * 400, 0.99)  # the first 40 originals recalled far above their twins
    recs = _records(orig, twins)
    fl = item_flags(recs, rule=FlagRule("p_all", 0.1))
    hit = fl.set_index("pair_id")["flagged"]
    assert hit[[f"q{i}" for i in range(40)]].mean() >= 0.6  # most memorised items are discoveries
    false = int(hit[[f"q{i}" for i in range(40, 400)]].sum())
    assert false <= 0.1 * max(int(hit.sum()), 1) * 3  # few false flags (BH bounds their expected share by q)
    assert (fl["flagged"] == (fl["item_q"] <= 0.1)).all()
    s = flags_summary(fl, FlagRule("p_all", 0.1))
    assert s["metric"] == "p_all" and s["q"] == 0.1 and s["items"] == 400 and s["flagged"] == int(hit.sum())
    assert s["controlled"] and 0.0 < s["share_p_below_05"] < 1.0


def test_twins_sharing_a_first_token_cannot_make_p_vanish() -> None:
    # Half the items' twins score the same (SD 0): the variance floor tau^2 (the median spread of the items
    # whose twins spread) keeps a small gap from reading as certain.
    rng = np.random.default_rng(3)
    twins = np.repeat(np.exp(rng.normal(-3, 1, (300, 1))), 4, axis=1)
    twins[150:] *= np.exp(rng.normal(0, 0.5, (150, 4)))  # half the items have spread, which sets the prior
    orig = twins[:, 0] * 1.2  # a 20% higher probability than its identical twins
    p = item_pvalues(_records(orig, twins), "p_all").set_index("pair_id")["item_p"]
    assert p[[f"q{i}" for i in range(150)]].min() > 0.05


def test_rank_p_golden() -> None:
    twins = np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8], [0.05, 0.06, 0.07, 0.08]])
    orig = np.array([0.35, 0.9, 0.06])
    more_o, more_t = _null(10, 4, seed=9)
    p = item_pvalues(_records(np.r_[orig, more_o], np.r_[twins, more_t]), "p_all").set_index("pair_id")
    # (1 + comparators scoring at least the original) / (k + 1): the first three twins; the fourth is the spare
    assert p.loc[["q0", "q1", "q2"], "item_rank_p"].tolist() == pytest.approx([1 / 4, 1 / 4, 3 / 4])


def test_bh_golden_and_missing_p() -> None:
    p = [0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205, math.nan]
    q, flagged = bh_flags(p, 0.05)
    # BH: p_(i) * m / i, made monotone from the top; m counts the 8 finite p-values only
    assert q[:2] == pytest.approx([0.008, 0.032]) and math.isnan(q[-1])
    assert flagged.tolist() == [True, True] + [False] * 7


def test_flag_rule_validates_its_level_and_metric() -> None:
    for bad in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="--fdr must lie in"):
            FlagRule("p_all", bad)
    with pytest.raises(ValueError, match="flag metric"):
        FlagRule("bleu", 0.1)  # type: ignore[arg-type]
    assert not FlagRule("acc").controlled and FlagRule().metric == "p_all" and FlagRule().fdr == 0.1


def test_item_flags_keep_every_twin_and_the_acc_rule_has_no_control() -> None:
    orig, twins = _null(30, 3, seed=2)
    acc_o = np.array([i % 2 == 0 for i in range(30)])
    acc_t = np.zeros((30, 3), bool)
    acc_t[0, 1] = True  # item 0: one of its three twins is right too
    fl = item_flags(_records(orig, twins, acc_o, acc_t), rule=FlagRule("acc"))
    row = fl.set_index("pair_id").loc["q0"]
    assert row["n_twins"] == 3 and list(row["twin_ids"]) == ["q0-ref1", "q0-ref2", "q0-ref3"]
    assert list(row["twin_acc"]) == [False, True, False] and row["twins_right"] == pytest.approx(1 / 3)
    assert row["flip"] == "both" and not row["flagged"]  # the paper's rule: every twin wrong
    assert fl.set_index("pair_id").loc["q2", "flagged"] and fl["item_p"].isna().all()
    assert "1 of 3 twins correct" in row["evidence"]
    s = flags_summary(fl, FlagRule("acc"))
    assert s["q"] is None and not s["controlled"] and s["note"] == "no false-discovery control"


def test_acc_uses_the_exact_role_test_with_several_twins_and_mcnemar_with_one() -> None:
    orig, twins = _null(40, 2, seed=4)
    acc_o = np.ones(40, bool)
    acc_t = np.zeros((40, 2), bool)
    acc_t[:10, 0] = True
    recs = _records(orig, twins, acc_o, acc_t)
    g = item_gaps(recs, "acc")
    assert g["n_twins"].eq(2).all() and g["reference"].head(10).eq(0.5).all()
    t2 = metric_tests(recs, ("acc",), n_resamples=300)["acc"]
    assert not isinstance(t2, str) and t2.test == "exact_role_permutation" and t2.n == 40
    one = recs[(recs["arm"] == "original") | (recs["twin"] == 1)]
    t1 = metric_tests(one, ("acc",), n_resamples=300)["acc"]
    assert not isinstance(t1, str) and t1.test == "mcnemar" and (t1.discordant_b, t1.discordant_c) == (30, 0)


def test_a_twin_with_no_number_in_its_box_leaves_only_itself() -> None:
    orig, twins = _null(12, 2, seed=5)
    recs = _records(orig, twins, np.ones(12, bool))
    hit = (recs["id"] == "q0-ref2")
    recs.loc[hit, ["grade_status", "acc"]] = ["not_a_number", False]
    t = metric_tests(recs, ("acc",), n_resamples=200)["acc"]
    assert not isinstance(t, str) and t.n == 12  # q0 keeps its other twin


def test_pairing_accepts_k_numbered_twins_and_names_a_clash() -> None:
    from zcp_core.errors import DataError
    from zcp_core.schema import Item
    from zcp_core.stats import pair_items

    twins = [Item(id=f"a-ref{k}", question="?", answer="1", original_id="a", metadata={"twin": k}) for k in (1, 2, 3)]
    p = pair_items(["a", "b"], twins)
    assert [x.reference_id for x in p.pairs] == ["a-ref1", "a-ref2", "a-ref3"] and p.unpaired_original == ("b",)
    clash = [*twins, Item(id="a-again", question="?", answer="1", original_id="a", metadata={"twin": 2})]
    with pytest.raises(DataError, match="'a-ref2' and 'a-again' as the same twin"):
        pair_items(["a"], clash)


def test_k_twin_probe_of_a_clean_model_releases_nothing_and_says_why(smollm2, gsm8k_items, tmp_path) -> None:
    """The real embedded model, 12 GSM8K items with 2 twins each built as `zcp probe --twins 2` builds them."""
    import json

    from zcp_core.probe import ProbeConfig, release, run_probe
    from zcp_core.reference import perturb_gsm8k

    items = list(gsm8k_items[:12])
    twins = [t for k in (1, 2) for t in perturb_gsm8k(items, seed=k - 1, twin=k).items]
    res = run_probe(smollm2, items, twins, ProbeConfig(metrics=("acc", "p_all"), max_new_tokens=6, n_resamples=200),
                    out=tmp_path / "run")
    s = res.summary
    assert s["twins"]["k"] == 2 and s["flags"]["metric"] == "p_all" and s["flags"]["q"] == 0.1
    # only originals with a twin are answered; the run keeps every original for a release
    assert s["originals"] == {"given": 12, "probed": s["n_pairs"], "mode": "paired"}
    assert (res.records["arm"] == "original").sum() == s["n_pairs"] < 12
    assert res.items["n_twins"].max() == 2 and res.items["item_p"].notna().sum() == s["flags"]["items"]
    assert "coverage" in s and s["coverage"]["n_covered"] == s["n_pairs"]
    back = pd.read_parquet(res.run_path / "items.parquet")
    assert {"item_p", "item_q", "flagged", "twin_ids", "twin_p_all"} <= set(back.columns)
    assert s["flags"]["flagged"] == 0  # the clean model: no discovery, so nothing replaced, and one sentence why
    rel = release(res.run_path, tmp_path / "rel", license="mit", min_confidence=0.0)
    assert rel.replaced == () and rel.verdict is not None
    assert rel.verdict.not_replaced.startswith("not replaced: no item is a discovery at false-discovery level")
    card = (tmp_path / "rel" / "README.md").read_text()
    assert rel.verdict.not_replaced in card
    out = json.loads((tmp_path / "rel" / "release.json").read_text())
    assert out["flagged"] == 0 and out["fdr_q"] == 0.1 and out["flag_metric"] == "p_all"
    ids = [json.loads(x)["id"] for x in (tmp_path / "rel" / "benchmark.jsonl").read_text().splitlines()]
    assert ids == [it.id for it in items]  # the whole benchmark, unchanged


def test_calibrated_metrics_are_compared_as_they_are_not_logged_again() -> None:
    # p_all_cal is already a log-ratio in nats (often <= 0): logging it again would floor every negative value
    rng = np.random.default_rng(8)
    mu = rng.normal(0, 1, 400)
    twins = mu[:, None] + 0.3 * rng.standard_normal((400, 4))
    orig = mu + 0.3 * rng.standard_normal(400)
    orig[:40] += 3.0
    recs = _records(orig, twins)
    recs["p_all_cal"] = recs["p_all"]
    fl = item_flags(recs, rule=FlagRule("p_all_cal", 0.1)).set_index("pair_id")["flagged"]
    assert fl[[f"q{i}" for i in range(40)]].sum() >= 36 and fl[[f"q{i}" for i in range(40, 400)]].sum() <= 12


def test_twins_equal_up_to_batched_logprob_noise_carry_no_spread() -> None:
    rng = np.random.default_rng(3)
    twins = np.repeat(np.exp(rng.normal(-3, 1, (300, 1))), 4, axis=1)
    twins[:150] *= np.exp(1e-7 * rng.standard_normal((150, 4)))  # agree to 1e-7 relative: numerical noise only
    twins[150:] *= np.exp(rng.normal(0, 0.5, (150, 4)))
    orig = twins[:, 0] * 1.2
    p = item_pvalues(_records(orig, twins), "p_all").set_index("pair_id")["item_p"]
    assert p[[f"q{i}" for i in range(150)]].min() > 0.05


def test_item_p_scores_the_original_against_every_twin_but_the_spare() -> None:
    orig, twins = _null(60, 5, seed=12)
    p = item_pvalues(_records(orig, twins), "p_all")
    assert p["n_twins"].eq(5).all() and p["comparators"].eq(4).all()
    assert p["calibration_size"].eq(59 * 5).all()  # every other item's 5 twins, each against the other 4
    one = _records(orig, twins[:, :1])
    assert item_pvalues(one, "p_all").empty  # one distinct twin: no comparator beside a spare
    s = twin_scores(_records(orig, twins), "p_all")
    assert s.max_twins == 5 and s.twins[0] == pytest.approx(tuple(twins[0]))


def test_a_probe_at_k_twins_uses_the_role_test_and_a_skewed_null_stays_clean() -> None:
    rng = np.random.default_rng(21)
    x = rng.beta(5, 0.5, (80, 5))
    t = metric_tests(_records(x[:, 0], x[:, 1:]), ("p_all",), n_resamples=999)["p_all"]
    assert not isinstance(t, str) and t.test == "role_permutation" and t.n == 80


def test_a_twin_with_no_number_leaves_the_flip_to_the_graded_twins() -> None:
    orig, twins = _null(12, 4, seed=6)
    recs = _records(orig, twins, np.ones(12, bool))
    recs.loc[recs["id"] == "q0-ref2", ["grade_status", "acc"]] = ["not_a_number", False]
    fl = item_flags(recs, rule=FlagRule("acc")).set_index("pair_id")
    assert fl.loc["q0", "flip"] == "orig_only" and fl.loc["q0", "flagged"]  # three graded twins, all wrong
    assert list(fl.loc["q0", "twin_graded"]) == [True, False, True, True]
    recs.loc[recs["pair_id"] == "q1", "grade_status"] = "not_a_number"  # original and every twin: not graded
    assert item_flags(recs, rule=FlagRule("acc")).set_index("pair_id").loc["q1", "flip"] == "no_number"


def test_the_acc_rule_card_gives_no_chance_count_with_several_twins() -> None:
    from zcp_core.probe.verdict import run_verdict, verdict_lines

    flags = pd.DataFrame({"flagged": [True] * 6 + [False] * 34, "flip": ["orig_only"] * 6 + ["ref_only"] * 34,
                          "n_twins": [4] * 40})
    v = run_verdict({"metrics": {"acc": {"n": 40, "confidence": 0.5}}}, flags, 0.0)
    text = "\n".join(verdict_lines(v))
    assert v.k_twins == 4 and v.memorised_ci is None
    assert "no count of the flags chance alone gives" in text and "b - c" not in text


def test_release_reads_the_twins_clause_the_evidence_writes() -> None:
    """The release rewrites the K-twin clause by the pattern that lives beside its writer (one wording)."""
    from zcp_core.probe.flags import TWINS_CORRECT, twins_correct_text
    from zcp_core.probe.release import cite_twin
    from zcp_core.schema import Item

    text = "zero-CoT original correct (pred 5, gold 5); " + twins_correct_text(1, 4, "a-ref, a-ref2, a-ref3, a-ref4")
    assert TWINS_CORRECT.search(text)
    twin = Item(id="a-ref3", question="q", answer="7", original_id="a")
    assert cite_twin(text, twin).endswith("1 of 4 twins correct (the released twin a-ref3 among them)")


def test_a_repeated_twin_counts_once_in_the_tests_and_the_twins_per_item() -> None:
    orig, twins = _null(30, 4, seed=13)
    recs = _records(orig, twins)
    rep = recs["id"] == "q0-ref2"
    recs.loc[rep, "question"] = "twin 1 of q0"  # q0's second twin repeats its first
    assert len(twin_scores(recs, "p_all").twins[0]) == 3
    fl = item_flags(recs, rule=FlagRule("p_all", 0.1)).set_index("pair_id")
    assert fl.loc["q0", "n_twins"] == 3 and fl.loc["q1", "n_twins"] == 4
    assert flags_summary(fl.reset_index(), FlagRule("p_all", 0.1))["twins_per_item"] == {"3": 1, "4": 29}
