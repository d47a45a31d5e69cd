"""Dataset loaders: GSM8K, MATH-500, GSM1K, DetectRL and generic files.

The format is detected from the content; ``fmt`` overrides it. Ids are stable
and come from the data, so everything downstream pairs and splits by them:
GSM8K ``gsm8k-<first 12 hex digits of sha256(question)>`` (GSM8K has no ids of
its own; a content id keeps a question's id, and so its twin, the same whatever
file holds it) unless the file carries its own ``id`` field (or ``--id-field``), which is kept, MATH ``unique_id``, GSM1K ``gsm1k-<row>``,
DetectRL ``<file stem>-<index>``, generic files their ``id`` field (or ``--id-field``),
else ``<file stem>-<line>``.

Bad input raises :class:`~zcp_core.errors.DataError` naming file, line and
field; the whole file is read first, so the error names its first bad row and
counts the others (a duplicate id is a bad row naming both lines). With
``on_error="skip"`` bad rows are collected in the result's ``bad_rows``
instead, never dropped silently.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Literal, Mapping

from zcp_core.errors import DataError
from zcp_core.schema import Item, TextRecord

Format = Literal["auto", "gsm8k", "math", "gsm1k", "detectrl", "jsonl", "csv", "parquet", "hf", "items"]
OnError = Literal["raise", "skip"]
GSM8K_ANSWER = re.compile(r"####\s*(.+?)\s*$")
CALC = re.compile(r"<<([^<>=]*)=([^<>]*)>>")


@dataclass(frozen=True)
class BadRow:
    """A row that could not be loaded: where, which field, and why."""

    path: str
    line: int | None
    field: str | None
    message: str


@dataclass(frozen=True)
class FieldMap:
    """Field names for generic files (``--question-field`` and friends)."""

    id: str | None = None
    question: str = "question"
    answer: str = "answer"
    solution: str | None = "solution"
    text: str = "text"
    label: str = "label"


@dataclass(frozen=True)
class Dataset:
    """What a loader returns.

    Attributes:
        path: The file read.
        format: The detected or requested format.
        items: Problems (for problem datasets).
        texts: Texts (for text corpora).
        bad_rows: Rows skipped under ``on_error="skip"``.
    """

    path: str
    format: str
    items: tuple[Item, ...] = ()
    texts: tuple[TextRecord, ...] = ()
    bad_rows: tuple[BadRow, ...] = field(default_factory=tuple)

    @property
    def kind(self) -> Literal["items", "texts"]:
        """Whether this is a problem set or a text corpus."""
        return "texts" if self.texts and not self.items else "items"

    def __len__(self) -> int:
        return len(self.items) or len(self.texts)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        line = path.read_bytes()[: e.start].count(b"\n") + 1
        raise DataError(str(path), line, None, f"not valid UTF-8 at byte {e.start}: {e.reason}") from e
    except FileNotFoundError as e:
        raise DataError(str(path), None, None, "file not found") from e
    except OSError as e:  # a folder, no permission, ...
        raise DataError(str(path), None, None, f"cannot read the file: {e.strerror or e}") from e


def _jsonl_rows(path: Path, text: str) -> Iterator[tuple[int, Any, str | None]]:
    """Yield (line number, parsed object or None, error) for each non-blank line."""
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            yield n, json.loads(raw), None
        except json.JSONDecodeError as e:
            yield n, None, f"malformed JSON: {e.msg} (column {e.colno})"


def detect_format(path: str | Path) -> str:
    """Guess a file's format from its name and first record."""
    p = Path(path)
    if p.is_dir():
        return "hf"
    suffix = p.suffix.lower()
    if suffix == ".parquet":
        return "parquet"
    if suffix == ".csv":
        with open(p, encoding="utf-8", errors="replace") as fh:
            header = next(csv.reader(fh), [])
        return "gsm1k" if set(header) == {"question", "answer"} else "csv"
    with p.open(encoding="utf-8", errors="replace") as fh:
        head = fh.read(4096).lstrip()
    if head.startswith("["):
        return "detectrl"
    first = head.splitlines()[0] if head else ""
    try:
        rec = json.loads(first)
    except json.JSONDecodeError:
        return "jsonl"
    if isinstance(rec, dict):
        if {"problem", "unique_id", "answer"} <= rec.keys():
            return "math"
        if {"question", "answer"} <= rec.keys() and "####" in str(rec["answer"]):
            return "gsm8k"
        if {"id", "question", "answer"} <= rec.keys() and "source" in rec:
            return "items"
    return "jsonl"


#: The CLI option that maps each generic field (see ``zcp_core.cli.data.add_fields``).
FIELD_OPTIONS = {"id": "--id-field", "question": "--question-field", "answer": "--answer-field",
                 "text": "--text-field", "label": "--label-field"}


def _nonempty(path: Path, line: int | None, rec: Mapping[str, Any], key: str, role: str | None = None) -> str:
    if key not in rec:
        found = ", ".join(map(str, list(rec)[:20])) or "none"
        option = FIELD_OPTIONS.get(role) if role else None  # fixed formats have no option to map
        hint = f"; map it with {option} COLUMN" if option else ""
        raise DataError(str(path), line, key, f"missing field (columns found: {found}){hint}")
    val = rec[key]
    if val is None or (isinstance(val, str) and not val.strip()):
        raise DataError(str(path), line, key, "empty value")
    return str(val)


def gsm8k_id(question: str) -> str:
    """A GSM8K question's id, from its text alone: ``gsm8k-`` and 12 hex digits of its sha256."""
    import hashlib

    return "gsm8k-" + hashlib.sha256(question.encode("utf-8")).hexdigest()[:12]


def _gsm8k_item(path: Path, line: int, rec: Mapping[str, Any], fm: FieldMap) -> Item:
    q = _nonempty(path, line, rec, "question")
    # a file that carries its own ids keeps them (the user's joins depend on them); GSM8K itself has none
    id_field = fm.id or ("id" if "id" in rec else None)
    sol = _nonempty(path, line, rec, "answer")
    m = GSM8K_ANSWER.search(sol.strip().splitlines()[-1])
    if not m or not m.group(1).strip():
        raise DataError(str(path), line, "answer", "no '#### <answer>' final line")
    calcs = [{"expr": a.strip(), "result": b.strip()} for a, b in CALC.findall(sol)]
    return Item(
        id=_nonempty(path, line, rec, id_field, "id") if id_field else gsm8k_id(q), question=q, answer=m.group(1).replace(",", "").strip(),
        solution=sol, source="gsm8k", metadata={"calculations": calcs},
    )


def _math_item(path: Path, line: int, rec: Mapping[str, Any]) -> Item:
    return Item(
        id=_nonempty(path, line, rec, "unique_id"), question=_nonempty(path, line, rec, "problem"),
        answer=_nonempty(path, line, rec, "answer"), solution=rec.get("solution"), source="math500",
        metadata={"subject": rec.get("subject"), "level": rec.get("level")},
    )


_ITEM_FIELDS = frozenset({"id", "question", "answer", "solution", "source", "original_id", "metadata"})


def _items_item(path: Path, line: int, rec: Mapping[str, Any]) -> Item:
    return Item(
        id=_nonempty(path, line, rec, "id"), question=_nonempty(path, line, rec, "question"),
        answer=_nonempty(path, line, rec, "answer"), solution=rec.get("solution"),
        source=str(rec.get("source") or ""), original_id=rec.get("original_id"),
        # fields beyond the item's own (a twin's method and verification, a split) are kept, not dropped
        metadata={**{k: v for k, v in rec.items() if k not in _ITEM_FIELDS}, **(rec.get("metadata") or {})},
    )


def _generic_item(path: Path, line: int, rec: Mapping[str, Any], fm: FieldMap) -> Item:
    # The file's own ids where it has them: an id made from the file name and line would change with
    # the file's name or order (a twin file's ids are its originals' ids plus "-ref").
    id_field = fm.id or ("id" if "id" in rec else None)
    rid = _nonempty(path, line, rec, id_field, "id") if id_field else f"{path.stem}-{line}"
    known = {id_field, fm.question, fm.answer, fm.solution, "original_id"}
    return Item(
        id=rid, question=_nonempty(path, line, rec, fm.question, "question"),
        answer=_nonempty(path, line, rec, fm.answer, "answer"),
        solution=rec.get(fm.solution) if fm.solution else None, source=path.stem,
        original_id=rec.get("original_id"), metadata={k: v for k, v in rec.items() if k not in known},
    )


def normalise_label(label: Any) -> str:
    """Map dataset labels to ``human`` / ``llm`` where they mean that."""
    s = str(label).strip().lower()
    if s in {"human", "0", "human-written", "human_written"}:
        return "human"
    if s in {"llm", "1", "ai", "machine", "llm-generated", "generated", "gpt"}:
        return "llm"
    return s


def _text_record(path: Path, line: int | None, rid: str, rec: Mapping[str, Any], fm: FieldMap) -> TextRecord:
    text = rec.get(fm.text)
    if fm.text not in rec:
        _nonempty(path, line, rec, fm.text, "text")  # raises, naming the columns found and --text-field
    if not isinstance(text, str):
        raise DataError(str(path), line, fm.text, "not a string")
    label = rec.get(fm.label)
    known = {fm.text, fm.label, "llm_type", "data_type"}
    return TextRecord(
        id=rid, text=text, label=normalise_label(label) if label is not None else "",
        llm_type=str(rec.get("llm_type") or ""), data_type=str(rec.get("data_type") or ""),
        metadata={k: v for k, v in rec.items() if k not in known},
    )


def _records_from_table(path: Path, fmt: str) -> Iterator[tuple[int, Any, str | None]]:
    if fmt == "csv" or fmt == "gsm1k":
        reader = csv.DictReader(io.StringIO(_read_text(path)))
        for n, row in enumerate(reader, start=2):  # line 1 is the header
            yield n, row, None
        return
    import pandas as pd

    if fmt == "parquet":
        df = pd.read_parquet(path)
    else:
        import datasets  # type: ignore[import-untyped]

        df = datasets.load_from_disk(str(path)).to_pandas()
    for n, row in enumerate(df.to_dict("records"), start=1):
        yield n, row, None


def _line_rows(path: Path, fmt: str) -> Iterator[tuple[int, Any, str | None]]:
    if fmt in {"gsm8k", "math", "items", "jsonl"}:
        return _jsonl_rows(path, _read_text(path))
    return _records_from_table(path, fmt)


def iter_records(path: str | Path, fmt: str = "auto") -> Iterator[Mapping[str, Any]]:
    """The raw records of a file as found (before any field mapping), skipping rows that are not objects."""
    p = resolve_dataset(path)
    fmt = detect_format(p) if fmt == "auto" else fmt
    if fmt == "detectrl":
        arr = json.loads(_read_text(p))
        yield from (rec for rec in (arr if isinstance(arr, list) else []) if isinstance(rec, dict))
        return
    yield from (rec for _, rec, _ in _line_rows(p, fmt) if isinstance(rec, dict))


# ---- where data lives --------------------------------------------------------------------------


def checkout_root() -> Path | None:
    """The repository root when zcp runs from a source checkout (an editable install too), else ``None``."""
    checkout = Path(__file__).resolve().parent.parent
    return checkout if (checkout / "app.py").is_file() and (checkout / "app_pages").is_dir() else None


def install_root() -> Path:
    """The folder holding the project's own files (``app.py``, ``app_pages/``, ``data/``).

    In a source checkout that is the repository root; in an installed wheel it is the
    copy the build ships inside the package (``zcp_core/app/bundle``).
    """
    return checkout_root() or Path(__file__).resolve().parent / "app" / "bundle"


def data_roots() -> list[Path]:
    """Folders datasets are read from, in order: bundled ``data/``, ``../shared/data`` next to a checkout,
    then each folder in ``$ZCP_DATA_ROOTS`` (``os.pathsep``-separated)."""
    root = install_root()
    roots = [root / "data"]
    shared = root.parent / "shared" / "data"
    if shared.is_dir():
        roots.append(shared)
    roots += [Path(p) for p in os.environ.get("ZCP_DATA_ROOTS", "").split(os.pathsep) if p]
    return [r.resolve() for r in roots]


def resolve_dataset(path: str | Path) -> Path:
    """A dataset path as given when it exists, else the first match under the install root or a data root.

    So ``data/gsm8k/test.jsonl`` and ``gsm8k/test.jsonl`` name the bundled GSM8K from any
    folder, installed or not. A path found nowhere is returned as given, for the loader to
    report as missing.
    """
    p = Path(path).expanduser()
    if p.exists() or p.is_absolute():
        return p
    for base in (install_root(), *data_roots()):
        if (base / p).exists():
            return base / p
    return p


def _row(path: Path, n: int, rec: Mapping[str, Any], fmt: str, fm: FieldMap, corpus: str) -> Item | TextRecord:
    """One record of a line-based file: a text when ``corpus`` says so or it has a text and no question."""
    if fmt == "gsm8k":
        return _gsm8k_item(path, n, rec, fm)
    if fmt == "math":
        return _math_item(path, n, rec)
    if fmt == "items":
        return _items_item(path, n, rec)
    if fmt == "gsm1k":
        return Item(id=f"gsm1k-{n - 1}", question=_nonempty(path, n, rec, "question"),
                    answer=_nonempty(path, n, rec, "answer").replace(",", ""), source="gsm1k")
    if corpus == "texts" or (corpus == "auto" and fm.text in rec and fm.question not in rec):
        rid = _nonempty(path, n, rec, fm.id, "id") if fm.id else f"{path.stem}-{n}"
        return _text_record(path, n, rid, rec, fm)
    return _generic_item(path, n, rec, fm)


def _id_field(fmt: str, fm: FieldMap, rec: Mapping[str, Any]) -> str:
    """The field a row's id comes from (GSM8K's is made from the question unless the file has its own)."""
    gsm8k = fm.id or ("id" if "id" in rec else "question")
    return {"gsm8k": gsm8k, "math": "unique_id", "items": "id"}.get(fmt) or fm.id or "id"


def _first_of(bad: list[BadRow], path: Path) -> DataError:
    """The first bad row as the error to raise, with the lines of the others, so none is lost."""
    first, rest = bad[0], [str(b.line) for b in bad[1:]]
    shown = ", ".join(rest[:5]) + (f" and {len(rest) - 5} more" if len(rest) > 5 else "")
    rows = "row: line" if len(rest) == 1 else "rows: lines"
    more = f" (and {len(rest)} more bad {rows} {shown}; `zcp data inspect {path}` lists every one)" if rest else ""
    return DataError(first.path, first.line, first.field, first.message + more)


def load_dataset(
    path: str | Path,
    fmt: Format = "auto",
    fields: FieldMap | None = None,
    on_error: OnError = "raise",
    corpus: Literal["auto", "items", "texts"] = "auto",
) -> Dataset:
    """Load a benchmark or corpus file.

    Args:
        path: File (or ``datasets`` folder) to read.
        fmt: Format; ``auto`` detects it from the content.
        fields: Field names for generic files.
        on_error: ``raise`` on the first bad row (counting the others), or ``skip`` them and list them.
        corpus: For generic files, whether rows are problems or texts.

    Returns:
        A :class:`Dataset` with items or texts, and any skipped rows.
    """
    p = resolve_dataset(path)
    if not p.exists():
        raise DataError(str(p), None, None, f"file not found (also looked under {', '.join(map(str, data_roots()))})")
    fmt = detect_format(p) if fmt == "auto" else fmt  # type: ignore[assignment]
    fm = fields or FieldMap()
    bad: list[BadRow] = []
    items: list[Item] = []
    texts: list[TextRecord] = []

    def fail(err: DataError) -> None:
        if on_error == "raise":
            raise err
        bad.append(BadRow(err.path, err.line, err.field, err.message))

    if fmt == "detectrl":
        try:
            arr = json.loads(_read_text(p))
        except json.JSONDecodeError as e:
            raise DataError(str(p), e.lineno, None, f"malformed JSON: {e.msg}") from e
        if not isinstance(arr, list):
            raise DataError(str(p), 1, None, "expected a JSON array of records")
        for i, rec in enumerate(arr):
            try:
                if not isinstance(rec, dict):
                    raise DataError(str(p), None, None, f"record {i} is not an object")
                texts.append(_text_record(p, None, f"{p.stem}-{i}", rec, fm))
            except DataError as e:
                fail(DataError(e.path, e.line, e.field, f"record {i}: {e.message}"))
        return Dataset(str(p), fmt, texts=tuple(texts), bad_rows=tuple(bad))

    rows = _line_rows(p, fmt)
    first_line: dict[str, int] = {}  # id -> the line that first had it, so a duplicate names both lines
    for n, rec, err in rows:
        try:
            if err:
                raise DataError(str(p), n, None, err)
            if not isinstance(rec, dict):
                raise DataError(str(p), n, None, "record is not an object")
            row = _row(p, n, rec, fmt, fm, corpus)
            if row.id in first_line:
                raise DataError(str(p), n, _id_field(fmt, fm, rec), f"duplicate id {row.id!r}: line {first_line[row.id]} "
                                "has it too; ids must be unique")
            first_line[row.id] = n
            if isinstance(row, TextRecord):
                texts.append(row)
            else:
                items.append(row)
        except DataError as e:
            bad.append(BadRow(e.path, e.line, e.field, e.message))
    if not items and not texts and not bad:
        raise DataError(str(p), None, None, "no records: the file is empty")
    if bad and on_error == "raise":
        raise _first_of(bad, p)
    return Dataset(str(p), fmt, items=tuple(items), texts=tuple(texts), bad_rows=tuple(bad))


def load_items(path: str | Path, **kwargs: Any) -> list[Item]:
    """Load a problem set and return its items (raises on a text corpus)."""
    ds = load_dataset(path, **kwargs)
    if ds.kind != "items":
        raise DataError(ds.path, None, None, f"{ds.format} file holds texts, not problems")
    return list(ds.items)


def load_texts(paths: list[str | Path] | str | Path, **kwargs: Any) -> list[TextRecord]:
    """Load one or more text corpora and concatenate their records."""
    out: list[TextRecord] = []
    for p in [paths] if isinstance(paths, (str, Path)) else paths:
        ds = load_dataset(p, corpus="texts", **kwargs)
        out.extend(ds.texts)
    return out


def write_items_jsonl(path: str | Path, items: list[Item] | tuple[Item, ...]) -> Path:
    """Write items as JSONL in the ``items`` format (atomic)."""
    from zcp_core.runs import atomic_write_bytes

    body = "".join(json.dumps(it.to_dict(), ensure_ascii=False) + "\n" for it in items)
    out = Path(path)
    atomic_write_bytes(out, body.encode("utf-8"))
    return out


def items_frame(items: list[Item] | tuple[Item, ...]) -> Any:
    """Items as a DataFrame: id, question, answer, solution, source, original_id."""
    import pandas as pd

    cols = ["id", "question", "answer", "solution", "source", "original_id"]
    return pd.DataFrame([{k: getattr(it, k) for k in cols} for it in items], columns=cols)


def texts_frame(texts: list[TextRecord] | tuple[TextRecord, ...]) -> Any:
    """Texts as a DataFrame: id, text, label, llm_type, data_type."""
    import pandas as pd

    cols = ["id", "text", "label", "llm_type", "data_type"]
    return pd.DataFrame([{k: getattr(t, k) for k in cols} for t in texts], columns=cols)
