"""What the edge stage's rules cut in DetectRL, and in the reviewed rounds.

The rules (``zcp_core/artifacts/edges_apply.py``, ``RULES``): a title the text restates
(``zcp_core/artifacts/titles.py``), a title left after a lead-in the patterns cut (``leadin.py``), sentence numbers
left after a cut "1." and sentence numbers the number patterns left among the ones they cut (``numbering.py``),
and bold markers left after a pattern cut some (``markup.py``).
Three figures per rule, each against independent truth:

* human texts: the rules on every distinct human text of DetectRL's test splits as the stage sees them (patterns
  never edit them, so the lead-in and left-numbers rules, which need a pattern's cut, cannot run), and the
  stricter check, as if a lead-in pattern had cut each text's head, a number pattern a "2." and a bold pattern a
  "**": how many they
  would cut (the rules' whole point is 0; the two evidence rules' safety rests on their evidence, and the
  stricter check says how much);
* LLM texts: how many of the distinct LLM-written texts, cleaned by the patterns only, each rule cuts, and a
  listing of its cuts for a reader to check;
* reviewed rounds: on the cleaned texts of each reviewed round named (as the reviewers saw them), how many of the
  texts they marked with an artifact the rules cut (by the reviewers' kind), and how many texts they marked clean.
  The rules were written after reading the rounds up to 13, so on those rounds this is recall on their
  development data, not a measurement; only a round drawn after them measures them.

``--review FILE`` adds an independent review of the cuts (one JSON row per text: ``id``, ``rule``, ``verdict``
one of ``correct``, ``over_cut``, ``wrong_boundary``, ``not_artifact``, ``note``, ``reviewer``): the counts by
rule and verdict, every verdict but ``correct`` listed. Each reviewed text must be one the rule cuts now, and
each text the reviewed rules cut must be reviewed; otherwise the script stops and names the text.

DetectRL has no licence: the data is read from ``../shared/data/detectrl``.

    .venv/bin/python benchmarks/edge_rules.py --round round10 --round round11 --round round12 --round round13 \
        --review benchmarks/results/edge_rules_review.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]
from _provenance import header  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def cell(text: str) -> str:
    """A text quoted for a markdown table cell."""
    return json.dumps(text, ensure_ascii=False).replace("|", "\\|")


def cuts_of(text: str, applied: Iterable[Mapping[str, Any]], names: frozenset[str]) -> list[tuple[str, str]]:
    """What the stage's rules cut of one text, given the pattern edits applied to it (``start`` in the original,
    ``pattern_id``, ``original``) and the library's camel-case names: (rule, the text cut), the title first, a
    rule's sentence numbers in one row."""
    from zcp_core.artifacts.edges_apply import rule_cuts

    out: list[tuple[str, str]] = []
    numbers: dict[str, list[Any]] = {}
    for c in rule_cuts(text, list(applied), names):
        if c.detail.isdigit() or c.detail == "**":
            numbers.setdefault(c.rule, []).append(c)
        else:
            out.append((c.rule, f"{c.detail}: {cell(text[c.start: c.end].strip())}"))
    for rule, cs in numbers.items():
        what = ("markers" if cs[0].detail == "**" else
                f"numbers, {', '.join(c.detail for c in cs[:4])}{'…' if len(cs) > 4 else ''}")
        out.append((rule, f"{len(cs)} {what} (first after {cell(text[max(0, cs[0].start - 40): cs[0].start].strip())})"))
    return out


# as if a lead-in pattern had cut the text's head (and opened a quote), a number pattern a "2." and a bold pattern
# a "**": every rule's evidence at once
HEAD_CUT = ({"start": 0, "pattern_id": "beg-here-is", "original": 'Here is a story titled "'},
            {"start": 1, "pattern_id": "beg-numbered-glued", "original": "2. "},
            {"start": 2, "pattern_id": "beg-bold-glued", "original": "**"})


def round_lines(name: str, names: frozenset[str]) -> tuple[list[str], dict[str, int]]:
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
        # a sample stores each edit's cut text as "removed"; the edge stage's own cuts are no evidence for it
        found = cuts_of(s["cleaned_text"], [{**e, "original": e.get("removed", "")} for e in s.get("edits", [])
                                            if not str(e["pattern_id"]).startswith(("rule:", "learned:"))], names)
        counts[f"{key}_cut"] += bool(found)
        rows += [f"| {name} {s['sample_id']} | {mark} | {rule} | {what} |" for rule, what in found]
    return rows, counts


VERDICTS = ("correct", "over_cut", "wrong_boundary", "not_artifact")


def review_lines(path: Path, cuts: list[tuple[str, str, str]]) -> list[str]:
    """The review's section; stops on a row that names no current cut, or a current cut of a reviewed rule
    with no row."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for n, r in enumerate(rows, 1):
        if r.get("verdict") not in VERDICTS:
            raise SystemExit(f"{path}:{n}: field 'verdict' must be one of {', '.join(VERDICTS)}")
    reviewed = {(r["id"], r["rule"]) for r in rows}
    now = {(i, rule) for i, rule, _ in cuts if rule in {r for _, r in reviewed}}
    if stale := sorted(reviewed - now):
        raise SystemExit(f"{path}: {stale[0][0]} ({stale[0][1]}) is reviewed but not cut now: review the cuts again")
    if missing := sorted(now - reviewed):
        raise SystemExit(f"{path}: {missing[0][0]} ({missing[0][1]}) is cut but not reviewed")
    reviewers = sorted({str(r.get("reviewer", "")) for r in rows} - {""})
    out = ["## Independent review of the cuts", "",
           f"Every text the rules {', '.join(sorted({r for _, r in reviewed}))} cut, reviewed by "
           f"{'; '.join(reviewers) or 'a reviewer'} (`{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}`), "
           "who saw the text before and after the cut and the written criteria.", "",
           "| rule | texts | " + " | ".join(VERDICTS) + " |", "|---|---|" + "---|" * len(VERDICTS)]
    for rule in sorted({r["rule"] for r in rows}):
        mine = [r for r in rows if r["rule"] == rule]
        out.append(f"| {rule} | {len(mine)} | " + " | ".join(str(sum(r["verdict"] == v for r in mine))
                                                           for v in VERDICTS) + " |")
    out += ["", *[f"- {r['id']} ({r['rule']}): **{r['verdict']}**. {r.get('note', '')}" for r in rows
                  if r["verdict"] != "correct"], ""]
    return out


def main() -> int:
    """Count, list, write the results file."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "detectrl"))
    ap.add_argument("--round", action="append", default=[], help="a reviewed round to score (e.g. round11)")
    ap.add_argument("--review", type=Path, default=None, metavar="FILE",
                    help="an independent review of the cuts, one JSON row per text (see the module docstring)")
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
    # as the stage sees a human text (no pattern edit), and as if a pattern had cut its head: the stricter check
    human_hits = {r: sum(1 for t in human if any(x == r for x, _ in cuts_of(t.text, (), lib.names))) for r in RULES}
    strict = {r: sum(1 for t in human if any(x == r for x, _ in cuts_of(t.text, HEAD_CUT, lib.names))) for r in RULES}
    llm = [t for t in texts if t.label == "llm"]
    result = clean(llm, lib)  # patterns only: what the edge stage, and so its rules, see
    applied = result.edits[result.edits["applied"]]
    by_id = {i: g.to_dict("records") for i, g in applied.groupby("id")}
    cuts = [(t.id, rule, what) for t in result.texts for rule, what in cuts_of(t.text, by_id.get(t.id, []), lib.names)]
    lines = [header("edge_rules: what the edge stage's rules cut",
                    f"rules {', '.join(RULES)}; pattern library {lib.version} (sha256 {lib.sha256[:12]}); "
                    "DetectRL test splits (github.com/NLP2CT/DetectRL 3472f0ae3cc8)"), "",
             "| rule | human texts cut (every distinct human text) | the same, as if a lead-in pattern had cut "
             "each head (and opened a quoted title), a number pattern a \"2.\" and a bold pattern a \"**\" | LLM-written texts cut, after the patterns |",
             "|---|---|---|---|",
             *(f"| {r} | **{human_hits[r]} of {len(human):,}** | {strict[r]} of {len(human):,} | "
               f"{len({i for i, x, _ in cuts if x == r})} of {len(result.texts):,} kept |" for r in RULES), ""]
    if args.round:
        sections, total = [], {"artifact": 0, "clean": 0, "artifact_cut": 0, "clean_cut": 0}
        for name in args.round:
            rows, counts = round_lines(name, lib.names)
            total = {k: total[k] + counts[k] for k in total}
            sections += rows
        lines += ["## Reviewed rounds (texts as the reviewers saw them)", "",
                  f"Rounds {', '.join(args.round)}: texts with an artifact cut **{total['artifact_cut']} of "
                  f"{total['artifact']}**; clean texts cut {total['clean_cut']} of {total['clean']}.", "",
                  "| round, sample | review | rule | cut |", "|---|---|---|---|", *sections, ""]
    if args.review:
        lines += review_lines(args.review, cuts)
    lines += ["## Every cut in the LLM-written texts", "", "| id | rule | cut |", "|---|---|---|"]
    lines += [f"| {i} | {rule} | {what} |" for i, rule, what in sorted(cuts)]
    Path(args.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:14]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
