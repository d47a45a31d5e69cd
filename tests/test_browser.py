"""Real-browser tests: `streamlit run app.py` driven by headless Chromium.

Skips with a clear reason only where Chromium is not installed (`make test-heavy`
installs it with apt-get when it can).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run"]
EXAMPLES = ROOT / "data" / "examples"
# st.dataframe draws a canvas grid: a row is selected by clicking its marker column (header and rows 35 px).
ROW_PX, MARKER_X = 35, 18

pytestmark = [pytest.mark.browser, pytest.mark.heavy]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def _serve(runs: Path, home: Path) -> Iterator[str]:
    """``streamlit run app.py`` on a free port with ``ZCP_RUNS=runs``; yields its URL once healthy.

    The server's output goes to ``home/server.log`` (:func:`_server_log`), so a test can read what the terminal
    showed (a file, not a pipe nobody reads, which would block the server once full)."""
    port = _free_port()
    env = {**os.environ, "ZCP_RUNS": str(runs), "HOME": str(home)}
    home.mkdir(parents=True, exist_ok=True)
    log = (home / "server.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=1).read() == b"ok":
                    break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("streamlit did not become healthy")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


def _server_log(home: Path) -> str:
    """What the app's server printed (its terminal) while it ran under :func:`_serve`."""
    return (home / "server.log").read_text(encoding="utf-8", errors="replace")


@pytest.fixture
def app_server(tmp_path: Path, browser_run: Path):
    with _serve(browser_run, tmp_path / "home") as url:
        yield url


@contextmanager
def _chromium(tmp_path: Path, width: int = 1400) -> Iterator[Any]:
    """A headless Chromium page ``width`` pixels wide, with a fresh profile folder (Playwright passes it as
    --user-data-dir)."""
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed (/usr/bin/chromium); `make test-heavy` installs it with apt-get as root")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=str(CHROMIUM), args=FLAGS,
            viewport={"width": width, "height": 1000},
        )
        try:
            yield browser.new_page()
        finally:
            browser.close()


def _click_row(page: Any, grid: Any, row: int) -> None:
    """Select row ``row`` (0-based) of a Streamlit dataframe with row selection."""
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    page.mouse.click(box["x"] + MARKER_X, box["y"] + ROW_PX * (row + 1) + ROW_PX // 2)


def _select_row(page: Any, grid: Any, row: int, shows: str, tries: int = 4) -> None:
    """Select row ``row`` and wait until ``shows`` is on the page, clicking again when it is not.

    Why: on a loaded machine the page above the grid can still be laying out when the grid's box is read, so the
    first click can land beside the row (seen once under ``make test-heavy``); a retry reads the box afresh.
    """
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for attempt in range(tries):
        _click_row(page, grid, row)
        try:
            page.get_by_text(shows).first.wait_for(timeout=20_000)
            return
        except PlaywrightTimeout:
            if attempt == tries - 1:
                raise


@pytest.fixture
def browser_run(tmp_path: Path) -> Path:
    """A real run made by the CLI: an artifact scan of the bundled DetectRL sample."""
    from zcp_core.cli.main import main

    sample = sorted((ROOT / "data" / "detectrl_sample").glob("*.json"))
    assert sample, "bundled DetectRL sample missing"
    runs = tmp_path / "runs"
    assert main(["scan", *map(str, sample), "--out", str(runs / "browser-scan")]) == 0
    return runs


def test_home_and_run_page_in_chromium(app_server: str, browser_run: Path, tmp_path: Path) -> None:
    from zcp_core.runs import load_run

    run = load_run(browser_run / "browser-scan")
    headline = run.summary["headline"]
    with _chromium(tmp_path) as page:
        page.goto(f"{app_server}/home")
        page.get_by_text("contamination audits").first.wait_for(timeout=90_000)
        page.get_by_text("Open a run").first.wait_for(timeout=90_000)
        # The label also sits in the (canvas) run table, so look for it inside a metric.
        metric = page.locator('[data-testid="stMetric"]').filter(has_text=str(headline["label"])).first
        metric.wait_for(timeout=90_000)
        value = metric.locator('[data-testid="stMetricValue"]')
        assert str(headline["value"]) in value.inner_text().replace(",", "")
        page.screenshot(path=str(tmp_path / "home.png"), full_page=True)
        page.get_by_role("button", name="Open on its page").click()
        page.get_by_text("Artifacts in generated-text benchmarks").first.wait_for(timeout=90_000)
        page.get_by_text("Flagged (high-precision)").first.wait_for(timeout=90_000)
        values = [v.inner_text().replace(",", "") for v in page.locator('[data-testid="stMetricValue"]').all()]
        assert str(headline["value"]) in values
        page.screenshot(path=str(tmp_path / "run.png"), full_page=True)


@pytest.fixture
def story_runs(tmp_path: Path) -> Path:
    """The bundled example probe of the contaminated lab model, and a real clean run (edits to review)."""
    from zcp_core.cli.main import main

    runs = tmp_path / "runs"
    assert (EXAMPLES / "probe-lab-direct" / "manifest.json").exists(), "bundled example probe-lab-direct missing"
    shutil.copytree(EXAMPLES / "probe-lab-direct", runs / "probe-lab-direct")
    shutil.copytree(EXAMPLES / "lab-matrix", runs / "lab-matrix")
    sample = ROOT / "data" / "detectrl_sample" / "multi_llms_ChatGPT_test.json"
    assert main(["clean", str(sample), "--allow-unlicensed", "--out", str(runs / "browser-clean")]) == 0
    return runs


def _probe_story(page: Any, url: str, runs: Path) -> None:
    """(a) The contaminated example: open the first (flagged) item, see both questions and both completions."""
    from playwright.sync_api import expect

    from zcp_core.runs import load_run

    run = load_run(runs / "probe-lab-direct")
    items = run.table("items")
    top = items.sort_values(["flagged", "p_all_gap"], ascending=False).iloc[0]
    assert bool(top["flagged"])
    recs = run.records.query("ratio == 0 and pair_id == @top.pair_id")
    # the original's zero-CoT answer and its twins', one code block each
    completions = [*recs.loc[recs["arm"] == "original", "completion"],
                   *recs[recs["arm"] == "reference"].sort_values("twin")["completion"]]
    page.goto(f"{url}/probe")
    page.get_by_text("Example run").first.wait_for(timeout=90_000)
    _select_row(page, page.locator('[data-testid="stDataFrame"]').nth(1), 0,  # the item browser
                f"{top['pair_id']} · flagged")
    # Each question is one markdown block (its changed numbers highlighted inside it); the grid holds only
    # hidden, cut-off copies.
    blocks = page.locator('[data-testid="stMarkdown"]')
    for question in (top["question"], top["reference_question"]):
        expect(blocks.filter(has_text=" ".join(question.split())).first).to_be_visible()
    expect(blocks.filter(has_text=":orange-background[")).to_have_count(0)  # highlights rendered, not raw markup
    codes = page.locator('[data-testid="stCode"]')
    for completion in completions:
        expect(codes.filter(has_text=str(completion)).first).to_be_visible()
    page.screenshot(path=str(runs.parent / "probe-item.png"), full_page=True)


def _new_audit_story(page: Any, url: str) -> None:
    """(b) A typed run name survives reruns; (d) an empty upload is refused and Start stays disabled."""
    from playwright.sync_api import expect

    page.goto(f"{url}/new_audit")
    name = page.get_by_label("Run name")
    name.wait_for(timeout=90_000)
    name.fill("my-typed-run")
    name.press("Enter")
    items = page.get_by_label("Items")
    items.fill("7")
    items.press("Enter")  # a rerun of the whole page
    expect(items).to_have_value("7")
    expect(page.get_by_label("Run name")).to_have_value("my-typed-run")
    page.get_by_text("Upload", exact=True).click()
    upload = page.locator('input[type="file"]')
    upload.wait_for(state="attached", timeout=60_000)
    upload.set_input_files(files=[{"name": "empty.jsonl", "mimeType": "application/jsonl", "buffer": b""}])
    expect(page.locator('[data-testid="stAlert"]').filter(has_text="the file is empty").first).to_be_visible()
    expect(page.get_by_role("button", name="Start")).to_be_disabled()
    expect(page.get_by_text("Dataset checked")).to_have_count(0)
    expect(page.get_by_label("Run name")).to_have_value("my-typed-run")


def _review_story(page: Any, url: str, runs: Path) -> None:
    """(c) Reject an edit, switch to another text and back: the decision is still reject, and saved so."""
    from playwright.sync_api import expect

    from zcp_core.artifacts import browse as ab
    from zcp_core.runs import load_run

    page.goto(f"{url}/artifacts")
    radio = page.locator('[data-testid="stRadio"]').first
    radio.wait_for(timeout=90_000)
    first_label = radio.inner_text().splitlines()[0]
    # the open text is named above its spans ("<id> · N span(s)"): two texts may open with the same edit label
    shown = page.locator('[data-testid="stMarkdown"]').filter(has_text=" span(s)").first
    first_text = shown.inner_text()
    radio.get_by_text("reject").click()
    expect(radio.get_by_role("radio", name="reject")).to_be_checked()
    grid = page.locator('[data-testid="stDataFrame"]').nth(1)  # the text browser, below the run's edits-by-family table
    _click_row(page, grid, 1)
    expect(shown).not_to_have_text(first_text)
    _click_row(page, grid, 0)
    expect(shown).to_have_text(first_text)
    radio = page.locator('[data-testid="stRadio"]').first
    expect(radio).to_contain_text(first_label)
    expect(radio.get_by_role("radio", name="reject")).to_be_checked()
    page.get_by_role("button", name="Save decisions").click()
    page.get_by_text("Saved").first.wait_for(timeout=60_000)
    clean = load_run(runs / "browser-clean")
    state = ab.run_review_state(clean.path, clean.records)
    assert sorted(state.values()).count("reject") == 1, state
    decisions = (clean.path / "decisions.json").read_text()
    assert "reject" in decisions


def _matrix_story(page: Any, url: str, runs: Path) -> None:
    """The lab page on the example matrix: the heatmap is drawn and the reading names who catches what."""
    from playwright.sync_api import expect

    page.goto(f"{url}/lab")
    page.get_by_text("Example run").first.wait_for(timeout=90_000)
    expect(page.locator('[data-testid="stPlotlyChart"]').first).to_be_visible(timeout=60_000)
    expect(page.get_by_text("verbatim: caught by").first).to_contain_text("Min-K% probability, zlib ratio")
    expect(page.get_by_text("solution: no detector catches it").first).to_contain_text(
        "Full-CoT accuracy on twins separates it too")
    expect(page.get_by_text("Untouched model: no detector separates C from U").first).to_be_visible()
    page.screenshot(path=str(runs.parent / "lab-matrix.png"), full_page=True)


def test_story_in_chromium(story_runs: Path, tmp_path: Path) -> None:
    """The issue-17 walk: a flagged item of the contaminated example, New audit's run name and empty upload,
    and a rejected edit that survives switching texts."""
    with _serve(story_runs, tmp_path / "home") as url, _chromium(tmp_path) as page:
        _probe_story(page, url, story_runs)
        _matrix_story(page, url, story_runs)
        _new_audit_story(page, url)
        _review_story(page, url, story_runs)


#: Text that must never reach a reader: machine values and internals (checked on every page of the demo).
FORBIDDEN = re.compile(r"\bNone\b|\bnan\b|\bNaN\b|cohens_dz|mcnemar|risk_difference|Traceback")


@pytest.fixture
def demo_runs(tmp_path: Path) -> Path:
    """The runs `make demo` sets up before its live jobs: every bundled example under examples/, and the runs
    that take seconds (artifact scan, AFR screen and profile), made by the CLI with the demo's arguments."""
    from zcp_core.cli.main import main

    runs = tmp_path / "runs"
    for ex in sorted(EXAMPLES.iterdir()):
        if (ex / "manifest.json").exists():
            shutil.copytree(ex, runs / "examples" / ex.name)
    afr = ROOT / "data" / "afr_sample"
    sky = afr / "skythought_math500_traces"
    for argv in (
        ["scan", *map(str, sorted((ROOT / "data" / "detectrl_sample").glob("*.json"))), "--out",
         str(runs / "demo-scan-detectrl")],
        ["afr", "screen", str(afr / "arith_smollm2"), "--blind", str(afr / "arith_smollm2" / "nohint_matched.jsonl"),
         "--leaked", str(afr / "arith_smollm2" / "hint_matched.jsonl"), "--out", str(runs / "demo-afr-screen")],
        ["afr", "profile", str(sky / "gemma-2-27b-it_math500.jsonl"), "--adapter", "skythought", "--compare",
         str(sky / "sky-t1-math-correct-5k-27b_math500.jsonl"), "--out", str(runs / "demo-afr-profile")],
    ):
        assert main(argv) == 0, argv
    return runs


def _settled_text(page: Any, wait_for: str) -> str:
    """The page's visible text once ``wait_for`` shows and the script has finished running."""
    page.get_by_text(wait_for).first.wait_for(timeout=90_000)
    text = ""
    running = page.locator('[data-testid="stStatusWidget"]')  # Streamlit's "Running..." badge
    for _ in range(120):  # settled: not running, and the same text twice a second apart (no time is asserted)
        page.wait_for_timeout(1000)
        now = str(page.locator("body").inner_text())
        if now == text and not running.is_visible():
            break
        text = now
    return text


def test_demo_story_in_chromium(demo_runs: Path, tmp_path: Path) -> None:
    """Issue 27's walk: the probe page lands on the contaminated run, a flagged item that was trained on (C)
    opens, and no page of the demo shows None, nan, a test's machine name or a traceback."""
    from playwright.sync_api import expect

    from zcp_core.runs import load_run

    run = load_run(demo_runs / "examples" / "probe-lab-direct")
    with _serve(demo_runs, tmp_path / "home") as url, _chromium(tmp_path) as page:
        page.goto(url)  # the app lands on the probe page of the contaminated example, unasked
        text = _settled_text(page, "Example run")
        model = page.locator('[data-testid="stMetric"]').filter(has_text="Model").first
        expect(model.locator('[data-testid="stMetricValue"]')).to_have_text("lab:direct")  # landed, unasked
        assert "trained on (C)" in text and "What is Contamination Confidence?" in text
        assert "exact McNemar test" in text and "Bayes factor" in text
        _click_row(page, page.locator('[data-testid="stDataFrame"]').nth(1), 0)  # the first, flagged item
        top = run.table("items").sort_values(["flagged", "p_all_gap"], ascending=False).iloc[0]
        page.get_by_text(f"{top['pair_id']} · flagged · trained on (C)").first.wait_for(timeout=60_000)
        text = _settled_text(page, "Gold:")
        page.screenshot(path=str(tmp_path / "probe-story.png"), full_page=False)
        bad = {"probe": FORBIDDEN.findall(text)}
        page.get_by_role("button", name="Open smollm2 on the same items").first.click()
        expect(model.locator('[data-testid="stMetricValue"]')).to_have_text("smollm2", timeout=60_000)
        bad["probe (clean model)"] = FORBIDDEN.findall(_settled_text(page, "no evidence"))
        for path, marker in (("home", "Open a run"), ("lab", "Contamination lab"), ("guided", "Partition verdicts"),
                             ("artifacts", "Artifacts in generated-text benchmarks"),
                             ("detector", "Detector shortcuts"), ("afr", "Where the answer is first stated"),
                             ("new_audit", "Run name")):
            page.goto(f"{url}/{path}")
            bad[path] = FORBIDDEN.findall(_settled_text(page, marker))
    assert not any(bad.values()), bad
    log = _server_log(tmp_path / "home")
    assert "Traceback" not in log and "Error" not in log, log[-3000:]  # nothing but the banner in the terminal


# Each table's grid: how wide its content is, and how wide the grid shows it (no horizontal scroll when equal).
_GRID_WIDTHS = """() => Array.from(document.querySelectorAll('[data-testid="stDataFrame"]')).map(d => {
  const s = d.querySelector('.dvn-scroller'); return s ? [s.scrollWidth, s.clientWidth] : null })"""


def test_probe_tables_fit_a_1280_pixel_window(story_runs: Path, tmp_path: Path) -> None:
    """The metric table and the item browser of the contaminated example fit a 1,280-pixel window beside the
    sidebar: no column is hidden behind a horizontal scroll."""
    with _serve(story_runs, tmp_path / "home") as url, _chromium(tmp_path, width=1280) as page:
        page.goto(f"{url}/probe")
        page.get_by_text("Example run").first.wait_for(timeout=90_000)
        page.get_by_text("Test on every metric").first.wait_for(timeout=60_000)
        page.locator('[data-testid="stDataFrame"]').nth(1).wait_for(timeout=60_000)
        page.wait_for_timeout(2000)  # the grids size their columns after the first paint
        grids = [g for g in page.evaluate(_GRID_WIDTHS)[:2] if g is not None]
        page.screenshot(path=str(tmp_path / "probe-1280.png"))
    assert len(grids) == 2, grids
    for content, shown in grids:
        assert content <= shown + 1, (content, shown)
