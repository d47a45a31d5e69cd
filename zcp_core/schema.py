"""Record schemas that cross module boundaries.

``Item`` is a problem with a gold final answer (GSM8K, MATH, GSM1K, reference
and paraphrase sets). ``TextRecord`` is a text in a corpus (DetectRL and other
generated-text benchmarks). Both are frozen; ``metadata`` is a read-only
mapping so a record can be hashed into cache keys safely. ``field_census``
describes the fields a file's raw records actually hold (``zcp data inspect``).
"""

from __future__ import annotations

import numbers
from collections import Counter
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Mapping


def _freeze(meta: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(meta or {}))


@dataclass(frozen=True)
class Item:
    """A benchmark problem.

    Attributes:
        id: Stable id derived from the data (e.g. ``gsm8k-test-1``).
        question: The problem statement.
        answer: The gold final answer, as a string.
        solution: A worked solution, when the dataset has one.
        source: Dataset name (``gsm8k``, ``math500``, ``gsm1k``, ...).
        original_id: For reference or paraphrase items, the id of the original.
        metadata: Extra fields (subject, level, calculator annotations, ...).
    """

    id: str
    question: str
    answer: str
    solution: str | None = None
    source: str = ""
    original_id: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata", _freeze(self.metadata))

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSONL and DataFrames."""
        return {
            "id": self.id,
            "question": self.question,
            "answer": self.answer,
            "solution": self.solution,
            "source": self.source,
            "original_id": self.original_id,
            "metadata": dict(self.metadata),
        }


@dataclass(frozen=True)
class TextRecord:
    """A text in a corpus such as DetectRL.

    Attributes:
        id: Stable id (``<file stem>-<index>`` for DetectRL).
        text: The text.
        label: ``human`` or ``llm`` (normalised), or another dataset label.
        llm_type: Generator name for LLM texts (``Claude-instant``...), else ``""``.
        data_type: Domain or attack type (``arxiv``, ``xsum``...).
        metadata: Extra fields.
    """

    id: str
    text: str
    label: str
    llm_type: str = ""
    data_type: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "metadata", _freeze(self.metadata))

    def to_dict(self) -> dict[str, Any]:
        """Plain-dict form for JSONL and DataFrames."""
        return {
            "id": self.id,
            "text": self.text,
            "label": self.label,
            "llm_type": self.llm_type,
            "data_type": self.data_type,
            "metadata": dict(self.metadata),
        }


@dataclass(frozen=True)
class FieldCount:
    """One field of a file's raw records.

    Attributes:
        name: The field (a JSON key or a column).
        present: How many records have it.
        types: ``(type, records)`` pairs of its values, the most common first (``text``, ``integer``, ``null``...).
    """

    name: str
    present: int
    types: tuple[tuple[str, int], ...]


def value_type(value: Any) -> str:
    """A raw value's type in words: text, integer, number, boolean, null, list or object."""
    if value is None or (isinstance(value, float) and value != value):  # tables hold a missing cell as NaN
        return "null"
    if isinstance(value, str):
        return "text"
    if isinstance(value, bool) or type(value).__name__ == "bool_":  # bool before int: True is an int too
        return "boolean"
    if isinstance(value, numbers.Integral):
        return "integer"
    if isinstance(value, numbers.Real):
        return "number"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):  # parquet lists arrive as arrays
        return "list"
    return type(value).__name__


def field_census(records: Iterable[Mapping[str, Any]]) -> tuple[int, list[FieldCount]]:
    """How many records there are, and each field they hold (in first-seen order) with its types and counts."""
    n = 0
    types: dict[str, Counter[str]] = {}
    for rec in records:
        n += 1
        for key, value in rec.items():
            types.setdefault(str(key), Counter())[value_type(value)] += 1
    return n, [FieldCount(k, sum(c.values()), tuple(c.most_common())) for k, c in types.items()]
