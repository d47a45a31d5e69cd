"""Per-LLM flagged shares and the human false-positive share of the artifact scan on DetectRL.

Patterns were developed on Multi_Domain/ and Direct_Prompt/ (dev) and are
reported on Multi_LLM/ (report). Texts are deduplicated by text within each set.

Usage: .venv/bin/python benchmarks/detectrl_report.py [--data ../shared/data/detectrl] [--md OUT.md]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def report(data: Path, name: str, subdirs: list[str]) -> tuple[str, dict]:
    """Scan one set of DetectRL folders; return a markdown block and the summary."""
    from zcp_core.artifacts import dedupe_texts, family_table, load_library, scan, summarize
    from zcp_core.data import load_texts

    files = sorted(p for d in subdirs for p in (data / d).glob("*.json"))
    texts, dups = dedupe_texts(load_texts(files))
    lib = load_library()
    matches = scan(texts, lib, mode="all")
    s = summarize(texts, matches)
    table = family_table(texts, matches)
    hp = s["human_false_positives"]
    lines = [f"### {name}: {', '.join(subdirs)} ({s['texts']} distinct texts; {len(dups)} duplicates counted once)", "",
             "| LLM | LLM texts | flagged | share | " + " | ".join(table.columns[2:-2]) + " |",
             "|---|---|---|---|" + "---|" * (len(table.columns) - 4)]
    for _, r in table.iterrows():
        fams = " | ".join(str(r[c]) for c in table.columns[2:-2])
        lines.append(f"| {r['llm_type']} | {r['texts']} | {r['flagged']} | {r['rate']:.1%} | {fams} |")
    lines += ["", f"Human texts flagged (false positives, high-precision families): {hp['flagged']} / {hp['texts']}"
              f" = {hp['rate']:.2%}; domain family (reported apart) flags "
              f"{s['by_label'].get('human', {}).get('domain_flagged', 0)} human texts.", ""]
    return "\n".join(lines), s


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
    blocks = []
    for name, subdirs in [("dev", ["Multi_Domain", "Direct_Prompt"]), ("report", ["Multi_LLM"])]:
        block, s = report(data, name, subdirs)
        print(block)
        blocks.append(block)
        claude = s["by_llm_type"].get("Claude-instant", {})
        print(f"[{name}] Claude-instant flagged {claude.get('rate', 0):.1%} (target >= 70%); "
              f"human flagged {s['human_false_positives']['rate']:.2%} (target <= 1%)\n")
    if args.md:
        cmd = f".venv/bin/python benchmarks/detectrl_report.py --md {args.md}"
        Path(args.md).write_text("# DetectRL artifact scan (bundled pattern library)\n\nCommand: `" + cmd + "`\n\n"
                                 + "\n".join(blocks))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
