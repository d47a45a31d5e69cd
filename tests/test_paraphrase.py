"""Evasive paraphrases: the change measure, the deterministic rewording, the LLM path and the CLI."""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import pytest

from zcp_core.backends import Completion
from zcp_core.reference import (
    MIN_CHANGE,
    nonnumeric_change_fraction,
    numbers_kept,
    paraphrase_llm,
    reword_deterministic,
    reword_one,
)
from zcp_core.schema import Item

DATA = Path(__file__).resolve().parent.parent / "data"


@pytest.mark.parametrize("orig, para, frac", [
    ("Tom has 5 red apples.", "Tom has 5 red apples.", 0.0),
    ("Tom has 5 red apples.", "Sue owns 5 green pears.", 1.0),
    ("Tom has 5 red apples.", "Tom has 7 red apples.", 0.0),  # numbers are not words
    ("Tom has three red apples.", "Tom has 3 red apples.", 0.0),  # number words are numbers
    ("Tom has 5 red apples.", "TOM HAS 5 RED APPLES!", 0.0),  # case and punctuation do not count
    ("Tom has red apples.", "Tom owns red apples.", 0.25),
    ("He ran. She sat down.", "She sat down. He ran.", 0.4),  # a moved sentence counts as changed
    ("", "anything", 0.0),
])
def test_change_fraction_golden(orig: str, para: str, frac: float) -> None:
    assert nonnumeric_change_fraction(orig, para) == pytest.approx(frac)


@pytest.mark.parametrize("orig, para, kept", [
    ("5 apples and 5 pears at $2.50", "$2.50 for 5 pears and 5 apples", True),
    ("5 apples and 5 pears", "5 apples and pears", False),  # multiplicity matters
    ("three cats", "3 cats", True),
    ("20% of 1,000", "20 percent of 1000", True),
    ("12 eggs", "a dozen eggs", False),
])
def test_numbers_kept_golden(orig: str, para: str, kept: bool) -> None:
    assert numbers_kept(orig, para) is kept


def test_janet_rewording(gsm8k_items: list[Item]) -> None:
    janet = gsm8k_items[0]
    para, frac = reword_one(janet, 0, seed=0)
    assert para.id == f"{janet.id}-para0" and para.original_id == janet.id
    assert para.answer == janet.answer and para.source == "gsm8k-para"
    assert numbers_kept(janet.question, para.question)
    assert frac == pytest.approx(nonnumeric_change_fraction(janet.question, para.question))
    assert frac >= MIN_CHANGE
    # the question now comes first, and the person is renamed consistently in the solution
    assert para.question.split()[0] in {"What", "Tell", "How"}
    new = para.metadata["names"]["Janet"]
    assert new in para.question and "Janet" not in para.question and new in (para.solution or "")
    assert reword_one(janet, 0, seed=0) == (para, frac)  # deterministic
    assert reword_one(janet, 1, seed=0)[0].question != para.question  # versions differ


def test_short_item_fails_with_reason() -> None:
    item = Item(id="x", question="Tom has 5 cats and 7 dogs.", answer="12")
    ps = reword_deterministic([item])
    assert not ps.items and ps.failures[0].id == "x-para0"
    assert ps.failures[0].reason.startswith("low_change:")


def test_full_test_set_change(gsm8k_items: list[Item]) -> None:
    ps = reword_deterministic(gsm8k_items, versions=1, seed=0)
    assert len(ps.items) + len(ps.failures) == len(gsm8k_items)
    assert min(ps.change_fraction) >= MIN_CHANGE  # guaranteed per item: lower ones are failures
    # measured at seed 0: 866/1319 made (0.657), mean change 0.627 over them; see benchmarks/results/reference_coverage.md
    assert len(ps.items) / len(gsm8k_items) >= 0.6
    assert statistics.mean(ps.change_fraction) >= 0.55
    by_id = {it.id: it for it in gsm8k_items}
    for p in ps.items:
        o = by_id[p.original_id]
        assert numbers_kept(o.question, p.question) and p.answer == o.answer


class Scripted:
    """A stand-in backend answering from a list of replies in order."""

    name = "scripted"
    revision = "0"
    model_id = "scripted"
    supports_logprobs = False

    def __init__(self, replies: list[str]) -> None:
        self.replies = list(replies)
        self.calls = 0

    def generate(self, requests, progress=False):  # type: ignore[no-untyped-def]
        self.calls += 1
        return [Completion(text=self.replies.pop(0), n_tokens=5, finish_reason="stop") for _ in requests]


ITEM = Item(id="q1", question="Tom has 5 apples and buys 7 more. How many apples does he have?", answer="12")


def test_llm_paraphrase_accepts_and_retries() -> None:
    b = Scripted([
        "Rewritten problem: Sue owns 5 pears and purchases 7 more. What number of pears does she own?",  # ok
        "Sue owns pears and gets 7 more. Count them.",  # lost the 5: retried
        "Sue owns 5 pears, gets 7 more, so 12 in all. How many?",  # leaks the answer: retried
        "With 5 pears, Sue picks up 7 more; what total does she end with?",  # ok on the third try
    ])
    ps = paraphrase_llm(b, [ITEM], versions=2, seed=0)
    assert b.calls == 3  # one batched call per round
    assert [p.id for p in ps.items] == ["q1-para0", "q1-para1"] and not ps.failures
    assert ps.items[0].question.startswith("Sue owns 5 pears")
    assert ps.items[1].metadata["attempts"] == 3
    assert all(p.answer == "12" for p in ps.items)


def test_llm_paraphrase_failure_recorded() -> None:
    b = Scripted(["Sue has pears."] * 3)
    ps = paraphrase_llm(b, [ITEM], versions=1, attempts=3)
    assert not ps.items and ps.failures[0].id == "q1-para0"
    assert ps.failures[0].reason == "llm: a number of the original is missing (after 3 attempt(s))"


@pytest.mark.model
def test_llm_paraphrase_smollm2(smollm2) -> None:  # type: ignore[no-untyped-def]
    ps = paraphrase_llm(smollm2, [ITEM], versions=1, attempts=1, max_new_tokens=8)
    assert len(ps.items) + len(ps.failures) == 1
    for p in ps.items:
        assert numbers_kept(ITEM.question, p.question) and p.answer == "12"
    for f in ps.failures:
        assert f.reason.startswith("llm: ")


def test_cli_paraphrase(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from zcp_core.cli import reference as cli
    from zcp_core.data import load_items
    from zcp_core.runs import load_run

    p = argparse.ArgumentParser()
    cli.register(p.add_subparsers(dest="command"))
    out = tmp_path / "para"
    args = p.parse_args(["reference", "paraphrase", "--dataset", str(DATA / "gsm8k" / "test.jsonl"), "--method",
                         "deterministic", "--versions", "2", "--limit", "10", "--out", str(out), "--json"])
    assert args.func(args) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["made"] + s["failed"] == 20 and s["change_fraction_min"] >= MIN_CHANGE
    items = load_items(out / "paraphrase.jsonl")
    assert len(items) == s["made"] and all(it.original_id for it in items)
    rec = load_run(out).records
    assert len(rec) == 20 and set(rec.status) <= {"ok", "failed"}
    assert list(rec[rec.original_id == "gsm8k-2b2e3f9639f6"].version) == [0, 1]
