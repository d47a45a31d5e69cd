"""Notebooks are kept as text: each ``.ipynb`` is paired with a jupytext percent script, and the two agree.

Edit the ``.py`` and run ``jupytext --sync notebooks/*.py`` (``make notebooks``);
CI executes the ``.ipynb`` files once and checks their outputs (``tests/test_notebook_outputs.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
PACKAGES = ("probe", "lab", "artifacts", "detector", "afr", "guided")


def _cells(path: Path) -> list[tuple[str, str]]:
    import jupytext

    nb = jupytext.read(path)
    return [(c.cell_type, c.source.strip()) for c in nb.cells]


def test_every_notebook_is_a_pair() -> None:
    ipynb = sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))
    py = sorted(p.stem for p in NOTEBOOKS.glob("*.py"))
    assert ipynb and ipynb == py


@pytest.mark.parametrize("stem", sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")))
def test_pair_in_sync(stem: str) -> None:
    script, notebook = _cells(NOTEBOOKS / f"{stem}.py"), _cells(NOTEBOOKS / f"{stem}.ipynb")
    assert script == notebook, f"{stem}: .py and .ipynb differ; run `jupytext --sync notebooks/{stem}.py`"
    import jupytext

    formats = jupytext.read(NOTEBOOKS / f"{stem}.ipynb").metadata.get("jupytext", {}).get("formats", "")
    assert formats == "ipynb,py:percent"


def test_each_method_has_a_notebook_named_like_its_package() -> None:
    names = {p.stem.split("_", 1)[1] for p in NOTEBOOKS.glob("*.ipynb")}
    assert set(PACKAGES) <= names
