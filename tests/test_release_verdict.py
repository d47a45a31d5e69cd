"""Releases follow the verdict: the bundled contaminated example against --min-confidence (no model needed)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from zcp_core.probe import release
from zcp_core.probe.verdict import BH_GUARANTEE, run_verdict, verdict_lines

EXAMPLE = Path(__file__).resolve().parent.parent / "data" / "examples" / "probe-lab-direct"


def _flag_c() -> tuple[str, float, bool]:
    """The example's flag metric and its C (the extra gate a release applies)."""
    summary = json.loads((EXAMPLE / "manifest.json").read_text())["summary"]
    metric = (summary.get("flags") or {}).get("metric") or "acc"
    v = summary["metrics"][metric]
    return metric, min(float(v["confidence"]), 0.999), bool(v.get("bound"))


def test_min_confidence_halfway_to_one_replaces_nothing_and_says_why(tmp_path: Path) -> None:
    from zcp_core.report import fmt_c, metric_name

    metric, c, bound = _flag_c()
    x = (c + 1) / 2
    rel = release(EXAMPLE, tmp_path / "rel", min_confidence=x)
    assert rel.replaced == () and rel.verdict is not None
    sentence = (f"not replaced: Contamination Confidence {fmt_c(c, bound)} on {metric_name(metric)} is below "
                f"--min-confidence {x:g}")
    assert rel.verdict.not_replaced == sentence
    card = (tmp_path / "rel" / "README.md").read_text()
    assert sentence in card and "# Audited benchmark: nothing replaced" in card
    originals = [json.loads(x)["id"] for x in (EXAMPLE / "items_original.jsonl").read_text().splitlines()]
    bench = [json.loads(x)["id"] for x in (tmp_path / "rel" / "benchmark.jsonl").read_text().splitlines()]
    assert bench == originals  # written unchanged
    out = json.loads((tmp_path / "rel" / "release.json").read_text())
    flags = json.loads((EXAMPLE / "manifest.json").read_text())["summary"]["flags"]
    assert out["flag_metric"] == metric and out["flagged"] == rel.verdict.flagged == flags["flagged"] > 0
    assert out["score_before"] == out["score_after"]  # nothing replaced, nothing moved
    assert rel.verdict.controlled  # K twins per item: the flags are Benjamini-Hochberg discoveries
    # BH bounds the false share on average over audits, not on this list: no count of false flags is given
    assert out["fdr_q"] == 0.1 and "expected_false_flags" not in out
    assert out["fdr_guarantee"] == BH_GUARANTEE and BH_GUARANTEE in card
    assert "a given list can hold more" in BH_GUARANTEE and "false flags (at most q x flagged)" not in card
    assert "Benjamini-Hochberg discoveries at q = 0.1" in card


def test_min_confidence_one_half_replaces_the_flagged_items(tmp_path: Path) -> None:
    import pandas as pd

    rel = release(EXAMPLE, tmp_path / "rel", min_confidence=0.5)
    items = pd.read_parquet(EXAMPLE / "items.parquet")
    flagged = set(items.loc[items["flagged"], "pair_id"])
    # exactly the discoveries (each has a verified twin here), nothing else
    assert {r.original_id for r in rel.replaced} == flagged and len(flagged) > 0
    assert rel.verdict is not None and rel.verdict.not_replaced == ""
    assert all(r.verification == "reexecuted" for r in rel.replaced)
    card = (tmp_path / "rel" / "README.md").read_text()
    assert f"{len(rel.replaced)} flagged items replaced by verified twins" in card
    assert "license: mit" in card  # found beside the run folder: the manifest's dataset paths are gone


def test_default_min_confidence_and_too_few_pairs() -> None:
    import pandas as pd

    flags = pd.DataFrame({"flip": ["orig_only"] * 6 + ["neither"] * 2})
    few = {"metrics": {"acc": {"n": 8, "confidence": 0.98, "p": 0.01, "bf10": 9.0}},
           "headline": {"metric": "acc", "confidence": 0.98, "value": 0.98}}
    v = run_verdict(few, flags)
    assert v.not_replaced == "not replaced: too few pairs for a verdict (n < 10)" and v.min_confidence == 0.95
    enough = {"metrics": {"acc": {"n": 12, "confidence": 0.96}}, "headline": {"metric": "acc", "confidence": 0.96}}
    assert run_verdict(enough, flags).not_replaced == ""
    assert run_verdict(enough, flags, 0.97).not_replaced == (
        "not replaced: Contamination Confidence 0.960 on accuracy (Acc) is below --min-confidence 0.97")
    with pytest.raises(ValueError, match="min-confidence"):
        run_verdict(enough, flags, 1.5)


def test_flags_are_the_gate_no_discovery_no_replacement() -> None:
    import pandas as pd

    metrics = {"p_all": {"n": 60, "confidence": 0.999, "bound": True}}
    none = {"metrics": metrics, "flags": {"metric": "p_all", "q": 0.1, "flagged": 0, "items": 60, "controlled": True}}
    v = run_verdict(none, pd.DataFrame({"flagged": [False] * 60, "flip": ["neither"] * 60}))
    assert v.not_replaced == ("not replaced: no item is a discovery at false-discovery level q = 0.1 on "
                              "P(all answer tokens) (60 items tested)")
    some = {**none, "flags": {**none["flags"], "flagged": 12}}
    v = run_verdict(some, pd.DataFrame({"flagged": [True] * 12 + [False] * 48, "flip": ["neither"] * 60}))
    assert v.not_replaced == "" and v.flagged == 12 and v.mode == "flagged"
    text = "\n".join(verdict_lines(v))
    assert "12 of 60 items are Benjamini-Hochberg discoveries" in text and BH_GUARANTEE in text
    assert "about 1.2" not in text  # no count of false flags: BH's bound is an average over audits
    weak = {**some, "metrics": {"p_all": {"n": 60, "confidence": 0.9}}}
    assert "below --min-confidence 0.95" in run_verdict(weak, pd.DataFrame({"flagged": [True] * 12})).not_replaced
    one_twin = {**none, "flags": {**none["flags"], "items": 0, "note": "no item has a p: it needs at least 2 twins"}}
    assert run_verdict(one_twin, pd.DataFrame({"flagged": [False] * 60})).not_replaced == (
        "not replaced: no item has a p: it needs at least 2 twins")
    # --replace covered refreshes whatever the flags say: only C gates it
    assert run_verdict(none, pd.DataFrame({"flagged": [False] * 60}), mode="covered").not_replaced == ""
    assert "below --min-confidence 0.95" in run_verdict(weak, pd.DataFrame({"flagged": [False] * 60}),
                                                        mode="covered").not_replaced
    with pytest.raises(ValueError, match="--replace"):
        run_verdict(none, pd.DataFrame({"flagged": [False] * 60}), mode="all")  # type: ignore[arg-type]


def test_the_contaminated_example_releases_as_shipped(tmp_path: Path) -> None:
    """The README's command on the copy `make demo` makes: exactly the flagged items replaced, a card with no local path,
    upstream ids, the source cited, one string schema that `datasets` loads."""
    import shutil

    import datasets

    from zcp_core.cli.main import main
    from zcp_core.probe.release import RELEASE_COLUMNS

    run = tmp_path / "runs" / "examples" / "probe-lab-direct"
    shutil.copytree(EXAMPLE, run)  # what scripts/demo does
    out = tmp_path / "releases" / "gsm8k-lab-refreshed"
    assert main(["release", str(run), "--out", str(out)]) == 0
    summary = json.loads((out / "release.json").read_text())
    flagged = json.loads((EXAMPLE / "manifest.json").read_text())["summary"]["flags"]["flagged"]
    assert len(summary["replaced"]) == flagged > 0 and summary["kept"] == []
    card = (out / "README.md").read_text()
    rows = [json.loads(x) for x in (out / "benchmark.jsonl").read_text().splitlines()]
    ids = {r["id"] for r in rows} | {r["original_id"] for r in rows if r["original_id"]}
    for text in (card, (out / "release.json").read_text()):
        assert str(tmp_path) not in text and str(EXAMPLE.parent.parent.parent) not in text
        assert not re.search(r"(^|[\s`('\"])/(work|tmp|home|root|usr|var|Users)/", text)
        assert "runs/" not in text and "--out" not in text  # no run folder of the machine that made it
        cited = set(re.findall(r"\b(?:gsm8k-(?:test-\d+|[0-9a-f]{12})(?:-ref\d*)?|twins-\d+)\b", text))
        assert cited and cited <= ids, sorted(cited - ids)  # only ids that are in the data
    assert all(r["solution"] and r["source"] for r in rows)  # every row carries its worked solution and source
    twin_rows = [r for r in rows if r["status"] == "replaced"]
    assert all(r["solution"].rstrip().endswith("#### " + r["answer"]) for r in twin_rows)  # the twin's own solution
    assert "version `3101c7d50724`" in card  # the source cited by name, version and URL
    citation = card.split("## Citation")[1]
    assert "Grade School Math" in citation and "github.com/openai/grade-school-math" in citation
    assert ".jsonl" not in citation  # the dataset, not a file
    rows = [json.loads(x) for x in (out / "benchmark.jsonl").read_text().splitlines()]
    originals = [json.loads(x)["id"] for x in (EXAMPLE / "items_original.jsonl").read_text().splitlines()]
    replaced = {r["original_id"]: r for r in summary["replaced"]}
    assert [r["original_id"] or r["id"] for r in rows] == originals  # order and upstream ids kept
    for row in rows:
        assert tuple(row) == RELEASE_COLUMNS and all(isinstance(v, str) for v in row.values())
        assert row["canary"] == summary["canary"]
        if row["status"] == "replaced":
            # the twin's own id (its original's id + "-ref<k>"), never one made from a file name and line
            assert row["id"] == replaced[row["original_id"]]["replacement_id"]
            assert re.fullmatch(re.escape(row["original_id"]) + r"-ref\d*", row["id"])
            assert row["twin_verification"] == "reexecuted" and row["twin_method"].startswith("numeric-perturbation")
    ds = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "hf-cache"))  # its cache key ignores content
    assert ds["test"].num_rows == len(originals)
    assert dict(ds["test"].features) == {c: datasets.Value("string") for c in RELEASE_COLUMNS}


def _items() -> Any:
    import pandas as pd

    return pd.read_parquet(EXAMPLE / "items.parquet")


def _distinct(row: Any) -> list[int]:
    """Positions of an item's distinct twins (a repeated question is no draw: the p reads its first twin only)."""
    seen: dict[str, int] = {}
    for i, q in enumerate(row["twin_questions"]):
        seen.setdefault(str(q), i)
    return sorted(seen.values())


def test_flagged_items_take_their_spare_and_score_after_is_on_it(tmp_path: Path) -> None:
    """The release twin is the spare (the last twin, out of the item's p), and the score after is read on it."""
    import shutil

    import pandas as pd

    run = tmp_path / "run"
    shutil.copytree(EXAMPLE, run)
    items = _items()
    # a run with the conformal p stores each item's calibration size: there the spare took no part in the flags
    pd.DataFrame(items.assign(calibration_size=300.0)).to_parquet(run / "items.parquet", index=False)
    rel = release(run, tmp_path / "rel", min_confidence=0.5)
    flagged = items[items["flagged"]].set_index("pair_id")
    assert {r.original_id for r in rel.replaced} == set(flagged.index)
    last = {i: _distinct(flagged.loc[i])[-1] for i in flagged.index}  # every twin here has a score
    for r in rel.replaced:
        assert r.spare and r.flagged and r.replacement_id == flagged.loc[r.original_id, "twin_ids"][last[r.original_id]]
    # golden: the mean with each flagged original's score swapped for its spare's
    after = items["score_original"].astype(float).copy()
    for i in flagged.index:
        after[items["pair_id"] == i] = float(flagged.loc[i, "score_twins"][last[i]])
    sc = rel.scores
    assert sc is not None and sc.spare_held_out and sc.left_out == 0 and sc.n == sc.n_after == len(items)
    assert sc.before == pytest.approx(items["score_original"].mean()) and sc.after == pytest.approx(after.mean())
    card = (tmp_path / "rel" / "README.md").read_text()
    assert "each replaced item scored on its spare twin" in card and "overstates the drop" not in card
    out = json.loads((tmp_path / "rel" / "release.json").read_text())
    assert out["score_after"] == pytest.approx(after.mean()) and out["score_after_spare_held_out"] is True
    assert [r["spare"] for r in out["replaced"]] == [True] * len(flagged)
    rows = {json.loads(x)["original_id"]: json.loads(x) for x in (tmp_path / "rel" / "benchmark.jsonl").read_text()
            .splitlines()}
    assert all(rows[r.original_id]["id"] == r.replacement_id for r in rel.replaced)


def test_spare_twin_and_items_left_out_of_the_score_after() -> None:
    import math

    import pandas as pd

    from zcp_core.probe.release import release_scores, spare_twin
    from zcp_core.schema import Item

    tw = [Item(id=f"a-ref{k}", question="?", answer="1", original_id="a", metadata={"twin": k}) for k in (1, 2, 3)]
    row = {"twin_ids": ["a-ref1", "a-ref2", "a-ref3"], "score_twins": [0.1, 0.2, math.nan]}
    assert spare_twin(row, tw) is tw[1]  # the last twin with a score: the one item_pvalues held out
    assert spare_twin({**row, "score_twins": [0.1, math.nan, math.nan]}, tw) is None  # one scored twin: no spare
    assert spare_twin({}, tw) is tw[2] and spare_twin({}, tw[:1]) is None  # a run before the per-twin lists
    # a twin repeating an earlier one's question is no draw: the p left it out, and so does the spare
    again = {"twin_ids": ["a-ref1", "a-ref2", "a-ref3"], "twin_questions": ["x", "y", "x"], "score_twins": [0.1, 0.2, 0.3]}
    assert spare_twin(again, tw) is tw[1]
    assert spare_twin({**again, "twin_questions": ["x", "x", "x"]}, tw) is None
    flags = pd.DataFrame({"pair_id": ["a", "b", "c", "d"], "score_original": [0.9, 0.5, 0.7, math.nan],
                          "twin_ids": [["a-ref1", "a-ref2"], ["b-ref1", "b-ref2"], ["c-ref1"], ["d-ref1", "d-ref2"]],
                          "score_twins": [[0.1, 0.3], [0.2, 0.4], [0.6], [0.1, 0.2]]})
    twin = {i: Item(id=f"{i}-ref2", question="?", answer="1", original_id=i) for i in "abd"}
    swap = {"a": twin["a"], "c": Item(id="c-ref1", question="?", answer="1", original_id="c"), "d": twin["d"]}
    sc = release_scores(flags, swap, {"a", "d"}, "p_all")
    # before: the three scored originals; after: a on its spare (0.3), b kept (0.5), c (no spare) left out
    assert (sc.n, sc.n_after, sc.left_out) == (3, 2, 1)
    assert sc.before == pytest.approx((0.9 + 0.5 + 0.7) / 3) and sc.after == pytest.approx((0.3 + 0.5) / 2)


def test_replace_covered_refreshes_every_item_with_a_verified_twin(tmp_path: Path, capsys: Any) -> None:
    from zcp_core.cli.main import main

    items = _items()
    for mode in ("flagged", "covered"):
        assert main(["release", str(EXAMPLE), "--out", str(tmp_path / mode), "--min-confidence", "0.5",
                     "--replace", mode, "--json"]) == 0
        out = json.loads(capsys.readouterr().out, parse_constant=_refuse)
        assert out["replace"] == mode == json.loads((tmp_path / mode / "release.json").read_text())["replace"]
        card = (tmp_path / mode / "README.md").read_text()
        assert f"(--replace {mode})" in card
        ids = {r["original_id"] for r in out["replaced"]}
        if mode == "flagged":
            assert ids == set(items.loc[items["flagged"], "pair_id"])
        else:  # every twin of the example is re-executed: every probed item is refreshed, flagged or not
            assert ids == set(items["pair_id"]) and out["kept"] == []
            assert {r["original_id"] for r in out["replaced"] if r["flagged"]} == set(items.loc[items["flagged"],
                                                                                               "pair_id"])
            # items with one twin have no spare: replaced by it, left out of the score after, and counted
            one = sum(len(_distinct(r)) < 2 for r in items.to_dict("records"))
            assert one > 0 and out["score_after_left_out"] == one
            assert out["score_after_items"] == len(items) - one
            assert f"{one} replaced items are left out of the score after" in card
            assert "# Refreshed benchmark: 80 items (every item with one) replaced by verified twins" in card
            assert out["leftover"]["kept"] == 0 and out["leftover"]["left"] == 0.0


def _refuse(name: str) -> Any:
    raise ValueError(f"not strict JSON: {name}")


def test_confidence_json_is_strict_and_carries_the_flag_block(capsys: Any) -> None:
    from zcp_core.cli.main import main

    assert main(["confidence", str(EXAMPLE), "--json"]) == 0
    text = capsys.readouterr().out
    out = json.loads(text, parse_constant=_refuse)
    stored = json.loads((EXAMPLE / "manifest.json").read_text())["summary"]["flags"]
    # the flag block the run stored, with its twins per item counted distinct from its items table (the same
    # histogram: the bundled run's twins are distinct)
    assert out["flags"] == stored
    assert out["flags"]["twins_per_item"] == {"1": 1, "2": 4, "3": 2, "4": 6, "5": 67}
    assert out["flags"]["metric"] == "p_all" and out["flags"]["items"] == 79
    assert out["flags"]["flagged"] == 3 and out["flags"]["q"] == 0.1
    json.dumps(out, allow_nan=False)


def test_confidence_json_writes_null_for_a_non_finite_number(tmp_path: Path, capsys: Any) -> None:
    import shutil

    from zcp_core.cli.main import main

    run = tmp_path / "run"
    shutil.copytree(EXAMPLE, run)
    m = json.loads((run / "manifest.json").read_text())
    m["summary"]["flags"] = {**m["summary"]["flags"], "twins_per_item": {"1": 2, "4": 76}, "p_floor": float("nan"),
                             "bh_first": 0.1 / 78}
    (run / "manifest.json").write_text(json.dumps(m))  # Python writes the NaN as the bare token NaN
    assert main(["confidence", str(run), "--json"]) == 0
    out = json.loads(capsys.readouterr().out, parse_constant=_refuse)
    assert out["flags"]["p_floor"] is None and out["flags"]["twins_per_item"] == {"1": 1, "2": 4, "3": 2, "4": 6, "5": 67}
    assert out["flags"]["bh_first"] == pytest.approx(0.1 / 78)
