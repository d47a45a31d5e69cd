"""Named adapters that turn existing chain corpora into one chains frame.

Adapters (``ADAPTERS``):

* ``skythought``: SkyThought MATH-500 outputs. The math-evaluation-harness
  JSONL (``question``, ``gt`` gold, ``code`` = list of chains) and the
  ``still2`` JSON object keyed by problem (``answer`` gold,
  ``responses[T].content``). ``<|begin_of_thought|>…<|end_of_thought|>`` mark
  the think block.
* ``qwen25math``: Qwen2.5-Math samples (``question``, ``gt``, ``response`` =
  list of 8 chains).
* ``gpt3-gsm8k``: GPT-3 GSM8K solutions (``question``, ``ground_truth`` ending
  in ``A: n``; four model chains per problem, final line ``A: n``).
* ``messages``: the generic chain-record JSONL (``uid``, ``answer``, ``messages``).

Frame columns: ``uid`` (``q-`` + sha1 of the whitespace-normalised question,
so corpora on the same problems line up), ``orig_id`` (the corpus's own id),
``sample``, ``generator``, ``question``, ``answer`` (gold), ``chain`` (full
text), ``think`` (the think block's text, ``""`` when there is none),
``correct`` (the corpus's own verdict, None when absent), ``source`` (file name).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zcp_core.errors import DataError

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = ["uid", "orig_id", "sample", "generator", "question", "answer", "chain", "think", "correct", "source"]
_THINK = re.compile(r"(?:<think>|<\|begin_of_thought\|>)(.*?)(?:</think>|<\|end_of_thought\|>|$)", re.S)
_GPT3_KEYS = ("6b_finetuning", "6b_verification", "175b_finetuning", "175b_verification")
_A_LINE = re.compile(r"(?m)^A:\s*(.+?)\s*$")


def question_uid(question: str) -> str:
    """A uid from the question text (whitespace-normalised), shared across corpora."""
    norm = " ".join(question.split())
    return "q-" + hashlib.sha1(norm.encode("utf-8")).hexdigest()[:12]


def think_text(chain: str) -> str:
    """The think block's text, or ``""``."""
    m = _THINK.search(chain)
    return m.group(1).strip() if m else ""


def _jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                yield i, json.loads(line)
            except json.JSONDecodeError as e:
                raise DataError(str(path), i, None, f"malformed JSON: {e.msg}") from e


def _row(question: str, answer: str, chain: str, sample: int, orig_id: Any, generator: str, correct: Any,
         source: str) -> dict[str, Any]:
    return {"uid": question_uid(question), "orig_id": str(orig_id), "sample": sample, "generator": generator,
            "question": question, "answer": str(answer), "chain": chain, "think": think_text(chain),
            "correct": None if correct is None else bool(correct), "source": source}


def _skythought(path: Path) -> Iterator[dict[str, Any]]:
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        for key, e in data.items():
            for temp, resp in sorted((e.get("responses") or {}).items()):
                yield _row(e.get("problem", key), e["answer"], resp.get("content", ""), 0, e.get("unique_id", key),
                           f"T={temp}", resp.get("correctness"), path.name)
        return
    for i, r in _jsonl(path):
        if "code" not in r or "gt" not in r:
            raise DataError(str(path), i, "code" if "code" not in r else "gt", "missing field (skythought adapter)")
        scores = r.get("score") or []
        for k, chain in enumerate(r["code"]):
            yield _row(r["question"], r["gt"], chain, k, r.get("idx", i), path.stem,
                       scores[k] if k < len(scores) else None, path.name)


def _qwen25math(path: Path) -> Iterator[dict[str, Any]]:
    for i, r in _jsonl(path):
        chains = r.get("response") or r.get("code")
        if chains is None or "gt" not in r:
            raise DataError(str(path), i, "response" if chains is None else "gt", "missing field (qwen25math adapter)")
        scores = r.get("score") or []
        for k, chain in enumerate(chains):
            yield _row(r["question"], r["gt"], chain, k, r.get("idx", i), "qwen2.5-math",
                       scores[k] if k < len(scores) else None, path.name)


def _gpt3_gsm8k(path: Path) -> Iterator[dict[str, Any]]:
    for i, r in _jsonl(path):
        m = _A_LINE.findall(r.get("ground_truth", ""))
        if not m:
            raise DataError(str(path), i, "ground_truth", "no final 'A: n' line (gpt3-gsm8k adapter)")
        for k, key in enumerate(_GPT3_KEYS):
            sol = r.get(key)
            if sol:
                yield _row(r["question"], m[-1].replace(",", ""), sol["solution"], k, f"gsm8k-test-{i}", key,
                           sol.get("is_correct"), path.name)


def _messages(path: Path) -> Iterator[dict[str, Any]]:
    from zcp_core.afr.filter import read_records, records_frame

    df = records_frame(read_records(path))
    for r in df.itertuples():
        row = _row(r.question, r.answer, r.chain, int(r.sample), r.uid, r.condition or path.stem, None, path.name)
        row["uid"] = r.uid  # generated corpora already share uids across conditions
        yield row


ADAPTERS: dict[str, Callable[[Path], Iterator[dict[str, Any]]]] = {
    "skythought": _skythought, "qwen25math": _qwen25math, "gpt3-gsm8k": _gpt3_gsm8k, "messages": _messages,
}


def load_chains(path: str | Path, adapter: str, limit: int | None = None) -> pd.DataFrame:
    """Read a chain corpus with a named adapter into a chains frame (columns in the module docstring).

    Args:
        path: The corpus file.
        adapter: One of ``ADAPTERS``.
        limit: Keep only the first ``limit`` problems (by first appearance).
    """
    import pandas as pd

    if adapter not in ADAPTERS:
        raise DataError(str(path), None, "adapter", f"unknown adapter {adapter!r}; expected one of {sorted(ADAPTERS)}")
    p = Path(path)
    if not p.exists():
        raise DataError(str(p), None, None, "file not found")
    rows = list(ADAPTERS[adapter](p))
    df = pd.DataFrame(rows, columns=COLUMNS)
    if limit:
        keep = list(dict.fromkeys(df["uid"]))[:limit]
        df = df[df["uid"].isin(set(keep))].reset_index(drop=True)
    return df
