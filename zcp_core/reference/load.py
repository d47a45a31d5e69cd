"""Reading a reference set back: a ``reference.jsonl`` file or the run folder that holds it."""

from __future__ import annotations

from pathlib import Path

from zcp_core.errors import DataError
from zcp_core.schema import Item

REFERENCE_FILE = "reference.jsonl"


def load_reference(path: str | Path) -> list[Item]:
    """Reference twins from ``path``: an items file, or a ``zcp reference build --out`` folder.

    A folder is read through its ``reference.jsonl``; every twin must name its
    original (``original_id``).

    Raises:
        DataError: A folder without ``reference.jsonl``, or a twin without ``original_id``.
    """
    from zcp_core.data import load_items, resolve_dataset

    p = resolve_dataset(path)
    if p.is_dir():
        inner = p / REFERENCE_FILE
        if not inner.is_file():
            hint = " (a paraphrase run: pass it as --paraphrased)" if (p / "paraphrase.jsonl").is_file() else ""
            raise DataError(str(p), None, None, f"folder has no {REFERENCE_FILE}; expected a `zcp reference build "
                                                f"--out` run folder or an items file{hint}")
        p = inner
    items = load_items(p)
    for line, it in enumerate(items, 1):
        if not it.original_id:
            raise DataError(str(p), line, "original_id", f"reference item {it.id!r} does not name its original")
    return items
