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
    from test_afr import _screen_dir

    from zcp_core.cli.afr import main

    data = tmp_path / "data"
    data.mkdir()
    _screen_dir(data)
    assert main(["screen", str(data), "--n-boot", "100", "--excise", "--out", str(tmp_path / "runs" / "s1")]) == 0
    at = _run_page(monkeypatch, tmp_path / "runs")
    assert at.code[0].value.startswith("AFR  blind(nohint)=25.0% (n=12)")
    html = "".join(m.value for m in at.markdown)
    assert "<mark" in html and "\\boxed{" in html
    at.checkbox[0].check().run()
    assert not at.exception


def test_page_with_profile_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from zcp_core.cli.afr import main

    out = tmp_path / "runs" / "p1"
    assert main(["profile", str(SAMPLE / "gemma-2-27b-it_math500.jsonl"), "--adapter", "skythought", "--compare",
                 str(SAMPLE / "sky-t1-math-correct-5k-27b_math500.jsonl"), "--n-boot", "100", "--out", str(out)]) == 0
    at = _run_page(monkeypatch, tmp_path / "runs")
    at.radio[0].set_value("covered chains").run()
    assert not at.exception
    assert len(at.selectbox) >= 2


def test_chain_html_escapes_and_highlights() -> None:
    from zcp_core.afr import chain_html

    chain = "<script>x</script> so 4 then \\boxed{4}"
    out = chain_html(chain, chain.index("4"), chain.index("4") + 1)
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert out.count("<mark") == 2 and ">4</mark>" in out and ">\\boxed{4}</mark>" in out
    assert chain_html("no mention", -1, -1).count("<mark") == 0
