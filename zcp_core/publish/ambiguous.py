"""Licence names that name no single licence: a family without a version ("GPL", "BSD", "CC").

``license-expression`` reads a bare "GPL" as ``GPL-1.0-or-later``, a guess no maintainer made. A name that
matches a family below and states no version (or, for the GNU licences, no "only"/"or later") is refused
with the candidates listed, so the person releasing picks the one that applies with ``--license``.
"""

from __future__ import annotations

import re

_GPL = ("GPL-2.0-only", "GPL-2.0-or-later", "GPL-3.0-only", "GPL-3.0-or-later")
_LGPL = ("LGPL-2.1-only", "LGPL-2.1-or-later", "LGPL-3.0-only", "LGPL-3.0-or-later")
_AGPL = ("AGPL-3.0-only", "AGPL-3.0-or-later")
_CC = ("CC0-1.0", "CC-BY-4.0", "CC-BY-SA-4.0", "CC-BY-NC-4.0", "CC-BY-ND-4.0", "CC-BY-NC-SA-4.0",
       "CC-BY-NC-ND-4.0")
_CC_VERSIONS = ("2.0", "2.5", "3.0", "4.0")

# Family name (normalised: lower case, words joined by one space, "licen[cs]e" and "the" removed) -> candidates.
FAMILIES: dict[str, tuple[str, ...]] = {
    "gpl": _GPL, "gnu gpl": _GPL, "gnu general public": _GPL, "general public": _GPL,
    "lgpl": _LGPL, "gnu lgpl": _LGPL, "gnu lesser general public": _LGPL, "lesser general public": _LGPL,
    "agpl": _AGPL, "gnu agpl": _AGPL, "gnu affero general public": _AGPL, "affero general public": _AGPL,
    "bsd": ("BSD-2-Clause", "BSD-3-Clause", "BSD-4-Clause"),
    "cc": _CC, "creative commons": _CC,
    "apache": ("Apache-1.0", "Apache-1.1", "Apache-2.0"),
    "mpl": ("MPL-1.0", "MPL-1.1", "MPL-2.0"), "mozilla public": ("MPL-1.0", "MPL-1.1", "MPL-2.0"),
    "epl": ("EPL-1.0", "EPL-2.0"), "eclipse public": ("EPL-1.0", "EPL-2.0"),
    "gfdl": ("GFDL-1.1-only", "GFDL-1.2-only", "GFDL-1.3-only", "GFDL-1.1-or-later", "GFDL-1.2-or-later",
             "GFDL-1.3-or-later"),
}
# A Creative Commons name with its parts but no version: "CC BY-SA", "CC-BY-NC-ND".
_CC_PARTS = re.compile(r"^(?:cc|creative commons)[ -]by((?:[ -](?:nc|sa|nd))*)$")
# A GNU licence with a major version but no "only"/"or later": "GPLv3", "GNU GPL version 2".
_GNU_VERSION = re.compile(r"^(?:gnu )?(a|l)?gpl ?v?(?:ersion )?(2|2\.1|3)(?:\.0)?$")


def _normalise(text: str) -> str:
    s = re.sub(r"[*`_\"'()]", " ", text).lower()
    s = re.sub(r"\b(?:the|licen[cs]e[sd]?|version)\b", " ", s) if not re.search(r"\d", s) else \
        re.sub(r"\b(?:the|licen[cs]e[sd]?)\b", " ", s)
    return " ".join(s.replace(",", " ").split()).strip(" .-")


def ambiguous_candidates(text: str) -> tuple[str, ...]:
    """The SPDX ids a licence name could mean when it names none of them exactly; ``()`` when it is not one.

    Args:
        text: A licence name as written (a first line, a ``SOURCES.md`` entry, a ``--license`` value).

    Returns:
        The candidate SPDX ids, or ``()`` for a name that is exact (``MIT``, ``GPL-3.0-only``) or unknown.
    """
    s = _normalise(text)
    if not s or len(s) > 40:
        return ()
    if s in FAMILIES:
        return FAMILIES[s]
    m = _CC_PARTS.match(s)
    if m:
        parts = "".join(f"-{p.upper()}" for p in re.split(r"[ -]", m.group(1)) if p)
        return tuple(f"CC-BY{parts}-{v}" for v in _CC_VERSIONS)
    m = _GNU_VERSION.match(s)
    if m and not re.search(r"\d-(?:only|or-later)$|\+$", text.strip()):
        prefix = (m.group(1) or "").upper() + "GPL"
        version = {"2": "2.0", "3": "3.0"}.get(m.group(2), m.group(2))
        if text.strip().upper() in {f"{prefix}-{version}"}:
            return ()  # the deprecated SPDX id itself ("GPL-3.0"), which SPDX defines as "-only"
        return (f"{prefix}-{version}-only", f"{prefix}-{version}-or-later")
    return ()
