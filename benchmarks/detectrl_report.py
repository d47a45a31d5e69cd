"""Per-LLM flagged shares and the human false-positive share of the artifact scan on DetectRL, held out.

The pattern library was developed on Multi_Domain/ and Direct_Prompt/ (the
development set). The report set is Multi_LLM/, but the DetectRL test files
overlap: many Multi_LLM texts (most of its human texts) also occur in the
development files. Every report text whose whitespace-normalised text also
occurs in the development set is removed before any figure is computed; the
flagged shares (with 95% Wilson intervals) are reported on the disjoint
remainder. Near-duplicates (kept texts sharing their first or last 120
normalised characters with a development text) are counted and reported apart.
Texts are deduplicated by text within each set.

Usage: .venv/bin/python benchmarks/detectrl_report.py [--data ../shared/data/detectrl] [--md OUT.md]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]  # this checkout's zcp_core, not an installed one
from _provenance import header  # noqa: E402

DEV = ["Multi_Domain", "Direct_Prompt"]
REPORT = ["Multi_LLM"]


def load_set(data: Path, subdirs: list[str]) -> tuple[tuple[Any, ...], int]:
    """Distinct texts of some DetectRL folders, and how many exact duplicates were dropped."""
    from zcp_core.artifacts import dedupe_texts
    from zcp_core.data import load_texts

    files = sorted(p for d in subdirs for p in (data / d).glob("*.json"))
    texts, dups = dedupe_texts(load_texts(files))
    return texts, len(dups)


def _ci(k: int, n: int, digits: int = 1) -> str:
    from zcp_core.stats import wilson_interval

    lo, hi = wilson_interval(k, n)
    return f"[{lo:.{digits}%}, {hi:.{digits}%}]" if n else "n/a"


def shares_block(texts: Sequence[Any], lib: Any) -> tuple[list[str], dict[str, Any]]:
    """Markdown rows of flagged shares per LLM and for human texts (Wilson CIs), and the summary."""
    from zcp_core.artifacts import family_table, scan, summarize

    matches = scan(texts, lib, mode="all")
    s = summarize(texts, matches)
    table = family_table(texts, matches)
    fam_cols = list(table.columns[2:-2])
    lines = ["| texts | n | flagged | share [95% Wilson CI] | " + " | ".join(fam_cols) + " |",
             "|---|---|---|---|" + "---|" * len(fam_cols)]
    for _, r in table.iterrows():
        fams = " | ".join(str(r[c]) for c in fam_cols)
        lines.append(f"| LLM: {r['llm_type']} | {r['texts']} | {r['flagged']} | {r['rate']:.1%} "
                     f"{_ci(int(r['flagged']), int(r['texts']))} | {fams} |")
    hp = s["human_false_positives"]
    hk, hn = int(hp["flagged"]), int(hp["texts"])
    lines.append(f"| human (false positives) | {hn} | {hk} | {hk / hn if hn else 0:.2%} {_ci(hk, hn, 2)} | "
                 + " | ".join("" for _ in fam_cols) + " |")
    dom = s["by_label"].get("human", {}).get("domain_flagged", 0)
    lines += ["", f"The domain family (not high-precision, reported apart) flags {dom} of the {hn} human texts."]
    return lines, s


def _by_label(texts: Sequence[Any]) -> str:
    c = Counter("human" if t.label == "human" else (t.llm_type or t.label) for t in texts)
    return ", ".join(f"{k} {v}" for k, v in sorted(c.items()))


def build_report(data: Path) -> tuple[str, int]:
    """The markdown body (without the file header) and the number of removed overlapping texts."""
    from zcp_core.artifacts import load_library
    from zcp_core.artifacts.heldout import hold_out

    lib = load_library()
    dev, dev_dups = load_set(data, DEV)
    report, rep_dups = load_set(data, REPORT)
    held = hold_out(report, dev)
    n_removed = len(held.removed)
    near = held.near_duplicates
    out = [f"Pattern library `{lib.version}` (sha256 {lib.sha256[:12]}).", "",
           "## How the split was made", "",
           f"The patterns were developed on the development set ({', '.join(DEV)}: {len(dev)} distinct texts, "
           f"{dev_dups} exact duplicates counted once). The report set is {', '.join(REPORT)} ({len(report)} "
           f"distinct texts, {rep_dups} duplicates counted once). The DetectRL test files overlap, so every "
           f"report text whose text, after collapsing whitespace runs to one space and stripping the ends, "
           f"also occurs in the development set was removed: **removed {n_removed} overlapping texts** "
           f"({_by_label(held.removed)}). All figures below are on the disjoint remainder of "
           f"{len(held.kept)} texts ({_by_label(held.kept)}).", "",
           f"Near-duplicates: {len(near)} kept texts share their first or last {held.edge_chars} normalised "
           f"characters with a development text ({_by_label(near) or 'none'}). They are kept in the figures; "
           "the second table leaves them out too.", "",
           "## Held-out report set: Multi_LLM minus every development text", ""]
    lines, _ = shares_block(held.kept, lib)
    out += lines
    strict = [t for t in held.kept if t.id not in held.near_duplicate_ids]
    out += ["", f"## Without the {len(near)} near-duplicates as well ({len(strict)} texts)", ""]
    lines, _ = shares_block(strict, lib)
    out += lines
    out += ["", "## For reference: the development set (in-sample, the texts the patterns were tuned on)", ""]
    lines, _ = shares_block(dev, lib)
    out += lines
    return "\n".join(out) + "\n", n_removed


def main() -> int:
    """Print the report (and optionally write it as markdown)."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "detectrl"))
    ap.add_argument("--md", default=None, help="also write the report to this markdown file")
    args = ap.parse_args()
    data = Path(args.data)
    if not data.exists():
        print(f"{data} is absent; nothing to report", file=sys.stderr)
        return 1
    body, n_removed = build_report(data)
    print(f"removed {n_removed} overlapping texts")
    print(body)
    if args.md:
        from zcp_core.artifacts import load_library

        lib = load_library()
        head = header("DetectRL artifact scan, held out from the development set",
                      f"pattern library {lib.version} (sha256 {lib.sha256[:12]}); data DetectRL test splits "
                      f"(github.com/NLP2CT/DetectRL 3472f0ae3cc8)")
        Path(args.md).write_text(head + "\n" + body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
