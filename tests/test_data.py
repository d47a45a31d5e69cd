"""Loaders: formats, stable ids, and errors that name file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zcp_core.data import FieldMap, detect_format, load_dataset, load_items, write_items_jsonl
from zcp_core.errors import DataError

DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.mark.parametrize(
    ("path", "fmt", "n", "first_id", "first_answer"),
    [
        ("gsm8k/test.jsonl", "gsm8k", 1319, "gsm8k-2b2e3f9639f6", "18"),
        ("gsm8k/train_sample.jsonl", "gsm8k", 300, "gsm8k-73429d562982", "72"),
        ("math500/test.jsonl", "math", 500, "test/precalculus/807.json", "\\left( 3, \\frac{\\pi}{2} \\right)"),
        ("gsm1k/gsm1k_public_50.csv", "gsm1k", 50, "gsm1k-1", "7"),
    ],
)
def test_bundled_benchmarks(path: str, fmt: str, n: int, first_id: str, first_answer: str) -> None:
    ds = load_dataset(DATA / path)
    assert ds.format == fmt
    assert len(ds) == n
    assert ds.items[0].id == first_id
    assert ds.items[0].answer == first_answer
    assert not ds.bad_rows


def test_gsm8k_keeps_calculator_annotations() -> None:
    item = load_items(DATA / "gsm8k" / "test.jsonl")[0]
    assert item.metadata["calculations"] == [{"expr": "16-3-4", "result": "9"}, {"expr": "9*2", "result": "18"}]
    assert "<<16-3-4=9>>" in (item.solution or "")


def test_gsm8k_answer_commas_removed(tmp_path: Path) -> None:
    p = tmp_path / "test.jsonl"
    p.write_text(json.dumps({"question": "q?", "answer": "x\n#### 1,234"}) + "\n")
    assert load_items(p)[0].answer == "1234"


@pytest.mark.parametrize(
    ("lines", "line", "field", "message"),
    [
        (['{"question": "a", "answer": "s\\n#### 3"}', '{"question": "b", "answer": '], 2, None, "malformed JSON"),
        (['{"question": "a", "answer": "s\\n#### 3"}', '{"answer": "s\\n#### 4"}'], 2, "question", "missing field"),
        (['{"question": "a", "answer": "s\\n#### 3"}', '{"question": "b", "answer": "no final line"}'], 2, "answer",
         "no '#### <answer>'"),
        (['{"question": "a", "answer": "s\\n#### 3"}', '{"question": " ", "answer": "s\\n#### 4"}'], 2, "question",
         "empty value"),
    ],
)
def test_bad_rows_are_located(tmp_path: Path, lines: list[str], line: int, field: str | None, message: str) -> None:
    p = tmp_path / "test.jsonl"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError) as err:
        load_dataset(p, fmt="gsm8k")
    assert err.value.line == line and err.value.field == field and message in err.value.message
    assert str(p) in str(err.value)
    skipped = load_dataset(p, fmt="gsm8k", on_error="skip")
    assert len(skipped.items) == 1 and len(skipped.bad_rows) == 1 and skipped.bad_rows[0].line == line


def test_wrong_encoding_names_line(tmp_path: Path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_bytes(b'{"question": "a", "answer": "#### 1"}\n{"question": "\xff", "answer": "#### 2"}\n')
    with pytest.raises(DataError, match="line 2.*UTF-8"):
        load_dataset(p)


def test_duplicate_ids_rejected(tmp_path: Path) -> None:
    p = tmp_path / "items.jsonl"
    p.write_text('{"uid": "a", "question": "q", "answer": "1"}\n{"uid": "a", "question": "r", "answer": "2"}\n')
    with pytest.raises(DataError, match="duplicate id 'a'"):
        load_dataset(p, fields=FieldMap(id="uid"))


def test_generic_csv_and_parquet_with_field_map(tmp_path: Path) -> None:
    import pandas as pd

    df = pd.DataFrame({"key": ["k1", "k2"], "prompt": ["1+1?", "2+2?"], "target": ["2", "4"]})
    df.to_csv(tmp_path / "p.csv", index=False)
    df.to_parquet(tmp_path / "p.parquet")
    fm = FieldMap(id="key", question="prompt", answer="target")
    for name in ("p.csv", "p.parquet"):
        items = load_items(tmp_path / name, fields=fm)
        assert [(i.id, i.question, i.answer) for i in items] == [("k1", "1+1?", "2"), ("k2", "2+2?", "4")]


def test_generic_jsonl_ids_default_to_line(tmp_path: Path) -> None:
    p = tmp_path / "probs.jsonl"
    p.write_text('{"question": "a", "answer": "1"}\n\n{"question": "b", "answer": "2"}\n')
    assert [i.id for i in load_items(p)] == ["probs-1", "probs-3"]


def test_generic_jsonl_keeps_its_own_ids(tmp_path: Path) -> None:
    """A file's own `id` field is its ids, whatever the file is called (a twin file: original id + "-ref")."""
    for name in ("twins.jsonl", "renamed.jsonl"):
        p = tmp_path / name
        p.write_text('{"id": "gsm8k-test-5-ref", "original_id": "gsm8k-test-5", "question": "a", "answer": "1", '
                     '"method": "numeric-perturbation-v3"}\n')
        (it,) = load_items(p)
        assert (it.id, it.original_id, dict(it.metadata)) == (
            "gsm8k-test-5-ref", "gsm8k-test-5", {"method": "numeric-perturbation-v3"})


def test_hf_saved_dataset(tmp_path: Path) -> None:
    import datasets

    datasets.Dataset.from_dict({"question": ["a"], "answer": ["1"]}).save_to_disk(str(tmp_path / "hf"))
    assert detect_format(tmp_path / "hf") == "hf"
    assert load_items(tmp_path / "hf")[0].answer == "1"


def test_detectrl_array_and_ids(tmp_path: Path) -> None:
    p = tmp_path / "multi_llms_X_test.json"
    p.write_text(json.dumps([
        {"text": "Hello there.", "label": "human", "data_type": "abstract", "llm_type": "X"},
        {"text": "Here is an abstract:", "label": "llm", "data_type": "abstract", "llm_type": "X"},
    ]))
    ds = load_dataset(p)
    assert ds.format == "detectrl" and ds.kind == "texts"
    assert [t.id for t in ds.texts] == ["multi_llms_X_test-0", "multi_llms_X_test-1"]
    assert [t.label for t in ds.texts] == ["human", "llm"]


def test_items_round_trip_keeps_original_id(tmp_path: Path) -> None:
    items = load_items(DATA / "gsm1k" / "gsm1k_public_50.csv")[:3]
    from dataclasses import replace

    twins = [replace(i, id=i.id + "-ref", original_id=i.id) for i in items]
    p = write_items_jsonl(tmp_path / "ref.jsonl", twins)
    back = load_items(p)
    assert detect_format(p) == "items"
    assert [(b.id, b.original_id) for b in back] == [(t.id, t.original_id) for t in twins]


def test_empty_file_is_an_error_naming_it(tmp_path: Path) -> None:
    for name, body in (("e.jsonl", ""), ("e.csv", "question,answer\n"), ("blank.jsonl", "\n\n")):
        p = tmp_path / name
        p.write_text(body)
        with pytest.raises(DataError, match="no records: the file is empty") as e:
            load_dataset(p)
        assert str(p) in str(e.value)


def test_missing_csv_field_lists_columns_and_the_option(tmp_path: Path) -> None:
    p = tmp_path / "q.csv"
    p.write_text("prompt,solution_value\nWhat is 2+2?,4\n")
    with pytest.raises(DataError) as e:
        load_dataset(p)
    msg = str(e.value)
    assert "line 2" in msg and "question" in msg
    assert "columns found: prompt, solution_value" in msg and "--question-field" in msg
    ds = load_dataset(p, fields=FieldMap(question="prompt", answer="solution_value"))
    assert ds.items[0].question == "What is 2+2?" and ds.items[0].answer == "4"


def test_bundled_data_resolves_from_any_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert len(load_dataset("gsm8k/test.jsonl").items) == 1319
    assert len(load_dataset("data/gsm8k/test.jsonl").items) == 1319
    extra = tmp_path / "mine"
    extra.mkdir()
    (extra / "x.jsonl").write_text('{"question": "q", "answer": "1"}\n')
    monkeypatch.setenv("ZCP_DATA_ROOTS", str(extra))
    assert load_dataset("x.jsonl").path == str(extra.resolve() / "x.jsonl")


def test_missing_file() -> None:
    with pytest.raises(DataError, match="file not found"):
        load_dataset("/nonexistent/file.jsonl")
