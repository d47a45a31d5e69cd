"""A persistent response cache in SQLite, shared by all backends.

Keys come from :func:`zcp_core.backends.base.request_key`. A rerun makes no
new model calls, and an interrupted run resumes from what was stored: each
batch is committed as soon as it is computed.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, Sequence, TypeVar

T = TypeVar("T")


def cache_dir() -> Path:
    """Where models, lab builds and answers are cached, in one documented order.

    ``$ZCP_CACHE`` when set; else ``.zcp_cache/`` of the checkout when zcp runs from one (as ``make`` does, and
    ``.venv/bin/zcp`` and the app of that checkout), so every way in shares one cache; else the platform's user
    cache folder (``$XDG_CACHE_HOME/zcp`` or ``~/.cache/zcp``), as for an installed wheel.
    """
    from zcp_core.data import checkout_root

    env = os.environ.get("ZCP_CACHE")
    if env:
        return Path(env)
    checkout = checkout_root()
    if checkout is not None:
        return checkout / ".zcp_cache"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "zcp"


def cache_origin() -> str:
    """Why :func:`cache_dir` is where it is, in words (``zcp models`` prints it)."""
    from zcp_core.data import checkout_root

    if os.environ.get("ZCP_CACHE"):
        return "set by $ZCP_CACHE"
    if checkout_root() is not None:
        return "the checkout's .zcp_cache; set ZCP_CACHE to move it"
    return "the user cache folder; set ZCP_CACHE to move it"


class ResponseCache:
    """Key-value store of JSON-encoded responses.

    Args:
        path: SQLite file; ``None`` means ``cache_dir()/responses.sqlite``.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None):
        self.path = Path(path) if path else cache_dir() / "responses.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        with self._connect() as con:
            con.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        self.hits = 0
        self.misses = 0

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=30)
        con.execute("PRAGMA journal_mode=WAL")
        return con

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        """Stored values for the keys that are present."""
        out: dict[str, Any] = {}
        with self._lock, self._connect() as con:
            for i in range(0, len(keys), 500):
                chunk = list(keys[i : i + 500])
                q = f"SELECT key, value FROM responses WHERE key IN ({','.join('?' * len(chunk))})"
                out.update({k: json.loads(v) for k, v in con.execute(q, chunk)})
        return out

    def put_many(self, values: dict[str, Any]) -> None:
        """Store values (replacing any old ones)."""
        with self._lock, self._connect() as con:
            con.executemany(
                "INSERT OR REPLACE INTO responses (key, value) VALUES (?, ?)",
                [(k, json.dumps(v)) for k, v in values.items()],
            )


def cached_batch(
    cache: ResponseCache | None,
    keys: Sequence[str],
    requests: Sequence[Any],
    compute: Callable[[list[Any]], list[Any]],
    decode: Callable[[dict[str, Any]], T],
    chunk: int = 64,
    progress: str | None = None,
    size: Callable[[Any], int] | None = None,
) -> list[T]:
    """Answer ``requests`` from the cache, computing and storing the misses.

    Misses are computed in chunks and each chunk is stored at once, so an
    interruption loses at most one chunk of work. Order is kept. With
    ``size``, misses are computed longest first, so each chunk (and each
    batch the backend cuts from it) holds requests of similar length.
    """
    rows = _cached_rows(cache, [(k,) for k in keys], requests, lambda rs: [(asdict(r),) for r in compute(rs)],
                        chunk, progress, size)
    return [decode(r[0]) for r in rows]


def cached_pairs(
    cache: ResponseCache | None,
    keys: Sequence[tuple[str, str]],
    requests: Sequence[Any],
    compute: Callable[[list[Any]], list[tuple[Any, Any]]],
    decode: tuple[Callable[[dict[str, Any]], Any], Callable[[dict[str, Any]], Any]],
    chunk: int = 64,
    progress: str | None = None,
    size: Callable[[Any], int] | None = None,
) -> list[tuple[Any, Any]]:
    """:func:`cached_batch` for requests that yield two results stored under two keys.

    A folded generate-and-score stores its completion under the plain
    ``generate`` key and its logprobs under the plain ``score`` key, so it
    shares entries with separate calls. A request is recomputed when either
    entry is missing.
    """
    rows = _cached_rows(cache, keys, requests, lambda rs: [(asdict(a), asdict(b)) for a, b in compute(rs)],
                        chunk, progress, size)
    return [(decode[0](a), decode[1](b)) for a, b in rows]


def _cached_rows(
    cache: ResponseCache | None,
    keys: Sequence[tuple[str, ...]],
    requests: Sequence[Any],
    compute: Callable[[list[Any]], list[tuple[dict[str, Any], ...]]],
    chunk: int,
    progress: str | None,
    size: Callable[[Any], int] | None,
) -> list[tuple[dict[str, Any], ...]]:
    flat = [k for ks in keys for k in ks]
    found = cache.get_many(flat) if cache else {}
    todo = [i for i, ks in enumerate(keys) if any(k not in found for k in ks)]
    if cache:
        cache.hits += len(keys) - len(todo)
        cache.misses += len(todo)
    # Duplicate requests in one batch are computed once.
    unique: dict[tuple[str, ...], int] = {}
    for i in todo:
        unique.setdefault(tuple(keys[i]), i)
    order = list(unique.values())
    if size is not None:
        order.sort(key=lambda i: -size(requests[i]))
    bar = None
    if progress and len(order) > chunk:
        from tqdm.auto import tqdm

        # Counted in requests, so the bar shows items/s and an ETA in the unit users think in.
        bar = tqdm(total=len(order), desc=progress, unit="item", smoothing=0.1)
    try:
        for s in range(0, len(order), chunk):
            idx = order[s : s + chunk]
            fresh: dict[str, Any] = {}
            for i, values in zip(idx, compute([requests[i] for i in idx])):
                fresh.update(zip(keys[i], values))
            found.update(fresh)
            if cache:
                cache.put_many(fresh)
            if bar is not None:
                bar.update(len(idx))
    finally:
        if bar is not None:
            bar.close()
    return [tuple(found[k] for k in ks) for ks in keys]
