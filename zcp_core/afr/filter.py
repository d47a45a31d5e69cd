"""Chain records on disk, the keep-correct filter, and matched arms.

A chain record (one JSONL line) is ``{uid, answer, messages: [user, assistant]}``
plus optional ``condition``, ``sample``, ``domain``, ``forced_finish`` and
``boxed_tail`` (a final answer written by ``box_prefill``, not by the model);
the user message holds the bare question and the assistant message the chain
(think block in ``<think>``).

The filter keeps a chain when the last ``\\boxed{}`` of its assistant message
equals the gold answer. Two filters (``KeepFilter``), and every run says which:

* ``mathverify`` (default): math-verify only (:func:`zcp_core.answers.grade`),
  so ``\\frac{1}{2}`` is never taken for ``12``.
* ``paper``: the seed's cascade, for reproducing published numbers: exact
  string match, then math-verify, then equality of the digits left after
  stripping every other character (which accepts ``\\frac{1}{2}`` for ``12``).

Every verdict is recorded with both parsed forms and the stage that accepted
it; nothing is dropped without a row saying why. Matched arms keep, in each
condition, chains of the uids kept by *every* condition: by default (``keep =
"first"``) only the first kept chain per problem (lowest sample index), so both
arms hold one chain per problem, as in the paper; ``keep = "all"`` keeps every
kept chain. Kept records carry ``keep_correct = {filter, stage, pred, keep}``.

Verdict frame columns: ``condition``, ``uid``, ``sample``, ``pred`` (last boxed,
or None), ``gold``, ``correct``, ``status`` (ok/no_answer/parse_error/not_a_number),
``pred_parsed``, ``gold_parsed``, ``filter``, ``stage`` (``exact``,
``math-verify``, ``digits``; ``""`` when not correct), ``forced_finish``,
``kept``, ``matched``, ``reason``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from zcp_core.errors import DataError

if TYPE_CHECKING:
    import pandas as pd

KeepFilter = Literal["mathverify", "paper"]
KeepMode = Literal["first", "all"]
FILTERS: tuple[str, ...] = ("mathverify", "paper")
#: What each filter does, in words (run summaries and screens quote it).
FILTER_DESCRIPTIONS = {
    "mathverify": "math-verify only, no digit-stripping fallback (rejects \\frac{1}{2} for 12)",
    "paper": "the seed's cascade: exact string, then math-verify, then digit-stripping (for reproducing "
             "published numbers; accepts \\frac{1}{2} for 12)",
}
KEEP_MODES: tuple[str, ...] = ("first", "all")
_NON_DIGIT = re.compile(r"[^0-9]")


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


def record_forced(rec: Mapping[str, Any]) -> bool:
    """Whether a record's final answer was forced by ``box_prefill`` rather than written by the model."""
    return bool(rec.get("forced_finish")) or bool(rec.get("boxed_tail"))


def records_frame(records: Sequence[Mapping[str, Any]], condition: str = "") -> pd.DataFrame:
    """Chain records as a frame: ``uid``, ``sample``, ``condition``, ``answer``, ``question``, ``chain``,
    ``forced_finish``.

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
                     "answer": str(r["answer"]), "question": record_question(r), "chain": record_chain(r),
                     "forced_finish": record_forced(r)})
    return pd.DataFrame(rows, columns=["uid", "sample", "condition", "answer", "question", "chain", "forced_finish"])


@dataclass(frozen=True)
class KeepVerdict:
    """One keep-correct verdict.

    Attributes:
        correct: Whether the chain is kept.
        status: ``ok``, ``no_answer``, ``parse_error`` or ``not_a_number`` (math-verify's view of the answer).
        stage: What accepted it: ``exact``, ``math-verify`` or ``digits`` (``""`` when not correct).
        pred_parsed: math-verify's parse of the prediction (``""`` when not parsed).
        gold_parsed: Its parse of the gold answer.
    """

    correct: bool
    status: str
    stage: str
    pred_parsed: str
    gold_parsed: str


def digits_only(text: str) -> str:
    """The ASCII digits of ``text``, everything else stripped (the paper filter's last stage)."""
    return _NON_DIGIT.sub("", text)


def keep_correct(pred: str | None, gold: str, keep_filter: KeepFilter = "mathverify") -> KeepVerdict:
    """Whether a chain's final answer ``pred`` counts as ``gold`` under a keep-correct filter.

    ``mathverify`` asks math-verify only. ``paper`` tries an exact string match
    (after trimming spaces), then math-verify, then equal non-empty digit strings.
    """
    from zcp_core.answers import grade

    if keep_filter not in FILTERS:
        raise ValueError(f"unknown filter {keep_filter!r}; expected one of {FILTERS}")
    if pred is None or not pred.strip():
        return KeepVerdict(False, "no_answer", "", "", "")
    if keep_filter == "paper" and pred.strip() == gold.strip():
        return KeepVerdict(True, "ok", "exact", pred.strip(), gold.strip())
    g = grade(pred, gold)
    if g.correct:
        return KeepVerdict(True, g.status, "math-verify", g.pred_parsed, g.gold_parsed)
    d = digits_only(pred)
    if keep_filter == "paper" and d and d == digits_only(gold):
        return KeepVerdict(True, g.status, "digits", g.pred_parsed, g.gold_parsed)
    return KeepVerdict(False, g.status, "", g.pred_parsed, g.gold_parsed)


_WHY_NOT = {"ok": "wrong answer", "no_answer": "no \\boxed{} answer", "parse_error": "unparseable answer",
            "not_a_number": "the box holds no number"}
VERDICT_COLUMNS = ["condition", "uid", "sample", "pred", "gold", "correct", "status", "pred_parsed", "gold_parsed",
                   "filter", "stage", "forced_finish", "kept", "reason"]


def grade_records(records: Sequence[Mapping[str, Any]], condition: str = "",
                  keep_filter: KeepFilter = "mathverify") -> pd.DataFrame:
    """Keep-correct verdicts, one row per record (columns in the module docstring, less matched)."""
    import pandas as pd

    from zcp_core.answers import last_boxed

    rows = []
    seen: dict[str, int] = {}
    for r in records:
        uid = str(r["uid"])
        k = seen.get(uid, 0)
        seen[uid] = k + 1
        pred = last_boxed(record_chain(r))
        v = keep_correct(pred, str(r["answer"]), keep_filter)
        reason = f"correct ({v.stage})" if v.correct else _WHY_NOT[v.status]
        rows.append({"condition": str(r.get("condition", condition)), "uid": uid, "sample": int(r.get("sample", k)),
                     "pred": pred, "gold": str(r["answer"]), "correct": v.correct, "status": v.status,
                     "pred_parsed": v.pred_parsed, "gold_parsed": v.gold_parsed, "filter": keep_filter,
                     "stage": v.stage, "forced_finish": record_forced(r), "kept": v.correct, "reason": reason})
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


@dataclass(frozen=True)
class FilterResult:
    """What :func:`filter_dir` did.

    Attributes:
        verdicts: One row per chain of every condition (columns in the module docstring).
        matched_uids: Uids kept by every condition, sorted.
        files: Files written, by name (``<cond>_kept``, ``<cond>_matched``).
        counts: Per condition: ``chains``, ``kept``, ``kept_uids``, ``matched_chains``, ``matched_forced``
            (matched chains whose final answer box_prefill forced).
        keep_filter: The filter that ran.
        keep: ``first`` (one chain per problem) or ``all``.
    """

    verdicts: pd.DataFrame
    matched_uids: tuple[str, ...]
    files: Mapping[str, str]
    counts: Mapping[str, Mapping[str, int]]
    keep_filter: str = "mathverify"
    keep: str = "first"


def match_uids(verdicts: pd.DataFrame, conditions: Sequence[str]) -> list[str]:
    """Uids with at least one kept chain in every condition, sorted."""
    kept = [set(verdicts.loc[(verdicts["condition"] == c) & verdicts["kept"], "uid"]) for c in conditions]
    return sorted(set.intersection(*kept)) if kept else []


def _mark_matched(verdicts: pd.DataFrame, matched: Sequence[str], keep: KeepMode) -> None:
    """Set ``matched`` (and the reason of kept chains left out) in place."""
    in_m = verdicts["kept"] & verdicts["uid"].isin(set(matched))
    verdicts["matched"] = in_m
    verdicts.loc[verdicts["kept"] & ~in_m, "reason"] = "correct, but uid not kept by every condition"
    if keep == "first":
        # The first kept chain of each problem: lowest sample index, ties broken by file order (stable sort).
        cand = verdicts[in_m].sort_values(["condition", "uid", "sample"], kind="stable")
        first = cand.groupby(["condition", "uid"], sort=False).head(1).index
        verdicts["matched"] = verdicts.index.isin(first)
        verdicts.loc[in_m & ~verdicts["matched"], "reason"] = (
            "correct, but not the first kept chain of its problem (keep first: lowest sample index)")


def _provenance(rec: Mapping[str, Any], v: Mapping[str, Any], keep: str | None) -> dict[str, Any]:
    prov: dict[str, Any] = {"filter": v["filter"], "stage": v["stage"], "pred": v["pred"]}
    if keep:
        prov["keep"] = keep
    return {**rec, "keep_correct": prov}


def filter_dir(folder: str | Path, conditions: Sequence[str], keep_filter: KeepFilter = "mathverify",
               keep: KeepMode = "first") -> FilterResult:
    """Apply the keep-correct filter to ``<cond>.jsonl`` in ``folder`` and write kept and matched files.

    Writes ``<cond>_kept.jsonl`` (correct chains) and ``<cond>_matched.jsonl``
    (of the uids kept by every listed condition: the first kept chain per
    problem with ``keep="first"``, every kept chain with ``keep="all"``).
    """
    import pandas as pd

    if len(conditions) < 2:
        raise DataError(str(folder), None, "conditions", "matching needs at least two conditions")
    if keep not in KEEP_MODES:
        raise ValueError(f"unknown keep mode {keep!r}; expected one of {KEEP_MODES}")
    d = Path(folder)
    recs = {c: read_records(d / f"{c}.jsonl") for c in conditions}
    verdicts = pd.concat([grade_records(recs[c], c, keep_filter).assign(condition=c) for c in conditions],
                         ignore_index=True)
    matched = match_uids(verdicts, conditions)
    _mark_matched(verdicts, matched, keep)
    files, counts = {}, {}
    for c in conditions:
        v = verdicts[verdicts["condition"] == c].reset_index(drop=True)
        rows = v.to_dict("records")
        kept = [_provenance(r, x, None) for r, x in zip(recs[c], rows) if x["kept"]]
        both = [_provenance(r, x, keep) for r, x in zip(recs[c], rows) if x["matched"]]
        files[f"{c}_kept"] = str(write_records(d / f"{c}_kept.jsonl", kept))
        files[f"{c}_matched"] = str(write_records(d / f"{c}_matched.jsonl", both))
        counts[c] = {"chains": len(v), "kept": len(kept), "kept_uids": int(v.loc[v["kept"], "uid"].nunique()),
                     "matched_chains": len(both), "matched_forced": int((v["matched"] & v["forced_finish"]).sum())}
    return FilterResult(verdicts, tuple(matched), files, counts, keep_filter, keep)


def filter_warnings(res: FilterResult) -> list[str]:
    """One warning per condition whose matched chains are mostly forced finishes (box_prefill)."""
    out = []
    for c, v in res.counts.items():
        if 2 * v["matched_forced"] > v["matched_chains"]:
            out.append(f"WARNING: {v['matched_forced']} of {v['matched_chains']} chains in {c}_matched.jsonl have a "
                       "forced finish: `box_prefill` wrote the final answer that the keep-correct filter graded. "
                       "A screen of these arms is not about the model's own writing.")
    return out
