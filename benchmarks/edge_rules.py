"""What the edge stage's two rules cut in DetectRL, and in the reviewed rounds.

The rules: a title the text restates (``zcp_core/artifacts/titles.py``) and sentence numbers left after a cut
"1." (``zcp_core/artifacts/numbering.py``). Three figures per rule, each against independent truth:

* human texts: the rule on every distinct human text of DetectRL's test splits (patterns never edit them, so
  their original is what the rule sees), the number rule as if the text's head had been cut, the stricter check:
  how many it would cut (the rules' whole point is 0);
* LLM texts: how many of the distinct LLM-written texts, cleaned by the patterns only, it cuts, and a listing of
  its cuts for a reader to check;
* reviewed rounds: on the cleaned texts of each reviewed round named (as the reviewers saw them), how many of the
  texts they marked with an artifact it cuts (by the reviewers' kind), and how many texts they marked clean.
  The rules were written after reading rounds 8 to 11, so on those rounds this is recall on their development
  data, not a measurement; only a round drawn after them measures them.

DetectRL has no licence: the data is read from ``../shared/data/detectrl``.

    .venv/bin/python benchmarks/edge_rules.py --round round8 --round round9 --round round10 --round round11
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Iterable

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]
from _provenance import header  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def cell(text: str) -> str:
    """A text quoted for a markdown table cell."""
    return json.dumps(text, ensure_ascii=False).replace("|", "\\|")


def cuts_of(text: str, starts: Iterable[int]) -> list[tuple[str, str]]:
    """What the two rules cut of one text whose applied edits start at ``starts`` (offsets in the original; the
    number rule needs a cut head or a long run): (rule, the text cut), the title first."""
    from zcp_core.artifacts.numbering import RULE_ID as NUMBERS
    from zcp_core.artifacts.numbering import applies, find_sentence_numbers
    from zcp_core.artifacts.titles import RULE_ID as TITLES
    from zcp_core.artifacts.titles import find_title

    out = []
    if (title := find_title(text)) is not None:
        out.append((TITLES, f"{title.form}: {cell(text[: title.at].strip())}"))
    if applies(numbers := find_sentence_numbers(text), starts):
        out.append((NUMBERS, f"{len(numbers)} numbers, {', '.join(str(n.n) for n in numbers[:4])}"
                             f"{'…' if len(numbers) > 4 else ''} (first after {cell(text[max(0, numbers[0].start - 40): numbers[0].start].strip())})"))
    return out


def round_lines(name: str) -> tuple[list[str], dict[str, int]]:
    """One reviewed round: its table rows, and counts (artifact texts, clean texts, of each cut)."""
    from edge_holdout import sample_rows

    sample = sample_rows(f"{name}_")
    review = {r["sample_id"]: r for r in
              map(json.loads, (RESULTS / f"clean_residual_{name}_review.jsonl").read_text().splitlines())}
    counts = {"artifact": 0, "clean": 0, "artifact_cut": 0, "clean_cut": 0}
    rows = []
    for s in sample:
        r = review[s["sample_id"]]
        mark = f"{r.get('kind') or 'other'} artifact" if r["artifact"] else "clean"
        key = "artifact" if r["artifact"] else "clean"
        counts[key] += 1
        found = cuts_of(s["cleaned_text"], (int(e["start"]) for e in s.get("edits", [])))
        counts[f"{key}_cut"] += bool(found)
        rows += [f"| {name} {s['sample_id']} | {mark} | {rule} | {what} |" for rule, what in found]
    return rows, counts


def main() -> int:
    """Count, list, write the results file."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "detectrl"))
    ap.add_argument("--round", action="append", default=[], help="a reviewed round to score (e.g. round11)")
    ap.add_argument("--out", default=str(RESULTS / "edge_rules.md"))
    args = ap.parse_args()
    data = Path(args.data)
    if not data.exists():
        print(f"{data} is absent: the rules are checked on DetectRL's test splits", file=sys.stderr)
        return 1
    for name in args.round:
        if not (RESULTS / f"clean_residual_{name}_review.jsonl").exists():
            ap.error(f"--round: no reviewed round {name!r} in {RESULTS}")
    from clean_residual_sample import load_all

    from zcp_core.artifacts import clean, load_library
    from zcp_core.artifacts.edges_apply import RULES

    lib = load_library()
    texts, _ = load_all(data)
    human = [t for t in texts if t.label == "human"]
    # a human text as if its head had been cut: the number rule's finder alone, the stricter check
    human_hits = {r: sum(1 for t in human if any(x == r for x, _ in cuts_of(t.text, (0,)))) for r in RULES}
    llm = [t for t in texts if t.label == "llm"]
    result = clean(llm, lib)  # patterns only: what the edge stage, and so its rules, see
    applied = result.edits[result.edits["applied"]]
    starts = applied.groupby("id")["start"].apply(list).to_dict()
    cuts = [(t.id, rule, what) for t in result.texts for rule, what in cuts_of(t.text, starts.get(t.id, []))]
    lines = [header("edge_rules: what the edge stage's rules cut",
                    f"rules {', '.join(RULES)}; pattern library {lib.version} (sha256 {lib.sha256[:12]}); "
                    "DetectRL test splits (github.com/NLP2CT/DetectRL 3472f0ae3cc8)"), "",
             "| rule | human texts cut (every distinct human text) | LLM-written texts cut, after the patterns |",
             "|---|---|---|",
             *(f"| {r} | **{human_hits[r]} of {len(human):,}** | {sum(1 for _, x, _ in cuts if x == r)} of "
               f"{len(result.texts):,} kept |" for r in RULES), ""]
    if args.round:
        sections, total = [], {"artifact": 0, "clean": 0, "artifact_cut": 0, "clean_cut": 0}
        for name in args.round:
            rows, counts = round_lines(name)
            total = {k: total[k] + counts[k] for k in total}
            sections += rows
        lines += ["## Reviewed rounds (texts as the reviewers saw them)", "",
                  f"Rounds {', '.join(args.round)}: texts with an artifact cut **{total['artifact_cut']} of "
                  f"{total['artifact']}**; clean texts cut {total['clean_cut']} of {total['clean']}.", "",
                  "| round, sample | review | rule | cut |", "|---|---|---|---|", *sections, ""]
    lines += ["## Every cut in the LLM-written texts", "", "| id | rule | cut |", "|---|---|---|"]
    lines += [f"| {i} | {rule} | {what} |" for i, rule, what in sorted(cuts)]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:14]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
