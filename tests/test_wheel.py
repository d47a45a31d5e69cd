"""An installed zcp (a wheel, no checkout) offers the CLI, the app and the bundled data.

Slow (builds a wheel and a venv): run it with ``pytest -m slow tests/test_wheel.py``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_installs_and_runs_without_a_checkout() -> None:
    out = subprocess.run(["bash", str(ROOT / "scripts" / "check_wheel")], capture_output=True, text=True,
                         env={"PY": sys.executable, "PATH": "/usr/bin:/bin"}, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "gsm8k format, 1319 items" in out.stdout
    assert "zcp_core/app/bundle/app.py" in out.stdout
    assert "wheel check: ok" in out.stdout
