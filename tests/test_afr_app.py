"""The AFR page renders with no runs, with a screen run and with a profile run (AppTest)."""

from __future__ import annotations

from pathlib import Path

import pytest
from apphelp import render_page

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "data" / "afr_sample" / "skythought_math500_traces"


def _run_page(monkeypatch: pytest.MonkeyPatch, runs: Path):  # type: ignore[no-untyped-def]
    return render_page("afr.py", runs, monkeypatch)


def test_page_without_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    at = _run_page(monkeypatch, tmp_path)
    assert any("No afr runs" in i.value for i in at.info)


def test_page_with_screen_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_afr import ALL_LINE, PAPER_LINE, _screen_dir

    from zcp_core.cli.afr import main

    data = tmp_path / "data"
    data.mkdir()
    _screen_dir(data)
    assert main(["screen", str(data), "--n-boot", "100", "--excise", "--out", str(tmp_path / "runs" / "s1")]) == 0
    at = _run_page(monkeypatch, tmp_path / "runs")
    # the same two lines, in the same order, as the CLI prints
    assert at.code[0].value.splitlines() == [PAPER_LINE, ALL_LINE]
    html = "".join(m.value for m in at.markdown)
    assert "keep-correct filter: not recorded" in html and "forced finishes (box_prefill): none" in html
    assert "<mark" in html and "\\boxed{" in html
    assert not at.warning
    at.checkbox[0].check().run()
    assert not at.exception


def test_page_states_filter_and_warns_about_forced_finishes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_afr import _write_arms

    from zcp_core.afr import read_records, write_records
    from zcp_core.cli.afr import main

    data = tmp_path / "data"
    data.mkdir()
    _write_arms(data)
    recs = read_records(data / "hint.jsonl")
    recs[0]["forced_finish"] = True  # the one matched hint chain
    write_records(data / "hint.jsonl", recs)
    assert main(["filter", str(data), "--filter", "paper"]) == 0
    assert main(["screen", str(data), "--n-boot", "50", "--out", str(tmp_path / "runs" / "s1")]) == 0
    at = _run_page(monkeypatch, tmp_path / "runs")
    html = "".join(m.value for m in at.markdown)
    assert "keep-correct filter: paper (both arms); keep: first (both arms), one chain per problem" in html
    assert len(at.warning) == 1 and "not about the model's own writing" in at.warning[0].value
    assert at.code[1].value.startswith("own finishes only")


def test_page_with_profile_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zcp_core.cli.afr import main

    out = tmp_path / "runs" / "p1"
    assert main(["profile", str(SAMPLE / "gemma-2-27b-it_math500.jsonl"), "--adapter", "skythought", "--compare",
                 str(SAMPLE / "sky-t1-math-correct-5k-27b_math500.jsonl"), "--n-boot", "100", "--out", str(out)]) == 0
    at = _run_page(monkeypatch, tmp_path / "runs")
    assert at.code[0].value.splitlines()[0].startswith("AFR gemma-2-27b-it_math500=22.2% (n=9) ")
    assert at.code[0].value.splitlines()[1].startswith("all-chains AFR (every chain in the denominator")
    assert at.radio[0].value == "covered chains (the paper's)"  # the paper's denominator is the default
    at.radio[0].set_value("all chains").run()
    assert not at.exception
    assert len(at.selectbox) >= 2


def test_chain_html_escapes_and_highlights() -> None:
    from zcp_core.afr import chain_html

    chain = "<script>x</script> so 4 then \\boxed{4}"
    out = chain_html(chain, chain.index("4"), chain.index("4") + 1)
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert out.count("<mark") == 2 and ">4</mark>" in out and ">\\boxed{4}</mark>" in out
    assert chain_html("no mention", -1, -1).count("<mark") == 0
