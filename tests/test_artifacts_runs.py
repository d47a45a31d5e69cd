"""Scan/clean runs, CLI, export with decisions, the app page, Ray parity and DetectRL targets."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

from zcp_core.artifacts import load_library
from zcp_core.runs import load_run

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = sorted((ROOT / "data" / "detectrl_sample").glob("*.json"))


def cli(argv: list[str]) -> int:
    """Run ``zcp scan|clean`` through this module's parser (other commands need not exist)."""
    from zcp_core.cli import artifacts as scan_cli

    p = argparse.ArgumentParser(prog="zcp")
    scan_cli.register(p.add_subparsers(dest="command"))
    args = p.parse_args(argv)
    return args.func(args)


@pytest.fixture(scope="module")
def sample_texts():
    from zcp_core.data import load_texts

    return load_texts(SAMPLE)


@pytest.fixture(scope="module")
def scan_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs_scan") / "scan-sample"
    assert cli(["scan", *map(str, SAMPLE), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs_clean") / "clean-sample"
    assert cli(["clean", *map(str, SAMPLE), "--out", str(out), "--allow-unlicensed"]) == 0
    return out


def test_scan_cli_json(tmp_path, capsys):
    assert cli(["scan", *map(str, SAMPLE[:2]), "--out", str(tmp_path / "r"), "--json", "--mode", "first"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert {"texts", "flagged", "by_family", "by_llm_type", "by_label", "headline"} <= set(s)
    assert set(s["by_llm_type"]) == {"ChatGPT", "Claude-instant"}
    for block in s["by_llm_type"].values():
        assert {"texts", "flagged", "rate"} <= set(block)
    assert s["by_label"]["human"]["texts"] == 150 and s["flagged"] > 0
    assert load_run(tmp_path / "r").manifest["config"]["mode"] == "first"


def test_scan_run_contents(scan_run):
    run = load_run(scan_run)
    assert run.kind == "scan" and run.summary["headline"]["value"] == run.summary["flagged"]
    m = run.records
    assert list(m.columns) == ["id", "pattern_id", "family", "action", "start", "end", "match"]
    texts = run.table("texts")
    assert len(texts) == run.summary["texts"] and texts["id"].is_unique
    by_llm = run.table("by_llm_type")
    claude = by_llm.set_index("llm_type").loc["Claude-instant"]
    assert claude["rate"] >= 0.7  # the bundled sample shows the Claude-instant opener artifact
    assert run.summary["human_false_positives"]["rate"] <= 0.01
    assert (scan_run / "patterns.yaml").exists()


def test_text_field_jsonl_input(tmp_path, capsys):
    f = tmp_path / "corpus.jsonl"
    f.write_text('{"body": "Here is a 5 sentence story:Once.", "label": "llm"}\n{"body": "We went home.", "label": "human"}\n')
    assert cli(["scan", str(f), "--text-field", "body", "--out", str(tmp_path / "r"), "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["texts"] == 2 and s["flagged"] == 1 and s["by_label"]["human"]["flagged"] == 0


def test_clean_run_release(clean_run):
    run = load_run(clean_run)
    assert run.kind == "clean"
    for name in ("edits", "dropped", "flags", "originals"):
        assert run.has_table(name)
    cleaned = clean_run / "cleaned"
    # the data is stored once, as parquet, with the canary in every row
    assert sorted(p.name for p in cleaned.iterdir()) == ["CANARY.txt", "README.md", "data.parquet"]
    import pandas as pd

    data = pd.read_parquet(cleaned / "data.parquet")
    assert len(data) == run.summary["kept"]
    assert set(data["canary"]) == {(cleaned / "CANARY.txt").read_text().strip()}
    card = (clean_run / "README.md").read_text()
    assert load_library().sha256 in card and "Dropped texts and why" in card
    assert run.manifest["config"]["library_sha256"] == load_library().sha256
    assert run.summary["dropped"] == len(run.table("dropped")) > 0
    # no --scorer: the under-cleaning flag still runs (a TF-IDF detector fitted on the inputs) and the card says so
    assert run.summary["under_cleaning"]["assessed"] and run.summary["under_cleaning"]["marked"] > 0
    assert "- Scorer: P(LLM) from a TF-IDF detector fitted on the" in card and "Not assessed" not in card
    assert run.manifest["config"]["under_cleaning_rule"] == "top_share"


def test_clean_cli_under_threshold_is_recorded(tmp_path, capsys):
    assert cli(["clean", str(SAMPLE[0]), "--out", str(tmp_path / "r"), "--under-threshold", "0.7", "--allow-unlicensed",
                "--scorer", "none"]) == 0
    assert ("Under-cleaning flag: not assessed (switched off with --scorer none); rule: residual score above 0.7"
            in capsys.readouterr().out)
    cfg = load_run(tmp_path / "r").manifest["config"]
    assert (cfg["under_cleaning_rule"], cfg["residual_threshold"]) == ("threshold", 0.7)
    with pytest.raises(SystemExit):  # a top share and a threshold are two rules: one at a time
        cli(["clean", str(SAMPLE[0]), "--out", str(tmp_path / "s"), "--under-threshold", "0.7", "--under-top", "0.2"])


def test_export_respects_decisions(clean_run, tmp_path):
    import pandas as pd

    from zcp_core.artifacts import export_run, save_decisions

    run = load_run(clean_run)
    edits = run.records
    target = edits[(edits["family"] == "beginning") & edits["applied"]].iloc[0]
    save_decisions(clean_run, {target["edit_id"]: "reject"})
    out = export_run(clean_run, out=tmp_path / "exported")
    new = load_run(out)
    data = pd.read_parquet(out / "cleaned" / "data.parquet").set_index("id")
    original = run.table("originals").set_index("id").loc[target["id"], "text"]
    assert data.loc[target["id"], "text"] == original  # the only edit of that text was rejected
    assert new.summary["rejected"] == 1
    assert not new.records.set_index("edit_id").loc[target["edit_id"], "applied"]


def _apptest(monkeypatch, runs_dir: Path):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ZCP_RUNS", str(runs_dir))
    at = AppTest.from_file(str(ROOT / "app_pages" / "artifacts.py"), default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


def test_page_empty(monkeypatch, tmp_path):
    _apptest(monkeypatch, tmp_path)


def test_page_scan_run(monkeypatch, scan_run):
    at = _apptest(monkeypatch, scan_run.parent)
    assert any("Flagged" in m.label for m in at.metric)


def test_page_clean_run_decisions(monkeypatch, clean_run):
    at = _apptest(monkeypatch, clean_run.parent)
    assert at.radio, "accept/reject controls are shown"
    at.radio[0].set_value("reject").run()
    at.button(key="save_decisions").click().run()
    assert not at.exception
    saved = json.loads((clean_run / "decisions.json").read_text())
    assert "reject" in saved.values()


def test_ray_engine_byte_identical(tmp_path, monkeypatch, sample_texts):
    """Ray Data (local mode) and the local engine write byte-identical scan and clean tables."""
    ray = pytest.importorskip("ray")
    from zcp_core.artifacts import RunInputs, write_clean_run, write_scan_run

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    monkeypatch.setenv("HOME", str(tmp_path))
    lib = load_library()
    inputs = RunInputs(tuple(map(str, SAMPLE)), allow_unlicensed=True)
    import tempfile

    short = tempfile.mkdtemp(prefix="zr", dir="/tmp")  # Ray's socket paths must stay under 107 bytes
    try:
        ray.init(num_cpus=2, include_dashboard=False, _temp_dir=short, log_to_driver=False)
    except Exception as e:  # noqa: BLE001 - Ray's raylet has a fixed 30 s start-up deadline
        ray.shutdown()
        shutil.rmtree(short, ignore_errors=True)
        pytest.skip(f"Ray could not start on this machine (overloaded?): {e}")
    try:
        for eng in ("local", "ray"):
            write_scan_run(tmp_path / f"scan-{eng}", sample_texts, lib, inputs, engine=eng)
            write_clean_run(tmp_path / f"clean-{eng}", sample_texts, lib, inputs, engine=eng)
    finally:
        ray.shutdown()
        shutil.rmtree(short, ignore_errors=True)
    for kind, name in [("scan", "records"), ("scan", "texts"), ("clean", "records"), ("clean", "flags")]:
        a = (tmp_path / f"{kind}-local" / f"{name}.parquet").read_bytes()
        b = (tmp_path / f"{kind}-ray" / f"{name}.parquet").read_bytes()
        assert a == b, f"{kind}/{name} differs"
    assert (tmp_path / "clean-local/cleaned/data.parquet").read_bytes() == \
        (tmp_path / "clean-ray/cleaned/data.parquet").read_bytes()


def test_detectrl_targets_on_multi_llm(shared_data):
    """Report split (patterns were developed on Multi_Domain and Direct_Prompt)."""
    from zcp_core.artifacts import dedupe_texts, scan, summarize
    from zcp_core.data import load_texts

    texts, _ = dedupe_texts(load_texts(sorted((shared_data / "detectrl" / "Multi_LLM").glob("*.json"))))
    s = summarize(texts, scan(texts, load_library()))
    assert s["by_llm_type"]["Claude-instant"]["rate"] >= 0.70
    assert s["human_false_positives"]["rate"] <= 0.01
    assert s["human_false_positives"]["texts"] >= 3900


def test_clean_release_is_publishable_and_says_it_is_unlicensed(clean_run, tmp_path):
    import stat

    import datasets

    rel = clean_run / "cleaned"
    card = (rel / "README.md").read_text()
    assert card.startswith("---\nlicense: unknown\n") and "path: data.parquet" in card
    assert "**The source data has no licence**" in card and "--allow-unlicensed" in card
    assert "ZCP-CANARY " in card and "## Counts" in card and "dropped:" in card and "DetectRL" in card
    assert (rel / "CANARY.txt").read_text().strip() in card
    for f in rel.iterdir():
        if f.is_file():
            assert stat.S_IMODE(f.stat().st_mode) == 0o644, f
    ds = datasets.load_dataset(str(rel), cache_dir=str(tmp_path / "hf-cache"))
    assert list(ds) == ["test"] and ds["test"].num_rows == load_run(clean_run).summary["kept"]
    assert set(ds["test"]["canary"]) == {(rel / "CANARY.txt").read_text().strip()}  # the canary in every row
    # the card cites only what the release folder holds, and says its counts once
    assert card.count("## Counts") == 1 and "Input texts (distinct)" not in card
    for name in ("edits.parquet", "dropped.parquet", "data.jsonl"):
        assert name not in card
    # the two residual texts of issue 27 do not survive cleaning (the bundled sample holds both)
    texts = "\n".join(ds["test"]["text"])
    assert "Input is: Given News Abstract, write a news article, 9 sentences above" not in texts
    assert "would not be appropriate. Here is a 17 sentence speech instead" not in texts
    originals = "\n".join(load_run(clean_run).table("originals")["text"])
    assert "Input is: Given News Abstract" in originals and "Here is a 17 sentence speech instead" in originals


def test_clean_refuses_unlicensed_data_unless_allowed(tmp_path, capsys):
    from zcp_core.cli.main import main

    assert main(["clean", str(SAMPLE[0]), "--out", str(tmp_path / "x")]) == 1
    err = capsys.readouterr().err
    assert "no licence" in err and "DetectRL ships no licence" in err and "--allow-unlicensed" in err
    assert not (tmp_path / "x").exists()
    assert cli(["clean", str(SAMPLE[0]), "--out", str(tmp_path / "y"), "--license", "cc-by-4.0"]) == 0
    assert (tmp_path / "y" / "cleaned" / "README.md").read_text().startswith("---\nlicense: cc-by-4.0\n")
