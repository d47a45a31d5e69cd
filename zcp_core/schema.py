"""Record schemas that cross module boundaries.

``Item`` is a problem with a gold final answer (GSM8K, MATH, GSM1K, reference
and paraphrase sets). ``TextRecord`` is a text in a corpus (DetectRL and other
generated-text benchmarks). Both are frozen; ``metadata`` is a read-only
mapping so a record can be hashed into cache keys safely.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping


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
