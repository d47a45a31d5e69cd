"""Write docs/results.md from the headers of benchmarks/results/*.md: one line per current measurement.

Each line gives what was measured, its headline figure, the command that made it, and the commit and date of
the measurement, all read from the file's header (``Command:`` then ``Made at commit SHA on DATE``). The
headline of each file is named below as a string that must appear in that file, so the page cannot quote a
figure its results file does not hold; a results file not named below is listed with its title and no headline.

    .venv/bin/python scripts/make_results_page.py            # rewrite docs/results.md
    .venv/bin/python scripts/make_results_page.py --check    # exit 1 when docs/results.md is out of date
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "docs" / "results.md"

# (group, file stem, what was measured, headline figure as it appears in the file)
MEASUREMENTS: list[tuple[str, str, str, str]] = [
    ("Zero-CoT probe", "probe_clean_null", "A clean model reads clean: embedded SmolLM2, first 400 GSM8K test items (274 pairs), C on every metric", "0.500"),
    ("Zero-CoT probe", "probe_full", "Untouched embedded model, original against twin, whole GSM8K test set (726 pairs)", "0.559"),
    ("Zero-CoT probe", "probe_twin_null", "Twin null: twin 1 against twins 2 to 5 of the same items (P_all's C)", "0.500"),
    ("Zero-CoT probe", "probe_twin_of_twin", "Twin of twin: twin 1 against a twin of twin 1 (P_all's C)", "0.500"),
    ("Zero-CoT probe", "probe_gsm8k50", "Embedded model, first 50 GSM8K test items (P_first's C; too few pairs for the clean target)", "0.730"),
    ("Zero-CoT probe", "probe_calibration", "Calibrated P_all, whole test set: share of pairs where the original beats its twin (twins of an older generator)", "48.2%"),
    ("Zero-CoT probe", "probe_answer_format", "Answer tokens per item with `--answer-format number`", "6.2"),
    ("Zero-CoT probe", "probe_cost", "Cost of r = 0 against a 256-token chain then truncation (`free` answers): generated tokens", "24.8x"),
    ("Zero-CoT probe", "probe_cost_number", "The same with `--answer-format number`: generated tokens", "35.5x"),
    ("Zero-CoT probe", "probe_cost_lab", "The same on the lab model `lab:direct`: generated tokens", "2.0x"),
    ("Zero-CoT probe", "lab_math500", "MATH-500 lab, probe-format build, template twins at seed B: P_all net of the neutral prior, AUROC C vs U", "0.893"),
    ("Zero-CoT probe", "probe_throughput", "Probe at r = 0 against its forward-pass floor, first 200 GSM8K test items at K = 4 and a spare (`free`): wall time", "1.43x"),
    ("Zero-CoT probe", "probe_throughput_number", "The same with `--answer-format number`: wall time", "1.30x"),
    ("Zero-CoT probe", "probe_full_throughput", "Whole GSM8K test set on 2 CPU cores, seconds (twins of an older generator)", "980.5"),
    ("Zero-CoT probe", "paired_test_size", "Paired-test size under the null at n = 10 (sign-flip permutation)", "0.049"),
    ("Zero-CoT probe", "probe_item_null", "Per-item p on the untouched model, whole covered GSM8K test set at K = 4 and a spare: items with p < 0.05 (0 flagged; no pseudo-null draw of 200 flags one)", "4.89%"),
    ("Zero-CoT probe", "probe_flags_truth", "Flags against the truth, probe-format positive control: trained-on items flagged at q = 0.1 (3 of 25 flags on held-out items)", "22 of 39"),
    ("Zero-CoT probe", "probe_demo_null", "A demo-sized run of the untouched model, first 40 GSM8K test items (22 pairs): P_first's C", "0.666"),
    ("Zero-CoT probe", "probe_test_size", "Benchmark test at K twins: null cells whose rejection interval holds the nominal level (skewed and heavy-tailed nulls, K = 1 to 8, n = 20 to 700)", "72 of 72"),
    ("Zero-CoT probe", "backend_throughput", "Batched `score` against one item at a time", "1.17"),
    ("Twins", "twin_card", "Twin card, default generator: GSM8K test items with at least 2 distinct twins at K = 4", "54.3%"),
    ("Twins", "twin_coverage_distinct", "Default generator (v8, distinct twins, order rule): GSM8K test items with a twin at K = 1", "54.9%"),
    ("Twins", "twin_card_lab", "Twin card, the lab's generator: GSM8K test items with a twin", "52.7%"),
    ("Twins", "twin_card_round_preferred", "Twin card, default generator with `--round-rule preferred`: coverage", "64.6%"),
    ("Twins", "twin_coverage_limits", "Default generator's coverage with every item 8x the draws rescues added", "56.0%"),
    ("Twins", "twin_precision", "Twin precision, the default generator: right as generated (independent solver)", "109/110"),
    ("Twins", "twin_precision_lab", "Twin precision, the lab's generator: right as generated (independent solver)", "110/110"),
    ("Twins", "reference_coverage", "Deterministic evasive rewording reaching 50% changed words", "866"),
    ("Contamination lab", "lab_did", "`lab:direct` against its base model: P_all's C on C relative to the base", "0.999"),
    ("Contamination lab", "lab_matrix", "Every detector against every kind: cached rerun of the whole matrix", "211 s"),
    ("Contamination lab", "lab_paper", "The paper's recipe at lab scale: full-CoT gain (did not take)", "+0.125"),
    ("Contamination lab", "lab_dose", "Dose-response of the `solution` kind: `cot_acc` AUROC at 12 epochs", "0.90"),
    ("Contamination lab", "lab_dose_paper", "Dose-response of the `paper` kind (never took)", "1531"),
    ("Contamination lab", "lab_took", "`verbatim` kind: Time-Travel as a completion (`guided_rouge` AUROC)", "0.877"),
    ("Contamination lab", "lab", "`lab:direct` rebuilt on the lab's twins: full-CoT gain C − U", "+0.825"),
    ("Time-Travel", "guided", "Guided ROUGE-L on `lab:direct` (C against U, AUROC; lab split of an older generator)", "0.736"),
    ("Time-Travel", "guided_raw_continuation", "Verbatim leakage: raw continuation against guided instruction (AUROC of the raw continuation)", "0.768"),
    ("Artifacts and detectors", "scan_throughput", "RE2 set against stdlib `re`, one pattern at a time (speed-up)", "13.08x"),
    ("Artifacts and detectors", "clean_residual", "Cleaned DetectRL LLM texts still holding an artifact, independent review of 320 (target 3%)", "5.31%"),
    ("Artifacts and detectors", "residual_holdback", "Residual left in rounds 13 to 16 if every text the edge detector scores 0.8 or more were held back (1.33% more held back, no held-out human text)", "4.52%"),
    ("Artifacts and detectors", "edge_detector", "Learned edge detector: LLM-written texts it cuts at its ordinary cut (no development human text reaches it out of fold; a gated cut for glued titles adds more)", "0.38%"),
    ("Artifacts and detectors", "edge_rules", "Edge-stage rules (restated titles, titles after a cut lead-in, a quoted title's tail, left sentence numbers, left bold markers): DetectRL human texts they cut", "0 of 6,035"),
    ("Artifacts and detectors", "edge_holdout", "Edge detector rebuilt with a reviewed round held out (rounds 13, 12, 11, 10): their residual texts the shipped recipe cuts (eight changes tried cut at most 7)", "3 of 72"),
    ("Artifacts and detectors", "title_boundary_lm", "Embedded model's line-break probability as a title-end signal: reviewed titles cut at their end above every clean opening", "0 of 53"),
    ("Artifacts and detectors", "detector_shortcut", "Prefix attack on 300 human Claude-instant texts: called LLM, original-trained", "168"),
    ("Artifacts and detectors", "detector_transformer", "Frozen SmolLM2 with a logistic head, small scale: attacked human texts called LLM, original-trained", "22"),
    ("Answer-first rate", "afr_profiles", "AFR of Sky-T1-27B on MATH-500, the paper's denominator", "21.5%"),
    ("Answer-first rate", "afr_embedded", "AFR pipeline on the embedded model: matched pairs kept of 40 problems (too few for a finding)", "5 of 40"),
    ("App", "app_idle_cpu", "Streamlit server CPU with one idle browser tab (share of a core)", "0.3%"),
]

COMMIT = re.compile(r"\bcommit ([0-9a-f]{7,40})\b")
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")


def header(path: Path) -> dict[str, str]:
    """Title, first command, its commit (12 characters) and date, read from a results file's header."""
    lines = path.read_text(encoding="utf-8").splitlines()
    title = next((ln.lstrip("# ").strip() for ln in lines if ln.startswith("# ")), path.stem)
    i = next((i for i, ln in enumerate(lines) if ln.startswith("Command:")), None)
    if i is None:
        raise SystemExit(f"{path.name}: no 'Command:' line")
    cmd = re.match(r"Command: `([^`]*)`", lines[i])
    block = "\n".join(lines[i:i + 4])
    commit, date = COMMIT.search(block), DATE.search(block)
    if not (cmd and commit and date):
        raise SystemExit(f"{path.name}: its header lacks a backticked command, a commit or a date")
    return {"title": title, "command": cmd.group(1), "commit": commit.group(1)[:12], "date": date.group(0)}


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render() -> str:
    files = {p.stem: p for p in sorted(RESULTS.glob("*.md"))}
    rows: list[tuple[str, str, str, str]] = []
    named = set()
    for group, stem, what, figure in MEASUREMENTS:
        if stem not in files:
            raise SystemExit(f"benchmarks/results/{stem}.md is named here but missing")
        if figure not in files[stem].read_text(encoding="utf-8"):
            raise SystemExit(f"benchmarks/results/{stem}.md does not contain its headline figure {figure!r}")
        rows.append((group, stem, what, figure))
        named.add(stem)
    rows += [("Other measurements", stem, header(p)["title"], "") for stem, p in files.items() if stem not in named]
    out = ["# Measured results", "",
           "<!-- Written by scripts/make_results_page.py from the headers of benchmarks/results/*.md; do not edit. -->",
           "",
           "Every file in `benchmarks/results/` holds one measurement and opens with the command that made it, the "
           "commit and date of the run and the versions that matter (the twin generator, the model). This page lists "
           "them, one line each, with the figure that sums each up; read the file for the rest, including what the "
           "figure means and its limits. Figures were measured on a shared 2-core CPU machine, so absolute times are "
           "pessimistic. A file measured with twins of an older generator says so in its header; quote it only with "
           "that caveat.", ""]
    group = None
    for g, stem, what, figure in rows:
        if g != group:
            out += ["", f"## {g}", "", "| measurement | headline | file | command | commit | date |",
                    "|---|---|---|---|---|---|"]
            group = g
        h = header(files[stem])
        out.append(f"| {_cell(what)} | {_cell(figure) if figure else '—'} | [{stem}](../benchmarks/results/{stem}.md) | "
                   f"`{_cell(h['command'])}` | `{h['commit']}` | {h['date']} |")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="only check that docs/results.md is up to date")
    args = ap.parse_args()
    text = render()
    if args.check:
        if not PAGE.exists() or PAGE.read_text(encoding="utf-8") != text:
            print("docs/results.md is out of date: run scripts/make_results_page.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
