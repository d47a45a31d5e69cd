"""Chain generation on the real embedded model: conditions, order, bare-question SFT records, dry run."""

from __future__ import annotations

from pathlib import Path

import pytest

from zcp_core.afr import (
    BOX_PREFILL,
    CONDITIONS,
    ChainConfig,
    Problem,
    dry_run,
    generate_chains,
    load_problems,
    prompt_for,
    requests_for,
    save_chains,
    sft_records,
)
from zcp_core.data import gsm8k_id

ROOT = Path(__file__).resolve().parent.parent


def _questions(n: int) -> list[str]:
    import json

    lines = (ROOT / "data" / "gsm8k" / "test.jsonl").read_text().splitlines()[:n]
    return [json.loads(line)["question"] for line in lines]
ARITH = ROOT / "data" / "arith" / "problems.jsonl"


def test_load_arith_problems() -> None:
    probs = load_problems(ARITH)
    assert len(probs) == 40 and probs[0].uid == "arith-001" and probs[0].domain == "arith-1step"
    assert probs[0].answer == "26" and "\\boxed" not in probs[0].question


def test_load_gsm8k_items_as_problems() -> None:
    probs = load_problems(ROOT / "data" / "gsm8k" / "test.jsonl", limit=3)
    assert [p.uid for p in probs] == [gsm8k_id(q) for q in _questions(3)]
    assert probs[0].answer == "18"


@pytest.mark.parametrize("cond", CONDITIONS)
def test_prompts_show_the_answer_only_when_leaking(cond: str) -> None:
    p = Problem("u", "d", "Ann has 3 cats and 4 dogs. How many pets?", "7")
    text = prompt_for(p, cond)
    assert text.count(p.question) == 1 and "\\boxed{}" in text
    assert ("7" in text) == (cond != "nohint")


def test_requests_use_paper_defaults_and_one_seed_per_sample() -> None:
    probs = load_problems(ARITH, limit=2)
    reqs = requests_for(probs, "hint", ChainConfig(n=3, system="Think."))
    assert len(reqs) == 6 and [r.params.seed for r in reqs] == [0, 1, 2, 0, 1, 2]
    p = reqs[0].params
    assert (p.temperature, p.top_p, p.top_k, reqs[0].thinking) == (0.6, 0.95, 20, "on")
    assert reqs[0].messages[0].role == "system" and reqs[0].messages[0].content == "Think."


def test_sft_records_mark_forced_finishes() -> None:
    import pandas as pd

    chains = pd.DataFrame([
        {"uid": "a", "domain": "d", "condition": "hint", "sample": 0, "question": "Q?", "answer": "3",
         "chain": "own \\boxed{3}", "boxed_tail": "", "forced_finish": False},
        {"uid": "b", "domain": "d", "condition": "hint", "sample": 0, "question": "Q?", "answer": "3",
         "chain": "none" + BOX_PREFILL + "3}$", "boxed_tail": BOX_PREFILL + "3}$", "forced_finish": True},
    ])
    own, forced = sft_records(chains, "hint")
    assert "forced_finish" not in own and "boxed_tail" not in own
    assert forced["forced_finish"] is True and forced["boxed_tail"]["text"] == BOX_PREFILL + "3}$"


class CountingBackend:
    """Wraps the real backend to count generate calls (the component under test is chains, not the backend)."""

    def __init__(self, inner):  # type: ignore[no-untyped-def]
        self.inner, self.calls = inner, []

    def generate(self, reqs, progress=False):  # type: ignore[no-untyped-def]
        self.calls.append(len(reqs))
        return self.inner.generate(reqs, progress=progress)

    def render(self, req):  # type: ignore[no-untyped-def]
        return self.inner.render(req)


@pytest.mark.model
def test_generate_on_smollm2(smollm2, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from zcp_core.afr import read_records
    from zcp_core.runs import load_run

    probs = load_problems(ARITH, limit=2)
    be = CountingBackend(smollm2)
    cfg = ChainConfig(n=1, max_new_tokens=6, temperature=0.0, finish="box_prefill")
    chains = generate_chains(be, probs, ["nohint", "hint"], cfg)
    assert be.calls == [2, 2, 4]  # one batched call per condition, then one for every chain needing a box
    assert chains["boxed_tail"].str.startswith(BOX_PREFILL).all() and chains["chain"].str.contains("boxed").all()
    assert list(zip(chains["condition"], chains["uid"])) == [
        ("nohint", "arith-001"), ("nohint", "arith-002"), ("hint", "arith-001"), ("hint", "arith-002")]
    assert (chains["n_tokens"] <= 6).all() and chains["chain"].str.len().gt(0).all()
    recs = sft_records(chains, "hint")
    assert [r["messages"][0]["content"] for r in recs] == [p.question for p in probs]  # bare question
    assert "correct answer" not in recs[0]["messages"][0]["content"]
    assert recs[0]["boxed_tail"]["reason"].startswith("box_prefill") and recs[0]["forced_finish"] is True
    assert chains["forced_finish"].tolist() == (chains["boxed_tail"] != "").tolist()
    out = save_chains(tmp_path / "g", chains, cfg, model="smollm2", dataset=str(ARITH))
    assert read_records(out / "hint.jsonl")[1]["messages"][1]["content"] == chains["chain"].iloc[3]
    run = load_run(out)
    assert run.kind == "chains" and len(run.records) == 4 and run.summary["headline"]["value"] == 4
    assert run.summary["forced_finish"] == 4 and run.summary["boxed_by_model"] == 0
    text = dry_run(smollm2, probs, ["nohint", "hint"], cfg)
    assert text.count("=====") == 8 and "<|im_start|>user" in text and "The correct answer is 26" in text
