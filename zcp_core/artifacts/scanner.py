"""Scan texts for artifacts: per-match spans, first-match-wins counts, summaries.

``scan`` returns a matches DataFrame with columns ``id``, ``pattern_id``,
``family``, ``action``, ``start``, ``end`` (character offsets into the text)
and ``match``. Mode ``first`` keeps one row per text: the first pattern in
family order that matches (the paper's count "without replacement"); mode
``all`` keeps every match of every pattern.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Sequence

from zcp_core.artifacts.fuzzy import fold_confusables
from zcp_core.artifacts.patterns import FAMILY_ORDER, HIGH_PRECISION, CompiledLibrary, PatternLibrary, compile_library
from zcp_core.artifacts.shards import SHARD_SIZE, Engine, map_shards, shard_ranges

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.schema import TextRecord

ScanMode = Literal["first", "all"]
MATCH_COLUMNS = ["id", "pattern_id", "family", "action", "start", "end", "match"]


@dataclass(frozen=True)
class Span:
    """An artifact span in a text (character offsets, end exclusive)."""

    start: int
    end: int
    family: str
    pattern_id: str


@dataclass(frozen=True)
class ScanTask:
    """One shard of a scan, picklable for worker processes and Ray."""

    library: PatternLibrary
    ids: tuple[str, ...]
    texts: tuple[str, ...]
    mode: str


def text_matches(compiled: CompiledLibrary, text: str, mode: ScanMode = "all") -> list[tuple[int, int, int, str]]:
    """Matches in one text as (pattern index, start, end, matched text), in family order.

    Patterns run on the text with look-alike letters folded to ASCII (same
    length, so offsets hold); the matched text is the original's.
    """
    folded = fold_confusables(text)
    out: list[tuple[int, int, int, str]] = []
    for i in compiled.candidates(folded):
        hits = compiled.finditer(i, folded)
        if not hits:
            continue
        if mode == "first":
            s, e, _ = hits[0]
            return [(i, s, e, text[s:e])]
        out.extend((i, s, e, text[s:e]) for s, e, _ in hits)
    return out


def scan_shard(task: ScanTask) -> list[tuple[str, str, str, str, int, int, str]]:
    """Scan one shard; rows follow :data:`MATCH_COLUMNS`."""
    compiled = compile_library(task.library)
    rows = []
    for rid, text in zip(task.ids, task.texts, strict=True):
        for i, s, e, m in text_matches(compiled, text, task.mode):  # type: ignore[arg-type]
            p = compiled.patterns[i]
            rows.append((rid, p.id, p.family, p.action, s, e, m))
    return rows


def matches_frame(rows: Sequence[tuple[Any, ...]]) -> pd.DataFrame:
    """A matches DataFrame with stable dtypes from scan rows."""
    import pandas as pd

    df = pd.DataFrame(list(rows), columns=MATCH_COLUMNS)
    return df.astype({"id": "string", "pattern_id": "string", "family": "string", "action": "string",
                      "start": "int64", "end": "int64", "match": "string"})


def scan(
    texts: Sequence[TextRecord],
    library: PatternLibrary,
    mode: ScanMode = "all",
    engine: Engine = "local",
    workers: int | None = None,
    shard_size: int = SHARD_SIZE,
) -> pd.DataFrame:
    """Scan texts for artifacts.

    Args:
        texts: Records to scan (ids must be unique).
        library: The pattern library.
        mode: ``first`` (one row per text, first family in order) or ``all``.
        engine: ``local`` (both cores for large inputs) or ``ray`` (Ray Data);
            the result is identical.
        workers: Local worker processes (default: all cores for large inputs).
        shard_size: Texts per shard (the unit of parallel work).

    Returns:
        Matches: ``id, pattern_id, family, action, start, end, match``.
    """
    ids = tuple(t.id for t in texts)
    bodies = tuple(t.text for t in texts)
    tasks = [ScanTask(library, ids[a:b], bodies[a:b], mode) for a, b in shard_ranges(len(texts), shard_size)]
    rows: list[tuple[Any, ...]] = []
    for part in map_shards(scan_shard, tasks, engine=engine, workers=workers, desc="scan"):
        rows.extend(part)
    return matches_frame(rows)


@functools.lru_cache(maxsize=8)
def _compiled(library: PatternLibrary) -> CompiledLibrary:
    # A pure memo (libraries are frozen): compiling the RE2 set takes ~50 ms, too much per text in a loop.
    return compile_library(library)


def compiled_for(library: PatternLibrary) -> CompiledLibrary:
    """The library compiled once per process (memoised; libraries are frozen)."""
    return _compiled(library)


def artifact_spans(
    text_or_record: str | TextRecord, library: PatternLibrary | CompiledLibrary
) -> list[Span]:
    """All artifact spans in one text, sorted by start (the compiled library is memoised, so loops are cheap)."""
    compiled = library if isinstance(library, CompiledLibrary) else _compiled(library)
    text = text_or_record if isinstance(text_or_record, str) else text_or_record.text
    spans = [Span(s, e, compiled.patterns[i].family, compiled.patterns[i].id)
             for i, s, e, _ in text_matches(compiled, text, "all")]
    return sorted(spans, key=lambda sp: (sp.start, -sp.end, sp.pattern_id))


def dedupe_texts(texts: Sequence[TextRecord]) -> tuple[tuple[TextRecord, ...], pd.DataFrame]:
    """Keep the first record of each distinct text.

    Returns:
        The kept records, and a DataFrame of the dropped duplicates with
        columns ``id``, ``kept_id``, ``reason`` (so the drop can be undone).
    """
    import pandas as pd

    first: dict[str, str] = {}
    kept, dropped = [], []
    for t in texts:
        if t.text in first:
            dropped.append({"id": t.id, "kept_id": first[t.text], "reason": "duplicate text"})
            continue
        first[t.text] = t.id
        kept.append(t)
    return tuple(kept), pd.DataFrame(dropped, columns=["id", "kept_id", "reason"])


def first_family(matches: pd.DataFrame) -> dict[str, str]:
    """Each text's first-match-wins family (over any scan mode)."""
    rank = {f: i for i, f in enumerate(FAMILY_ORDER)}
    best: dict[str, str] = {}
    for rid, fam in zip(matches["id"], matches["family"], strict=True):
        if rid not in best or rank[fam] < rank[best[rid]]:
            best[str(rid)] = str(fam)
    return best


def text_flags(texts: Sequence[TextRecord], matches: pd.DataFrame) -> pd.DataFrame:
    """One row per distinct text: id, label, llm_type, data_type, first_family, flagged, domain_flagged, families.

    ``flagged`` means a high-precision (non-domain) family matched.
    """
    import pandas as pd

    uniq, _ = dedupe_texts(texts)
    fams: dict[str, set[str]] = {}
    for rid, fam in zip(matches["id"], matches["family"], strict=True):
        fams.setdefault(str(rid), set()).add(str(fam))
    firsts = first_family(matches)
    rows = []
    for t in uniq:
        fs = fams.get(t.id, set())
        rows.append({
            "id": t.id, "label": t.label, "llm_type": t.llm_type, "data_type": t.data_type,
            "first_family": firsts.get(t.id, ""), "flagged": bool(fs & set(HIGH_PRECISION)),
            "domain_flagged": "domain" in fs, "families": ",".join(f for f in FAMILY_ORDER if f in fs),
        })
    cols = ["id", "label", "llm_type", "data_type", "first_family", "flagged", "domain_flagged", "families"]
    return pd.DataFrame(rows, columns=cols)


def _rate_block(df: pd.DataFrame, key: str) -> dict[str, dict[str, Any]]:
    out = {}
    for name, g in df.groupby(key, sort=True):
        n, k = len(g), int(g["flagged"].sum())
        out[str(name)] = {"texts": n, "flagged": k, "rate": round(k / n, 6) if n else 0.0,
                          "domain_flagged": int(g["domain_flagged"].sum())}
    return out


def summarize(texts: Sequence[TextRecord], matches: pd.DataFrame) -> dict[str, Any]:
    """The ``zcp scan --json`` summary.

    ``texts`` counts distinct texts; ``flagged`` counts texts matched by a
    non-domain family; ``by_family`` is first-match-wins (each text once, so
    the non-domain entries add up to ``flagged``); ``by_llm_type`` counts only
    LLM-labelled texts; human flag rates are reported as false positives.
    """
    tf = text_flags(texts, matches)
    by_family = {f: int((tf["first_family"] == f).sum()) for f in FAMILY_ORDER}
    llm = tf[tf["label"] == "llm"]
    human = tf[tf["label"] == "human"]
    hp: dict[str, float] = {"texts": len(human), "flagged": int(human["flagged"].sum())}
    hp["rate"] = round(hp["flagged"] / hp["texts"], 6) if hp["texts"] else 0.0
    flagged = int(tf["flagged"].sum())
    return {
        "texts": len(tf),
        "flagged": flagged,
        "domain_flagged": int(tf["domain_flagged"].sum()),
        "by_family": by_family,
        "by_family_any": {f: int(tf["families"].str.contains(f, regex=False).sum()) for f in FAMILY_ORDER},
        "by_llm_type": _rate_block(llm, "llm_type") if len(llm) else {},
        "by_label": _rate_block(tf, "label") if len(tf) else {},
        "by_data_type": _rate_block(tf, "data_type") if len(tf) else {},
        "human_false_positives": hp,
        "headline": {"label": "texts flagged (high-precision families)", "value": flagged},
    }


def family_table(texts: Sequence[TextRecord], matches: pd.DataFrame, by: str = "llm_type") -> pd.DataFrame:
    """Table-2-shaped counts: rows ``by`` (LLM texts only for ``llm_type``), one column per family
    (first-match-wins), plus ``texts``, ``flagged`` and ``rate``."""
    import pandas as pd

    tf = text_flags(texts, matches)
    if by == "llm_type":
        tf = tf[tf["label"] == "llm"]
    rows = []
    for name, g in tf.groupby(by, sort=True):
        row: dict[str, Any] = {by: str(name), "texts": len(g)}
        row.update({f: int((g["first_family"] == f).sum()) for f in FAMILY_ORDER})
        row["flagged"] = int(g["flagged"].sum())
        row["rate"] = round(row["flagged"] / len(g), 4) if len(g) else 0.0
        rows.append(row)
    return pd.DataFrame(rows, columns=[by, "texts", *FAMILY_ORDER, "flagged", "rate"])
