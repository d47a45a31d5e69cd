"""One detector compare run on the bundled sample reads the same in the CLI and on the detector page: the
report's headline, facts and metric rows, word for word (``zcp_core.detector.report``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from apphelp import render_page
from test_report_artifacts import page_text, shown_problems

ROOT = Path(__file__).resolve().parent.parent
CLAUDE = sorted(str(p) for p in (ROOT / "data" / "detectrl_sample").glob("*Claude*.json"))


@pytest.fixture(scope="module")
def compare_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A compare run made with the CLI on one sample file (a TF-IDF detector: seconds), and its text output."""
    import contextlib
    import io

    from zcp_core.cli.main import main

    folder = tmp_path_factory.mktemp("det") / "runs" / "cmp"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["detector", "compare", "--data", *CLAUDE, "--explain-n", "10", "--out", str(folder)]) == 0
    return folder, buf.getvalue()


def test_cli_and_page_say_the_same(compare_run: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from zcp_core.detector.report import ATTACK_COLUMNS, attack_rows, report
    from zcp_core.runs import load_run

    folder, cli = compare_run
    run = load_run(folder)
    rep = report(run)
    page = page_text(render_page("detector.py", folder.parent, monkeypatch))
    for name, text in {"CLI": cli, "page": page, "markdown": rep.to_markdown()}.items():
        for s in (rep.headline.text, *rep.sentences, *rep.notes[:2]):
            assert s in text, f"{name} lacks {s!r}"
        for k, v in rep.facts:
            assert re.search(re.escape(k) + r"\W{0,4}" + re.escape(v), text), f"{name}: {k} {v}"
    for row in rep.rows:  # the metric rows, cell by cell
        assert all(cell in page and cell in cli for cell in row)
    for row in attack_rows(run.table("attack")):
        assert all(cell in page and cell in cli for cell in row)
    assert all(c in page and c in cli for c in ATTACK_COLUMNS)
    assert rep.command and rep.command in cli and "--out" not in rep.command


def test_detector_surfaces_show_words(compare_run: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from zcp_core.detector import viz as vd
    from zcp_core.runs import load_run

    folder, cli = compare_run
    at = render_page("detector.py", folder.parent, monkeypatch)
    page = page_text(at)
    assert shown_problems(page) == [] and shown_problems(cli.split("run: ")[0]) == []
    for raw in ("original:attacked", "tpr@", "n/a", " @"):
        assert raw not in page and raw not in cli.split("run: ")[0], raw
    run = load_run(folder)
    toks = run.table("token_attributions")
    texts = run.table("text_attributions")
    row = texts.iloc[0]
    fig = vd.waterfall_figure(toks[(toks["detector"] == row["detector"]) & (toks["id"] == row["id"])],
                              float(row["base_value"]))
    labels = list(fig.data[0].y)
    assert labels and not any(re.search(r"@\d", str(y)) for y in labels), labels
    share = vd.artifact_share_figure(run.summary["artifact_share"])
    assert not any(":" in str(x) for x in share.data[0].x)
