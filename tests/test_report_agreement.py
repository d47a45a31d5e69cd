"""One number, one place: every surface of a probe run shows the strings of its report.

For each bundled example probe run, the CLI (text and ``--json``), the app's probe page, notebook 01's cells and
the release card are rendered and must show the report's headline and evidence; the probe page and notebooks
00/01 must show no ``None``/``nan``, no Python repr and no snake_case name outside code. For each lab run notebook 02
renders (evaluate, matrix, both dose runs), the notebook and the lab page must show the same report strings:
headline, every evidence cell, sentences, notes and the reproduce command.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from zcp_core.probe.report import report
from zcp_core.report import fmt_c, fmt_ci

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "data" / "examples"
PROBE_RUNS = sorted(p.name for p in EXAMPLES.glob("probe-*") if (p / "manifest.json").exists())
#: What must never reach a reader: missing values as Python spells them, reprs, and stored snake_case names.
BAD = re.compile(r"\bNone\b|\bnan\b|\bNaN\b|\+nan|\{'|mappingproxy\(|\('[^']*', '|\b(?!d_z\b)[a-z][a-z0-9]*_[a-z0-9_]*[a-z0-9]\b")  # d_z: Cohen's, a name
CODE = re.compile(r"`[^`]*`")


def _strings(rep: Any) -> list[str]:
    """What every surface must show: the headline, and each metric's C and 95% CI."""
    ci, c = rep.columns.index("95% CI"), rep.columns.index("Confidence C")
    return [rep.headline.value, rep.headline.subject, *(r[c] for r in rep.rows), *(r[ci] for r in rep.rows)]


def _reader_text(text: str) -> str:
    """Text a reader sees, without code spans, commands and paths (which may name files and flags)."""
    lines = [ln for ln in text.splitlines() if not ln.strip().startswith(("zcp ", "reproduce:", "Reproduce"))]
    return CODE.sub("", "\n".join(lines))


def _bad(text: str) -> list[str]:
    return sorted({m.group(0) for m in BAD.finditer(_reader_text(text))})


@pytest.fixture(params=PROBE_RUNS)
def example(request, tmp_path, monkeypatch) -> Path:
    runs = tmp_path / "runs"
    shutil.copytree(EXAMPLES / request.param, runs / request.param)
    monkeypatch.setenv("ZCP_RUNS", str(runs))
    return runs / request.param


def test_there_are_example_probe_runs() -> None:
    assert len(PROBE_RUNS) >= 2


def _cli(run: Path, capsys, *extra: str) -> str:
    from zcp_core.cli.probe import confidence_cmd, register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    assert confidence_cmd(parser.parse_args(["confidence", str(run), *extra])) == 0
    return capsys.readouterr().out


def _app(run: Path) -> tuple[Any, str]:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app_pages" / "probe.py"), default_timeout=90).run()
    assert not at.exception
    text = "\n".join([*(m.label + " " + str(m.value) for m in at.metric), *(m.value for m in at.markdown),
                      *(c.value for c in at.caption), *(i.value for i in at.info), *(w.value for w in at.warning),
                      *(d.value.to_string() for d in at.dataframe[:1])])
    return at, text


def _notebook(stem: str, upto: str) -> str:
    """The text the cells of ``notebooks/<stem>.py`` print and display, up to the cell holding ``upto``.

    The cells run in this process (figures are not drawn): the notebook's own rendering, as a reader sees it.
    """
    import contextlib
    import io
    import os

    import jupytext
    import pandas as pd

    nb = jupytext.read(ROOT / "notebooks" / f"{stem}.py")
    shown: list[str] = []

    def display(*objs: Any) -> None:
        for o in objs:
            if isinstance(o, pd.DataFrame):
                shown.append(o.to_string())
            elif hasattr(o, "data") and isinstance(o.data, str):
                shown.append(o.data)
            elif type(o).__module__.startswith("plotly") or type(o).__name__ == "Image":
                continue
            else:
                shown.append(str(o))

    import IPython.display as ipd

    ns: dict[str, Any] = {"display": display, "__name__": "__main__"}
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT / "notebooks")
    real_display, ipd.display = ipd.display, display  # a cell's own `from IPython.display import display` too
    try:
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            src = cell.source
            if re.search(r"\w_png\(", src) or src.lstrip().startswith(("%", "!")):
                continue  # draws a figure (static_png, matrix_png): nothing a reader reads as text
            lines = src.rstrip().splitlines()
            *body, last = lines or [""]
            with contextlib.redirect_stdout(out):
                try:  # a cell's last expression is shown, as Jupyter does
                    exec(compile("\n".join(body), f"{stem}", "exec"), ns)
                    value = eval(compile(last, f"{stem}", "eval"), ns)
                    if value is not None:
                        display(value)
                except SyntaxError:
                    exec(compile(src, f"{stem}", "exec"), ns)
            if upto in src:
                break
    finally:
        os.chdir(cwd)
        ipd.display = real_display
    return out.getvalue() + "\n".join(shown)


def _card(run: Path, tmp_path: Path) -> str:
    from zcp_core.probe import release

    release(run, tmp_path / "release", allow_unlicensed=True)
    return (tmp_path / "release" / "README.md").read_text()


def test_every_surface_shows_the_same_numbers(example: Path, tmp_path: Path, capsys) -> None:
    rep = report(example)
    want = _strings(rep)
    assert rep.headline.value and rep.rows
    # CLI text
    text = _cli(example, capsys)
    assert all(s in text for s in want), [s for s in want if s not in text]
    assert all(s in text for s in rep.sentences)
    # CLI --json: the same numbers, machine-readable
    conf = json.loads(_cli(example, capsys, "--json"))
    ci, c = rep.columns.index("95% CI"), rep.columns.index("Confidence C")
    shown = {r[0]: r for r in rep.rows}
    from zcp_core.report import capital, metric_name

    for m, v in conf["metrics"].items():
        if v.get("n") is None:
            continue
        row = shown[capital(metric_name(m))]
        assert row[c] == fmt_c(v["confidence"], v.get("bound")) and row[ci] == fmt_ci(*v["effect_ci"])
    # the app's probe page
    _, page = _app(example)
    assert all(s in page for s in want), [s for s in want if s not in page]
    assert rep.sentences[0] in page
    # notebook 01's rendering of the same run
    if example.name in ("probe-lab-direct", "probe-smollm2-lab-items"):
        nb = _notebook("01_probe", "rep.table().assign(Model=name)")
        assert all(s in nb for s in want), [s for s in want if s not in nb]
        assert rep.headline.text in nb and rep.command in nb
    # the release card
    card = _card(example, tmp_path)
    assert f"{rep.headline.value} ({rep.headline.subject})" in card
    assert rep.command in card
    # the flag block and twins per item, in the same words everywhere (the JSON in numbers that give them)
    from zcp_core.probe.report import twins_text

    block = [rep.fact("Twins per item"), rep.fact("How items are flagged"), f"Flagged items {rep.fact('Flagged items')}"]
    flat_card = card.replace("**", "")
    for where, shown_text in (("text", text), ("app", page), ("card", flat_card)):
        assert all(s in shown_text for s in block), (where, [s for s in block if s not in shown_text])
    if example.name in ("probe-lab-direct", "probe-smollm2-lab-items"):
        assert all(s in nb for s in block[:2]), [s for s in block[:2] if s not in nb]
    assert twins_text(conf["flags"]["twins_per_item"]) == block[0]
    assert str(conf["flags"]["flagged"]) == rep.fact("Flagged items")
    assert conf["headline"]["reading"] == rep.headline.reading and rep.headline.reading in text


def test_probe_page_has_no_internals(example: Path) -> None:
    _, page = _app(example)
    assert _bad(page) == []


def test_notebook_text_has_no_internals() -> None:
    assert _bad(_notebook("01_probe", "rep.table().assign(Model=name)")) == []
    # the tour's probe cell (its other cells belong to other methods)
    probe = [ln for ln in _notebook("00_tour", "rep = report(").splitlines() if "Contamination Confidence" in ln]
    assert len(probe) == 2 and _bad("\n".join(probe)) == []


def test_the_check_catches_internals() -> None:
    for text in ("C = None", "effect nan", "+nan", "{'p': 1}", "mappingproxy({})", "('a', 'b')", "p_all 0.998"):
        assert _bad(text), text
    assert _bad("P(all answer tokens) 0.998; run `zcp confidence runs/probe_x`") == []


# ---- the lab: notebook 02 and the lab page render the same Report strings ---------------------------------------

#: The lab runs notebook 02 renders, with the cell that renders each (the notebook runs up to the last of them).
LAB_RUNS = ("lab-eval-direct", "lab-matrix", "lab-matrix-replicates", "lab-dose", "lab-dose-paper")
LAB_NOTEBOOK_LAST = "for d in doses:"


@pytest.fixture(scope="module")
def lab_notebook() -> str:
    """Notebook 02's text up to its last report cell (it reads the bundled examples; nothing is trained)."""
    return _notebook("02_lab", LAB_NOTEBOOK_LAST)


def _lab_strings(rep: Any) -> list[str]:
    """What both surfaces must show of a lab report: headline, every cell of the evidence, sentences, notes, command."""
    cells = [c for r in rep.rows for c in r if c]
    return [rep.headline.text, rep.headline.value, *cells, *rep.sentences, *rep.notes, rep.command]


def _lab_page(runs: Path, name: str) -> str:
    """The lab page (AppTest) opened on ``runs/name``, as the run browser opens it: every text and table cell."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app_pages" / "lab.py"), default_timeout=90)
    at.session_state["selected_run"] = str(runs / name)
    at.run()
    assert not at.exception, at.exception
    cells = [str(v) for d in at.dataframe for v in d.value.to_numpy().ravel()]
    return "\n".join([*(m.label + " " + str(m.value) for m in at.metric), *(s.value for s in at.subheader),
                      *(m.value for m in at.markdown), *(c.value for c in at.caption), *cells])


@pytest.mark.parametrize("name", LAB_RUNS)
def test_lab_notebook_and_lab_page_show_the_same_strings(name: str, lab_notebook: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from zcp_core.lab.report import report as lab_report
    from zcp_core.runs import load_run

    runs = tmp_path / "runs"
    for ex in EXAMPLES.glob("lab-*"):  # the page finds the matrix beside an evaluate run, as the notebook passes it
        if (ex / "manifest.json").exists():
            shutil.copytree(ex, runs / ex.name)
    monkeypatch.setenv("ZCP_RUNS", str(runs))
    matrix = load_run(EXAMPLES / "lab-matrix") if name == "lab-eval-direct" else None
    rep = lab_report(load_run(EXAMPLES / name), matrix)
    want = _lab_strings(rep)
    assert rep.headline.value and rep.command
    page = _lab_page(runs, name)
    assert rep.title in page
    assert [s for s in want if s not in lab_notebook] == []
    assert [s for s in want if s not in page] == []
    assert _bad(page) == []


def test_lab_notebook_text_has_no_internals(lab_notebook: str) -> None:
    assert _bad(lab_notebook) == []
