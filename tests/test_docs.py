"""The README is the front door and the docs site is its back room: both say only what the repository holds.

- README.md stays short (at most 200 lines), names no issue, no twin-generator version and nothing of one machine.
- Every headline figure the README quotes is written ``**FIGURE** ([name](benchmarks/results/FILE.md))``; at most
  eight, and each FIGURE string appears in that results file.
- Every relative link in the README points at a file that exists.
- docs/results.md is exactly what ``scripts/make_results_page.py`` writes from the results headers.
- The docs pages name no issue numbers either.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
FIGURE = re.compile(r"\*\*([^*]+)\*\* \(\[[^\]]*\]\((benchmarks/results/[\w.-]+\.md)\)\)")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
NO_GO = [
    (re.compile(r"\bissues?\b", re.I), "an issue reference"),
    (re.compile(r"\bv\d+\b"), "a version string like v6"),
    (re.compile(r"numeric-perturbation-v", re.I), "a twin-generator version"),
    (re.compile(r"/work/|/home/|/tmp/|local (CPU )?wheel|torch==", re.I), "something of one machine"),
]


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def test_readme_is_short() -> None:
    n = len(_readme().splitlines())
    assert n <= 200, f"README.md has {n} lines; move detail into docs/"


def test_readme_says_no_history_and_nothing_of_one_machine() -> None:
    for i, line in enumerate(_readme().splitlines(), 1):
        for pattern, what in NO_GO:
            assert not pattern.search(line), f"README.md line {i} has {what}: {line.strip()}"


def test_readme_figures_come_from_their_results_files() -> None:
    found = FIGURE.findall(_readme())
    assert found, "the README quotes no headline figure in the form **FIGURE** ([name](benchmarks/results/FILE.md))"
    assert len(found) <= 8, f"the README quotes {len(found)} headline figures; at most 8"
    for figure, path in found:
        target = ROOT / path
        assert target.exists(), f"README quotes {figure} from {path}, which does not exist"
        assert figure in target.read_text(encoding="utf-8"), f"README quotes {figure!r}, but {path} does not contain it"


def test_readme_links_exist() -> None:
    for link in LINK.findall(_readme()):
        if re.match(r"^[a-z]+:", link):
            continue  # an external address
        assert (ROOT / link).exists(), f"README.md links to {link}, which does not exist"


def test_docs_name_no_issue_numbers() -> None:
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for i, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            assert not re.search(r"\bissues? \d+|\(issue", line, re.I), f"{page.relative_to(ROOT)} line {i}: {line}"


def test_results_page_is_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location("make_results_page", ROOT / "scripts" / "make_results_page.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = ROOT / "docs" / "results.md"
    assert page.read_text(encoding="utf-8") == module.render(), \
        "docs/results.md is out of date: run `python scripts/make_results_page.py`"


def test_figure_pattern_golden() -> None:
    text = "C = **0.559** ([probe_full](benchmarks/results/probe_full.md)) and **bold** alone"
    assert FIGURE.findall(text) == [("0.559", "benchmarks/results/probe_full.md")]


def _prose_files() -> list[Path]:
    top = Path(__file__).resolve().parent.parent
    files = [top / "README.md", top / "CHANGELOG.md", *sorted((top / "docs").rglob("*.md")),
             *sorted((top / "benchmarks" / "results").glob("*.md")), *sorted((top / "notebooks").glob("*.py")),
             *sorted((top / "app_pages").glob("*.py")), *sorted((top / "zcp_core").rglob("*.py"))]
    return [f for f in files if f.exists()]


def test_claims_are_sized_to_the_data() -> None:
    """Never "does not contaminate" (a build that did not take is underpowered, not clean); a reading set against
    the paper's ("contradicts") names the model it was measured on."""
    import re

    bad = []
    for f in _prose_files():
        text = " ".join(f.read_text(encoding="utf-8", errors="replace").split())
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            low = sentence.lower()
            if "does not contaminate" in low or "doesn't contaminate" in low:
                bad.append(f"{f.name}: {sentence[:160]}")
            if re.search(r"\bcontradict", low) and "paper" in low and "135m" not in low:
                bad.append(f"{f.name}: {sentence[:160]}")
    assert bad == []


def test_every_relative_link_of_the_docs_pages_exists_in_the_repository() -> None:
    """The pages read on GitHub as they are: each relative link resolves from the page's own folder."""
    broken = []
    for page in [*sorted((ROOT / "docs").rglob("*.md")), README, ROOT / "CHANGELOG.md"]:
        for link in LINK.findall(page.read_text(encoding="utf-8")):
            if re.match(r"^[a-z]+:", link) or link.startswith("/"):
                continue
            if not (page.parent / link).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {link}")
    assert broken == []


def test_every_relative_link_of_the_built_site_resolves(tmp_path: Path) -> None:
    """The built site, results files included (they are pages of it), has no relative link to nowhere."""
    import os
    import subprocess
    import sys
    from html.parser import HTMLParser
    from urllib.parse import unquote, urlsplit

    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)], cwd=ROOT,
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (site / "benchmarks" / "results" / "probe_test_size" / "index.html").exists()

    class Links(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.found: list[str] = []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            for name, value in attrs:
                if name in ("href", "src") and value:
                    self.found.append(value)

    broken = []
    for page in site.rglob("*.html"):
        parser = Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for link in parser.found:
            url = urlsplit(link)
            if url.scheme or url.netloc or not url.path or link.startswith(("#", "/")):  # 404.html: site-absolute
                continue
            target = (page.parent / unquote(url.path)).resolve()
            if not (target.exists() or (target / "index.html").exists()):
                broken.append(f"{page.relative_to(site)} -> {link}")
    assert broken == [], broken[:20]
