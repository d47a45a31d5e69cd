"""Which part of the benchmark a verdict speaks for: covered against uncovered items."""

from __future__ import annotations

import pytest

from zcp_core.reference.coverage import coverage_comparison, repeated_number
from zcp_core.schema import Item


@pytest.mark.parametrize(("question", "repeated"), [
    ("3 families and 3 other families", True),
    ("He buys 2 apples for $1,000 and sells them for $1000", True),  # the same number, written two ways
    ("A 12-pack costs 5 dollars", False),
    ("1.5 hours and 15 minutes", False),
])
def test_repeated_number_golden(question: str, repeated: bool) -> None:
    assert repeated_number(question) is repeated


def _item(i: int, answer: str, question: str, steps: int) -> Item:
    return Item(id=f"q{i}", question=question, answer=answer,
                solution=" ".join(f"<<{i}+1={i + 1}>>" for _ in range(steps)) + f"\n#### {answer}")


def test_coverage_golden_table() -> None:
    # 8 items: answers 1..8; the four largest are covered, the smallest not; the uncovered repeat a number
    items = [_item(i, str(i), f"Tom has {i} and {i} more" if i <= 4 else f"Tom has {i} pens", 1 + (i > 4))
             for i in range(1, 9)]
    cov = coverage_comparison(items, {f"q{i}" for i in range(5, 9)})
    assert (cov.n_items, cov.n_covered) == (8, 4)
    assert cov.quartile_coverage == (0.0, 0.0, 1.0, 1.0)
    rows = {r.feature: r for r in cov.rows}
    assert rows["solution steps"].covered == 2.0 and rows["solution steps"].uncovered == 1.0
    assert rows["question repeats a number"].covered == 0.0 and rows["question repeats a number"].uncovered == 1.0
    assert rows["question repeats a number"].p == pytest.approx(1 / 35, rel=1e-9)  # Fisher, [[0, 4], [4, 0]]
    assert cov.sentence.startswith("The verdict speaks for the 4 of 8 items (50.0%) that have a twin, not the rest")
    assert "coverage runs from 0% of the items with the smallest answers to 100% of those with the largest" \
        in cov.sentence and "question repeats a number: 0% covered against 100% not (p 0.029)" in cov.sentence


def test_full_coverage_says_the_whole_benchmark() -> None:
    items = [_item(i, str(i), f"x {i}", 1) for i in range(1, 5)]
    assert coverage_comparison(items, {it.id for it in items}).sentence.endswith(": the whole benchmark.")


def test_reference_build_reports_coverage(tmp_path, capsys) -> None:
    import json

    from zcp_core.cli.main import main

    data = str(__import__("pathlib").Path(__file__).resolve().parent.parent / "data" / "gsm8k" / "test.jsonl")
    assert main(["reference", "build", "--dataset", data, "--limit", "12", "--prior-model",
                 "none", "--out", str(tmp_path / "ref")]) == 0
    assert "The verdict speaks for the " in capsys.readouterr().out
    summary = json.loads((tmp_path / "ref" / "manifest.json").read_text())["summary"]
    assert summary["coverage"]["n_items"] == 12 and summary["coverage"]["sentence"].startswith("The verdict")
