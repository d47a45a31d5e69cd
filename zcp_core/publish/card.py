"""Dataset cards and licences for releases a maintainer can publish as they are.

A release folder gets a ``README.md`` with YAML front matter (licence, a ``configs:`` block so that
``datasets.load_dataset(DIR)`` reads the data file alone, tags) above the human card, the upstream
licence file copied beside it, and world-readable files (0644). A source with no licence makes the
release refuse unless the caller allows it, and the card then says so.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from zcp_core.errors import ZcpError

LICENSE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "COPYING")
# First words of the licence texts we can name; anything else is published as "other".
_SPDX = (("MIT License", "mit"), ("Permission is hereby granted, free of charge", "mit"),
         ("Apache License", "apache-2.0"), ("Creative Commons Attribution 4.0", "cc-by-4.0"),
         ("CC BY-SA 4.0", "cc-by-sa-4.0"))


class UnlicensedSource(ZcpError):
    """A release of data whose source has no licence, without explicit permission."""


@dataclass(frozen=True)
class LicenseInfo:
    """The licence a release inherits.

    Attributes:
        spdx: Hugging Face licence id (``mit``, ``apache-2.0``, ``other``) or ``unknown`` when none was found.
        file: The upstream licence file to copy, when there is one.
        found_in: Where the licence was found (a file path, ``--license``), or why none was.
    """

    spdx: str
    file: Path | None
    found_in: str

    @property
    def known(self) -> bool:
        """Whether a licence was found or given."""
        return self.spdx != "unknown"


def _spdx_of(text: str) -> str:
    return next((sid for marker, sid in _SPDX if marker.lower() in text[:2000].lower()), "other")


def _sources_md_entry(folder: Path) -> str | None:
    """The licence column of ``folder``'s row in a ``SOURCES.md`` table beside it, if any."""
    table = folder.parent / "SOURCES.md"
    if not table.exists():
        return None
    for line in table.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0].strip("`/") == folder.name:
            return cells[-1]
    return None


def find_license(dataset_paths: Sequence[str | Path], override: str | None = None) -> LicenseInfo:
    """The licence of the data a release derives from.

    Args:
        dataset_paths: The source dataset files.
        override: ``--license``: a licence file to copy, or a licence id (``mit``, ``apache-2.0``...).
    """
    if override:
        p = Path(override)
        if p.is_file():
            return LicenseInfo(_spdx_of(p.read_text(encoding="utf-8", errors="replace")), p, f"--license {p}")
        return LicenseInfo(override.lower(), None, "--license")
    for ds in dataset_paths:
        folder = Path(ds).resolve().parent
        for name in LICENSE_FILES:
            f = folder / name
            if f.is_file():
                return LicenseInfo(_spdx_of(f.read_text(encoding="utf-8", errors="replace")), f, str(f))
        entry = _sources_md_entry(folder)
        if entry and "none" in entry.lower():
            return LicenseInfo("unknown", None, f"{folder.parent / 'SOURCES.md'} says: {entry}")
        if entry:
            sid = _spdx_of(entry) if "mit" not in entry.lower() else "mit"
            return LicenseInfo(sid, None, f"{folder.parent / 'SOURCES.md'}: {entry}")
    where = ", ".join(str(Path(d).resolve().parent) for d in dataset_paths) or "no dataset recorded"
    return LicenseInfo("unknown", None, f"no LICENSE file or SOURCES.md entry in {where}")


def require_license(info: LicenseInfo, allow_unlicensed: bool) -> None:
    """Refuse a release of unlicensed data unless it was allowed explicitly.

    Raises:
        UnlicensedSource: With where we looked and how to proceed.
    """
    if not info.known and not allow_unlicensed:
        raise UnlicensedSource(f"the source data has no licence ({info.found_in}); a derivative may not be "
                               "redistributable. Give it with --license ID_OR_FILE, or pass --allow-unlicensed "
                               "to release anyway (the card will say so)")


@dataclass(frozen=True)
class Card:
    """What a dataset card says.

    Attributes:
        title: The card's title (a release that changed nothing says so here).
        data_file: The data file ``datasets.load_dataset(DIR)`` loads, relative to the folder.
        split: Split name for that file.
        license: The inherited licence.
        source: Provenance lines (datasets with sha256, the run it came from, the model).
        citation: BibTeX or a reference line for the source data.
        canary: The canary string.
        counts: Named counts (replaced, kept, untested, dropped...), each with its reason where it has one.
        body: The rest of the card, in markdown.
        tags: Extra Hub tags.
    """

    title: str
    data_file: str
    split: str
    license: LicenseInfo
    source: tuple[str, ...]
    citation: str
    canary: str
    counts: Mapping[str, str]
    body: str
    tags: tuple[str, ...] = field(default_factory=tuple)


def render_card(card: Card) -> str:
    """``README.md``: YAML front matter for the Hub and ``datasets``, then the human card."""
    lic = card.license.spdx if card.license.known else "unknown"
    tags = ["contamination", "zcp", *card.tags]
    front = ["---", f"license: {lic}", f"pretty_name: {card.title!r}", "tags:", *[f"- {t}" for t in tags],
             "configs:", "- config_name: default", "  data_files:", f"  - split: {card.split}",
             f"    path: {card.data_file}", "---", ""]
    lines = [f"# {card.title}", "", f"Canary: `{card.canary}`. Do not train on this data; the canary lets "
             "crawlers and audits find leaks.", "", "## Licence", ""]
    if card.license.known:
        copied = f" The upstream licence is copied as `{card.license.file.name}`." if card.license.file else ""
        lines.append(f"`{card.license.spdx}`, inherited from the source ({card.license.found_in}).{copied}")
    else:
        lines.append(f"**The source data has no licence** ({card.license.found_in}). This release was made with "
                     "`--allow-unlicensed`; check the source's terms before redistributing it.")
    lines += ["", "## Source", "", *[f"- {s}" for s in card.source], "", "## Counts", ""]
    lines += [f"- {k}: {v}" for k, v in card.counts.items()]
    lines += ["", card.body.strip(), "", "## Citation", "", card.citation.strip() or "(none recorded)", ""]
    return "\n".join(front + lines)


def citation_for(dataset_paths: Sequence[str | Path]) -> str:
    """The source's citation: the ``Dataset:`` line of its ``SOURCE.txt``, or its path."""
    out = []
    for ds in dataset_paths:
        src = Path(ds).resolve().parent / "SOURCE.txt"
        text = src.read_text(encoding="utf-8", errors="replace") if src.exists() else ""
        if not text and (Path(ds).resolve().parent / "README.md").exists():  # an attributed sample's README
            text = (Path(ds).resolve().parent / "README.md").read_text(encoding="utf-8", errors="replace")
            src_line = re.search(r"\*\*Source:\*\*\s*(.+?)(?:\n\S|\n\n|$)", text, flags=re.S)
            if src_line:
                out.append(" ".join(src_line.group(1).split()))
                continue
        m = re.search(r"^Dataset:\s*(.+)$", text, flags=re.M)
        repo = re.search(r"^Repo:\s*(.+)$", text, flags=re.M)
        out.append((m.group(1) if m else str(ds)) + (f" ({repo.group(1).strip()})" if repo else ""))
    return "\n".join(dict.fromkeys(out))


def publish_files(folder: Path, card: Card) -> Path:
    """Write the card and the licence file, and make every file 0644 (directories 0755)."""
    from zcp_core.runs import atomic_write_bytes

    if card.license.file is not None:
        shutil.copyfile(card.license.file, folder / card.license.file.name)
    atomic_write_bytes(folder / "README.md", render_card(card).encode())
    for root, dirs, files in os.walk(folder):
        for d in dirs:
            os.chmod(Path(root) / d, 0o755)
        for f in files:
            os.chmod(Path(root) / f, 0o644)
    os.chmod(folder, 0o755)
    return folder / "README.md"
