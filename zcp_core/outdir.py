"""Output folders that lose nothing: a command resumes its own run, refuses anything else, replaces on request.

Every command that writes a folder claims it first, before any work:

* a folder that does not exist, or is empty, is ``new``;
* a folder holding the same kind of output made with the same options is ``resume``: the command runs again
  into it (its model calls come back from the response cache) and writes the same files;
* the same kind made with other options is refused, in one line naming the first options that differ, unless
  ``--overwrite`` is given (``replace``: the old folder is removed, then written anew);
* anything else (another kind of output, or files zcp did not write) is refused, naming what is there.
  ``--overwrite`` never removes a folder zcp did not write: a user's own files are never deleted.

A run folder is recognised by its ``manifest.json`` (:mod:`zcp_core.runs`), a release by its ``release.json``.
The options a run was made with are stored in its manifest (``options``) by :func:`zcp_core.runs.write_run`,
from :data:`OPTIONS_ENV`, which the ``zcp`` entry point sets while a command runs.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Mapping

from zcp_core.errors import ZcpError

Action = Literal["new", "resume", "replace"]
#: Set by the ``zcp`` entry point while a command runs: its options as JSON, so the run records them.
OPTIONS_ENV = "ZCP_COMMAND_OPTIONS"
#: The app's job bookkeeping beside a run (:mod:`zcp_core.app.jobs`): written before the command starts.
JOB_FILES = frozenset({"job.json", "log.txt"})
#: Options that change how a command runs, never what it writes.
NEUTRAL_OPTIONS = frozenset({"json", "out", "overwrite", "no_cache", "batch_size", "device", "no_progress",
                             "threads", "func"})


class OutputRefused(ZcpError):
    """An output folder a command will not write into; the message is one line saying why and what to do."""


@dataclass(frozen=True)
class Claim:
    """What a command may do with its output folder.

    Attributes:
        path: The folder.
        action: ``new``, ``resume`` (same kind, same options) or ``replace`` (``--overwrite`` given).
    """

    path: Path
    action: Action


def command_options(values: Mapping[str, Any]) -> dict[str, Any]:
    """The options of a command that decide what it writes, as JSON values (``--json``, ``--out`` and the
    like left out)."""
    kept = {k: v for k, v in values.items() if k not in NEUTRAL_OPTIONS and not callable(v)}
    return json.loads(json.dumps(kept, default=str, sort_keys=True))


def _contents(folder: Path) -> list[str]:
    """The folder's entries that matter: the app's job files and half-written temporary files left out."""
    return sorted(p.name for p in folder.iterdir()
                  if p.name not in JOB_FILES and not (p.name.startswith(".") and p.name.endswith(".tmp")))


def existing_kind(folder: Path) -> tuple[str | None, dict[str, Any] | None]:
    """The kind of zcp output ``folder`` holds (``None`` when zcp did not write it) and its stored options."""
    manifest, release = folder / "manifest.json", folder / "release.json"
    for path, fallback in ((manifest, None), (release, "release")):
        if path.is_file():
            try:
                data = json.loads(path.read_text())
            except (OSError, json.JSONDecodeError):
                continue
            if isinstance(data, dict):
                kind = fallback or data.get("kind")
                options = data.get("options")
                return (str(kind) if kind else None), (options if isinstance(options, dict) else None)
    return None, None


def _show(v: Any) -> str:
    return "not given" if v in (None, False) else "on" if v is True else json.dumps(v) if not isinstance(v, str) else v


def differences(then: Mapping[str, Any], now: Mapping[str, Any], limit: int = 3) -> list[str]:
    """The options that differ, as ``--flag: A then, B now`` (at most ``limit`` of them)."""
    keys = sorted(k for k in set(then) | set(now) if then.get(k) != now.get(k))
    return [f"--{k.replace('_', '-')}: {_show(then.get(k))} then, {_show(now.get(k))} now" for k in keys[:limit]]


def _noun(kind: str) -> str:
    return "a release" if kind == "release" else f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind} run"


def claim_output(out: str | os.PathLike[str], kind: str, options: Mapping[str, Any] | None,
                 overwrite: bool = False) -> Claim:
    """Decide, before any work, whether a command may write ``out``; refuse in one line when it may not.

    Args:
        out: The output folder.
        kind: The kind of output the command writes (a run kind, or ``release``).
        options: The command's options (:func:`command_options`); ``None`` means a rerun is never a resume
            (the command keeps no record of them), so an existing folder of the kind needs ``--overwrite``.
        overwrite: ``--overwrite``: replace a zcp output folder (of any kind); never a folder of the user's files.

    Returns:
        The :class:`Claim`; under ``replace`` the old folder has been removed.

    Raises:
        OutputRefused: The folder holds something else, or the same kind made otherwise without ``overwrite``.
    """
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise OutputRefused(f"--out {folder} is a file, not a folder; choose a folder")
    if not folder.exists() or not _contents(folder):
        return Claim(folder, "new")
    found, stored = existing_kind(folder)
    if found is None:
        names = _contents(folder)
        shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
        raise OutputRefused(f"--out {folder} holds files zcp did not write ({shown}); choose a new or empty folder")
    if found == kind and options is not None and stored is not None:
        diff = differences(stored, options)
        if not diff:
            return Claim(folder, "resume")
        why = f"{_noun(kind)} made with other options ({'; '.join(diff)})"
    elif found == kind:
        why = _noun(kind)
    else:
        why = f"{_noun(found)}, not {_noun(kind)}"
    if not overwrite:
        raise OutputRefused(f"--out {folder} already holds {why}; pass --overwrite to replace it, "
                            "or choose another folder")
    keep = [folder / n for n in JOB_FILES if (folder / n).exists()]  # an app job's own log stays with its run
    saved = {p.name: p.read_bytes() for p in keep}
    shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for name, data in saved.items():
        (folder / name).write_bytes(data)
    return Claim(folder, "replace")


def options_from_env() -> dict[str, Any] | None:
    """The running command's options, as the entry point recorded them (``None`` outside a ``zcp`` command)."""
    raw = os.environ.get(OPTIONS_ENV)
    try:
        value = json.loads(raw) if raw else None
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
