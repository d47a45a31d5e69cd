"""What a card may say about where data came from: dataset names, versions and URLs, never a local path.

A bundled dataset folder documents itself in ``SOURCE.txt`` (``Dataset:``, ``Repo:``, ``Commit:`` lines) or, for
an attributed sample, in its ``README.md`` (a ``**Source:**`` line). A reference run folder records its source at
build time (manifest ``source``). :func:`source_ref` reads these into a :class:`SourceRef`; a card cites that,
with the file's name and sha256, and shows commands by :func:`portable_command`.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

_URL = re.compile(r"(?:https?://)?((?:github\.com|huggingface\.co|gitlab\.com)/[\w.-]+/[\w.-]+)")
_COMMIT = re.compile(r"\bcommit:?\s+([0-9a-f]{7,40})\b", re.I)
# Options whose value is where the command wrote, which says nothing about how to make the data.
_OUTPUT_OPTIONS = ("--out",)


@dataclass(frozen=True)
class SourceRef:
    """A dataset as a card cites it.

    Attributes:
        name: The dataset's name and authors (``GSM8K (Grade School Math 8K), Cobbe et al. 2021``).
        version: The upstream commit or version, or ``""`` when none is recorded.
        url: The upstream repository, or ``""``.
        file: The file's name (never its folder).
        derived: How the file was derived from the dataset, when it was (``numeric twins made by zcp``).
    """

    name: str
    version: str
    url: str
    file: str
    derived: str = ""

    def line(self, sha256: str | None = None) -> str:
        """One provenance line: name, version, URL, then the file and its sha256."""
        parts = [self.name or self.file]
        parts.append(f"version `{self.version}`" if self.version else "version not recorded")
        if self.url:
            parts.append(self.url)
        head = ", ".join(parts)
        derived = f"; {self.derived}" if self.derived else ""
        sha = f" (sha256 `{sha256}`)" if sha256 else ""
        return f"{head}{derived}: file `{self.file}`{sha}"

    def to_dict(self) -> dict[str, str]:
        """JSON form (``release.json``, a reference run's manifest)."""
        return asdict(self)


def _from_text(text: str) -> tuple[str, str, str]:
    name = re.search(r"^Dataset:\s*(.+)$", text, flags=re.M)
    if name is None:
        src = re.search(r"\*\*Source:\*\*\s*(.+?)(?:,\s*(?:github|arXiv)|\n\S|\n\n|$)", text, flags=re.S)
        title = " ".join(src.group(1).split()) if src else ""
    else:
        title = name.group(1).strip()
    url = _URL.search(text)
    commit = re.search(r"^Commit:\s*([0-9a-f]{7,40})", text, flags=re.M) or _COMMIT.search(text)
    return title, commit.group(1)[:12] if commit else "", f"https://{url.group(1)}" if url else ""


def source_ref(path: str | Path) -> SourceRef:
    """How a card cites the dataset file or run folder at ``path`` (see the module doc)."""
    from zcp_core.data import resolve_dataset

    p = resolve_dataset(path)
    folder = p if p.is_dir() else p.parent
    manifest = folder / "manifest.json"
    if manifest.is_file():
        try:
            rec = json.loads(manifest.read_text(encoding="utf-8")).get("source")
        except ValueError:
            rec = None
        if isinstance(rec, dict) and rec.get("name"):
            file = "reference.jsonl" if p.is_dir() and (p / "reference.jsonl").exists() else p.name
            return SourceRef(str(rec["name"]), str(rec.get("version") or ""), str(rec.get("url") or ""), file,
                             str(rec.get("derived") or ""))
    for doc in ("SOURCE.txt", "README.md"):
        if (folder / doc).is_file():
            name, version, url = _from_text((folder / doc).read_text(encoding="utf-8", errors="replace"))
            if name:
                return SourceRef(name, version, url, p.name)
    return SourceRef("", "", "", p.name)


def derived_ref(dataset_paths: list[str], derived: str) -> dict[str, Any]:
    """The ``source`` record a run made from ``dataset_paths`` keeps in its manifest (``derived`` says how)."""
    refs = [source_ref(d) for d in dataset_paths]
    names = [r for r in refs if r.name] or refs
    first = names[0] if names else SourceRef("", "", "", "")
    return {"name": "; ".join(dict.fromkeys(r.name or r.file for r in names)), "version": first.version,
            "url": first.url, "derived": derived}


def display_path(path: str | Path) -> str:
    """A path as a message may print it: relative to a data root (the bundled one as ``data/...``) or to
    the checkout, else the file name alone; never an absolute local path."""
    from zcp_core.data import data_roots, install_root, resolve_dataset

    p = resolve_dataset(path)
    try:
        p = p.resolve()
    except OSError:
        return Path(path).name
    root = install_root().resolve()
    for r in data_roots():
        if p.is_relative_to(r):
            return str(p.relative_to(root)) if r.is_relative_to(root) else str(p.relative_to(r))
    if p.is_relative_to(root):
        return str(p.relative_to(root))
    return p.name


def _portable_word(word: str) -> str:
    """A path in a command as any checkout can run it: bundled data as ``data/...``, anything else by name."""
    from zcp_core.data import install_root

    p = Path(word)
    if not (word.startswith("/") or "/" in word):
        return word
    shown = display_path(p) if p.is_absolute() else word
    bundled = shown.startswith("data/") and (install_root() / shown).exists()
    return shown if bundled else p.name


def portable_command(command: str) -> str:
    """A recorded command as any checkout can run it: no ``--out``, bundled data as ``data/...``, other paths
    by their file name alone (never an absolute path or a run folder)."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes: shown as recorded
        return command
    out: list[str] = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w in _OUTPUT_OPTIONS:
            skip = True
            continue
        if w.startswith("--out=") or w == "--overwrite":  # where it wrote, and whether it replaced: not the run
            continue
        out.append(_portable_word(w) if not w.startswith("-") else w)
    return shlex.join(out)


def source_line(path: str | Path, sha256: str | None = None) -> str:
    """A card's provenance line for a source file: the dataset it comes from, and its name and sha256."""
    from zcp_core.data import resolve_dataset
    from zcp_core.runs import sha256_file

    p = resolve_dataset(path)
    sha = sha256 or (sha256_file(p) if p.is_file() else None)
    return source_ref(path).line(sha)
