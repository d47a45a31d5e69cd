"""The header every file in benchmarks/results/ opens with: command, commit, date, versions.

Benchmark scripts call :func:`header` when they write their markdown, so the
header stays true when a file is regenerated. ``tests/test_results_headers.py``
checks it.
"""

from __future__ import annotations

import datetime as _dt
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def rel(path: Path) -> str:
    """A path relative to the checkout when it is inside it (as results files name files), else as given."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def git_commit() -> str:
    """HEAD's full sha, with ``+uncommitted`` when tracked code (outside results) differs from it."""
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                ":(exclude)benchmarks/results"], cwd=ROOT, capture_output=True, text=True,
                               check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return sha + (" +uncommitted changes" if dirty else "")


def command_line(script: str | None = None, argv: list[str] | None = None) -> str:
    """The command that ran this script, relative to the repository root."""
    script = script or sys.argv[0]
    p = Path(script).resolve()
    rel = p.relative_to(ROOT) if p.is_relative_to(ROOT) else Path(script)
    args = sys.argv[1:] if argv is None else argv
    return shlex.join([".venv/bin/python", str(rel), *args])


def header(title: str, versions: str, command: str | None = None, level: int = 1) -> str:
    """A results-file (or section) header.

    Args:
        title: the heading text.
        versions: the versions that matter (generator, twins, model, pattern library...).
        command: the exact command; by default the running script's own.
        level: markdown heading level (2 for a section of a multi-run file).
    """
    cmd = command or command_line()
    today = _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    return (f"{'#' * level} {title}\n\nCommand: `{cmd}`\n"
            f"Made at commit {git_commit()} on {today}. Versions: {versions}.\n")
