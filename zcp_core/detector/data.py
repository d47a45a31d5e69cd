"""Deduplicated, seeded train/test splits for generated-text detectors.

DetectRL's test files overlap (the same text appears in several files), so a
split over records can put one text on both sides and inflate every metric.
Texts are therefore deduplicated by their exact string first; each dropped
duplicate is recorded with the id it collapsed into, so the step can be undone.
The split is stratified by label and seeded, so the same seed gives the same
split on any machine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zcp_core.schema import TextRecord

if TYPE_CHECKING:
    import pandas as pd

LABELS = ("human", "llm")


@dataclass(frozen=True)
class Deduplicated:
    """Unique texts and a record of every duplicate dropped.

    Attributes:
        records: The first record of each distinct text, in input order.
        n_records: How many records came in.
        duplicates: Rows ``(id, kept_id, label, kept_label, reason)`` for each
            dropped record; ``reason`` is ``duplicate_text`` or
            ``duplicate_text_label_conflict`` (same text, other label).
    """

    records: tuple[TextRecord, ...]
    n_records: int
    duplicates: tuple[dict, ...]

    @property
    def n_unique(self) -> int:
        """Number of distinct texts."""
        return len(self.records)

    def duplicates_frame(self) -> pd.DataFrame:
        """The dropped duplicates as a DataFrame (columns as in ``duplicates``)."""
        import pandas as pd

        return pd.DataFrame(list(self.duplicates), columns=["id", "kept_id", "label", "kept_label", "reason"])


def dedup_texts(records: Iterable[TextRecord]) -> Deduplicated:
    """Keep the first record of each exact text; record what was dropped and why.

    Args:
        records: Texts, possibly from several overlapping files.

    Returns:
        The unique records and a log of the duplicates.
    """
    first: dict[str, TextRecord] = {}
    dropped: list[dict] = []
    n = 0
    for r in records:
        n += 1
        kept = first.get(r.text)
        if kept is None:
            first[r.text] = r
            continue
        reason = "duplicate_text" if kept.label == r.label else "duplicate_text_label_conflict"
        dropped.append({"id": r.id, "kept_id": kept.id, "label": r.label, "kept_label": kept.label, "reason": reason})
    return Deduplicated(tuple(first.values()), n, tuple(dropped))


@dataclass(frozen=True)
class Split:
    """A train/test split over unique texts.

    Attributes:
        train: Training records.
        test: Test records.
        seed: The seed used.
        test_size: Fraction of each label held out.
        dedup: The deduplication the split was made from.
    """

    train: tuple[TextRecord, ...]
    test: tuple[TextRecord, ...]
    seed: int
    test_size: float
    dedup: Deduplicated

    def assignment_frame(self) -> pd.DataFrame:
        """One row per unique text: ``id``, ``label``, ``split`` (``train``/``test``)."""
        import pandas as pd

        rows = [{"id": r.id, "label": r.label, "split": "train"} for r in self.train]
        rows += [{"id": r.id, "label": r.label, "split": "test"} for r in self.test]
        return pd.DataFrame(rows, columns=["id", "label", "split"])


def _rank(seed: int, text: str) -> str:
    # Hashing (seed, text) instead of shuffling makes a text's side independent
    # of the input order and of which other files were loaded.
    return hashlib.sha256(f"{seed}\x00{text}".encode()).hexdigest()


def split_texts(records: Sequence[TextRecord], test_size: float = 0.3, seed: int = 0) -> Split:
    """Deduplicate, then split each label's texts into train and test.

    Args:
        records: Labelled texts (``human`` / ``llm``); other labels are an error.
        test_size: Fraction of each label held out for testing (0 < test_size < 1).
        seed: Seed of the split.

    Returns:
        A :class:`Split` in which no text sits on both sides.
    """
    if not 0 < test_size < 1:
        raise ValueError(f"test_size must be in (0, 1), got {test_size}")
    dd = dedup_texts(records)
    bad = sorted({r.label for r in dd.records} - set(LABELS))
    if bad:
        raise ValueError(f"detector data must be labelled human/llm; found labels {bad}")
    train: list[TextRecord] = []
    test: list[TextRecord] = []
    for label in LABELS:
        group = sorted((r for r in dd.records if r.label == label), key=lambda r: _rank(seed, r.text))
        k = round(len(group) * test_size)
        test += group[:k]
        train += group[k:]
    order = {r.id: i for i, r in enumerate(dd.records)}
    train.sort(key=lambda r: order[r.id])
    test.sort(key=lambda r: order[r.id])
    return Split(tuple(train), tuple(test), seed, test_size, dd)


def load_texts_for_detector(paths: Sequence[str], fmt: str = "auto", fields: Any = None) -> list[TextRecord]:
    """Load and concatenate labelled texts from DetectRL or generic files (``zcp_core.data.load_texts``)."""
    from zcp_core.data import load_texts

    return load_texts(list(paths), fmt=fmt, fields=fields)
