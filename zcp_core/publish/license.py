"""Licences read, never guessed: identify the licence a release inherits, or refuse.

A licence is known only when it is identified as a valid SPDX expression
(normalised and validated by ``license-expression``), found in one of three
places, in this order:

1. the dataset folder's ``LICENSE``/``LICENSE.md``/``LICENSE.txt``/``COPYING``:
   an ``SPDX-License-Identifier:`` header, a recognised licence title (``MIT
   License``, ``Apache License Version 2.0``, a Creative Commons legal-code
   title...), or a first line that is itself a licence name (``CC BY-NC 4.0``);
2. the folder's row in a ``SOURCES.md`` table beside it (the licence column,
   read up to its first ``(``, ``,``, ``;`` or ``:``);
3. ``--license``, given by the person who runs the release.

A reference run folder (``zcp reference build``) carries its source's licence
file and a ``license`` record in its manifest, so twins inherit their source's
licence.

"All rights reserved" is a known licence that forbids redistribution, not an
unknown one: :func:`require_license` refuses it whatever ``allow_unlicensed``
says, and only ``--license`` overrides it. A family name with no version
("GPL", "BSD", "CC") is ambiguous and refused the same way, with the candidates
listed (:mod:`zcp_core.publish.ambiguous`): a version is never guessed. A
no-derivatives licence allows only a release that changes nothing
(:func:`require_derivatives_allowed`). Anything else is unknown.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from zcp_core.errors import ZcpError
from zcp_core.publish.ambiguous import ambiguous_candidates

LICENSE_FILES = ("LICENSE", "LICENSE.md", "LICENSE.txt", "COPYING")
LicenseStatus = Literal["identified", "all_rights_reserved", "ambiguous", "none"]
#: The SPDX-like name the card gives a source that reserves all rights.
ALL_RIGHTS_RESERVED = "LicenseRef-All-Rights-Reserved"

# SPDX id -> the dataset hub's licence id; any other identified licence is published as "other".
HUB_IDS = {
    "MIT": "mit", "Apache-2.0": "apache-2.0", "BSD-2-Clause": "bsd-2-clause", "BSD-3-Clause": "bsd-3-clause",
    "CC0-1.0": "cc0-1.0", "CC-BY-3.0": "cc-by-3.0", "CC-BY-4.0": "cc-by-4.0", "CC-BY-SA-3.0": "cc-by-sa-3.0",
    "CC-BY-SA-4.0": "cc-by-sa-4.0", "CC-BY-NC-2.0": "cc-by-nc-2.0", "CC-BY-NC-3.0": "cc-by-nc-3.0",
    "CC-BY-NC-4.0": "cc-by-nc-4.0", "CC-BY-ND-4.0": "cc-by-nd-4.0", "CC-BY-NC-ND-3.0": "cc-by-nc-nd-3.0",
    "CC-BY-NC-ND-4.0": "cc-by-nc-nd-4.0", "CC-BY-NC-SA-2.0": "cc-by-nc-sa-2.0", "CC-BY-NC-SA-3.0": "cc-by-nc-sa-3.0",
    "CC-BY-NC-SA-4.0": "cc-by-nc-sa-4.0", "GPL-2.0-only": "gpl-2.0", "GPL-2.0-or-later": "gpl-2.0",
    "GPL-3.0-only": "gpl-3.0", "GPL-3.0-or-later": "gpl-3.0", "LGPL-2.1-only": "lgpl-2.1",
    "LGPL-2.1-or-later": "lgpl-2.1", "LGPL-3.0-only": "lgpl-3.0", "LGPL-3.0-or-later": "lgpl-3.0",
    "AGPL-3.0-only": "agpl-3.0", "AGPL-3.0-or-later": "agpl-3.0", "MPL-2.0": "mpl-2.0", "EPL-2.0": "epl-2.0",
    "BSL-1.0": "bsl-1.0", "ISC": "isc", "Unlicense": "unlicense", "WTFPL": "wtfpl", "Zlib": "zlib",
    "ODbL-1.0": "odbl", "ODC-By-1.0": "odc-by", "PDDL-1.0": "pddl", "CDLA-Permissive-1.0": "cdla-permissive-1.0",
    "CDLA-Permissive-2.0": "cdla-permissive-2.0", "CDLA-Sharing-1.0": "cdla-sharing-1.0",
    "Artistic-2.0": "artistic-2.0", "AFL-3.0": "afl-3.0", "OSL-3.0": "osl-3.0", "ECL-2.0": "ecl-2.0",
}
# Licence titles as licence texts open; the id they name is still validated by license-expression.
_TITLES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.I | re.S), sid) for p, sid in (
    (r"^\W*(?:the\s+)?mit\s+licen[cs]e\b", "MIT"),
    (r"^\W*apache\s+licen[cs]e\W+version\s+2\.0\b", "Apache-2.0"),
    (r"^\W*gnu\s+general\s+public\s+licen[cs]e\W+version\s+3\b", "GPL-3.0-only"),
    (r"^\W*gnu\s+general\s+public\s+licen[cs]e\W+version\s+2\b", "GPL-2.0-only"),
    (r"^\W*gnu\s+lesser\s+general\s+public\s+licen[cs]e\W+version\s+3\b", "LGPL-3.0-only"),
    (r"^\W*gnu\s+affero\s+general\s+public\s+licen[cs]e\W+version\s+3\b", "AGPL-3.0-only"),
    (r"^\W*bsd\s+3-clause\s+licen[cs]e\b", "BSD-3-Clause"),
    (r"^\W*bsd\s+2-clause\s+licen[cs]e\b", "BSD-2-Clause"),
    (r"^\W*mozilla\s+public\s+licen[cs]e\W+version\s+2\.0\b", "MPL-2.0"),
    (r"^\W*this\s+is\s+free\s+and\s+unencumbered\s+software", "Unlicense"),
    (r"^\W*(?:creative\s+commons\s+)?(?:legal\s+code\s+)?cc0\s+1\.0\s+universal\b", "CC0-1.0"),
))
# "Attribution-NonCommercial-ShareAlike 4.0 International" (a Creative Commons legal-code title).
_CC_TITLE = re.compile(r"^\W*(?:creative\s+commons\s+)?(?:legal\s+code\s+)?attribution"
                       r"((?:-(?:noncommercial|sharealike|noderivatives|noderivs))*)\s+(\d\.\d)"
                       r"(?:\s+international|\s+unported|\b)", re.I)
_CC_PARTS = {"noncommercial": "NC", "noderivatives": "ND", "noderivs": "ND", "sharealike": "SA"}
_SPDX_HEADER = re.compile(r"SPDX-License-Identifier:\s*([^\n*#>]+)", re.I)
_ARR = re.compile(r"\ball\s+rights\s+reserved\b", re.I)
# A licence text granting rights after a copyright line's "All rights reserved" (BSD, ISC...) is not ARR.
_GRANT = re.compile(r"permission\s+is\s+hereby\s+granted|redistribution\s+and\s+use|licensed\s+under", re.I)
_NONE = re.compile(r"^\W*(?:none|no\s+licen[cs]e|unlicensed|unknown|n/?a)\b", re.I)


class UnlicensedSource(ZcpError):
    """A release of data whose source has no identified licence, without explicit permission."""


class RedistributionForbidden(UnlicensedSource):
    """A release of data whose source reserves all rights; only ``--license`` (given with permission) overrides it."""


class LicenseNotRecognised(ZcpError):
    """``--license`` names no valid SPDX licence or recognised licence file."""


class LicenseAmbiguous(UnlicensedSource):
    """The source's licence names a family without a version ("GPL"); only ``--license`` settles it."""


class DerivativesForbidden(UnlicensedSource):
    """A release that replaces or edits items of data under a no-derivatives licence."""


@dataclass(frozen=True)
class LicenseInfo:
    """The licence a release inherits.

    Attributes:
        status: ``identified``, ``all_rights_reserved`` (a known licence forbidding redistribution),
            ``ambiguous`` (a family name with no version; the candidates are in ``found_in``) or ``none``.
        spdx: The normalised SPDX expression (``CC-BY-NC-4.0``), :data:`ALL_RIGHTS_RESERVED`, or ``""``.
        file: The upstream licence file to copy, when there is one.
        found_in: Where the licence came from, in words a maintainer can check
            ("found in data/gsm8k/LICENSE"), or where we looked and found none.
        given: Whether it was given with ``--license`` rather than read from the source.
        basis: How it was found, in words a card may print (no local path); ``found_in`` when empty.
    """

    status: LicenseStatus
    spdx: str
    file: Path | None
    found_in: str
    given: bool = False
    basis: str = ""

    @property
    def known(self) -> bool:
        """Whether a licence that permits redistribution was identified (or given)."""
        return self.status == "identified"

    @property
    def hub_id(self) -> str:
        """The dataset hub's licence id (``mit``, ``cc-by-nc-4.0``, ``other``) or ``unknown``."""
        if self.status in ("none", "ambiguous"):
            return "unknown"
        return HUB_IDS.get(self.spdx, "other")

    @property
    def restrictions(self) -> tuple[str, ...]:
        """What the licence forbids that a reader must see first: non-commercial, no-derivatives, all rights reserved."""
        if self.status == "all_rights_reserved":
            return ("all rights reserved",)
        keys = _keys(self.spdx) if self.status == "identified" else []
        out = []
        if any(re.search(r"-NC(?:-|$)", k) for k in keys):
            out.append("non-commercial")
        if any(re.search(r"-ND(?:-|$)", k) for k in keys):
            out.append("no-derivatives")
        return tuple(out)


@functools.lru_cache(maxsize=1)
def _licensing() -> Any:
    from license_expression import get_spdx_licensing

    return get_spdx_licensing()


def _keys(expression: str) -> list[str]:
    return list(_licensing().license_keys(_licensing().parse(expression)))


def spdx_expression(text: str) -> str | None:
    """``text`` as a validated, normalised SPDX expression, or None.

    Accepts SPDX ids and expressions in any case (``mit``, ``GPL-3.0``, ``MIT OR Apache-2.0``) and licence
    names written with spaces (``CC BY-NC 4.0``, ``Apache 2.0``, ``MIT License``).
    """
    from license_expression import ExpressionError

    s = re.sub(r"[*`_]", "", text).strip().strip(".")
    if not s:
        return None
    no_word = re.sub(r"\s+licen[cs]e\b", "", s, flags=re.I).strip()
    for cand in dict.fromkeys((s, re.sub(r"\s+", "-", s), no_word, re.sub(r"\s+", "-", no_word))):
        try:
            expr = _licensing().parse(cand, validate=True)
        except ExpressionError:
            continue
        if expr is not None:
            return str(expr.render())
    return None


def identify_text(text: str) -> tuple[LicenseStatus, str, str]:
    """Identify a licence file's text: (status, SPDX expression, how it was recognised)."""
    head = text.lstrip("\ufeff")
    m = _SPDX_HEADER.search(head[:2000])
    if m and (sid := spdx_expression(m.group(1))):
        return "identified", sid, "its SPDX-License-Identifier header"
    opening = head.strip()[:400]
    for pat, sid in _TITLES:
        if pat.search(opening) and (valid := spdx_expression(sid)):
            return "identified", valid, "its licence title"
    cc = _CC_TITLE.search(opening)
    if cc:
        parts = [_CC_PARTS[p.lower()] for p in cc.group(1).split("-") if p]
        if valid := spdx_expression("-".join(["CC-BY", *parts, cc.group(2)])):
            return "identified", valid, "its Creative Commons licence title"
    first = next((ln for ln in opening.splitlines() if ln.strip()), "")
    if first and (cands := ambiguous_candidates(first)):
        return "ambiguous", "", f"its first line \"{first.strip()}\" names no single licence: {_candidates(cands)}"
    if first and len(first) <= 80 and (sid := spdx_expression(first)):
        return "identified", sid, "its first line"
    if _ARR.search(head[:4000]) and not _GRANT.search(head):
        return "all_rights_reserved", ALL_RIGHTS_RESERVED, "its words \"all rights reserved\""
    return "none", "", "it is empty" if not head.strip() else "it is not a licence we can identify"


def _candidates(cands: Sequence[str]) -> str:
    return "it could be " + ", ".join(cands[:-1]) + f" or {cands[-1]}"


def identify_entry(entry: str) -> tuple[LicenseStatus, str]:
    """Identify a ``SOURCES.md`` licence entry: a licence title, or its text up to the first ``(``, ``,``,
    ``;`` or ``:`` as an SPDX id; ``none`` there means the source has no licence; a family name with no
    version is ``ambiguous``."""
    clean = re.sub(r"[*`_]", "", entry)
    name = re.split(r"[(,;:]", clean, maxsplit=1)[0]
    if _NONE.search(name):
        return "none", ""
    status, sid, _ = identify_text(clean)
    if status == "identified":
        return status, sid
    if status == "ambiguous" or ambiguous_candidates(name):  # "GPL (see COPYING)": a family, no version
        return "ambiguous", ""
    if named := spdx_expression(name):
        return "identified", named
    if _ARR.search(clean):
        return "all_rights_reserved", ALL_RIGHTS_RESERVED
    return "none", ""




def _sources_md_entry(folder: Path) -> tuple[Path, str] | None:
    """``SOURCES.md`` beside ``folder`` and the licence column of ``folder``'s row, if any."""
    table = folder.parent / "SOURCES.md"
    if not table.exists():
        return None
    for line in table.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 1 and cells[0].strip("`/") == folder.name:
            return table, cells[-1]
    return None



def _display(path: Path) -> str:
    from zcp_core.publish.sources import display_path

    return display_path(path)


def _from_manifest(folder: Path) -> LicenseInfo | None:
    """The licence a run folder recorded at build time (a reference run inherits its source's)."""
    import json

    m = folder / "manifest.json"
    try:
        rec = json.loads(m.read_text(encoding="utf-8")).get("license") if m.is_file() else None
    except (OSError, ValueError):
        return None
    if not isinstance(rec, dict) or rec.get("status") not in ("identified", "all_rights_reserved", "ambiguous", "none"):
        return None
    file = folder / str(rec["file"]) if rec.get("file") and (folder / str(rec["file"])).is_file() else None
    return LicenseInfo(rec["status"], str(rec.get("spdx") or ""), file,
                       f"inherited by the run {folder.name}/ from its source: {rec.get('found_in', '')}",
                       basis=f"inherited from the data the twins were made from: {rec.get('basis', '')}")


def _from_folder(folder: Path) -> LicenseInfo:
    if (inherited := _from_manifest(folder)) is not None:
        return inherited
    notes = []
    for name in LICENSE_FILES:
        f = folder / name
        if f.is_file():
            status, sid, how = identify_text(f.read_text(encoding="utf-8", errors="replace"))
            if status != "none":
                return LicenseInfo(status, sid, f if status == "identified" else None,
                                   f"found in {_display(f)}, by {how}", basis=f"the source's {name} file, by {how}")
            notes.append(f"{_display(f)}: {how}")
    hit = _sources_md_entry(folder)
    if hit:
        table, entry = hit
        status, sid = identify_entry(entry)
        where = f"the {_display(table)} entry for {folder.name}/: \"{entry}\""
        if status == "ambiguous":
            name = re.split(r"[(,;:]", re.sub(r"[*`_]", "", entry), maxsplit=1)[0].strip()
            return LicenseInfo(status, "", None, f"{where} names no single licence: "
                               f"{_candidates(ambiguous_candidates(name))}")
        if status != "none":
            return LicenseInfo(status, sid, None, f"found in {where}",
                               basis=f"the source's entry in its data table: \"{entry}\"")
        notes.append(f"no licence in {where}")
    else:
        notes.append(f"no LICENSE file or SOURCES.md entry for {_display(folder)}/")
    return LicenseInfo("none", "", None, "; ".join(notes))


def _combine(found: list[LicenseInfo]) -> LicenseInfo:
    for status in ("all_rights_reserved", "ambiguous", "none"):
        bad = [i for i in found if i.status == status]
        if bad:
            return LicenseInfo(status, bad[0].spdx, None, "; ".join(dict.fromkeys(i.found_in for i in bad)))
    spdx = list(dict.fromkeys(i.spdx for i in found))
    if len(spdx) == 1:
        return found[0]
    expr = str(_licensing().parse(" AND ".join(f"({s})" for s in spdx)).render())
    return LicenseInfo("identified", expr, None, "; ".join(dict.fromkeys(i.found_in for i in found)),
                       basis="; ".join(dict.fromkeys(i.basis or i.found_in for i in found)))


def _given(override: str, source: LicenseInfo) -> LicenseInfo:
    p = Path(override)
    if p.is_file():
        status, sid, how = identify_text(p.read_text(encoding="utf-8", errors="replace"))
        if status != "identified":
            raise LicenseNotRecognised(f"--license {p.name}: {how}; give an SPDX id (mit, cc-by-4.0...) instead")
        given_as, file = f"--license {p.name}", p
    else:
        if cands := ambiguous_candidates(override):
            raise LicenseNotRecognised(f"--license {override!r} names no single licence: {_candidates(cands)}; "
                                       "give the exact SPDX id")
        sid = spdx_expression(override) or ""
        if not sid:
            raise LicenseNotRecognised(f"--license {override!r} is not an SPDX licence id or expression "
                                       "(e.g. mit, apache-2.0, cc-by-4.0, cc-by-nc-4.0) nor a licence file")
        given_as, file = f"--license {override}", None
    own = {"none": "the source itself has no licence", "ambiguous": "the source's own licence names no version",
           "all_rights_reserved": "the source itself reserves all rights"}.get(
               source.status, f"the source's own licence is {source.spdx}")
    return LicenseInfo("identified", sid, file, f"given with {given_as} by the person who ran the release; "
                       f"{own} ({source.found_in})", given=True,
                       basis=f"given with {given_as} by the person who ran the release; {own}")


def find_license(dataset_paths: Sequence[str | Path], override: str | None = None) -> LicenseInfo:
    """The licence of the data a release derives from (identified, never guessed).

    Args:
        dataset_paths: The source dataset files (or run folders, e.g. a reference run given to ``--reference``).
        override: ``--license``: a licence file to copy, or an SPDX id (``mit``, ``cc-by-nc-4.0``...).

    Raises:
        LicenseNotRecognised: ``override`` is neither an SPDX id nor an identifiable licence file, or names no
            single licence ("GPL").
    """
    from zcp_core.data import resolve_dataset

    paths = [resolve_dataset(d).resolve() for d in dataset_paths]
    folders = list(dict.fromkeys(p if p.is_dir() else p.parent for p in paths))
    source = (_combine([_from_folder(f) for f in folders]) if folders
              else LicenseInfo("none", "", None, "no source dataset recorded"))
    return _given(override, source) if override else source


def license_record(dataset_paths: Sequence[str | Path], folder: Path) -> dict[str, Any]:
    """What a run made from ``dataset_paths`` inherits: the source's licence file, copied into ``folder``,
    and the manifest record :func:`find_license` reads back from that folder (never guessed: an unknown or
    ambiguous source is recorded as such and refused at release time)."""
    import shutil

    info = find_license(dataset_paths)
    rec: dict[str, Any] = {"status": info.status, "spdx": info.spdx, "found_in": info.found_in,
                           "basis": info.basis or info.found_in, "file": None}
    if info.file is not None:
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(info.file, folder / info.file.name)
        rec["file"] = info.file.name
    return rec


def require_license(info: LicenseInfo, allow_unlicensed: bool) -> None:
    """Refuse a release of data whose licence forbids it, names no single licence, or is unknown unless
    that was allowed.

    Raises:
        RedistributionForbidden: The source reserves all rights (``allow_unlicensed`` does not override it).
        LicenseAmbiguous: The source's licence is a family name with no version (nor does it override that).
        UnlicensedSource: No licence was identified and ``allow_unlicensed`` is False.
    """
    if info.status == "all_rights_reserved":
        raise RedistributionForbidden(
            f"the source data reserves all rights ({info.found_in}): that licence forbids redistribution, and "
            "--allow-unlicensed does not override it. Only someone who holds permission may release it, by "
            "giving the licence they hold with --license ID_OR_FILE (the card records it)")
    if info.status == "ambiguous":
        raise LicenseAmbiguous(f"the source's licence is ambiguous ({info.found_in}); a version is never guessed: "
                               "give the one that applies with --license ID")
    if info.status == "none" and not allow_unlicensed:
        raise UnlicensedSource(f"the source data has no licence we can identify ({info.found_in}); a derivative may "
                               "not be redistributable. Give it with --license ID_OR_FILE, or pass "
                               "--allow-unlicensed to release anyway (the card will say so)")


def require_derivatives_allowed(info: LicenseInfo, changed: int, what: str = "items replaced or edited") -> None:
    """Refuse a release that changes data under a no-derivatives licence; an unchanged release is allowed.

    Args:
        info: The licence the release inherits.
        changed: How many items the release replaces, edits or drops.
        what: What ``changed`` counts, for the message.

    Raises:
        DerivativesForbidden: The licence forbids derivatives and ``changed > 0``.
    """
    if changed > 0 and "no-derivatives" in info.restrictions:
        raise DerivativesForbidden(
            f"the source's licence {info.spdx} forbids derivatives and this release would have {changed} {what}; "
            "only an unchanged release is allowed (or one made under a licence you hold, given with --license)")
