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


# --- every header command runs from a fresh checkout -------------------------------------------------------------
# A header command is one or more shell commands (``;`` or ``&&`` between them) inside the first pair of backticks
# of its ``Command:`` line; words after the closing backtick are a note. Each command must name a program this
# checkout has (``zcp`` or a script under benchmarks/ or scripts/, run by python), every ``--flag`` it passes must be
# one that program's argparse parser declares, and no argument may point into one machine's folders.

INTERPRETERS = {"python", "python3", ".venv/bin/python"}
MACHINE_PATHS = re.compile(r"^(/work/|/tmp/|/home/|/Users/|~|\.\./wt|/root/)")
ENV_ASSIGN = re.compile(r"^[A-Z_][A-Z0-9_]*=")


def header_commands(line: str) -> list[list[str]]:
    """The commands of one ``Command:`` line, each split with shlex (environment assignments dropped)."""
    import shlex

    m = re.match(r"Command: `([^`]*)`", line)
    assert m, f"not a backticked command: {line!r}"
    out = []
    for part in re.split(r";|&&", m.group(1)):
        words = shlex.split(part)
        while words and ENV_ASSIGN.match(words[0]):
            value = words.pop(0).split("=", 1)[1]
            assert not MACHINE_PATHS.match(value), f"{line}: {value} is a folder of one machine"
        if words:
            out.append(words)
    return out


def _script_flags(path: Path) -> set[str]:
    """Every option string the script's argparse calls declare (``add_argument("--x", ...)``), read from its source.

    Read statically, so the test imports no model code; a script's subcommands are pooled (a flag any of them
    declares counts). Modules the script imports from its own folder are read too.
    """
    import ast

    flags: set[str] = set()
    seen: set[Path] = set()
    todo = [path]
    while todo:
        p = todo.pop()
        if p in seen or not p.exists():
            continue
        seen.add(p)
        tree = ast.parse(p.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
                flags.update(a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
                             and a.value.startswith("-"))
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                todo.append(p.parent / f"{node.module}.py")
    flags.update({"-h", "--help"})
    return flags


def _zcp_flags(words: list[str]) -> tuple[set[str], str]:
    """The option strings of the ``zcp`` subcommand ``words`` names (e.g. ``["lab", "evaluate", ...]``)."""
    import argparse

    from zcp_core.cli.main import build_parser

    parser, name = build_parser(), "zcp"
    flags = {o for a in parser._actions for o in a.option_strings}
    for w in words:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs or w not in subs[0].choices:
            break
        parser, name = subs[0].choices[w], f"{name} {w}"
        flags |= {o for a in parser._actions for o in a.option_strings}
    return flags, name


def _check_command(words: list[str], where: str) -> None:
    prog = words[0]
    if prog in INTERPRETERS:
        assert len(words) > 1, f"{where}: python with no script"
        script = words[1]
        assert re.match(r"^(benchmarks|scripts)/[\w/.-]+\.py$", script), \
            f"{where}: python runs {script!r}, not a script under benchmarks/ or scripts/"
        assert (ROOT / script).exists(), f"{where}: {script} is gone"
        flags, name, args = _script_flags(ROOT / script), script, words[2:]
    elif prog in {"zcp", ".venv/bin/zcp"}:
        flags, name = _zcp_flags(words[1:])
        args = words[1:]
    elif re.match(r"^(benchmarks|scripts)/[\w/.-]+$", prog) and (ROOT / prog).exists() and not prog.endswith(".py"):
        return  # a shell script of this checkout
    else:
        raise AssertionError(f"{where}: {prog!r} is not a command of this checkout (prose in the backticks?)")
    for w in args:
        assert not MACHINE_PATHS.match(w), f"{where}: {w} is a folder of one machine"
        if w.startswith("--"):
            flag = w.split("=", 1)[0]
            assert flag in flags, f"{where}: {name} has no flag {flag} (it declares {sorted(flags)})"


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: p.name)
def test_results_commands_run_from_a_fresh_checkout(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines, 1):
        if line.startswith("Command:"):
            for words in header_commands(line):
                _check_command(words, f"{path.name}, line {i}")


def test_header_command_checker_golden() -> None:
    cmds = header_commands("Command: `HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/twin_card.py --round-rule preferred;"
                           " zcp lab evaluate --name direct --json` (a note)")
    assert cmds == [[".venv/bin/python", "benchmarks/twin_card.py", "--round-rule", "preferred"],
                    ["zcp", "lab", "evaluate", "--name", "direct", "--json"]]
    for words in cmds:
        _check_command(words, "golden")
    for bad in (["python", "benchmarks/twin_card.py", "--no-such-flag"], ["zcp", "lab", "evaluate", "--no-such-flag"],
                ["python", "-", "(inline", "sampler)"], ["python", "benchmarks/lab_did.py", "--result", "/work/x.md"],
                ["an", "independent", "solver"]):
        with pytest.raises(AssertionError):
            _check_command(bad, "golden")
