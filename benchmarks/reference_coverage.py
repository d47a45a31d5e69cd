"""Coverage of the deterministic generators on the bundled GSM8K test set.

Prints (and with --write, stores in benchmarks/results/reference_coverage.md):
* the share of items the numeric perturbation traces, failures by kind, how
  many twins hold some quantity fixed, and the twin card (originals against
  twins: answer digits, median answer, leading digits, share larger);
* the deterministic rewording: share of (item, version) pairs that reach the
  0.5 non-numeric change bar, and mean/min change over the ones made and over all.

With --baseline-rev REV (e.g. a commit before the matched-difficulty twins), the
numeric generator of that revision (``git archive REV zcp_core`` into a temporary
folder, run in a subprocess; the working tree is not touched) is run on the same
items, and its coverage and twin card are printed beside the current ones.

Usage: .venv/bin/python benchmarks/reference_coverage.py [--seed 0] [--versions 1] [--baseline-rev REV] [--write]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from _provenance import header  # noqa: E402


def _twin_method() -> str:
    from zcp_core.reference import METHOD_NUMERIC

    return METHOD_NUMERIC


def _para_method() -> str:
    from zcp_core.reference.paraphrase import METHOD_DETERMINISTIC

    return METHOD_DETERMINISTIC


_BASELINE = """
import json, sys
from zcp_core.data import load_items
from zcp_core.reference import perturb_gsm8k
rs = perturb_gsm8k(load_items(sys.argv[1]), seed=int(sys.argv[2]))
print(json.dumps({"method": rs.method, "twins": [t.to_dict() for t in rs.items]}))
"""


def baseline_twins(rev: str, dataset: Path, seed: int) -> tuple[str, list[Any]]:
    """The twins the numeric generator of git revision ``rev`` makes (run from an archive of that revision)."""
    from zcp_core.schema import Item

    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "zcp_core"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        out = subprocess.run([sys.executable, "-c", _BASELINE, str(dataset), str(seed)], cwd=tmp, check=True,
                             capture_output=True, text=True, env={"PYTHONPATH": tmp, "PATH": "/usr/bin:/bin"}).stdout
    got = json.loads(out)
    return got["method"], [Item(**d) for d in got["twins"]]


def main() -> None:
    from zcp_core.data import load_items
    from zcp_core.reference import failure_kind, perturb_gsm8k, reword_deterministic, reword_one, twin_card

    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--versions", type=int, default=1)
    ap.add_argument("--baseline-rev", default=None, help="git revision whose numeric generator to compare with")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    items = load_items(ROOT / "data" / "gsm8k" / "test.jsonl")
    n = len(items)
    t = time.perf_counter()
    rs = perturb_gsm8k(items, seed=args.seed)
    t_ref = time.perf_counter() - t
    kinds = Counter(failure_kind(f.reason) for f in rs.failures)
    first50 = perturb_gsm8k(items[:50], seed=args.seed)
    t = time.perf_counter()
    ps = reword_deterministic(items, versions=args.versions, seed=args.seed)
    t_para = time.perf_counter() - t
    every = [reword_one(it, k, args.seed)[1] for it in items for k in range(args.versions)]
    made = list(ps.change_fraction)
    lines = [
        header(f"Reference and paraphrase coverage (bundled GSM8K test, n={n}, seed={args.seed})",
               f"twins {_twin_method()}; paraphrases {_para_method()}"),
        "",
        "## Numeric perturbation (`perturb_gsm8k`)",
        f"- traced: {len(rs.items)}/{n} = {len(rs.items) / n:.3f} ({t_ref:.1f} s)",
        f"- first 50 items (the probe demo sample): {len(first50.items)}/50 traced",
        "- failures by kind: " + ", ".join(f"{k} {v}" for k, v in kinds.most_common()),
        f"- method {rs.method}; twins holding some quantity fixed: "
        f"{sum(bool(t.metadata.get('held')) for t in rs.items)}; with a calculation annotated from the prose: "
        f"{sum(bool(t.metadata.get('annotated_in_prose')) for t in rs.items)}; with prose lines replaced by their "
        f"calculations: {sum(bool(t.metadata.get('prose_lines_replaced')) for t in rs.items)}",
        "- inputs changed per twin: mean share "
        f"{statistics.mean(a / b for a, b in (t.metadata['inputs_changed'] for t in rs.items)):.3f}, all changed in "
        f"{sum(a == b for a, b in (t.metadata['inputs_changed'] for t in rs.items))}/{len(rs.items)}",
        "",
        "### Twin card (originals against their twins)",
        "",
        twin_card(items, rs.items).markdown(),
        "",
        *_baseline_lines(args.baseline_rev, items, args.seed),
        f"## Deterministic rewording (`reword_deterministic`, versions={args.versions})",
        f"- made (change >= 0.5 and every number kept): {len(made)}/{len(every)} = {len(made) / len(every):.3f} "
        f"({t_para:.1f} s)",
        f"- non-numeric change over the ones made: mean {statistics.mean(made):.3f}, min {min(made):.3f}",
        f"- over every item, before the 0.5 bar: mean {statistics.mean(every):.3f}, min {min(every):.3f}, "
        f"median {statistics.median(every):.3f}",
        "- failures by kind: " + ", ".join(f"{k} {v}" for k, v in
                                           Counter(failure_kind(f.reason) for f in ps.failures).most_common()),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        out = ROOT / "benchmarks" / "results" / "reference_coverage.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)


def _baseline_lines(rev: str | None, items: list[Any], seed: int) -> list[str]:
    from zcp_core.reference import twin_card

    if not rev:
        return []
    method, twins = baseline_twins(rev, ROOT / "data" / "gsm8k" / "test.jsonl", seed)
    return [f"### Baseline: the generator at `{rev}` ({method}), same items and seed",
            f"- traced: {len(twins)}/{len(items)} = {len(twins) / len(items):.3f}", "",
            twin_card(items, twins).markdown(), ""]


if __name__ == "__main__":
    main()
