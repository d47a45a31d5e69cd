"""The AFR Report is what every surface shows: the CLI text and the AFR page carry the same headline and rows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from apphelp import render_page

from zcp_core.afr import report
from zcp_core.runs import load_run

SAMPLE = Path(__file__).resolve().parent.parent / "data" / "afr_sample"


def test_profile_via_cli_and_page_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    from zcp_core.cli.afr import main

    traces = SAMPLE / "skythought_math500_traces"
    out = tmp_path / "runs" / "demo-afr-profile"
    assert main(["profile", str(traces / "gemma-2-27b-it_math500.jsonl"), "--adapter", "skythought", "--compare",
                 str(traces / "sky-t1-math-correct-5k-27b_math500.jsonl"), "--n-boot", "100", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    rep = report(load_run(out))
    assert rep.headline.text in text and all("  ".join(r).split()[0] in text for r in rep.rows)
    at = render_page("afr.py", tmp_path / "runs", monkeypatch)
    assert at.metric[0].value == rep.headline.value == "+20.0 pp"
    assert rep.headline.subject == "all chains, not the paper's denominator"  # the tiles' denominator, said
    assert at.dataframe[0].value.values.tolist() == [list(r) for r in rep.rows]
    shown = "\n".join([*(m.value for m in at.markdown), *(c.value for c in at.caption)])
    assert not re.search(r"\bNone\b|\bnan\b|\+nan|\{'|mappingproxy\(", shown)
    assert not [c for c in at.dataframe[0].value.columns if "_" in c]
