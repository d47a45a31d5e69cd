"""The residual artifact rate of the frozen pattern library, from an independent review of a random sample.

Inputs, both committed:
* ``benchmarks/results/clean_residual_sample.jsonl``: the seeded sample of cleaned DetectRL LLM texts drawn by
  ``benchmarks/clean_residual_sample.py`` after the library was frozen (its first line is a header);
* ``benchmarks/results/clean_residual_review.jsonl``: one row per sampled text, marked by a reviewer who did not
  write the patterns (``sample_id``, ``id``, ``artifact`` true/false, ``span`` quoting what is left, ``kind``,
  ``note``).

Writes ``benchmarks/results/clean_residual.md`` (share, Clopper–Pearson 95% interval, every marked text) and
stores the measurement beside the library (``zcp_core/artifacts/library/<name>.residual.yaml``), so clean
release cards quote it for exactly this library.

    .venv/bin/python benchmarks/clean_residual.py [--sample S.jsonl --review R.jsonl]
        [--previous EARLIER_SAMPLE.jsonl EARLIER_REVIEW.jsonl ...] [--note TEXT ...]

Each ``--previous`` pair (repeatable, oldest first) is an earlier round: its library version (from its sample's
header), its share and interval are listed in the report, and its ids are checked to be disjoint from this sample.
Each ``--note`` (repeatable) is a sentence added to the report's list, e.g. on how this round's reviewer read the
guidelines differently from earlier ones.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]
# this checkout's zcp_core, not an installed one: the measurement is stored beside *this* library file
from _provenance import ROOT, header  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def build_parser() -> argparse.ArgumentParser:
    """The script's options."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=Path, default=RESULTS / "clean_residual_sample.jsonl")
    ap.add_argument("--review", type=Path, default=RESULTS / "clean_residual_review.jsonl")
    ap.add_argument("--result", type=Path, default=RESULTS / "clean_residual.md")
    ap.add_argument("--previous", nargs=2, action="append", default=[], type=Path, metavar=("SAMPLE", "REVIEW"),
                    help="an earlier round's sample and review files, listed in the report (repeatable, oldest first)")
    ap.add_argument("--note", action="append", default=[], metavar="TEXT",
                    help="a sentence added to the report's list (repeatable)")
    return ap


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def previous_rounds(pairs: list[list[Path]], current_ids: set[str]) -> list[str]:
    """Report lines for earlier rounds: library version, share, Clopper–Pearson interval, overlap with this sample."""
    from scipy.stats import binomtest

    if not pairs:
        return []
    lines = ["", "## Previous rounds", "",
             "| round | library | sample | reviewed | with an artifact | share | 95% interval | clear-cut "
             "| ids shared with this sample |",
             "|---|---|---|---|---|---|---|---|---|"]
    for i, (sample_path, review_path) in enumerate(pairs, 1):
        rows = _rows(sample_path)
        head = rows[0] if rows and rows[0].get("header") else {}
        texts = [r for r in rows if not r.get("header")]
        review = {r["sample_id"]: r for r in _rows(review_path)}
        marks = [bool(review[t["sample_id"]]["artifact"]) for t in texts if t["sample_id"] in review]
        k, n = sum(marks), len(marks)
        clear = sum(1 for t in texts if t["sample_id"] in review and review[t["sample_id"]]["artifact"]
                    and not review[t["sample_id"]].get("borderline"))
        ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact") if n else None
        m = re.search(r"pattern library (\S+)", str(head.get("versions", "")))
        shared = len({str(t["id"]) for t in texts} & current_ids)
        lines.append(f"| {i} | {m.group(1) if m else 'unknown'} | `{_rel(sample_path)}` | {n} | {k} | "
                     f"{k / n if n else 0:.2%} | {f'{ci.low:.2%} to {ci.high:.2%}' if ci else '—'} | {clear} | {shared} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Compute the residual rate and write the report and the library's stored measurement."""
    from zcp_core.artifacts.patterns import load_library
    from zcp_core.artifacts.residual import load_residual_any, measure, save_residual

    args = build_parser().parse_args(argv)
    sample = _rows(args.sample)
    head = sample[0] if sample and sample[0].get("header") else {}
    texts = [r for r in sample if not r.get("header")]
    review = {r["sample_id"]: r for r in _rows(args.review)}
    missing = [t["sample_id"] for t in texts if t["sample_id"] not in review]
    if missing:
        raise SystemExit(f"{args.review}: {len(missing)} sampled texts not reviewed (first: {missing[0]})")
    lib = load_library()
    drawn_with = re.search(r"sha256 ([0-9a-f]{12})", str(head.get("versions", "")))
    if drawn_with and drawn_with.group(1) != lib.sha256[:12]:
        raise SystemExit(f"{args.sample} was drawn with pattern library sha256 {drawn_with.group(1)}, not the bundled "
                         f"{lib.version} ({lib.sha256[:12]}): its review measures another library")
    marks = [bool(review[t["sample_id"]]["artifact"]) for t in texts]
    reviewers = sorted({str(r.get("reviewer") or "") for r in review.values()} - {""})
    population = str(head.get("population") or "cleaned LLM texts of the DetectRL test splits")
    previous = load_residual_any(lib)
    rate = measure(lib, f"DetectRL test splits: {population}", marks,
                   ", ".join(reviewers) or "a reviewer who did not write the patterns")
    stored = save_residual(rate, lib)
    # the reviewer's own split: clear-cut artifacts, and judgement calls marked true with a note
    clear = sum(1 for t in texts if review[t["sample_id"]]["artifact"] and not review[t["sample_id"]].get("borderline"))
    strict = measure(lib, population, [bool(review[t["sample_id"]]["artifact"])
                                       and not review[t["sample_id"]].get("borderline") for t in texts], "")
    lines = [header("Residual artifacts after cleaning: an independent review of a random sample",
                    f"pattern library {lib.version} (sha256 {lib.sha256[:12]}); sample drawn by "
                    f"`{head.get('command', 'benchmarks/clean_residual_sample.py')}`"),
             "DetectRL has no licence: the sample is an attributed research sample (github.com/NLP2CT/DetectRL).", "",
             f"- Population: {population}.",
             f"- Sample: {head.get('sample', f'{len(texts)} texts')}.",
             f"- Reviewed: {rate.reviewed}; still holding an artifact: **{rate.with_artifact}** "
             f"({rate.share:.2%}); Clopper–Pearson 95% interval {rate.ci_low:.2%} to {rate.ci_high:.2%}.",
             f"- Of these, clear-cut by the reviewer's own reading: {clear} ({strict.share:.2%}; 95% interval "
             f"{strict.ci_low:.2%} to {strict.ci_high:.2%}); the other {rate.with_artifact - clear} are judgement "
             "calls the reviewer marked true, each with its note in the review file.",
             f"- Target: at most 1% as a point estimate (at most 3 of 300): "
             f"{'met' if rate.share <= 0.01 else f'missed by {rate.with_artifact - int(0.01 * rate.reviewed)} texts'}.",
             *([f"- Previous measurement (library {previous.library_version}, another sample): "
                f"{previous.with_artifact} of {previous.reviewed} ({previous.share:.2%}; 95% interval "
                f"{previous.ci_low:.2%} to {previous.ci_high:.2%})."]
               if previous and previous.library_sha256 != lib.sha256 else []),
             *[f"- {note.rstrip('.')}." for note in args.note],
             f"- Stored for the cards as `{stored.relative_to(ROOT)}`.", "",
             "| sample | text id | model | kind | judgement call | what is left |", "|---|---|---|---|---|---|"]
    for t in texts:
        r = review[t["sample_id"]]
        if r["artifact"]:
            span = str(r.get("span") or "").replace("|", "/").replace("\n", " ")[:160]
            call = "yes" if r.get("borderline") else "no"
            lines.append(f"| {t['sample_id']} | {t['id']} | {t.get('llm_type', '')} | {r.get('kind', '')} | {call} "
                         f"| {span} |")
    if not rate.with_artifact:
        lines.append("| (none) | | | | | |")
    lines += previous_rounds(args.previous, {str(t["id"]) for t in texts})
    args.result.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{rate.with_artifact} of {rate.reviewed} hold an artifact ({rate.share:.2%}; 95% CI "
          f"{rate.ci_low:.2%} to {rate.ci_high:.2%}); wrote {args.result}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
