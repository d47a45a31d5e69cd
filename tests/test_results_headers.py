"""Every result is traceable: each benchmarks/results/*.md opens with the command, commit, date and versions.

The header (within the first 25 lines)::

    Command: `<the exact command that made this file>`
    Made at commit <sha> on <YYYY-MM-DD>. Versions: <what matters>.

A file that collects several runs gives each section its own such header, so
every ``Command:`` line anywhere in a file must be followed (within three
lines) by its commit and date. The commit must be in this repository's history
(checked only in a full git checkout), and a script the command names must exist.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RESULTS = sorted((ROOT / "benchmarks" / "results").glob("*.md"))
HEAD_LINES = 25
COMMIT = re.compile(r"\bcommit ([0-9a-f]{7,40})\b")
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
SCRIPT = re.compile(r"(?<![\w/.-])((?:benchmarks|scripts)/[\w./-]+)")


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False)


def _full_checkout() -> bool:
    if shutil.which("git") is None or _git("rev-parse", "--is-inside-work-tree").stdout.strip() != "true":
        return False
    return _git("rev-parse", "--is-shallow-repository").stdout.strip() == "false"


def headers(text: str) -> list[dict[str, str]]:
    """Each ``Command:`` line with the commit and date found on it or within the three lines after it."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines):
        if not line.startswith("Command:"):
            continue
        block = "\n".join(lines[i:i + 4])
        commit, date = COMMIT.search(block), DATE.search(block)
        out.append({"line": str(i + 1), "command": line, "commit": commit.group(1) if commit else "",
                    "date": date.group(0) if date else "", "versions": "yes" if "Versions:" in block else ""})
    return out


def test_there_are_results() -> None:
    assert RESULTS, "benchmarks/results/ has no markdown files"


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: p.name)
def test_results_file_has_a_header(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    found = headers(text)
    first = [h for h in found if int(h["line"]) <= HEAD_LINES]
    assert first, f"{path.name}: no 'Command: `...`' line within its first {HEAD_LINES} lines"
    for h in found:
        where = f"{path.name}, line {h['line']}"
        assert "`" in h["command"], f"{where}: the command is not quoted in backticks"
        assert h["commit"], f"{where}: no 'commit <sha>' with the command"
        assert h["date"], f"{where}: no YYYY-MM-DD date with the command"
        assert h["versions"], f"{where}: no 'Versions: ...' with the command"


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: p.name)
def test_results_commands_name_scripts_that_exist(path: Path) -> None:
    for h in headers(path.read_text(encoding="utf-8")):
        for script in SCRIPT.findall(h["command"]):
            script = script.rstrip(".")
            if script.startswith("benchmarks/results/"):
                continue  # an output file the command writes
            assert (ROOT / script).exists(), f"{path.name}, line {h['line']}: the command names {script}, which is gone"


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: p.name)
def test_results_commits_are_in_history(path: Path) -> None:
    if not _full_checkout():
        pytest.skip("not a full git checkout: the commit history cannot be checked")
    for h in headers(path.read_text(encoding="utf-8")):
        sha = h["commit"]
        if not sha:
            continue  # a missing commit fails test_results_file_has_a_header
        where = f"{path.name}, line {h['line']}"
        assert _git("cat-file", "-e", f"{sha}^{{commit}}").returncode == 0, f"{where}: commit {sha} is unknown"
        assert _git("merge-base", "--is-ancestor", sha, "HEAD").returncode == 0, \
            f"{where}: commit {sha} is not in this branch's history"


def test_header_parser_golden() -> None:
    text = ("# T\n\nCommand: `.venv/bin/python benchmarks/x.py --n 3`\n"
            "Made at commit 0123456789ab on 2026-12-03. Versions: twins v3.\n\n## B\n\nCommand: `zcp probe`\n\n")
    got = headers(text)
    assert [(h["line"], h["commit"], h["date"], h["versions"]) for h in got] == [
        ("3", "0123456789ab", "2026-12-03", "yes"), ("8", "", "", "")]
    assert SCRIPT.findall(got[0]["command"]) == ["benchmarks/x.py"]
