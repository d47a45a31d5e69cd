"""Does a train kind's training split meet the test set? Content hashes and word 13-grams.

The lowest floor of the train kinds (:mod:`zcp_core.lab.benign`): the build imports it to drop, before training,
every training item whose question equals a test question (case and whitespace folded) or whose text shares a
word 13-gram with one (the GPT-3 decontamination rule), and records each overlap found.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.schema import Item

#: Word n-gram length of the overlap rule (GPT-3's 13-gram decontamination).
NGRAM = 13
_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def question_hash(text: str) -> str:
    """sha256 of a question with case and whitespace folded (a content hash that ignores layout)."""
    return hashlib.sha256(" ".join(text.lower().split()).encode("utf-8")).hexdigest()


def _grams(text: str, n: int = NGRAM) -> set[tuple[str, ...]]:
    w = _words(text)
    return {tuple(w[i:i + n]) for i in range(len(w) - n + 1)}


@dataclass(frozen=True)
class Overlap:
    """One training item that meets the test set.

    Attributes:
        train_id: The training item.
        test_id: The test item it meets.
        rule: ``question hash`` (the same question) or ``13-gram`` (a shared word 13-gram).
        shared: The 13-grams shared (first three, space-joined), or the hash.
        n_shared: How many 13-grams are shared (0 for a hash match).
    """

    train_id: str
    test_id: str
    rule: str
    shared: tuple[str, ...]
    n_shared: int


@dataclass(frozen=True)
class OverlapReport:
    """What a train kind's training texts share with the test set, and the items dropped for it.

    Attributes:
        n_train: Training items checked.
        n_test: Test questions checked against.
        overlaps: Every overlap found (before dropping).
        kept: Ids of the training items kept (none of them overlaps).
    """

    n_train: int
    n_test: int
    overlaps: tuple[Overlap, ...]
    kept: tuple[str, ...] = field(default=())

    @property
    def dropped(self) -> tuple[str, ...]:
        """Training ids dropped, in order of first overlap."""
        return tuple(dict.fromkeys(o.train_id for o in self.overlaps))

    def frame(self) -> pd.DataFrame:
        """The ``test_overlap`` table: ``train_id, test_id, rule, n_shared, shared``."""
        import pandas as pd

        return pd.DataFrame([{"train_id": o.train_id, "test_id": o.test_id, "rule": o.rule, "n_shared": o.n_shared,
                              "shared": " | ".join(o.shared)} for o in self.overlaps],
                            columns=["train_id", "test_id", "rule", "n_shared", "shared"])

    def summary(self) -> dict[str, Any]:
        """The manifest block: counts, the rule, and each overlap in words."""
        return {"rule": f"no test question among the training questions by content hash (case and whitespace "
                        f"folded), and no word {NGRAM}-gram shared by a training text and a test question",
                "n_train": self.n_train, "n_test": self.n_test, "n_overlaps": len(self.overlaps),
                "dropped": list(self.dropped), "n_kept": len(self.kept),
                "overlaps": [f"{o.train_id} ~ {o.test_id}: {o.rule}"
                             + (f", {o.n_shared} shared, e.g. '{o.shared[0]}'" if o.n_shared else "")
                             for o in self.overlaps],
                "kept_clean": True}


def training_text(item: Item) -> str:
    """Everything of a training item the model may be trained on: its question and its solution or answer."""
    return "\n".join(x for x in (item.question, item.solution or "", item.answer) if x)


def find_overlaps(train: Sequence[Item], test: Sequence[Item], n: int = NGRAM) -> OverlapReport:
    """Check training items against test questions; the kept ones share no question hash and no ``n``-gram.

    Args:
        train: The training split's items.
        test: The test set's items (their questions are what a probe shows the model).
        n: The n-gram length.
    """
    by_hash = {question_hash(t.question): t.id for t in test}
    index: dict[tuple[str, ...], str] = {}
    for t in test:
        for g in _grams(t.question, n):
            index.setdefault(g, t.id)
    overlaps: list[Overlap] = []
    kept: list[str] = []
    for it in train:
        hit = by_hash.get(question_hash(it.question))
        if hit is not None:
            overlaps.append(Overlap(it.id, hit, "question hash", (question_hash(it.question)[:16],), 0))
        shared: dict[str, list[str]] = {}
        for g in sorted(_grams(training_text(it), n)):
            if g in index:
                shared.setdefault(index[g], []).append(" ".join(g))
        for test_id, grams in shared.items():
            overlaps.append(Overlap(it.id, test_id, "13-gram" if n == NGRAM else f"{n}-gram", tuple(grams[:3]),
                                    len(grams)))
        if hit is None and not shared:
            kept.append(it.id)
    return OverlapReport(len(train), len(test), tuple(overlaps), tuple(kept))
