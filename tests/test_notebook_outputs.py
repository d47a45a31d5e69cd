"""Every notebook teaches: executed once here (this is the notebooks' CI run), each code cell's output is checked.

A cell fails the test when its output shows ``None``, ``nan``, ``NaN`` or ``+nan`` as a word (a missing value
reads "–"), a Python repr (``{'``, ``mappingproxy(``), a snake_case name (a stored column or metric name such as
``p_all`` or ``took_gain``, where a reader should see words), draws a plotly figure without a static image in the
same cell (a static render of the notebook would show nothing), or writes anything to stderr (warnings, progress
bars, tracebacks). Code spans, commands, file names and paths may name things as the code does, so the snake_case
check skips them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
PLOTLY = "application/vnd.plotly.v1+json"
# Checked in outputs only: a code cell's source may well say None.
BAD_TEXT = {"shows None": re.compile(r"\bNone\b"), "shows nan": re.compile(r"(?<![\w.])[+-]?nan\b", re.I),
            "shows a dict repr": re.compile(r"\{'"), "shows a mappingproxy repr": re.compile(r"mappingproxy\(")}

# A word of a quoted text, highlighted by its attribution (the detector's token view): the text's own words, where
# "nan" or "None" may well occur, not a value the notebook prints.
QUOTED_WORD = re.compile(r'<span title="[^"]*"[^>]*>[^<]*</span>')
# A snake_case name as a reader would meet it: lower-case words joined by underscores, not part of a path, a file
# name, a flag or a longer identifier (a model id such as ``org/some_model``). Cohen's d_z is a name in its own right.
SNAKE = re.compile(r"(?<![\w./\\-])(?!d_z\b)[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b(?!/|[.\\-]\w)")
# Where code may name things as the code does: code spans (markdown and HTML), HTML tags and their attributes,
# and command lines (a reproduce line, a shell or zcp command).
CODE = re.compile(r"`[^`\n]*`|<code>.*?</code>|<pre>.*?</pre>|<[^>]*>", re.S)
COMMAND = re.compile(r"^\s*(?:[$>]\s+|(?:zcp|python|\.venv/bin/\S+|make|pip|jupyter|jupytext)\s|reproduce:|Reproduce)",
                     re.I)


def snake_names(text: str) -> list[str]:
    """The snake_case names ``text`` shows a reader, outside code spans, HTML tags and command lines."""
    prose = "\n".join(ln for ln in CODE.sub(" ", text).splitlines() if not COMMAND.match(ln))
    return sorted({m.group(0) for m in SNAKE.finditer(prose)})

pytestmark = [pytest.mark.model, pytest.mark.heavy]


def _texts(output: Any) -> list[str]:
    if output.get("output_type") == "stream":
        return [str(output.get("text", ""))]
    data = output.get("data", {})
    return [str(data.get(k, "")) for k in ("text/plain", "text/markdown")] + [QUOTED_WORD.sub("", str(data.get("text/html", "")))]


def cell_problems(cell: Any) -> list[str]:
    """What is wrong with one executed code cell's outputs (empty when nothing)."""
    outs = cell.get("outputs", [])
    problems = []
    if any(PLOTLY in o.get("data", {}) for o in outs) and not any("image/png" in o.get("data", {}) for o in outs):
        problems.append("a plotly figure without a static image in the same cell")
    for o in outs:
        if o.get("output_type") == "stream" and o.get("name") == "stderr" and str(o.get("text", "")).strip():
            problems.append(f"stderr: {str(o['text']).strip()[:200]!r}")
        if o.get("output_type") == "error":
            problems.append(f"error: {o.get('ename')}: {o.get('evalue')}")
        names: set[str] = set()
        for text in _texts(o):
            for what, rx in BAD_TEXT.items():
                m = rx.search(text)
                if m:
                    problems.append(f"{what}: …{text[max(0, m.start() - 80):m.end() + 40]!r}")
            names.update(snake_names(text))
        if names:  # once per output (a table's text and HTML show the same names)
            problems.append(f"shows snake_case names: {', '.join(sorted(names))}")
    return problems


def test_cell_checks_golden() -> None:
    """The checks themselves, on hand-made outputs."""
    import nbformat

    def cell(*outputs: dict[str, Any]) -> Any:
        return nbformat.v4.new_code_cell(outputs=[nbformat.from_dict(o) for o in outputs])

    fig = {"output_type": "display_data", "data": {PLOTLY: {}, "text/plain": "Figure"}, "metadata": {}}
    png = {"output_type": "display_data", "data": {"image/png": "iVBOR", "text/plain": "<Image>"}, "metadata": {}}
    assert cell_problems(cell(fig, png)) == []
    assert cell_problems(cell(fig)) == ["a plotly figure without a static image in the same cell"]
    assert cell_problems(cell({"output_type": "stream", "name": "stderr", "text": "TqdmWarning: IProgress"}))
    assert cell_problems(cell({"output_type": "stream", "name": "stdout", "text": "{'p': None}"}))
    assert cell_problems(cell({"output_type": "stream", "name": "stdout", "text": "dAFR=nan (n=0)"}))
    assert cell_problems(cell({"output_type": "execute_result", "execution_count": 1, "metadata": {},
                               "data": {"text/plain": "Item(id='a', metadata=mappingproxy({}))"}}))
    for text in ("effect +nan", "mean NaN pp", "C: nan", "reason None", "{'a': 1}"):
        assert cell_problems(cell({"output_type": "stream", "name": "stdout", "text": text})), text
    table = {"output_type": "execute_result", "execution_count": 1, "metadata": {},
             "data": {"text/plain": "   p\n0  NaN", "text/html": "<td>NaN</td>"}}
    assert len(cell_problems(cell(table))) == 2
    assert cell_problems(cell({"output_type": "stream", "name": "stdout", "text": "C = 0.998, 27 flagged"})) == []
    quoted = {"output_type": "display_data", "metadata": {},
              "data": {"text/html": '<span title="-0.0069" style="background:#fff">nan</span> is', "text/plain": "<HTML>"}}
    assert cell_problems(cell(quoted)) == []  # a word of the explained text, not a value
    # Words that merely contain the letters are fine.
    assert cell_problems(cell({"output_type": "stream", "name": "stdout", "text": "nanoGPT, Nonetheless, –"})) == []


def test_snake_case_check_golden() -> None:
    """Stored names fail wherever a reader meets them; code, commands, files, paths and flags do not."""
    import nbformat

    def problems(text: str, kind: str = "text/plain") -> list[str]:
        out = {"output_type": "display_data", "metadata": {}, "data": {kind: text}}
        return cell_problems(nbformat.v4.new_code_cell(outputs=[nbformat.from_dict(out)]))

    def stdout(text: str) -> list[str]:
        out = {"output_type": "stream", "name": "stdout", "text": text}
        return cell_problems(nbformat.v4.new_code_cell(outputs=[nbformat.from_dict(out)]))

    for text in ("p_all 0.998", "metric  p_first  p_all\nacc", "C on C: took_gain +0.575.", "caught by zcp_p_all.",
                 "(auroc_ci_fw)", "x_1 = 2"):
        assert stdout(text), text
    assert problems("| Metric | p_all |\n|---|---|", "text/markdown") == ["shows snake_case names: p_all"]
    assert problems("<table><tr><th>took_gain</th></tr></table>", "text/html") == ["shows snake_case names: took_gain"]
    for text in ("P(all answer tokens) 0.998; run `zcp lab evaluate --name direct`", "reproduce: zcp probe --n_max 5",
                 "zcp lab matrix --build-missing", "see benchmarks/results/lab_dose_paper.md", "lab_dose_paper.md",
                 "the entry for detectrl_sample/: none",
                 "data/examples/probe_lab_direct", "--build_missing", "Cohen's d_z +0.574", "well-known, self-evident",
                 "$ make test_fast"):
        assert stdout(text) == [], text
    assert problems('<div id="T_ab12_row0_col1" class="data_frame">Accuracy</div>', "text/html") == []
    assert problems("`load_run(path)` returns the run", "text/markdown") == []


@pytest.mark.parametrize("stem", sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")))
def test_notebook_runs_and_teaches(stem: str, tmp_path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(NOTEBOOKS / f"{stem}.ipynb", as_version=4)
    NotebookClient(nb, timeout=1200, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    nbformat.write(nb, tmp_path / f"{stem}.ipynb")  # kept for a look when the test fails
    bad = {i: p for i, c in enumerate(nb.cells) if c.cell_type == "code" and (p := cell_problems(c))}
    assert not bad, f"{stem}: " + "; ".join(f"cell {i}: {', '.join(p)}" for i, p in bad.items())
