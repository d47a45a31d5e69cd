"""Small helpers the Streamlit pages share: where runs live and how a run is picked.

Pages hold no analysis logic; they call ``zcp_core`` and render. This module
holds only the glue that every page needs (paths, run selection).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from zcp_core.data import install_root
from zcp_core.errors import ZcpError
from zcp_core.runs import Run, runs_dir


def app_script() -> Path:
    """The Streamlit router ``app.py``: the checkout's, or the copy shipped in the wheel."""
    path = install_root() / "app.py"
    if not path.is_file():
        raise ZcpError(f"the app is not installed: {path} is missing (reinstall zcp, or run from a checkout)")
    return path


def _cached_table(path: str, name: str, mtime: float) -> Any:
    """Read one parquet table through a bounded Streamlit cache (keyed by file mtime)."""
    import streamlit as st

    @st.cache_data(max_entries=64, ttl=3600, show_spinner=False)
    def read(path: str, name: str, mtime: float) -> Any:
        import pandas as pd

        return pd.read_parquet(Path(path) / f"{name}.parquet")

    return read(path, name, mtime)


@dataclass(frozen=True)
class AppRun(Run):
    """A run whose tables are read through the app's bounded cache."""

    def table(self, name: str) -> Any:
        """Read ``<name>.parquet``, cached across reruns until the file changes."""
        path = self.path / f"{name}.parquet"
        if not path.exists():
            return super().table(name)  # raises the informative FileNotFoundError
        return _cached_table(str(self.path), name, path.stat().st_mtime)


def pick_run(kind: str | tuple[str, ...], key: str = "run") -> Any:
    """A run selector for a method page; returns the chosen Run or None.

    The home page opens a run by setting ``st.session_state["selected_run"]``
    (a path) and switching page; that run is preselected here.
    """
    import streamlit as st

    from zcp_core.runs import iter_runs

    kinds = (kind,) if isinstance(kind, str) else kind
    runs = [r for r in iter_runs(runs_dir()) if r.kind in kinds]
    if not runs:
        st.info(f"No {' / '.join(kinds)} runs in {runs_dir()} yet. Start one from **New audit** or the CLI.")
        return None
    labels = [
        " · ".join(x for x in (r.path.name, r.manifest.get("model") or "", str(r.manifest.get("finished", ""))[:16],
                               "example" if r.manifest.get("example") else "") if x)
        for r in runs
    ]
    wanted = st.session_state.get("selected_run")
    index = next((i for i, r in enumerate(runs) if str(r.path) == wanted), 0)
    choice = st.selectbox("Run", range(len(runs)), index=index, format_func=lambda i: labels[i], key=key)
    show_example_label(runs[choice].manifest)
    return AppRun(runs[choice].path, runs[choice].manifest)


def show_example_label(manifest: Mapping[str, Any]) -> None:
    """Label a bundled example run (manifest key ``example``): its note and the command that reproduces it."""
    import streamlit as st

    example = manifest.get("example")
    if not example:
        return
    st.info(f"**Example run** · {example.get('note', '')}\n\nReproduce with `{example.get('command', '')}` "
            f"(script `{example.get('script', '')}`).", icon="🧪")
