"""The artifact page: a text with its spans, and a review saved as it is made (golden tables and AppTest stories)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
import pytest

from zcp_core.artifacts.browse import (
    ReviewEvent,
    active_events,
    review_state,
    span_segments,
    split_families,
    text_table,
    text_view,
)

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = sorted((ROOT / "data" / "detectrl_sample").glob("*.json"))
PAGE = str(ROOT / "app_pages" / "artifacts.py")


def _cli(argv: list[str]) -> int:
    from zcp_core.cli import artifacts as scan_cli

    p = argparse.ArgumentParser(prog="zcp")
    scan_cli.register(p.add_subparsers(dest="command"))
    args = p.parse_args(argv)
    return args.func(args)


@pytest.fixture
def clean_runs(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    assert _cli(["clean", *map(str, SAMPLE), "--out", str(runs / "clean-sample"), "--allow-unlicensed"]) == 0
    return runs


@pytest.fixture(scope="module")
def scan_runs(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("scan_runs")
    assert _cli(["scan", *map(str, SAMPLE), "--out", str(runs / "scan-sample")]) == 0
    return runs


def _page(runs: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ZCP_RUNS", str(runs))
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at


def _open(at, row: int):  # type: ignore[no-untyped-def]
    at.session_state["artifact_browser"] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, at.exception
    return at


# ------------------------------------------------------------------------------------------ golden tables

EDITS = pd.DataFrame({"edit_id": ["a", "b", "c"], "accepted": [True, True, False]})


@pytest.mark.parametrize(("events", "expected"), [
    ([], {"a": "accept", "b": "accept", "c": "reject"}),
    ([ReviewEvent("decide", ("a",), "reject")], {"a": "reject", "b": "accept", "c": "reject"}),
    ([ReviewEvent("decide", ("a", "b"), "reject"), ReviewEvent("decide", ("b",), "accept")],
     {"a": "reject", "b": "accept", "c": "reject"}),
    ([ReviewEvent("decide", ("a", "b"), "reject"), ReviewEvent("decide", ("b",), "accept"), ReviewEvent("undo")],
     {"a": "reject", "b": "reject", "c": "reject"}),
    ([ReviewEvent("decide", ("a",), "reject"), ReviewEvent("undo"), ReviewEvent("undo")],
     {"a": "accept", "b": "accept", "c": "reject"}),
    ([ReviewEvent("decide", ("c", "zz"), "accept")], {"a": "accept", "b": "accept", "c": "accept"}),
])
def test_review_state_golden(events, expected) -> None:
    assert review_state(EDITS, events) == expected


def test_active_events_undo_cancels_latest() -> None:
    e1, e2 = ReviewEvent("decide", ("a",), "reject"), ReviewEvent("decide", ("b",), "reject")
    assert active_events([e1, e2, ReviewEvent("undo")]) == [e1]
    assert active_events([ReviewEvent("undo"), e1]) == [e1]


@pytest.mark.parametrize(("spans", "expected"), [
    ([], [("Hello world", None)]),
    ([{"start": 0, "end": 5, "family": "beginning", "pattern_id": "beg-x"}],
     [("Hello", "beginning"), (" world", None)]),
    # a flagged and a domain span at the same start: the flagged one wins, the nested one is skipped
    ([{"start": 0, "end": 5, "family": "domain", "pattern_id": "dom"},
      {"start": 0, "end": 5, "family": "beginning", "pattern_id": "beg"},
      {"start": 1, "end": 3, "family": "ending", "pattern_id": "end"}],
     [("Hello", "beginning"), (" world", None)]),
    ([{"start": 6, "end": 11, "family": "ending", "pattern_id": "e"}], [("Hello ", None), ("world", "ending")]),
])
def test_span_segments_golden(spans, expected) -> None:
    segs = span_segments("Hello world", spans)
    assert [(s.text, s.family) for s in segs] == expected


def test_text_table_flagged_first_and_domain_apart() -> None:
    spans = pd.DataFrame({"id": ["t1", "t2", "t2", "t3"], "family": ["domain", "beginning", "domain", "ending"],
                          "pattern_id": ["dom-a", "beg-b", "dom-a", "end-c"]})
    texts = pd.DataFrame({"id": ["t1", "t2", "t3"], "text": ["one", "two", "three"]})
    t = text_table(spans, texts)
    assert t.to_dict("records") == [
        {"Text": "t2", "Flagged families": "beginning", "Low-precision families": "domain",
         "Patterns": "beg-b, dom-a", "Spans": 2, "Excerpt": "two"},
        {"Text": "t3", "Flagged families": "ending", "Low-precision families": "", "Patterns": "end-c", "Spans": 1,
         "Excerpt": "three"},
        {"Text": "t1", "Flagged families": "", "Low-precision families": "domain", "Patterns": "dom-a", "Spans": 1,
         "Excerpt": "one"},
    ]
    v = text_view("t2", "Title: two", pd.DataFrame({"start": [0, 0], "end": [6, 5], "family": ["domain", "beginning"],
                                                    "pattern_id": ["dom-a", "beg-b"]}))
    assert v.spans[["Family", "Pattern id", "Precision", "Characters", "Matched text"]].values.tolist() == [
        ["beginning", "beg-b", "flagged", "0–5", "Title"], ["domain", "dom-a", "low precision", "0–6", "Title:"]]


def test_split_families_keeps_domain_apart() -> None:
    table = pd.DataFrame({"llm_type": ["x"], "beginning": [2], "domain": [5], "texts": [9]})
    flagged, low = split_families(table)
    assert list(flagged.columns) == ["llm_type", "beginning", "texts"]
    assert list(low.columns) == ["llm_type", "domain", "texts"]


# ------------------------------------------------------------------------------------------ stories


def test_scan_page_shows_a_text_with_named_spans_and_domain_apart(scan_runs: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    at = _page(scan_runs, monkeypatch)
    table = at.dataframe(key="artifact_browser").value
    assert list(table.columns[:3]) == ["Text", "Flagged families", "Low-precision families"]
    assert (table["Flagged families"] != "").tolist() == sorted((table["Flagged families"] != "").tolist(),
                                                                 reverse=True)
    assert len(at.get("plotly_chart")) == 3  # flagged families, the domain family apart, flag rates
    assert any("Low-precision family" in m.value for m in at.markdown)
    low_only = next(i for i, f in enumerate(table["Flagged families"]) if f == "")
    _open(at, low_only)
    spans = at.dataframe[-1].value
    assert set(spans["Precision"]) == {"low precision"} and set(spans["Family"]) == {"domain"}
    assert all(pid for pid in spans["Pattern id"])


def test_rejected_edit_survives_switching_items_and_reload(clean_runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = clean_runs / "clean-sample"
    at = _page(clean_runs, monkeypatch)
    at.text_input(key="review_reason").input("part of the original title").run()
    first = at.dataframe(key="artifact_browser").value.iloc[0]["Text"]
    key = next(r.key for r in at.radio if r.key.startswith("dec-"))
    at.radio(key=key).set_value("reject").run()
    assert not at.exception
    # saved at once, with its reason, before any Save button
    saved = json.loads((run / "decisions.json").read_text())
    assert saved[key[4:]] == "reject"
    log = [json.loads(x) for x in (run / "review.jsonl").read_text().splitlines()]
    assert log[-1]["edit_ids"] == [key[4:]] and log[-1]["reason"] == "part of the original title"
    # switch to another text and back: still rejected
    _open(at, 1)
    assert at.dataframe(key="artifact_browser").value.iloc[1]["Text"] != first
    assert all(r.key != key for r in at.radio)
    _open(at, 0)
    assert at.radio(key=key).value == "reject"
    # a fresh session (a page reload) reads the same decision
    again = _page(clean_runs, monkeypatch)
    assert again.radio(key=key).value == "reject"
    # the release export respects it
    again.button(key="export").click().run()
    assert not again.exception
    from zcp_core.runs import load_run

    edits = load_run(run).records.set_index("edit_id")
    assert not edits.loc[key[4:], "accepted"]


def test_bulk_reject_by_pattern_id_and_undo(clean_runs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zcp_core.runs import load_run

    run = clean_runs / "clean-sample"
    edits = load_run(run).records
    at = _page(clean_runs, monkeypatch)
    pid = "beg-sentence-count"
    n = int((edits["pattern_id"] == pid).sum())
    assert n > 1
    at.selectbox(key="bulk_pattern").set_value(pid).run()
    at.button(key="bulk_reject").click().run()
    assert not at.exception
    saved = json.loads((run / "decisions.json").read_text())
    ids = edits.loc[edits["pattern_id"] == pid, "edit_id"]
    assert all(saved[e] == "reject" for e in ids)
    assert sum(v == "reject" for v in saved.values()) == n + int((~edits["accepted"]).sum())
    log = [json.loads(x) for x in (run / "review.jsonl").read_text().splitlines()]
    assert log[-1]["pattern_id"] == pid and len(log[-1]["edit_ids"]) == n and log[-1]["reason"]
    # an open text of that pattern shows it rejected
    table = at.dataframe(key="artifact_browser").value
    row = next(i for i, p in enumerate(table["Patterns"]) if pid in p)
    _open(at, row)
    assert any(r.value == "reject" for r in at.radio if pid in r.label)
    at.button(key="undo_review").click().run()
    saved = json.loads((run / "decisions.json").read_text())
    assert all(saved[e] == "accept" for e in ids)
    assert json.loads((run / "review.jsonl").read_text().splitlines()[-1])["action"] == "undo"


def test_bad_review_line_names_file_and_line(tmp_path: Path) -> None:
    from zcp_core.artifacts import load_review
    from zcp_core.errors import DataError

    (tmp_path / "review.jsonl").write_text('{"action": "decide", "edit_ids": ["a"], "decision": "reject"}\n{oops\n')
    with pytest.raises(DataError) as e:
        load_review(tmp_path)
    assert "review.jsonl" in str(e.value) and "2" in str(e.value)
