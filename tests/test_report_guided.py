"""The Time-Travel Report is what every surface shows: the CLI text, the app page and notebook 06 agree."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from apphelp import render_page

from zcp_core.guided.report import report
from zcp_core.runs import load_run

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "data" / "examples" / "guided-smollm2-gsm8k12"
BAD = re.compile(r"\bNone\b|\bnan\b|NaN|\+nan|\{'|mappingproxy\(|\b[a-z]+_[a-z_]+\b")


def _evidence(rep) -> list[str]:  # type: ignore[no-untyped-def]
    return [rep.headline.text, *rep.sentences]


def test_report_of_the_example_reads_in_words() -> None:
    rep = report(load_run(EXAMPLE))
    assert rep.headline.label == "Contamination Confidence" and rep.headline.value == "0.605"
    assert rep.headline.reading == "no evidence"
    (row,) = rep.rows
    assert row[rep.columns.index("Contamination Confidence")] == rep.headline.value  # the tile is the table
    assert row[rep.columns.index("p")] == "0.108" and row[rep.columns.index("95% CI")] == "[-0.031, +0.134]"
    assert row[rep.columns.index("Exact matches")] == "0" and row[rep.columns.index("Judge rule")] == "not contaminated"
    assert any(n.startswith("Contamination Confidence C is ") for n in rep.notes)  # C shown, so C defined
    assert rep.command.startswith("zcp guided --model smollm2") and "--out" not in rep.command
    prose = "\n".join([*_evidence(rep), *rep.notes, *rep.columns, *(c for r in rep.rows for c in r)])
    assert not BAD.search(prose), BAD.search(prose)


def test_cli_text_is_the_report() -> None:
    from zcp_core.cli.guided import run_text

    rep = report(load_run(EXAMPLE))
    text = run_text(EXAMPLE)
    assert rep.to_text() in text
    assert all(s in text for s in _evidence(rep))


def test_page_shows_the_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(EXAMPLE, tmp_path / EXAMPLE.name)
    at = render_page("guided.py", tmp_path, monkeypatch)
    rep = report(load_run(EXAMPLE))
    assert [(m.label, m.value) for m in at.metric] == [(rep.headline.label, rep.headline.value)]
    assert at.dataframe[0].value.values.tolist() == [list(r) for r in rep.rows]
    assert list(at.dataframe[0].value.columns) == list(rep.columns)
    shown = "\n".join([*(m.value for m in at.markdown), *(c.value for c in at.caption)])
    assert all(s in shown for s in _evidence(rep)) and all(n in shown for n in rep.notes)
    prose = re.sub(r"`[^`]*`", "", shown)  # code spans and commands are exempt
    assert not BAD.search(prose), BAD.search(prose)
    for df in at.dataframe:
        assert not [c for c in df.value.columns if BAD.search(str(c))]


def test_notebook_renders_the_report() -> None:
    """Notebook 06's last cell, executed as written: it displays the example's report."""
    from IPython.display import Markdown

    cells = (ROOT / "notebooks" / "06_guided.py").read_text().split("# %%")
    last = cells[-1]
    assert "report(example)" in last
    shown: list[str] = []
    ns = {"ROOT": ROOT, "load_run": load_run, "report": report, "Markdown": Markdown,
          "display": lambda x: shown.append(x.data)}
    exec(last, ns)  # noqa: S102 - the notebook's own cell
    rep = report(load_run(EXAMPLE))
    assert shown == [rep.to_markdown()]
    assert all(s in shown[0] for s in _evidence(rep))
    assert all(" | ".join(r) in shown[0] for r in rep.rows)
