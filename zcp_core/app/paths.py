"""Path policy for the app: read only under data roots, write only under the runs directory.

A typed path outside the configured roots is refused, and so are ``..``
tricks and symlinks that leave a root: the check runs on the resolved path.
Uploads are validated (size, extension, parseable by a loader) and stored
under ``<runs>/uploads``; nothing uploaded is executed or unpickled.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Sequence

from zcp_core.errors import ZcpError

UPLOAD_EXTENSIONS = (".jsonl", ".json", ".csv", ".parquet")
MAX_UPLOAD_BYTES = 50 * 1024 * 1024


class PathRefused(ZcpError):
    """A path outside the allowed roots."""


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def resolve_data_path(typed: str, roots: Sequence[Path]) -> Path:
    """Resolve a user-typed dataset path against the data roots.

    Relative paths are tried under each root in order. The resolved path
    (symlinks followed) must lie inside one of the roots.

    Raises:
        PathRefused: If the path escapes every root or does not exist.
    """
    if not typed or "\x00" in typed:
        raise PathRefused("empty or invalid path")
    raw = Path(typed).expanduser()
    candidates = [raw] if raw.is_absolute() else [r / raw for r in roots]
    resolved_roots = [Path(r).resolve() for r in roots]
    for cand in candidates:
        real = cand.resolve()
        if any(_inside(real, r) for r in resolved_roots):
            if real.exists():
                return real
            continue
        raise PathRefused(f"{typed!r} is outside the allowed data roots: {', '.join(map(str, resolved_roots))}")
    raise PathRefused(f"{typed!r} was not found under the data roots: {', '.join(map(str, resolved_roots))}")


def safe_run_name(name: str) -> str:
    """A run folder name made only of safe characters (no separators, no dots first)."""
    clean = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip(".-")
    if not clean:
        raise PathRefused(f"run name {name!r} has no usable characters")
    return clean[:80]


def run_output_dir(runs: Path, name: str) -> Path:
    """``<runs>/<name>``, refusing anything that would land outside ``runs``."""
    out = (runs / safe_run_name(name)).resolve()
    if not _inside(out, runs.resolve()):
        raise PathRefused(f"run name {name!r} leaves the runs directory")
    return out


def save_upload(filename: str, data: bytes, runs: Path, max_bytes: int = MAX_UPLOAD_BYTES) -> Path:
    """Validate an uploaded dataset and store it under ``<runs>/uploads``.

    The file must have a known extension, fit the size limit, and load with
    :func:`zcp_core.data.load_dataset`; otherwise it is removed and the
    loader's error (file, line, field) is raised.
    """
    from zcp_core.data import load_dataset

    suffix = Path(filename).suffix.lower()
    if suffix not in UPLOAD_EXTENSIONS:
        raise PathRefused(f"{filename}: unsupported file type {suffix or '(none)'}; use {', '.join(UPLOAD_EXTENSIONS)}")
    if len(data) > max_bytes:
        raise PathRefused(f"{filename}: {len(data)} bytes is over the {max_bytes}-byte upload limit")
    digest = hashlib.sha256(data).hexdigest()[:12]
    stem = safe_run_name(Path(filename).stem)
    dest = runs.resolve() / "uploads" / f"{stem}-{digest}{suffix}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    try:
        load_dataset(dest)
    except Exception:
        dest.unlink(missing_ok=True)
        raise
    return dest
