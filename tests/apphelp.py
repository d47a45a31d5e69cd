"""Shared AppTest helper: render one app page against a runs directory."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def render_page(page: str, runs: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Run ``app_pages/<page>`` with ``ZCP_RUNS=runs`` and assert it raised nothing."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("ZCP_RUNS", str(runs))
    at = AppTest.from_file(str(ROOT / "app_pages" / page), default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    return at
