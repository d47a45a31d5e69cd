"""C's definition is one text in one place, and every surface that shows a C renders it."""

from __future__ import annotations

import shutil
from pathlib import Path

from zcp_core.report import C_DEFINITION

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "data" / "examples" / "probe-lab-direct"


def _flat(text: str) -> str:
    return " ".join(text.replace("**", "").split())


def test_the_definition_is_written_once_in_code() -> None:
    hits = [p for p in (ROOT / "zcp_core").rglob("*.py") if "an upper bound on the posterior probability, at the "
            "stated" in " ".join(p.read_text(encoding="utf-8").split())]
    assert [p.name for p in hits] == ["report.py"] and hits[0].parent.name == "zcp_core"
    assert "probability that the model saw" not in " ".join(
        p.read_text(encoding="utf-8") for p in [*(ROOT / "zcp_core").rglob("*.py"), *(ROOT / "app_pages").glob("*.py")])


def test_confidence_cli_and_release_card_render_it(tmp_path: Path, capsys) -> None:
    from zcp_core.cli.main import main

    assert main(["confidence", str(EXAMPLE)]) == 0
    assert C_DEFINITION in _flat(capsys.readouterr().out)
    run = tmp_path / "run"
    shutil.copytree(EXAMPLE, run)
    assert main(["release", str(run), "--out", str(tmp_path / "rel")]) == 0
    assert C_DEFINITION in _flat((tmp_path / "rel" / "README.md").read_text())


def test_probe_page_renders_it(tmp_path: Path, monkeypatch) -> None:
    from streamlit.testing.v1 import AppTest

    runs = tmp_path / "runs" / "examples"
    shutil.copytree(EXAMPLE, runs / EXAMPLE.name)
    monkeypatch.setenv("ZCP_RUNS", str(tmp_path / "runs"))
    at = AppTest.from_file(str(ROOT / "app_pages" / "probe.py"), default_timeout=120).run()
    shown = _flat(" ".join(str(m.value) for m in at.markdown) + " " + " ".join(str(c.value) for c in at.caption))
    assert C_DEFINITION in shown, shown[:500]


def test_notebook_01_and_docs_render_it() -> None:
    nb = (ROOT / "notebooks" / "01_probe.py").read_text(encoding="utf-8")
    assert "CONFIDENCE_EXPLAINED" in nb  # it renders the app's explanation, which holds the definition
    from zcp_core.app.labels import CONFIDENCE_EXPLAINED

    assert C_DEFINITION in _flat(CONFIDENCE_EXPLAINED)
    assert C_DEFINITION in _flat((ROOT / "docs" / "verdict.md").read_text(encoding="utf-8"))


def test_item_terms_are_one_text_on_the_page_the_notebook_and_the_docs() -> None:
    from zcp_core.probe.report import ITEM_TERMS, item_terms_text

    docs = _flat((ROOT / "docs" / "verdict.md").read_text(encoding="utf-8"))
    assert all(f"{term}: {words}" in docs for term, words in ITEM_TERMS)
    assert "item_terms_text()" in (ROOT / "app_pages" / "probe.py").read_text()
    assert "print(item_terms_text())" in (ROOT / "notebooks" / "01_probe.py").read_text()
    assert item_terms_text().count(". ") >= len(ITEM_TERMS) - 1
