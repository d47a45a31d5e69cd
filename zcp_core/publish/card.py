"""Dataset cards and licences for releases a maintainer can publish as they are.

A release folder gets a ``README.md`` with YAML front matter (licence, a ``configs:`` block so that
``datasets.load_dataset(DIR)`` reads the data file alone, tags) above the human card, the upstream
licence file copied beside it, and files whose modes follow the user's umask (0644 under the usual 022). The licence is identified by
:mod:`zcp_core.publish.license`; a non-commercial or no-derivatives licence is announced at the top of
the card, and the card says where the licence came from.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zcp_core.publish.license import LicenseInfo


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


def canary_string(key: str) -> str:
    """The one canary format of every zcp release: ``ZCP-CANARY <uuid5 of key>``, stable for the same key."""
    import uuid

    return f"ZCP-CANARY {uuid.uuid5(uuid.NAMESPACE_URL, 'zcp-release:' + key)}"


def front_matter(card: Card) -> str:
    """The card's YAML front matter, written by PyYAML (any title round-trips, quotes and all)."""
    import yaml

    meta: dict[str, Any] = {
        "license": card.license.hub_id,
        "pretty_name": card.title,
        "tags": ["contamination", "zcp", *card.tags],
        "configs": [{"config_name": "default", "data_files": [{"split": card.split, "path": card.data_file}]}],
    }
    if card.license.status == "identified" and card.license.hub_id == "other":
        meta["license_name"] = card.license.spdx
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=10_000) + "---\n"


def _notice(lic: LicenseInfo) -> list[str]:
    """What a reader must see before anything else: the licence's restrictions."""
    out = []
    if "non-commercial" in lic.restrictions:
        out.append(f"> **Licensed for non-commercial use only ({lic.spdx}).** This data may not be used for "
                   "commercial purposes.")
    if "no-derivatives" in lic.restrictions:
        out.append(f"> **A no-derivatives licence ({lic.spdx}).** This release is the source unchanged: zcp refuses "
                   "a release that replaces or edits items under this licence.")
    if lic.given:
        out.append(f"> **Licence given by hand:** {lic.basis or lic.found_in}.")
    return [x for o in out for x in (o, "")]


def _license_section(lic: LicenseInfo) -> list[str]:
    copied = f" The licence file is copied beside this card as `{lic.file.name}`." if lic.file else ""
    if lic.status == "identified":
        basis = lic.basis or lic.found_in  # basis names no local path
        how = basis if lic.given else f"inherited from the source: {basis}"
        return [f"`{lic.spdx}` (hub id `{lic.hub_id}`), {how}.{copied}"]
    return [f"**The source data has no licence** ({lic.basis or lic.found_in}). This release was made with "
            "`--allow-unlicensed`; check the source's terms before redistributing it."]


def render_card(card: Card) -> str:
    """``README.md``: YAML front matter for the Hub and ``datasets``, then the human card."""
    lines = [f"# {card.title}", "", *_notice(card.license),
             f"Canary: `{card.canary}`. Do not train on this data; the canary lets "
             "crawlers and audits find leaks.", "", "## Licence", "", *_license_section(card.license)]
    lines += ["", "## Source", "", *[f"- {s}" for s in card.source], "", "## Counts", ""]
    lines += [f"- {k}: {v}" for k, v in card.counts.items()]
    lines += ["", card.body.strip(), "", "## Citation", "", card.citation.strip() or "(none recorded)", ""]
    return front_matter(card) + "\n" + "\n".join(lines)


def citation_for(dataset_paths: Sequence[str | Path]) -> str:
    """The source's citation: the ``Dataset:`` line of its ``SOURCE.txt``, or its path."""
    out = []
    for ds in dataset_paths:
        from zcp_core.data import resolve_dataset
        from zcp_core.publish.sources import display_path

        folder = resolve_dataset(ds).resolve().parent
        src = folder / "SOURCE.txt"
        text = src.read_text(encoding="utf-8", errors="replace") if src.exists() else ""
        if not text and (folder / "README.md").exists():  # an attributed sample's README
            text = (folder / "README.md").read_text(encoding="utf-8", errors="replace")
            src_line = re.search(r"\*\*Source:\*\*\s*(.+?)(?:\n\S|\n\n|$)", text, flags=re.S)
            if src_line:
                out.append(" ".join(src_line.group(1).split()))
                continue
        m = re.search(r"^Dataset:\s*(.+)$", text, flags=re.M)
        repo = re.search(r"^Repo:\s*(.+)$", text, flags=re.M)
        out.append((m.group(1) if m else display_path(ds)) + (f" ({repo.group(1).strip()})" if repo else ""))
    return "\n".join(dict.fromkeys(out))


def publish_files(folder: Path, card: Card) -> Path:
    """Write the card and the licence file (modes follow the user's umask: 0644 under the usual 022)."""
    from zcp_core.runs import atomic_write_bytes

    if card.license.file is not None:
        shutil.copyfile(card.license.file, folder / card.license.file.name)
    atomic_write_bytes(folder / "README.md", render_card(card).encode())
    return folder / "README.md"
