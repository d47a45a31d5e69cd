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

``--second-review R2.jsonl`` is a second reading of the same sample by reviewers blind to the first: the report
adds how often the two readings agree (Cohen's kappa) and the residual by the second reading and by either. The
stored measurement stays the first reading's, the one declared before the review.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parent.parent)]
# this checkout's zcp_core, not an installed one: the measurement is stored beside *this* library file
from _provenance import ROOT, header, rel  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
TARGET = 0.03  # the residual a release may keep, as a point estimate
SIDE_TARGET = 0.02  # held back and in review together, of the LLM-written texts


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
    ap.add_argument("--second-review", type=Path, default=None, metavar="REVIEW",
                    help="a second, blind reading of the same sample: agreement and its residual are reported")
    ap.add_argument("--pool-last", type=int, default=0, metavar="K",
                    help="also test whether this round and the last K --previous rounds share one rate, and pool them")
    return ap


def previous_rounds(pairs: list[list[Path]], current_ids: set[str], current: tuple[int, int] = (0, 0),
                    pool_last: int = 0) -> list[str]:
    """Report lines for earlier rounds: library version, share, Clopper–Pearson interval, overlap with this sample;
    with ``pool_last`` k, whether this round (``current``: with an artifact, reviewed) and the last k earlier ones
    are consistent with one rate (chi-square test of homogeneity) and their pooled share."""
    from scipy.stats import binomtest, chi2_contingency

    if not pairs:
        return []
    counts: list[tuple[int, int]] = []
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
        lines.append(f"| {i} | {m.group(1) if m else 'unknown'} | `{rel(sample_path)}` | {n} | {k} | "
                     f"{k / n if n else 0:.2%} | {f'{ci.low:.2%} to {ci.high:.2%}' if ci else '—'} | {clear} | {shared} |")
        counts.append((k, n))
    if pool_last and current[1]:
        pooled = [current, *counts[-pool_last:]]
        k, n = sum(c[0] for c in pooled), sum(c[1] for c in pooled)
        p = chi2_contingency([[a, b - a] for a, b in pooled])[1]
        ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
        lines += ["", f"This round and the last {pool_last} rows above: chi-square test of one shared rate p = "
                      f"{p:.2f}; pooled {k} of {n} ({k / n:.2%}; Clopper–Pearson 95% interval {ci.low:.2%} to "
                      f"{ci.high:.2%}). They measured different libraries, so the pooled share summarises them; it "
                      "measures none of them."]
        lines += ["", target_line(current[1], k / n, ci.low)]
    return lines


def allowed(n: int) -> int:
    """The most texts with an artifact a reviewed sample of ``n`` may hold and still meet :data:`TARGET`."""
    return int(TARGET * n + 1e-9)  # 1e-9: a product such as 0.03 * n can fall a hair under a whole number


def target_line(n: int, pooled: float, low: float) -> str:
    """How likely a fresh sample of ``n`` is to meet :data:`TARGET`, were the pooled share (or its interval's lower
    end) the cleaning's true rate: the chance that a round passes by luck alone, not by a better cleaning."""
    from scipy.stats import binom

    most = allowed(n)
    return (f"Were the pooled share the true rate, a fresh sample of {n} would meet the {TARGET:.0%} target (at most "
            f"{most} texts with an artifact) with probability {binom.cdf(most, n, pooled):.1%}; at the interval's "
            f"lower end, {binom.cdf(most, n, low):.1%}.")


def extra_lines(head: dict, texts: list[dict], review: dict) -> list[str]:
    """What a sample's header and review add: held back and in review, held-out humans, over-cuts."""
    from scipy.stats import binomtest

    out = []
    # rounds up to 14 left out the detector's whole training half; later ones only the texts it learned from
    left_out = ("the detector's training half" if "training half" in str(head.get("sample"))
                else "the texts the detector learned from")
    if head.get("edges_model"):
        out.append(f"- Cleaning: pattern library and the learned edge detector {head['edges_model']}; left out of "
                   f"the draw: {left_out}.")
        rules = Counter(pid for t in texts
                        for pid in {str(e["pattern_id"]) for e in t.get("edits", [])} if pid.startswith("rule:"))
        if rules:  # samples drawn before the edge stage had rules have none
            out.append("- The edge stage's rules cut in the sampled texts: "
                       + ", ".join(f"{pid} {n}" for pid, n in sorted(rules.items())) + ".")
    if head.get("pool"):
        left = int(head["pool"]) - len(texts)
        out.append(f"- Pool: {head['pool']} texts could be drawn (kept LLM texts outside every earlier sample and "
                   f"{left_out}); {left} are left for a later round, "
                   + ("enough for another of 300." if left >= 300 else "too few for another of 300."))
    n_llm = int(head.get("llm_texts") or 0)  # every distinct LLM-written text, kept, dropped or held back
    if "held_back_llm" in head and n_llm:
        held, rev = int(head["held_back_llm"]), int(head.get("in_review_llm") or 0)
        share = (held + rev) / n_llm
        out.append(f"- Held back (left out of the release, with their reason): {held} LLM-written texts; in review "
                   f"(the edge detector unsure, nothing cut): {rev}; together {held + rev} of {n_llm} "
                   f"({share:.2%}), target at most {SIDE_TARGET:.0%}: {'met' if share <= SIDE_TARGET else 'missed'}. "
                   "A text in review stays in the release and was sampled like any other.")
    hh = head.get("heldout_human")
    if hh:
        k = int(hh["edited"]) + int(hh["held_back_or_dropped"])
        ci = binomtest(k, int(hh["texts"])).proportion_ci(confidence_level=0.95, method="exact")
        out.append(f"- Held-out human texts (Multi_LLM, disjoint from development) edited, cut or held back: {k} of "
                   f"{hh['texts']} (Clopper–Pearson 95% upper bound {ci.high:.2%}); sent to review: "
                   f"{hh['in_review']}.")
    if any("over_cut" in r for r in review.values()):
        over = [t["sample_id"] for t in texts if review[t["sample_id"]].get("over_cut")]
        out.append(f"- Edits that removed a text's own content (over-cuts), by the reviewer's reading: {len(over)}"
                   + (f" ({', '.join(over)})" if over else "") + ".")
    return out


def load_review(path: Path, texts: list[dict]) -> dict[str, dict]:
    """One review file's rows by ``sample_id``; refused in one line when it misses, repeats or adds a text."""
    rows = _rows(path)
    review = {r["sample_id"]: r for r in rows}
    ids = [t["sample_id"] for t in texts]
    missing = [i for i in ids if i not in review]
    if missing:
        raise SystemExit(f"{path}: {len(missing)} sampled texts not reviewed (first: {missing[0]})")
    twice = [i for i, n in Counter(r["sample_id"] for r in rows).items() if n > 1]
    if twice:
        raise SystemExit(f"{path}: sample_id {twice[0]} is reviewed twice")
    extra = sorted(set(review) - set(ids))
    if extra:
        raise SystemExit(f"{path}: {len(extra)} rows name no sampled text (first: {extra[0]})")
    return review


def _ci(k: int, n: int) -> str:
    from scipy.stats import binomtest

    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return f"{k} of {n} ({k / n:.2%}; 95% interval {ci.low:.2%} to {ci.high:.2%})"


def agreement_lines(texts: list[dict], first: dict, second: dict, source: str) -> list[str]:
    """A second, blind reading beside the first (both checked by :func:`load_review`): its residual, the union,
    and Cohen's kappa on artifact marks."""
    from sklearn.metrics import cohen_kappa_score

    a = [bool(first[t["sample_id"]]["artifact"]) for t in texts]
    b = [bool(second[t["sample_id"]]["artifact"]) for t in texts]
    n = len(texts)
    both = sum(x and y for x, y in zip(a, b))
    only_a = [t["sample_id"] for t, x, y in zip(texts, a, b) if x and not y]
    only_b = [t["sample_id"] for t, x, y in zip(texts, a, b) if y and not x]
    kappa = cohen_kappa_score(a, b) if len(set(a + b)) > 1 else float("nan")
    over = [t["sample_id"] for t in texts if second[t["sample_id"]].get("over_cut")]
    over_line = ([f"- Over-cuts by the second reading: {len(over)}" + (f" ({', '.join(over)})" if over else "") + "."]
                 if any("over_cut" in r for r in second.values()) else [])
    return ["", "## A second, blind reading", "",
            f"Reviewers who saw neither the first reading nor the patterns marked the same {n} texts under the same "
            f"criteria (`{source}`). The stored measurement above stays the first reading's, declared before the "
            "review.", "",
            f"- Second reading: {_ci(sum(b), n)} hold an artifact.",
            f"- Either reading (a text counts if one reviewer marked it): {_ci(sum(x or y for x, y in zip(a, b)), n)}.",
            f"- Both readings: {_ci(both, n)}.",
            f"- Agreement on every text: {sum(x == y for x, y in zip(a, b))} of {n}; Cohen's kappa on the artifact "
            f"marks {kappa:.2f}.",
            f"- Marked by the first reading only: {len(only_a)}" + (f" ({', '.join(only_a)})" if only_a else "")
            + f"; by the second only: {len(only_b)}" + (f" ({', '.join(only_b)})" if only_b else "") + ".",
            *over_line]


def main(argv: list[str] | None = None) -> int:
    """Compute the residual rate and write the report and the library's stored measurement."""
    from zcp_core.artifacts.patterns import load_library
    from zcp_core.artifacts.residual import load_residual_any, measure, save_residual

    args = build_parser().parse_args(argv)
    sample = _rows(args.sample)
    head = sample[0] if sample and sample[0].get("header") else {}
    texts = [r for r in sample if not r.get("header")]
    review = load_review(args.review, texts)
    # read and check the second reading before anything is written: a bad file changes nothing
    second = load_review(args.second_review, texts) if args.second_review else None
    lib = load_library()
    drawn_with = re.search(r"sha256 ([0-9a-f]{12})", str(head.get("versions", "")))
    if drawn_with and drawn_with.group(1) != lib.sha256[:12]:
        raise SystemExit(f"{args.sample} was drawn with pattern library sha256 {drawn_with.group(1)}, not the bundled "
                         f"{lib.version} ({lib.sha256[:12]}): its review measures another library")
    marks = [bool(review[t["sample_id"]]["artifact"]) for t in texts]
    reviewers = sorted({str(r.get("reviewer") or "") for r in review.values()} - {""})
    population = str(head.get("population") or "cleaned LLM texts of the DetectRL test splits")
    previous = load_residual_any(lib)
    edges = str(head.get("edges_model") or "none")
    from zcp_core.artifacts.edges_apply import edges_label

    if edges != "none" and edges != edges_label("auto"):
        raise SystemExit(f"{args.sample} was cleaned with edge detector {edges}, not the bundled "
                         f"{edges_label('auto')}: its review measures another cleaning")
    held_back = int(head.get("held_back_llm") or 0)
    rate = measure(lib, f"DetectRL test splits: {population}", marks,
                   ", ".join(reviewers) or "a reviewer who did not write the patterns", edges=edges,
                   held_back=held_back)
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
             f"- Target: at most {TARGET:.0%} as a point estimate (at most {allowed(rate.reviewed)} of "
             f"{rate.reviewed}): "
             f"{'met' if rate.share <= TARGET else f'missed by {rate.with_artifact - allowed(rate.reviewed)} texts'}.",
             *extra_lines(head, texts, review),
             *([f"- Previous stored measurement (library {previous.library_version}; its sample is in the rounds "
                "below): "
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
    if second is not None:
        lines += agreement_lines(texts, review, second, rel(args.second_review))
    lines += previous_rounds(args.previous, {str(t["id"]) for t in texts}, (rate.with_artifact, rate.reviewed),
                             args.pool_last)
    args.result.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{rate.with_artifact} of {rate.reviewed} hold an artifact ({rate.share:.2%}; 95% CI "
          f"{rate.ci_low:.2%} to {rate.ci_high:.2%}); wrote {args.result}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
