"""Publishing releases: dataset cards with licence, provenance, counts and canary, as maintainers need them."""

from __future__ import annotations

from zcp_core.publish.card import Card, canary_string, citation_for, front_matter, publish_files, render_card
from zcp_core.publish.license import (
    ALL_RIGHTS_RESERVED,
    DerivativesForbidden,
    LicenseAmbiguous,
    LicenseInfo,
    LicenseNotRecognised,
    RedistributionForbidden,
    UnlicensedSource,
    find_license,
    identify_entry,
    identify_text,
    license_record,
    require_derivatives_allowed,
    require_license,
    spdx_expression,
)
from zcp_core.publish.sources import SourceRef, derived_ref, display_path, portable_command, source_line, source_ref

__all__ = [
    "ALL_RIGHTS_RESERVED", "Card", "DerivativesForbidden", "canary_string", "LicenseAmbiguous", "LicenseInfo", "LicenseNotRecognised",
    "RedistributionForbidden", "SourceRef", "UnlicensedSource", "citation_for", "derived_ref", "display_path",
    "find_license", "front_matter", "identify_entry", "identify_text", "license_record", "portable_command",
    "publish_files", "render_card", "require_derivatives_allowed", "require_license", "source_line", "source_ref",
    "spdx_expression",
]
