"""Build hook: ship the Streamlit app and the small bundled data inside the wheel.

``app.py``, ``app_pages/`` and ``data/`` live at the top of the checkout (the
layout users know). A wheel has no checkout, so the build copies them into
``zcp_core/app/bundle/``; :func:`zcp_core.data.install_root` finds them there.
Everything else is configured in ``pyproject.toml``.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
BUNDLED = ("app.py", "app_pages", "data", ".streamlit")


class BuildWithBundle(build_py):
    """``build_py`` plus a copy of the app and the bundled data into the package."""

    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "zcp_core" / "app" / "bundle"
        for name in BUNDLED:
            src = HERE / name
            dst = target / name
            if src.is_dir():
                shutil.copytree(src, dst, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints"))
            elif src.exists():
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dst)


setup(cmdclass={"build_py": BuildWithBundle})
