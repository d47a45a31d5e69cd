"""Publishing releases: dataset cards with licence, provenance, counts and canary, as maintainers need them."""

from __future__ import annotations

from zcp_core.publish.card import (
    Card,
    LicenseInfo,
    UnlicensedSource,
    citation_for,
    find_license,
    publish_files,
    render_card,
    require_license,
)

__all__ = [
    "Card", "LicenseInfo", "UnlicensedSource", "citation_for", "find_license", "publish_files", "render_card",
    "require_license",
]
