"""Releases follow the verdict: the bundled contaminated example against --min-confidence (no model needed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from zcp_core.probe import release
from zcp_core.probe.verdict import run_verdict

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
    assert out["fdr_q"] == 0.1 and out["expected_false_flags"] == pytest.approx(0.1 * out["flagged"])
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
    assert v.not_replaced == "" and v.flagged == 12 and v.expected_false_flags == pytest.approx(1.2)
    weak = {**some, "metrics": {"p_all": {"n": 60, "confidence": 0.9}}}
    assert "below --min-confidence 0.95" in run_verdict(weak, pd.DataFrame({"flagged": [True] * 12})).not_replaced
    one_twin = {**none, "flags": {**none["flags"], "items": 0, "note": "no item has a p: it needs at least 2 twins"}}
    assert run_verdict(one_twin, pd.DataFrame({"flagged": [False] * 60})).not_replaced == (
        "not replaced: no item has a p: it needs at least 2 twins")


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
            # the twin's own id (its original's id + "-ref"), never one made from a file name and line
            assert row["id"] == row["original_id"] + "-ref" == replaced[row["original_id"]]["replacement_id"]
            assert row["twin_verification"] == "reexecuted" and row["twin_method"].startswith("numeric-perturbation")
    ds = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "hf-cache"))  # its cache key ignores content
    assert ds["test"].num_rows == len(originals)
    assert dict(ds["test"].features) == {c: datasets.Value("string") for c in RELEASE_COLUMNS}
