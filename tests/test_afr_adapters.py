"""Named chain-corpus adapters on the bundled samples and on ../shared/data, and the profile command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from zcp_core.afr import (
    COLUMNS,
    afr_frame,
    afr_stats,
    compare,
    load_chains,
    profile,
    profile_text,
    question_uid,
    think_text,
)
from zcp_core.errors import DataError

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "afr_sample"
SKY = "skythought_math500_traces/sky-t1-math-correct-5k-27b_math500.jsonl"
GEMMA = "skythought_math500_traces/gemma-2-27b-it_math500.jsonl"
QWEN = "qwen25math_math_cot_100/math_cot_100.jsonl"
GPT3 = "gsm8k_model_solutions_gpt3/example_model_solutions.jsonl"


@pytest.mark.parametrize(("path", "adapter", "n_chains", "n_problems"), [
    (SKY, "skythought", 15, 15), (GEMMA, "skythought", 15, 15), (QWEN, "qwen25math", 24, 3), (GPT3, "gpt3-gsm8k", 80, 20),
])
def test_adapters_on_bundled_samples(path: str, adapter: str, n_chains: int, n_problems: int) -> None:
    df = load_chains(SAMPLE / path, adapter)
    assert list(df.columns) == COLUMNS
    assert len(df) == n_chains and df["uid"].nunique() == n_problems
    assert df["chain"].str.len().gt(0).all() and df["answer"].str.len().gt(0).all()
    assert df.groupby("uid")["sample"].apply(lambda s: sorted(s) == list(range(len(s)))).all()


def test_skythought_think_markers_and_gold() -> None:
    df = load_chains(SAMPLE / SKY, "skythought")
    first = df.iloc[0]
    assert first["answer"] == "(3,\\frac{\\pi}{2})" and first["chain"].startswith("<|begin_of_thought|>")
    assert first["think"] and "<|begin_of_thought|>" not in first["think"]
    assert (load_chains(SAMPLE / GEMMA, "skythought")["think"] == "").all()
    assert think_text("a <think>t</think> b") == "t"


def test_gpt3_gold_and_generators() -> None:
    df = load_chains(SAMPLE / GPT3, "gpt3-gsm8k")
    assert df.iloc[0]["answer"] == "18" and df.iloc[0]["orig_id"] == "gsm8k-test-1"
    assert list(df["generator"][:4]) == ["6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification"]
    assert df["chain"].str.contains(r"(?m)^A:").sum() == 79  # one 6B chain is cut off before its A: line


def test_uids_line_up_across_corpora() -> None:
    a, b = load_chains(SAMPLE / SKY, "skythought"), load_chains(SAMPLE / GEMMA, "skythought")
    assert set(a["uid"]) == set(b["uid"])
    assert question_uid("What  is\n2+2?") == question_uid("What is 2+2?")


def test_messages_adapter_and_errors(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    p.write_text(json.dumps({"uid": "x", "answer": "4", "messages": [
        {"role": "user", "content": "2+2?"}, {"role": "assistant", "content": "<think>4</think> \\boxed{4}"}]}) + "\n")
    df = load_chains(p, "messages")
    assert df.iloc[0]["uid"] == "x" and df.iloc[0]["think"] == "4"
    with pytest.raises(DataError, match="unknown adapter"):
        load_chains(p, "nope")
    with pytest.raises(DataError, match="missing field"):
        load_chains(p, "skythought")


def test_profile_and_compare_on_bundled_samples() -> None:
    base, long = load_chains(SAMPLE / GEMMA, "skythought"), load_chains(SAMPLE / SKY, "skythought")
    p = profile(long, "sky", n_boot=200)
    assert p.stats.n_chains == 15 and sum(p.hist) == p.stats.n_covered
    assert p.ci_all.low <= p.stats.afr_all <= p.ci_all.high
    lines = profile_text(p).splitlines()
    # the paper's denominator first (covered chains, with its n), then the all-chains figure, labelled
    s = p.stats
    assert lines[0].startswith(f"AFR sky={100 * s.afr_covered:.1f}% (n={s.n_covered}) [95% CI ")
    assert lines[1].startswith(f"all-chains AFR (every chain in the denominator, not the paper's): "
                               f"sky={100 * s.afr_all:.1f}% (n={s.n_chains})")
    assert s.n_covered < s.n_chains
    c = compare(base, long, ("gemma", "sky"), n_boot=200)
    assert c.n_common == 15
    assert c.diff_all.value == pytest.approx(c.b.stats.afr_all - c.a.stats.afr_all)


def test_profile_cli_writes_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from zcp_core.cli.afr import main
    from zcp_core.runs import load_run

    assert main(["profile", str(SAMPLE / QWEN), "--adapter", "qwen25math", "--n-boot", "100",
                 "--out", str(tmp_path / "r"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["stats"]["n_chains"] == 24 and out["headline"]["label"].startswith("AFR")
    # Qwen2.5-Math CoT has no think block: no paper's AFR, and the headline says which group it shows
    assert out["stats"]["n_covered"] == 0 and out["stats"]["n_no_think"] == 24
    assert "no paper's AFR" in out["headline"]["label"]
    assert out["headline"]["value"] == pytest.approx(100 * out["stats"]["afr_no_think"])
    assert out["line"].endswith("=–: no chain has a think block that states the answer (n=0)")
    assert load_run(tmp_path / "r").kind == "afr"
    assert main(["profile", str(SAMPLE / SKY), "--adapter", "skythought", "--n-boot", "100",
                 "--out", str(tmp_path / "r2")]) == 0
    head = capsys.readouterr().out.splitlines()[1]  # the report's headline, the paper's denominator first
    stats = load_run(tmp_path / "r2").summary["stats"]
    assert head.startswith(f"AFR sky-t1-math-correct-5k-27b_math500 {100 * stats['afr_covered']:.1f}% (covered chains")
    assert head.endswith(f": {stats['n_answer_first']} answer-first of {stats['n_covered']}")


def test_profile_cli_first_line_on_shared_skythought(shared_data: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from zcp_core.cli.afr import main

    root = shared_data / "skythought_math500_traces"
    assert main(["profile", str(root / "gemma-2-27b-it_math500.jsonl"), "--adapter", "skythought", "--compare",
                 str(root / "sky-t1-math-correct-5k-27b_math500.jsonl"), "--n-boot", "100",
                 "--out", str(tmp_path / "r")]) == 0
    lines = capsys.readouterr().out.splitlines()
    # Gemma-2 writes no think block: the paper's denominator cannot compare it; Sky-T1 has 290 think blocks
    # the headline falls back to every chain, and says so
    assert re.fullmatch(r"Difference in AFR, audited − comparison [+-]\d+\.\d pp \(all chains, not the paper's "
                        r"denominator\): .*", lines[1]), lines[1]
    assert lines[2].startswith("Common problems 500")
    text = "\n".join(lines)
    assert "because gemma-2-27b-it_math500 has no covered chain" in text
    assert "sky-t1-math-correct-5k-27b_math500 210 of 500 chains, AFR " in text  # no think block: reported apart


@pytest.mark.parametrize(("path", "adapter", "n_chains", "n_problems"), [
    (SKY, "skythought", 500, 500),
    ("skythought_math500_traces/qwen2.5-32b-instruct_still2-sys-zero_math500.json", "skythought", 500, 500),
    (QWEN, "qwen25math", 800, 100),
    (GPT3, "gpt3-gsm8k", 5276, 1319),
])
def test_adapters_on_shared_data(shared_data: Path, path: str, adapter: str, n_chains: int, n_problems: int) -> None:
    df = load_chains(shared_data / path, adapter)
    assert len(df) == n_chains and df["uid"].nunique() == n_problems
    st = afr_stats(afr_frame(df.head(60)))
    assert st.n_chains == 60 and st.n_think + st.n_no_think == 60 and 0 <= st.afr_all <= 1
    assert st.n_covered <= st.n_think and (st.n_covered == 0 or 0 <= st.afr_covered <= 1)
    assert st.n_answer_first_all == st.n_answer_first + st.n_no_think_answer_first
