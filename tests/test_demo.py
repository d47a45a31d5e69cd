"""The demo: bundled example runs with something to find, and live runs as stoppable background jobs."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "data" / "examples"


def _demo_jobs():
    spec = importlib.util.spec_from_file_location("demo_jobs", ROOT / "scripts" / "demo_jobs.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def test_every_demo_step_is_a_valid_zcp_command():
    from zcp_core.cli.main import build_parser

    parser = build_parser()
    for name, args in _demo_jobs().STEPS:
        parsed = parser.parse_args([*args, "--out", f"/tmp/{name}"])
        assert parsed.out == f"/tmp/{name}"


def test_finished_steps_are_not_started_again(tmp_path):
    for name, _ in _demo_jobs().STEPS:
        (tmp_path / name).mkdir()
        (tmp_path / name / "manifest.json").write_text("{}")
    assert _demo_jobs().main([str(tmp_path)]) == 0
    assert not list(tmp_path.glob("*/job.json"))


def test_sigterm_stops_the_running_step(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "demo_jobs.py"), str(tmp_path)], cwd=ROOT,
                            env=env, stderr=subprocess.PIPE)
    job = tmp_path / _demo_jobs().STEPS[0][0] / "job.json"
    for _ in range(300):
        if job.exists():
            break
        time.sleep(0.1)
    assert job.exists(), "the first step never started"
    pid = int(json.loads(job.read_text())["pid"])
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except OSError:
            break
        with open(f"/proc/{pid}/stat") as fh:
            if fh.read().split()[2] == "Z":
                break
        time.sleep(0.1)
    else:
        pytest.fail(f"step process {pid} still runs after the chain was stopped")
    assert not (tmp_path / _demo_jobs().STEPS[1][0]).exists()  # the chain ended: no next step


@pytest.fixture(scope="module")
def examples():
    from zcp_core.runs import load_run

    if not (EXAMPLES / "probe-lab-direct" / "manifest.json").exists():
        pytest.fail("data/examples is missing: run scripts/make_examples.py")
    return {p.name: load_run(p) for p in sorted(EXAMPLES.iterdir()) if (p / "manifest.json").exists()}


def test_examples_are_labelled_and_reproducible(examples):
    assert {"probe-lab-direct", "probe-smollm2-lab-items", "lab-eval-direct", "lab-eval-direct-smollm2",
            "guided-smollm2-gsm8k12", "lab-matrix", "lab-matrix-replicates", "lab-dose", "lab-dose-paper"} <= set(examples)
    for name, run in examples.items():
        ex = run.manifest["example"]
        assert ex["script"] == "scripts/make_examples.py" and ex["command"].startswith("zcp "), name
        assert (ROOT / ex["script"]).exists()


def test_the_contaminated_example_reads_high_and_the_clean_one_does_not(examples):
    """Same items, same twins: the lab model is flagged, the untouched model reads about 0.5."""
    from zcp_core.probe import confidence_summary

    lab, clean = examples["probe-lab-direct"], examples["probe-smollm2-lab-items"]
    ids = lambda run: sorted(run.records["id"].unique())  # noqa: E731
    assert ids(lab) == ids(clean)
    metrics = ("acc", "p_first", "p_all")
    c_lab = confidence_summary(lab.records, metrics)["metrics"]
    c_clean = confidence_summary(clean.records, metrics)["metrics"]
    assert c_lab["p_all"]["confidence"] > 0.95 and c_clean["p_all"]["confidence"] < 0.6
    # the lab model writes the word "answer" in most boxes and the untouched one rarely closes its box: neither
    # answer is graded, so Acc is not measured rather than read as wrong
    for c in (c_lab, c_clean):
        assert c["acc"]["confidence"] is None and "hold no number or never close their box" in c["acc"]["reason"]
    assert lab.summary["flags"]["flagged"] > 0 == clean.summary["flags"]["flagged"]


def test_the_matrix_example_tells_which_detector_catches_which_leak(examples):
    """Held to exact p with Holm across the reading: the probe catches paraphrased-answer memorisation (direct
    only before the correction), the baselines catch text memorisation, only the chain-keeping check (outside the
    family) separates worked solutions, a build that did not take is read apart, and nothing flags the null."""
    from zcp_core.lab.report import matrix_reading

    m = examples["lab-matrix"].table("matrix")
    assert {"direct", "evasive", "verbatim", "solution", "paper", "none"} == set(m["kind"])
    assert "cot_acc" in set(m["detector"]) and m.loc[m["kind"] != "none", "took"].notna().all()
    t = m.set_index(["kind", "detector"])
    caught = lambda kind, det: t.loc[(kind, det), "auroc_p_holm"] < 0.05 and t.loc[(kind, det), "auroc"] > 0.5  # noqa: E731
    assert caught("evasive", "zcp_p_all") and not caught("direct", "zcp_p_all")
    assert t.loc[("direct", "zcp_p_all"), "auroc_p"] < 0.01  # significant alone, not across the 48 cells
    assert caught("verbatim", "min_k") and caught("verbatim", "zlib") and caught("verbatim", "guided_rouge")
    assert t.loc[("solution", "cot_acc"), "auroc_p"] < 0.001 and np.isnan(t.loc[("solution", "cot_acc"), "auroc_p_holm"])
    assert not any(caught("solution", d) for d in set(m["detector"]) - {"cot_acc"})
    assert (t.loc["none", "auroc_p_holm"].dropna() >= 0.05).all()
    took = m.drop_duplicates("kind").set_index("kind")["took"]
    assert took["direct"] is True and took["solution"] is True and took["verbatim"] is True
    reading = matrix_reading(m)
    for kind in ("direct", "evasive", "verbatim", "solution", "paper"):
        assert sum(line.startswith(f"{kind}: ") for line in reading) == 1, reading
    # The bundled paper build did not take (lab_dose_paper.md): it is read apart, never as "detector blind".
    assert took["paper"] is False
    assert any(line.startswith("paper: the build did not take") for line in reading)


def _docs_replicate_table() -> dict[tuple[str, str], str]:
    """The method table of docs/lab.md, cell by cell: (kind, detector) -> the cell's text."""
    text = (ROOT / "docs" / "lab.md").read_text(encoding="utf-8")
    section = text.split("## Which detector catches which leak", 1)[1].split("\n## ", 1)[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("| ")]
    header = [c.strip().strip("`") for c in lines[0].strip("|").split("|")]
    cells = {}
    for ln in lines[1:]:
        row = [c.strip() for c in ln.strip("|").split("|")]
        kind = row[0].split("`")[1]
        cells.update({(kind, det): cell for det, cell in zip(header[2:], row[2:], strict=True)})
    return cells


def test_the_docs_method_table_is_the_replicates_example(examples):
    """docs/lab.md's table is the bundled replicates run: median, range, replicates caught, bold when the
    pooled exact test holds after Holm; and replicate 0 of that run is the bundled single-build matrix."""
    import re

    rep = examples["lab-matrix-replicates"]
    table = rep.table("replicates")
    docs = _docs_replicate_table()
    assert set(docs) == set(zip(table["kind"], table["detector"]))
    for r in table.itertuples():
        cell = docs[(r.kind, r.detector)]
        m = re.fullmatch(r"(↓?)(\*\*)?(\d\.\d{3})(?: \[(\d\.\d{3}), (\d\.\d{3})\])?(?: (\d)/(\d))?(\*\*)?", cell)
        assert m, (r.kind, r.detector, cell)
        assert float(m[3]) == pytest.approx(r.auroc_median, abs=0.00051), cell
        if r.replicates > 1:
            assert (float(m[4]), float(m[5])) == pytest.approx((r.auroc_min, r.auroc_max), abs=0.00051), cell
        assert (m[6] is None) == (r.detector == "cot_acc"), cell  # outside the family: no catches counted
        if m[6] is not None:
            assert (int(m[6]), int(m[7])) == (r.caught, r.replicates), cell
        assert bool(m[2]) == (r.reading == "caught") and bool(m[1]) == (r.reading == "inverted"), cell
    assert set(table.loc[table["single_build"], "kind"]) == {"evasive", "paper"}
    assert set(table.loc[~table["single_build"], "replicates"]) == {3}
    # replicate 0 of the pooled run is the single-build matrix bundled as lab-matrix
    m = examples["lab-matrix"].table("matrix").set_index(["kind", "detector"])
    rec = rep.records[rep.records["replicate"] == 0]
    assert set(zip(rec["kind"], rec["detector"])) == set(m.index)
    from zcp_core.lab.quality import exact_auroc_p

    for (kind, det), g in rec.dropna(subset=["score"]).groupby(["kind", "detector"]):
        c, u = g.loc[g["split"] == "C", "score"].tolist(), g.loc[g["split"] == "U", "score"].tolist()
        if c and u:
            assert exact_auroc_p(c, u) == pytest.approx(m.loc[(kind, det), "auroc_p"], abs=1e-9, nan_ok=True), (kind, det)
