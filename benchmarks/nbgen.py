"""Shared writer for the notebook generators in benchmarks/ and scripts/.

Notebooks are committed without outputs; each generator lists its cells as
``("md" | "code", source)`` pairs and calls :func:`write_notebook`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence


def write_notebook(path: Path, cells: Sequence[tuple[str, str]]) -> Path:
    """Write ``cells`` as a Python 3 notebook with no outputs and return the path."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    nb = new_notebook()
    nb.cells = [new_markdown_cell(src) if kind == "md" else new_code_cell(src) for kind, src in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    print(f"wrote {path}")
    return path
