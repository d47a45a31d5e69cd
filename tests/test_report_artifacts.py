"""One scan and one clean run of the bundled DetectRL sample read the same in the CLI, on the artifacts page and
on the clean release card: the report's headline and counts, word for word (``zcp_core.artifacts.report``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from apphelp import render_page

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = sorted(str(p) for p in (ROOT / "data" / "detectrl_sample").glob("*.json"))
#: What no page or notebook output may show: missing values as code words, Python reprs, snake_case names.
BAD = {"None": re.compile(r"\bNone\b"), "nan": re.compile(r"(?<![\w-])[+-]?nan\b", re.I),
       "a dict repr": re.compile(r"\{'"), "a mappingproxy repr": re.compile(r"mappingproxy\("),
       "a tuple of ids": re.compile(r"\('[^']*', '"),
       "a snake_case name": re.compile(r"\b(llm_type|data_type|trained_on|evaluated_on|roc_auc|tpr_at_\w+|"
                                       r"n_human|n_llm|flip_rate|first_family|domain_flagged|edited_texts|"
                                       r"human_false_positives|by_family|artifact_share)\b")}


def shown_problems(text: str) -> list[str]:
    """What ``text`` shows that it must not (code spans and fenced commands are exempt)."""
    prose = re.sub(r"`[^`]*`", "", re.sub(r"```.*?```", "", text, flags=re.S))
    return [f"{what}: …{prose[max(0, m.start() - 60):m.end() + 30]!r}" for what, rx in BAD.items()
            if (m := rx.search(prose))]


def page_text(at) -> str:  # type: ignore[no-untyped-def]
    """Everything an AppTest page shows as text: markdown, captions, metrics, tables, widget labels."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [t.value for t in at.title]
    parts += [h.value for h in at.subheader] + [f"{m.label} {m.value}" for m in at.metric]
    for df in at.dataframe:
        frame = df.value
        parts += [" ".join(map(str, frame.columns)), frame.to_string()]
    return "\n".join(map(str, parts))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """A scan and a clean run made with the CLI, each in its own runs folder, with the CLI's text output."""
    import contextlib
    import io

    from zcp_core.cli.main import main

    base = tmp_path_factory.mktemp("art")
    out = {}
    for kind, extra in (("scan", []), ("clean", ["--allow-unlicensed"])):
        folder = base / kind / "run"
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main([kind, *SAMPLE, "--out", str(folder), *extra]) == 0
        out[kind] = (folder, buf.getvalue())
    return out


def test_input_and_distinct_texts_are_named_apart(runs: dict[str, tuple[Path, str]]) -> None:
    from zcp_core.artifacts.report import report
    from zcp_core.runs import load_run

    for kind in ("scan", "clean"):
        rep = report(load_run(runs[kind][0]))
        assert rep.fact("Input texts") == "600" and rep.fact("Distinct texts") == "597"
        assert rep.fact("Duplicates (counted once)") == "3"


@pytest.mark.parametrize("kind", ["scan", "clean"])
def test_cli_page_and_card_say_the_same(kind: str, runs: dict[str, tuple[Path, str]],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from zcp_core.artifacts.report import report
    from zcp_core.runs import load_run

    folder, cli = runs[kind]
    rep = report(load_run(folder))
    at = render_page("artifacts.py", folder.parent, monkeypatch)
    page = page_text(at)
    surfaces = {"CLI": cli, "page": page, "markdown": rep.to_markdown()}
    if kind == "clean":
        surfaces["run card"] = (folder / "README.md").read_text()
        surfaces["release card"] = (folder / "cleaned" / "README.md").read_text()
    expected = [rep.headline.text, *(f"{k}" for k, _ in rep.facts), *(row[0] for row in rep.rows)]
    for name, text in surfaces.items():
        for s in expected:
            assert s in text, f"{name} lacks {s!r}"
        for k, v in rep.facts:
            assert re.search(re.escape(k) + r"\W{0,4}" + re.escape(v), text), f"{name}: {k} {v}"
    assert rep.command and rep.command in cli and "--out" not in rep.command


@pytest.mark.parametrize("kind", ["scan", "clean"])
def test_page_shows_no_reprs_or_code_names(kind: str, runs: dict[str, tuple[Path, str]],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    folder, cli = runs[kind]
    at = render_page("artifacts.py", folder.parent, monkeypatch)
    assert shown_problems(page_text(at)) == []
    assert shown_problems(cli.split("run: ")[0].split("release: ")[0]) == []


def test_figure_axes_are_words(runs: dict[str, tuple[Path, str]]) -> None:
    from zcp_core.artifacts import viz as va
    from zcp_core.runs import load_run

    run = load_run(runs["scan"][0])
    for fig in (va.family_counts_figure(run.table("by_llm_type")), va.flag_rate_figure(run.table("by_label"), "label")):
        titles = [fig.layout.xaxis.title.text, fig.layout.yaxis.title.text]
        assert all("_" not in t for t in titles), titles


def test_bad_text_golden() -> None:
    assert shown_problems("Share 12.0%; `llm_type` in code") == []
    for bad in ("value None", "ROC-AUC nan", "{'a': 1}", "llm_type", "('a', 'b')", "+nan"):
        assert shown_problems(bad), bad


@pytest.mark.model
@pytest.mark.heavy
@pytest.mark.parametrize("stem", ["03_artifacts", "04_detector"])
def test_notebook_outputs_show_no_reprs_or_code_names(stem: str, tmp_path: Path) -> None:
    """Notebooks 03 and 04, executed: no output shows None, nan, a repr or a snake_case column name."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(ROOT / "notebooks" / f"{stem}.ipynb", as_version=4)
    NotebookClient(nb, timeout=1200, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT / "notebooks")}}).execute()
    nbformat.write(nb, tmp_path / f"{stem}.ipynb")  # kept for a look when the test fails
    bad = {}
    for i, cell in enumerate(nb.cells):
        for o in cell.get("outputs", []) if cell.cell_type == "code" else []:
            data = o.get("data", {})
            texts = [str(o.get("text", ""))] + [str(data.get(k, "")) for k in ("text/plain", "text/markdown")]
            # an HTML table shows its column labels; plotly's JSON and images are figures, checked apart
            texts.append(re.sub(r"<[^>]+>", " ", str(data.get("text/html", ""))) if "<table" in
                         str(data.get("text/html", "")) else "")
            if problems := [p for t in texts for p in shown_problems(t)]:
                bad[i] = problems
    assert not bad, bad
