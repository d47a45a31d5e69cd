"""Which app page shows which run kind (shared by the router's pages)."""

from __future__ import annotations

PAGE_FOR_KIND = {
    "probe": "app_pages/probe.py",
    "reference": "app_pages/probe.py",
    "lab": "app_pages/lab.py",
    "guided": "app_pages/guided.py",
    "scan": "app_pages/artifacts.py",
    "clean": "app_pages/artifacts.py",
    "detector": "app_pages/detector.py",
    "afr": "app_pages/afr.py",
    "chains": "app_pages/afr.py",
}


def flatten_summary(summary: dict, prefix: str = "", depth: int = 3) -> dict[str, object]:
    """Scalar leaves of a nested summary as ``a.b.c`` keys, for side-by-side comparison."""
    out: dict[str, object] = {}
    for k, v in summary.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and depth > 0:
            out.update(flatten_summary(v, key + ".", depth - 1))
        elif isinstance(v, (int, float, str, bool)) or v is None:
            out[key] = v
    return out
