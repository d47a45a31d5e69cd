"""Publishing releases: dataset cards with licence, provenance, counts and canary, as maintainers need them."""

from __future__ import annotations

from zcp_core.publish.card import Card, citation_for, front_matter, publish_files, render_card
from zcp_core.publish.license import (
    ALL_RIGHTS_RESERVED,
    LicenseInfo,
    LicenseNotRecognised,
    RedistributionForbidden,
    UnlicensedSource,
    display_path,
    find_license,
    identify_entry,
    identify_text,
    portable_command,
    require_license,
    source_line,
    spdx_expression,
)

__all__ = [
    "ALL_RIGHTS_RESERVED", "Card", "LicenseInfo", "LicenseNotRecognised", "RedistributionForbidden",
    "UnlicensedSource", "citation_for", "display_path", "find_license", "front_matter", "identify_entry",
    "identify_text", "portable_command", "publish_files", "render_card", "require_license", "source_line", "spdx_expression",
]
