"""Chain records on disk, the keep-correct filter, and matched arms.

A chain record (one JSONL line) is ``{uid, answer, messages: [user, assistant]}``
plus optional ``condition``, ``sample``, ``domain``; the user message holds the
bare question and the assistant message the chain (think block in ``<think>``).

The filter keeps a chain when the last ``\\boxed{}`` of its assistant message
equals the gold answer under math-verify (:func:`zcp_core.answers.grade`, no
digit-stripping fallback). Every verdict is recorded with both parsed forms;
nothing is dropped without a row saying why. Matched arms keep, in each
condition, the kept chains of the uids kept by *every* condition.

Verdict frame columns: ``condition``, ``uid``, ``sample``, ``pred`` (last boxed,
or None), ``gold``, ``correct``, ``status`` (ok/no_answer/parse_error),
``pred_parsed``, ``gold_parsed``, ``kept``, ``matched``, ``reason``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zcp_core.errors import DataError

if TYPE_CHECKING:
    import pandas as pd


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """Read chain records from JSONL, checking ``uid``, ``answer`` and ``messages``.

    Raises:
        DataError: Naming the file, line and field of the first bad record.
    """
    p = Path(path)
    if not p.exists():
        raise DataError(str(p), None, None, "file not found")
    out = []
    for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise DataError(str(p), i, None, f"malformed JSON: {e.msg}") from e
        for key in ("uid", "answer", "messages"):
            if key not in rec:
                raise DataError(str(p), i, key, "missing field")
        if not any(m.get("role") == "assistant" for m in rec["messages"]):
            raise DataError(str(p), i, "messages", "no assistant message")
        out.append(rec)
    return out


def write_records(path: str | Path, records: Iterable[Mapping[str, Any]]) -> Path:
    """Write chain records as JSONL, atomically."""
    from zcp_core.runs import atomic_write_bytes

    p = Path(path)
    body = "".join(json.dumps(dict(r), ensure_ascii=False) + "\n" for r in records)
    atomic_write_bytes(p, body.encode("utf-8"))
    return p


def _content(rec: Mapping[str, Any], role: str) -> str:
    msgs = [m for m in rec["messages"] if m.get("role") == role]
    if not msgs:
        return ""
    return str((msgs[0] if role == "user" else msgs[-1]).get("content") or "")


def record_chain(rec: Mapping[str, Any]) -> str:
    """The assistant chain of a record."""
    return _content(rec, "assistant")


def record_question(rec: Mapping[str, Any]) -> str:
    """The (bare) question of a record."""
    return _content(rec, "user")


def records_frame(records: Sequence[Mapping[str, Any]], condition: str = "") -> pd.DataFrame:
    """Chain records as a frame: ``uid``, ``sample``, ``condition``, ``answer``, ``question``, ``chain``.

    ``sample`` is the record's own, else its index among the uid's records.
    """
    import pandas as pd

    seen: dict[str, int] = {}
    rows = []
    for r in records:
        uid = str(r["uid"])
        k = seen.get(uid, 0)
        seen[uid] = k + 1
        rows.append({"uid": uid, "sample": int(r.get("sample", k)), "condition": str(r.get("condition", condition)),
                     "answer": str(r["answer"]), "question": record_question(r), "chain": record_chain(r)})
    return pd.DataFrame(rows, columns=["uid", "sample", "condition", "answer", "question", "chain"])


def grade_records(records: Sequence[Mapping[str, Any]], condition: str = "") -> pd.DataFrame:
    """Keep-correct verdicts, one row per record (columns in the module docstring, less matched)."""
    import pandas as pd

    from zcp_core.answers import grade, last_boxed

    rows = []
    seen: dict[str, int] = {}
    for r in records:
        uid = str(r["uid"])
        k = seen.get(uid, 0)
        seen[uid] = k + 1
        pred = last_boxed(record_chain(r))
        g = grade(pred, str(r["answer"]))
        reason = "correct" if g.correct else {"ok": "wrong answer", "no_answer": "no \\boxed{} answer",
                                              "parse_error": "unparseable answer"}[g.status]
        rows.append({"condition": str(r.get("condition", condition)), "uid": uid, "sample": int(r.get("sample", k)),
                     "pred": pred, "gold": str(r["answer"]), "correct": g.correct, "status": g.status,
                     "pred_parsed": g.pred_parsed, "gold_parsed": g.gold_parsed, "kept": g.correct,
                     "reason": reason})
    cols = ["condition", "uid", "sample", "pred", "gold", "correct", "status", "pred_parsed", "gold_parsed",
            "kept", "reason"]
    return pd.DataFrame(rows, columns=cols)


@dataclass(frozen=True)
class FilterResult:
    """What :func:`filter_dir` did.

    Attributes:
        verdicts: One row per chain of every condition (columns in the module docstring).
        matched_uids: Uids kept by every condition, sorted.
        files: Files written, by name (``<cond>_kept``, ``<cond>_matched``).
        counts: Per condition: chains, kept chains, kept uids, matched chains.
    """

    verdicts: pd.DataFrame
    matched_uids: tuple[str, ...]
    files: Mapping[str, str]
    counts: Mapping[str, Mapping[str, int]]


def match_uids(verdicts: pd.DataFrame, conditions: Sequence[str]) -> list[str]:
    """Uids with at least one kept chain in every condition, sorted."""
    kept = [set(verdicts.loc[(verdicts["condition"] == c) & verdicts["kept"], "uid"]) for c in conditions]
    return sorted(set.intersection(*kept)) if kept else []


def filter_dir(folder: str | Path, conditions: Sequence[str]) -> FilterResult:
    """Apply the keep-correct filter to ``<cond>.jsonl`` in ``folder`` and write kept and matched files.

    Writes ``<cond>_kept.jsonl`` (correct chains) and ``<cond>_matched.jsonl``
    (correct chains of uids kept by every listed condition) for each condition.
    """
    import pandas as pd

    if len(conditions) < 2:
        raise DataError(str(folder), None, "conditions", "matching needs at least two conditions")
    d = Path(folder)
    recs = {c: read_records(d / f"{c}.jsonl") for c in conditions}
    verdicts = pd.concat([grade_records(recs[c], c).assign(condition=c) for c in conditions], ignore_index=True)
    matched = match_uids(verdicts, conditions)
    mset = set(matched)
    verdicts["matched"] = verdicts["kept"] & verdicts["uid"].isin(mset)
    verdicts.loc[verdicts["kept"] & ~verdicts["matched"], "reason"] = "correct, but uid not kept by every condition"
    files, counts = {}, {}
    for c in conditions:
        v = verdicts[verdicts["condition"] == c].reset_index(drop=True)
        kept = [r for r, k in zip(recs[c], v["kept"]) if k]
        both = [r for r, k in zip(recs[c], v["matched"]) if k]
        files[f"{c}_kept"] = str(write_records(d / f"{c}_kept.jsonl", kept))
        files[f"{c}_matched"] = str(write_records(d / f"{c}_matched.jsonl", both))
        counts[c] = {"chains": len(v), "kept": len(kept), "kept_uids": int(v.loc[v["kept"], "uid"].nunique()),
                     "matched_chains": len(both)}
    return FilterResult(verdicts, tuple(matched), files, counts)
