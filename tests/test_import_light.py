"""Importing zcp_core modules must not load heavy libraries (standard 3)."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import zcp_core

HEAVY = ("torch", "transformers", "vllm", "shap", "sklearn", "streamlit", "ray", "pandas", "scipy", "openai",
         "peft", "plotly", "re2", "rouge_score", "math_verify")
MODULES = sorted(m.name for m in pkgutil.walk_packages(zcp_core.__path__, "zcp_core."))


@pytest.mark.parametrize("module", MODULES)
def test_module_import_is_light(module: str) -> None:
    code = f"import sys, {module}; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", f"{module} imports {out.stdout.strip()} at import time"
