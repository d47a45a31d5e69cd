"""mkdocs hooks: the results files of ``benchmarks/results/`` become pages of the site.

The docs link results files by their path in the repository (``../benchmarks/results/X.md`` from ``docs/``), so
the pages read on GitHub as they are. The site cannot hold files outside ``docs/``: each results file is added
as the page ``benchmarks/results/X.md`` of the site, and every link that points at a results file in the
repository is rewritten to that page. A link test (``tests/test_docs.py``) follows every relative link of the
built site.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
SITE_RESULTS = "benchmarks/results"
LINK = re.compile(r"\]\(([^)#\s]+\.md)(#[^)\s]*)?\)")


def on_files(files: Any, config: Any) -> Any:
    """Add every results file as a page of the site."""
    from mkdocs.structure.files import File

    for path in sorted(RESULTS.glob("*.md")):
        files.append(File.generated(config, f"{SITE_RESULTS}/{path.name}", abs_src_path=str(path)))
    return files


def _source(page: Any) -> Path:
    """Where the page's markdown lives in the repository (a results page: its file under benchmarks/)."""
    uri = page.file.src_uri
    if uri.startswith(SITE_RESULTS + "/"):
        return RESULTS / uri.removeprefix(SITE_RESULTS + "/")
    return ROOT / "docs" / uri


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Point every link at a results file (by its repository path) at its page in the site."""
    src = _source(page)
    site_dir = (ROOT / "docs" / page.file.src_uri).parent

    def fix(m: re.Match[str]) -> str:
        target = (src.parent / m.group(1)).resolve()
        if target.parent != RESULTS or not target.exists():
            return m.group(0)
        page_uri = ROOT / "docs" / SITE_RESULTS / target.name
        return f"]({os.path.relpath(page_uri, site_dir)}{m.group(2) or ''})"

    return LINK.sub(fix, markdown)
