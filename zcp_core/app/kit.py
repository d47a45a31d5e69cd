"""Small helpers the Streamlit pages share: where runs live and how a run is picked.

Pages hold no analysis logic; they call ``zcp_core`` and render. This module
holds only the glue that every page needs (paths, run selection).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from zcp_core.data import install_root
from zcp_core.errors import ZcpError
from zcp_core.probe.browse import GAP_WORDS
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


SWITCH_KEY = "switch_to_run"


def pick_run(kind: str | tuple[str, ...], key: str = "run", prefer: Callable[[Run], float] | None = None) -> Any:
    """A run selector for a method page; returns the chosen Run or None.

    The home page opens a run by setting ``st.session_state["selected_run"]``
    (a path) and switching page; that run is preselected here. Otherwise the run
    with the highest ``prefer`` score opens first (the newest when there is no score),
    and :func:`switch_run_button` moves the selector to another run in one click.
    """
    import streamlit as st

    from zcp_core.runs import iter_runs

    kinds = (kind,) if isinstance(kind, str) else kind
    runs = [r for r in iter_runs(runs_dir()) if r.kind in kinds]
    if not runs:
        st.info(f"No {' / '.join(kinds)} runs in {runs_dir()} yet. Start one from **New audit** or the CLI.")
        return None
    switch = st.session_state.pop(SWITCH_KEY, None)
    if switch is not None:
        st.session_state[key] = next((i for i, r in enumerate(runs) if str(r.path) == switch), 0)
    labels = [
        " · ".join(x for x in (r.path.name, r.manifest.get("model") or "", str(r.manifest.get("finished", ""))[:16],
                               "example" if r.manifest.get("example") else "") if x)
        for r in runs
    ]
    wanted = next((i for i, r in enumerate(runs) if str(r.path) == st.session_state.get("selected_run")), None)
    if wanted is not None:  # opened from the run browser: selected once, then the selector is the user's
        st.session_state[key] = wanted
        del st.session_state["selected_run"]
    if key in st.session_state and not 0 <= int(st.session_state[key]) < len(runs):
        del st.session_state[key]  # a run that is gone: fall back to the preferred one
    best = max(range(len(runs)), key=lambda i: (prefer(runs[i]), -i)) if prefer else 0
    # A widget given both a default and a session-state value makes Streamlit warn with a stack trace: the
    # default goes only to a selector the session has not set yet.
    if key in st.session_state:
        choice = st.selectbox("Run", range(len(runs)), format_func=lambda i: labels[i], key=key)
    else:
        choice = st.selectbox("Run", range(len(runs)), index=best, format_func=lambda i: labels[i], key=key)
    show_example_label(runs[choice].manifest, runs[choice].path)
    return AppRun(runs[choice].path, runs[choice].manifest)


def switch_run_button(label: str, target: Path, help: str | None = None) -> None:
    """A button that opens ``target`` (a run of the same page) in the page's run selector."""
    import streamlit as st

    def go() -> None:
        st.session_state[SWITCH_KEY] = str(target)

    st.button(label, on_click=go, help=help, key=f"switch-{target.name}")


#: Options whose value is a dataset file, and the copy a run keeps of it (``zcp probe`` stores both sides).
_STORED_COPIES = {"--dataset": "items_original.jsonl", "--reference": "items_reference.jsonl"}


def reproduce_command(manifest: Mapping[str, Any], run_path: Path | None = None) -> str:
    """An example's command with every dataset it names pointing at a file that exists.

    A file named by a bare name that is not where the command was made is replaced by the copy the run folder
    keeps (``items_original.jsonl`` for ``--dataset``, ``items_reference.jsonl`` for ``--reference``), shown
    relative to the working folder when it is below it.
    """
    import shlex

    command = str((manifest.get("example") or {}).get("command", ""))
    words = shlex.split(command)
    for i, word in enumerate(words[:-1]):
        stored = _STORED_COPIES.get(word)
        if stored and run_path is not None and not Path(words[i + 1]).exists() and (run_path / stored).exists():
            copy = (run_path / stored).resolve()
            try:
                shown = copy.relative_to(Path.cwd().resolve())
            except ValueError:
                shown = copy
            words[i + 1] = str(shown)
    return " ".join(shlex.quote(w) for w in words)


def show_example_label(manifest: Mapping[str, Any], run_path: Path | None = None) -> None:
    """Label a bundled example run (manifest key ``example``): its note and the command that reproduces it."""
    import streamlit as st

    from zcp_core.report import portable

    example = manifest.get("example")
    if not example:
        return
    # The same portable command the release card and the notebooks show (zcp_core.report.portable).
    command = portable(str(manifest.get("command") or "")) or reproduce_command(manifest, run_path)
    st.info(f"**Example run** · {example.get('note', '')}\n\nReproduce with `{command}` "
            f"(script `{example.get('script', '')}`).", icon="🧪")


def lab_split_of(run: Run) -> dict[str, str]:
    """For a run of a lab model (``lab:NAME``): item id -> ``C`` (trained on) or ``U`` (held out), else ``{}``.

    The split comes from a ``zcp lab evaluate`` or ``zcp lab build`` run of the same model in the runs folder
    (the same build: a run recording another model revision drew another split), or from the bundled examples'
    split file; the probe run itself does not store it.
    """
    import json

    from zcp_core.runs import iter_runs

    model = str(run.manifest.get("model") or "")
    if not model.startswith("lab:"):
        return {}
    revision = run.manifest.get("model_revision")
    for other in iter_runs(runs_dir()):
        other_revision = other.manifest.get("model_revision")
        if revision and other_revision and other_revision != revision:
            continue
        if other.kind == "lab" and other.manifest.get("model") == model and other.has_table("records"):
            recs = other.table("records")
            if {"id", "split"} <= set(recs.columns):
                return {str(i): str(s) for i, s in zip(recs["id"], recs["split"]) if s in ("C", "U")}
    bundled = install_root() / "data" / "examples" / f"lab-{model.removeprefix('lab:')}-items.jsonl"
    if bundled.exists():
        rows = [json.loads(line) for line in bundled.read_text(encoding="utf-8").splitlines() if line.strip()]
        return {str(r["id"]): str(r["split"]) for r in rows if r.get("split") in ("C", "U")}
    return {}


def same_items_runs(run: Run) -> list[Run]:
    """Other runs of the same kind on exactly the same data files (by sha256) with another model."""
    from zcp_core.runs import iter_runs

    def shas(r: Run) -> tuple[str, ...]:
        return tuple(sorted(str(d.get("sha256")) for d in r.manifest.get("datasets", []) if d.get("sha256")))

    mine = shas(run)
    if not mine:
        return []
    return [o for o in iter_runs(runs_dir()) if o.kind == run.kind and o.path != run.path and shas(o) == mine
            and o.manifest.get("model") != run.manifest.get("model")]


#: Pixel widths of the probe page's tables, so each fits the main column at a 1,280-pixel window beside the
#: sidebar (about 1,000 pixels once the page's side padding is narrowed in app.py); a cut cell shows whole on hover.
METRIC_TABLE_WIDTHS = {"Metric": 146, "Pairs": 46, "Difference": 68, "95% CI": 116, "Lower bound": 68,
                       "Cohen's d_z": 68, "p-value": 64, "Bayes factor bound": 76, "Confidence C": 74, "Reading": 160}
ITEM_TABLE_WIDTHS = {"Item": 150, "Flagged": 56, "Flip": 100, "Original correct": 58, "Twin correct": 58, "Twins": 46,
                     "Item p": 54, "q-value": 56, GAP_WORDS: 86, "Question": 120, "Trained on": 96}


def column_widths(columns: Any, widths: Mapping[str, int]) -> dict[str, Any]:
    """A ``st.dataframe`` column config giving the named columns their pixel widths (others keep theirs)."""
    import streamlit as st

    return {c: st.column_config.Column(width=int(widths[c])) for c in columns if c in widths}


def constant_column(table: Any, column: str) -> tuple[Any, str | None]:
    """``table`` without ``column`` when every row holds the same value, and that value (else the table, None):
    a value every row repeats is said once, beside the table."""
    if column in table.columns and len(table) and table[column].nunique() == 1:
        return table.drop(columns=[column]), str(table[column].iloc[0])
    return table, None
