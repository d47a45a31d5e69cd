"""Run folders: ``manifest.json`` plus ``records.parquet`` (and named extra tables).

Every command that produces results writes one run folder. The app and the
notebooks read runs; they never recompute what a run already stored. Writes
are atomic (temporary file, then ``os.replace``) so a killed run never leaves
a half-written file behind.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
import secrets
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Literal, Mapping, Sequence

RunKind = Literal["probe", "lab", "scan", "clean", "detector", "afr", "guided", "reference", "chains", "baselines"]
KINDS: tuple[str, ...] = ("probe", "lab", "scan", "clean", "detector", "afr", "guided", "reference", "chains",
                          "baselines")
_TRACKED_PACKAGES = (
    "torch", "transformers", "math-verify", "pandas", "pyarrow", "numpy", "scipy",
    "scikit-learn", "shap", "peft", "google-re2", "rouge-score", "openai", "vllm", "streamlit",
)


def sha256_file(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    """Hex sha256 of a file's bytes (or of a folder's files, sorted by path)."""
    p = Path(path)
    h = hashlib.sha256()
    files = sorted(x for x in p.rglob("*") if x.is_file()) if p.is_dir() else [p]
    for f in files:
        if p.is_dir():
            h.update(str(f.relative_to(p)).encode())
        with open(f, "rb") as fh:
            while block := fh.read(chunk):
                h.update(block)
    return h.hexdigest()


def package_versions() -> dict[str, str]:
    """Installed versions of the packages that can change a result."""
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name in _TRACKED_PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    from zcp_core import __version__

    out["zcp"] = __version__
    return out


def git_sha() -> str | None:
    """The project's git commit, when it runs from a checkout."""
    root = Path(__file__).resolve().parent.parent
    try:
        r = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode != 0:
        return None
    return r.stdout.strip() or None


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new temporary file next to ``path``, created with mode 0666 less the umask.

    ``tempfile.mkstemp`` creates 0600 files, and ``os.replace`` keeps that mode, so every run and release
    file would be private; opening with 0666 lets the user's umask decide (0644 under the usual 022).
    """
    for _ in range(100):
        tmp = str(path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_json(path: Path, obj: Any) -> None:
    """Write JSON atomically, with stable key order."""
    atomic_write_bytes(path, (json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n").encode())


def atomic_write_parquet(path: Path, df: Any) -> None:
    """Write a DataFrame to parquet atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = _temp_beside(path)
    os.close(fd)  # the writer reopens it by name and truncates it, keeping its mode
    try:
        df.to_parquet(tmp, index=False)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass(frozen=True)
class RunSpec:
    """What a run records about how it was made.

    Attributes:
        kind: The method that wrote it.
        config: The command's parameters (JSON-serialisable).
        command: The command line, for humans.
        model: Model spec string, when a model was used.
        model_revision: Backend-reported revision (file hash, commit...).
        dataset: Dataset path(s), when data was read.
        seed: The seed the run used.
        inherits: What a run whose output is data derived from ``dataset`` inherits, written into the manifest
            as they are: ``license`` (:func:`zcp_core.publish.license_record`) and ``source``
            (:func:`zcp_core.publish.derived_ref`), so a release of that data cites and licenses it.
    """

    kind: str
    config: Mapping[str, Any]
    command: str = ""
    model: str | None = None
    model_revision: str | None = None
    dataset: tuple[str, ...] = ()
    seed: int = 0
    inherits: Mapping[str, Any] = field(default_factory=dict)


def shell_command(argv: Sequence[str]) -> str:
    """A command line that can be pasted into a shell: ``zcp probe ...`` however zcp was started.

    ``argv[0]`` is the ``zcp`` script, ``.../zcp_core/cli/main.py`` under ``python -m`` (how the
    app's jobs start), or something else (a notebook, a benchmark), which is kept as it is.
    """
    import shlex

    if not argv:
        return ""
    head = Path(argv[0]).name
    if head.startswith("ipykernel") or "ipykernel" in argv[1:2]:
        return ""  # a notebook kernel: its command line reruns nothing; the notebook itself is the record
    if head == "zcp" or Path(argv[0]).parts[-3:] == ("zcp_core", "cli", "main.py"):
        return shlex.join(["zcp", *argv[1:]])
    return shlex.join(list(argv))


#: Set by the ``zcp`` entry point when a command starts, so a run records its real start time.
STARTED_ENV = "ZCP_COMMAND_STARTED"
# The line a command prints when Ctrl-C or a stop (SIGTERM) ends it; the app's job list reads it back.
STOPPED_BY_USER = "stopped by the user; cached work is kept and a rerun resumes from it"


def _cli_started() -> _dt.datetime | None:
    raw = os.environ.get(STARTED_ENV)
    try:
        return _dt.datetime.fromisoformat(raw) if raw else None
    except ValueError:
        return None


def write_run(
    out: str | os.PathLike[str],
    spec: RunSpec,
    records: Any,
    summary: Mapping[str, Any],
    tables: Mapping[str, Any] | None = None,
    started: _dt.datetime | None = None,
) -> Path:
    """Write a run folder.

    Args:
        out: Folder to create (may exist; files are replaced atomically).
        spec: How the run was made.
        records: The main results DataFrame, saved as ``records.parquet``.
        summary: The command's ``--json`` object; it should hold ``headline``
            as ``{"label", "value"}``.
        tables: Extra DataFrames saved as ``<name>.parquet``.
        started: When the work began (default: when the ``zcp`` command started, else now).

    Returns:
        The run folder.
    """
    from zcp_core.outdir import options_from_env

    if spec.kind not in KINDS:
        raise ValueError(f"unknown run kind {spec.kind!r}; expected one of {KINDS}")
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    for name, df in {"records": records, **dict(tables or {})}.items():
        atomic_write_parquet(folder / f"{name}.parquet", df)
    now = _dt.datetime.now(_dt.timezone.utc)
    datasets = [{"path": str(p), "sha256": sha256_file(p) if Path(p).exists() else None} for p in spec.dataset]
    manifest = {
        "kind": spec.kind,
        "command": spec.command or shell_command(sys.argv),
        "config": dict(spec.config),
        "model": spec.model,
        "model_revision": spec.model_revision,
        "datasets": datasets,
        "seed": spec.seed,
        "versions": package_versions(),
        "git_sha": git_sha(),
        "started": (started or _cli_started() or now).isoformat(),
        "finished": now.isoformat(),
        "tables": sorted(["records", *(tables or {})]),
        "summary": dict(summary),
        "options": options_from_env(),
        **{k: v for k, v in spec.inherits.items() if k in ("license", "source")},
    }
    atomic_write_json(folder / "manifest.json", manifest)
    return folder


@dataclass(frozen=True)
class Run:
    """A run folder as read back.

    Attributes:
        path: The folder.
        manifest: The parsed ``manifest.json``.
    """

    path: Path
    manifest: Mapping[str, Any]

    @property
    def kind(self) -> str:
        """The method that wrote the run."""
        return str(self.manifest["kind"])

    @property
    def summary(self) -> Mapping[str, Any]:
        """The command's summary object."""
        return self.manifest.get("summary", {})

    @property
    def records(self) -> Any:
        """The main results table."""
        return self.table("records")

    def table(self, name: str) -> Any:
        """Read ``<name>.parquet`` from the run."""
        import pandas as pd

        path = self.path / f"{name}.parquet"
        if not path.exists():
            raise FileNotFoundError(f"run {self.path} has no table {name!r} (tables: {self.manifest.get('tables')})")
        return pd.read_parquet(path)

    def has_table(self, name: str) -> bool:
        """Whether ``<name>.parquet`` exists in the run."""
        return (self.path / f"{name}.parquet").exists()


def load_run(path: str | os.PathLike[str]) -> Run:
    """Read a run folder's manifest; tables are read on demand."""
    folder = Path(path)
    mpath = folder / "manifest.json"
    if not mpath.exists():
        from zcp_core.errors import RunNotFound

        what = "no such folder" if not folder.exists() else "not a run folder: it has no manifest.json"
        raise RunNotFound(f"{folder}: {what}")
    try:
        manifest = json.loads(mpath.read_text())
    except json.JSONDecodeError as e:
        from zcp_core.errors import DataError

        raise DataError(str(mpath), e.lineno, None, f"malformed JSON: {e.msg}") from e
    if "kind" not in manifest:
        from zcp_core.errors import DataError

        raise DataError(str(mpath), None, "kind", "manifest has no kind")
    return Run(path=folder, manifest=manifest)


def runs_dir() -> Path:
    """The runs directory: ``$ZCP_RUNS``, else ``./runs``."""
    return Path(os.environ.get("ZCP_RUNS", str(Path.cwd() / "runs"))).resolve()


def iter_runs(root: str | os.PathLike[str]) -> Iterable[Run]:
    """Yield every run under ``root`` (any depth), newest first."""
    base = Path(root)
    if not base.exists():
        return []
    runs = []
    for m in base.rglob("manifest.json"):
        try:
            runs.append(load_run(m.parent))
        except Exception:  # noqa: BLE001 - a broken folder must not hide the others
            continue
    return sorted(runs, key=lambda r: str(r.manifest.get("finished", "")), reverse=True)


def runs_table(root: str | os.PathLike[str]) -> Any:
    """One row per run: path, kind, model, dataset, date and headline.

    Columns: ``path``, ``name``, ``kind``, ``model``, ``dataset``, ``finished``,
    ``headline_label``, ``headline_value``.
    """
    import pandas as pd

    rows = []
    for r in iter_runs(root):
        head = r.summary.get("headline") or {}
        ds = r.manifest.get("datasets") or []
        rows.append({
            "path": str(r.path),
            "name": r.path.name,
            "kind": r.kind,
            "model": r.manifest.get("model") or "",
            "dataset": ", ".join(Path(d["path"]).name for d in ds),
            "finished": r.manifest.get("finished", ""),
            "headline_label": str(head.get("label", "")),
            "headline_value": head.get("value"),
        })
    cols = ["path", "name", "kind", "model", "dataset", "finished", "headline_label", "headline_value"]
    return pd.DataFrame(rows, columns=cols)
