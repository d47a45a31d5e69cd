"""The shape of ``zcp_core``: no import circles, and no library module reaching up into the CLI or the app.

The graph is read with ``ast`` (nothing is imported), counting module-level
imports and imports inside functions alike. Imports under ``if TYPE_CHECKING:``
do not count: they never run. Importing ``zcp_core.a.b`` also runs the package
``zcp_core.a``, so that edge is counted too, except from inside ``a`` itself.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "zcp_core"
UPPER_FLOORS = ("zcp_core.cli", "zcp_core.app")


def module_files() -> dict[str, Path]:
    """Every module of zcp_core by dotted name (a package by its ``__init__``)."""
    out = {}
    for p in sorted(ROOT.rglob("*.py")):
        parts = p.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = p
    return out


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
            if name == "TYPE_CHECKING":
                for child in node.body:
                    skip.update(id(n) for n in ast.walk(child))
    return skip


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> dict[str, int]:
    """Modules of zcp_core that ``name`` imports at run time, each with the first line that does it."""
    tree = ast.parse(path.read_text(), str(path))
    skip = _type_checking_nodes(tree)
    is_pkg = path.name == "__init__.py"
    found: dict[str, int] = {}

    def add(target: str, line: int) -> None:
        while target not in modules and "." in target:
            target = target.rsplit(".", 1)[0]
        if target not in modules:
            return
        own = set(_ancestors(name)) | ({name} if is_pkg else set())
        for t in [*_ancestors(target), target]:
            if t != name and t not in own and t != "zcp_core":
                found.setdefault(t, line)

    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("zcp_core"):
                    add(a.name, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if not module.startswith("zcp_core"):
                continue
            for a in node.names:
                sub = f"{module}.{a.name}"
                add(sub if sub in modules else module, node.lineno)
    return found


def import_graph() -> dict[str, dict[str, int]]:
    """``{module: {imported module: line}}`` over all of zcp_core."""
    modules = module_files()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def find_cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_graph_sees_real_imports() -> None:
    graph = import_graph()
    assert "zcp_core.probe.config" in graph["zcp_core.probe.run"]
    assert "zcp_core.probe" in graph["zcp_core.lab.evaluate"]  # a cross-package import runs the package
    assert "zcp_core.probe" not in graph["zcp_core.probe.run"]  # its own package is already being imported
    assert "zcp_core.backends.base" in graph["zcp_core.backends"]


def test_find_cycles_golden() -> None:
    assert find_cycles({"a": {"b": 1}, "b": {"a": 1}, "c": {"a": 1}}) == [["a", "b"]]
    assert find_cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}}) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b": 1}, "b": {}}) == []


def test_type_checking_imports_do_not_count(tmp_path: Path) -> None:
    src = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from zcp_core.x import A\ndef f():\n    from zcp_core.y import B\n"
    p = tmp_path / "m.py"
    p.write_text(src)
    found = imports_of("zcp_core.m", p, {"zcp_core.x": p, "zcp_core.y": p, "zcp_core.m": p})
    assert found == {"zcp_core.y": 5}


def test_no_import_circles() -> None:
    cycles = find_cycles(import_graph())
    assert cycles == [], "import circles in zcp_core:\n" + "\n".join(" <-> ".join(c) for c in cycles)


@pytest.mark.parametrize("floor", UPPER_FLOORS)
def test_library_code_never_imports_cli_or_app(floor: str) -> None:
    bad = []
    for name, deps in import_graph().items():
        if name.startswith(UPPER_FLOORS):
            continue
        bad += [f"{name} line {line} imports {dep}" for dep, line in deps.items() if dep.startswith(floor)]
    assert bad == []


def test_zcp_core_root_holds_foundation_and_packages_only() -> None:
    files = sorted(p.name for p in ROOT.glob("*.py"))
    assert files == ["__init__.py", "answers.py", "data.py", "errors.py", "intervals.py", "outdir.py", "report.py", "runs.py",
                     "schema.py"]
    packages = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    assert packages == ["afr", "app", "artifacts", "backends", "baselines", "cli", "detector", "guided", "lab",
                        "probe", "publish", "reference", "serve", "stats"]


def test_every_package_declares_its_public_api() -> None:
    for init in ROOT.glob("*/__init__.py"):
        if init.parent.name == "cli":
            continue  # the CLI's interface is the command line, not Python names
        tree = ast.parse(init.read_text())
        names = [t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)]
        assert "__all__" in names, f"{init} has no __all__"


@pytest.mark.parametrize("method", ["probe", "lab", "guided", "artifacts", "detector", "afr"])
def test_a_method_shares_one_name(method: str) -> None:
    """Its package, app page, CLI module and notebook are found by the same name."""
    top = ROOT.parent
    assert (ROOT / method / "__init__.py").exists()
    assert (top / "app_pages" / f"{method}.py").exists()
    assert (ROOT / "cli" / f"{method}.py").exists()
    assert len(list((top / "notebooks").glob(f"[0-9][0-9]_{method}.ipynb"))) == 1
