"""Build the DetectRL edge detector (zcp_core/artifacts/edges.py) and report how it was set.

What it learns from (DetectRL has no licence, so the training set is derived here from ../shared/data/detectrl,
whose file hashes the model records, and from the committed reviews; nothing of it is bundled):

* positives, self-labelled by the patterns, from the *training half* of the LLM-written texts (ids whose
  sha256 is even): the line that followed a cut "Title:" or "Headline:" label (itself a headline; also glued to
  the body with and without a space, since that is how the patterns miss them), the openers the patterns cut at
  the start and the closers they cut at the end (put back in front of or behind the cleaned text);
* the reviewed texts of every earlier residual review (`benchmarks/results/clean_residual*_review.jsonl`, less
  the second, blind readings, which mark the same texts again, and any ``--skip-review`` file): a span marked as
  an artifact at a text's start or end is a positive, a text marked clean gives negatives, but only in a review
  made under the written criteria (round 6 on: the five reviews before them could call a glued headline the
  story's content);
* negatives: every candidate of the 4,507 development human texts (Multi_Domain and Direct_Prompt). The
  1,528 held-out human texts (Multi_LLM, disjoint from development) stay out of training and thresholds.

Thresholds come from out-of-fold scores (5 grouped folds) of the development human texts, per edge: ``cut``
is the highest such score plus a margin, so no development human text would be cut out of fold; ``review``
is the score above which 0.5% of them lie. ``gate_cut`` (head only) is the highest out-of-fold score of a
candidate shaped like a glued title (:func:`zcp_core.artifacts.titles.glued_title`) in a development human
text or a reviewed text marked clean, plus the margin: such a candidate is cut at it.

The LLM-written texts it learned from (self-labelled or reviewed) are listed in ``--training-out``
(`benchmarks/results/edge_detector_training.jsonl`, the model file's sha256 in its header line;
``--training-only`` writes that list for the model file without building, after checking that the examples have
the counts by source the file records): a fresh residual review (`benchmarks/clean_residual_sample.py --edges auto`) draws from every
other text no earlier sample holds. A text of the training half that gave no example was not learned from.

    .venv/bin/python benchmarks/edge_detector.py [--skip-review REVIEW.jsonl ...] [--training-only]

``--skip-review`` rebuilds a detector frozen before a review landed (the model file comes out byte-identical).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]
from _provenance import command_line, git_commit, header, rel  # noqa: E402

NAME, VERSION = "detectrl-edges", "2026.12.9"
TOP_HUMANS = 3  # development human texts listed beside the cut (the highest sets it)
MARGIN = 0.02
REVIEW_SHARE = 0.005  # of the development human texts: where review starts at the least
SIDE_TARGET = 0.02  # of the LLM-written texts: held back and in review together stay within this
SIDE_MARGIN = 0.001  # kept free below it
MIN_POSITIVES = 50  # an edge with fewer positive texts cannot be set honestly: it decides nothing
MIN_GATE_TEXTS = 10  # clean texts with a shaped candidate that a gated cut needs; with fewer there is none
CLEAN_SOURCES = ("human", "review-clean")  # the examples known to be clean, whose shaped candidates set a gated cut
OFF = 1.01  # a threshold no probability reaches
DEV_DIRS = ("Multi_Domain", "Direct_Prompt")
_LEAD_LABEL = re.compile(r"^\W*\**\s*(?:title|headline)\s*\**\s*[:—]\s*\**\s*", re.IGNORECASE)
_TAIL_LABEL = re.compile(r"\s*\**\s*(?:abstract|body|article|story)\s*\**\s*:?\s*\**\s*$", re.IGNORECASE)
_OPENER = re.compile(r"^\W*(?:here|sure|certainly|of course|okay|ok|this is|i |i'|below|as requested)", re.IGNORECASE)
# Reviews made before the written criteria (clean_residual_criteria.md, first used by round 6): under them a
# headline glued to its story could be called the story's content, so a text they call clean is no known
# negative; what they call an artifact still is one.
BEFORE_CRITERIA = frozenset(f"clean_residual{r}_review.jsonl" for r in ("_tuning", "", "_round3", "_round4", "_round5"))
HEAD_KINDS = {"format", "task_echo", "label", "opener", "headline", "title", "meta", "other"}


TRAINING = ROOT / "benchmarks" / "results" / "edge_detector_training.jsonl"


def training_half(text_id: str) -> bool:
    """Whether an LLM-written text is in the detector's training half (the other half is left for review)."""
    return int(hashlib.sha256(text_id.encode()).hexdigest(), 16) % 2 == 0


def write_training(path: Path, examples: list[Any], model_path: str | Path) -> None:
    """The LLM-written texts the model at ``model_path`` learned from (self-labelled or reviewed), one JSON row
    each after a header line naming the model and its file's sha256, so a residual review can leave exactly them
    out of its draw."""
    import datetime as _dt

    used = sorted({(e.id, e.source) for e in examples if e.source != "human"})
    head = {"header": True, "command": command_line(), "commit": git_commit(),
            "date": _dt.datetime.now(_dt.timezone.utc).date().isoformat(), "model": f"{NAME}-{VERSION}",
            "model_sha256": hashlib.sha256(Path(model_path).read_bytes()).hexdigest(),
            "texts": len({i for i, _ in used}),
            "what": "LLM-written texts of DetectRL's test splits the detector learned from: self-labelled, and "
                    "reviewed in a residual round"}
    rows = [json.dumps(head)] + [json.dumps({"id": i, "source": src}) for i, src in used]
    path.write_text("\n".join(rows) + "\n")


def list_training(model_path: str, out: Path, examples: list[Any], counts: dict[str, int]) -> int:
    """``--training-only``: write the list for the model file, after checking that these examples have the same
    count of every source as the ones it was built from (its file records them; it records no ids)."""
    from zcp_core.artifacts.edges import load_model

    built = load_model(model_path).meta.get("examples", {})
    if built != counts:
        raise SystemExit(f"{model_path}: built from {built}, these examples are {counts}: the list would not be "
                         "the model's; rebuild the model instead")
    write_training(out, examples, model_path)
    print(f"wrote {out}")
    return 0


def training_ids(path: Path, model_path: str | Path) -> set[str]:
    """The ids the model file at ``model_path`` learned from, read from its ``--training-out`` file; stops when
    the file is absent or was written for another model file (its texts would be the wrong ones to leave out)."""
    if not path.is_file():
        raise SystemExit(f"{path}: absent; run benchmarks/edge_detector.py to list the texts the detector learned from")
    lines = path.read_text(encoding="utf-8").splitlines()
    head = json.loads(lines[0]) if lines else {}
    sha = hashlib.sha256(Path(model_path).read_bytes()).hexdigest()
    if head.get("model_sha256") != sha:
        raise SystemExit(f"{path}:1: field 'model_sha256' is {str(head.get('model_sha256'))[:12]!r}, not "
                         f"{model_path}'s {sha[:12]!r}: run benchmarks/edge_detector.py --training-only")
    return {json.loads(line)["id"] for line in lines[1:] if line.strip()}


def reviewed(results: Path, skip: tuple[Path, ...] = ()) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(sample row, review row) pairs of every committed residual review, less the ``skip`` files.

    A second, blind reading of a round (``*_second_review.jsonl``) is left out: it marks the same texts again, and
    counting them twice would weigh that round double.
    """
    out = []
    skipped = {p.resolve() for p in skip}
    if absent := [p for p in skip if not p.is_file()]:
        raise SystemExit(f"--skip-review: {absent[0]} is not a file (a misspelt name would skip nothing)")
    for rev in sorted(results.glob("clean_residual*_review.jsonl")):
        sample = Path(str(rev).replace("_review.jsonl", "_sample.jsonl"))
        if rev.name.endswith("_second_review.jsonl") or rev.resolve() in skipped or not sample.exists():
            continue
        rows = {r["sample_id"]: r for r in map(json.loads, sample.read_text().splitlines()) if "sample_id" in r}
        for r in map(json.loads, rev.read_text().splitlines()):
            if r.get("sample_id") in rows:
                out.append((rows[r["sample_id"]], {**r, "criteria": rev.name not in BEFORE_CRITERIA}))
    return out


def headline(removed: str) -> str | None:
    """The headline or title a leading pattern cut removed (its "Title:" or "Abstract:" labels and bold markers
    taken off), or None when the cut was something else: an opener, a label alone, a sentence, a long passage."""
    h = _TAIL_LABEL.sub("", _LEAD_LABEL.sub("", removed.strip())).strip().strip("*").strip()
    words = h.split()
    if not 2 <= len(words) <= 25 or h[-1:] in ":" or _OPENER.match(h) or "\n" in h:
        return None
    return h


def examples_from(result: Any, texts: list[Any], source: dict[str, str], reviews: list[Any]) -> tuple[list[Any], dict]:
    """The training examples and counts of where they came from (see the module docstring)."""
    from zcp_core.artifacts.cleaner import domain_of
    from zcp_core.artifacts.edges_train import Example

    cleaned = {t.id: t.text for t in result.texts}
    by_id = {t.id: t for t in texts}
    edits = result.edits[result.edits["applied"]]
    groups = dict(tuple(edits.groupby("id")))
    out, counts = [], {"human": 0, "headline": 0, "headline-glued": 0, "closer": 0, "review-artifact": 0,
                       "review-clean": 0}
    review_ids = {s["id"] for s, _ in reviews}
    for t in texts:
        if t.id not in cleaned or t.id in review_ids:
            continue
        text = cleaned[t.id]
        if t.label == "human":
            if source[t.id].split("/")[0] in DEV_DIRS:
                out.append(Example(t.id, text, source="human", domain=domain_of(t)))
                counts["human"] += 1
            continue
        if not training_half(t.id) or t.id not in groups:
            continue
        g = groups[t.id].sort_values("start")
        orig = by_id[t.id].text
        first = g.iloc[0]
        if int(first["start"]) == 0 and first["family"] == "beginning":
            head = headline(str(first["original"]))
            if head and text.strip():
                body = text.lstrip()
                for sep, src in (("\n\n", "headline"), (" ", "headline-glued"), ("", "headline-glued")):
                    out.append(Example(t.id, head + sep + body, head=(len(head),), source=src, domain=domain_of(t)))
                    counts[src] += 1
                continue
        last = g.iloc[-1]
        if int(last["end"]) >= len(orig.rstrip()) and last["family"] == "ending" and int(last["start"]) > 0:
            tail = orig[int(last["start"]): int(last["end"])].strip()
            if 0 < len(tail) <= 250 and text.strip():
                base = text.rstrip()
                out.append(Example(t.id, base + "\n\n" + tail, tail=(len(base) + 2,), source="closer",
                                   domain=domain_of(t)))
                counts["closer"] += 1
    for s, r in reviews:
        text = s["cleaned_text"]
        dom = domain_of(by_id[s["id"]]) if s["id"] in by_id else ""
        if not r.get("artifact"):
            if not r.get("borderline") and r.get("criteria", True):
                out.append(Example(s["id"], text, source="review-clean", domain=dom))
                counts["review-clean"] += 1
            continue
        span = (r.get("span") or "").strip()
        k = text.find(span) if span else -1
        if k < 0 or (r.get("kind") or "") not in HEAD_KINDS | {"closer", "ending"}:
            continue
        if not text[:k].strip():
            out.append(Example(s["id"], text, head=(k + len(span),), source="review-artifact", domain=dom))
            counts["review-artifact"] += 1
        elif not text[k + len(span):].strip():
            out.append(Example(s["id"], text, tail=(k,), source="review-artifact", domain=dom))
            counts["review-artifact"] += 1
    return out, counts


def gated(examples: list[Any], r: Any, oof: Any, pos: list[int], cut: float,
          shape: Callable[[str, Any], bool] | None = None) -> tuple[float | None, dict[str, Any]]:
    """The gated threshold and its figures: the highest out-of-fold score of a candidate with ``shape`` (default:
    a glued title's) in a text known to be clean (:data:`CLEAN_SOURCES`), plus the margin (None when fewer than
    :data:`MIN_GATE_TEXTS` such texts set it); and the positive texts it cuts out of fold that ``cut`` does not."""
    from zcp_core.artifacts.edges import candidates
    from zcp_core.artifacts.titles import glued_title

    shape = shape or glued_title
    clean = CLEAN_SOURCES
    flags = [shape(e.text, c) for e in examples for c in candidates(e.text, "head")]
    pos_set = set(pos)
    assert len(flags) == len(r.y)  # rows() walks the same candidates in the same order
    neg: dict[int, float] = {}
    for k, (ex, s) in enumerate(zip(r.example, oof)):
        if flags[k] and examples[ex].source in clean:
            neg[ex] = max(neg.get(ex, 0.0), float(s))
    by_source = {src: sum(1 for ex in neg if examples[ex].source == src) for src in clean}
    if len(neg) < MIN_GATE_TEXTS:
        return None, {"cut": None, "clean_texts_with_a_gated_candidate": by_source}
    at = float(min(0.999, max(neg.values()) + MARGIN))
    best: dict[int, float] = {}
    for ex, s in zip(r.example, oof):
        best[ex] = max(best.get(ex, 0.0), float(s))
    # as EdgeModel.decide picks: a text the cut above misses is cut at its best gated candidate that reaches `at`
    chosen: dict[int, tuple[float, bool]] = {}
    for k, (ex, s) in enumerate(zip(r.example, oof)):
        if ex in pos_set and flags[k] and s >= at and best[ex] < cut and s > chosen.get(ex, (-1.0, False))[0]:
            chosen[ex] = (float(s), bool(r.y[k]))
    caught = {ex for ex, (_, y) in chosen.items() if y}
    wrong = {ex for ex, (_, y) in chosen.items() if not y}
    top = sorted(neg.items(), key=lambda kv: -kv[1])[:TOP_HUMANS]
    return at, {"cut": at, "clean_texts_with_a_gated_candidate": by_source,
                "highest_clean": [(examples[ex].id, s, examples[ex].source) for ex, s in top],
                "positive_texts_cut_only_by_the_gate_oof": len(caught),
                "positive_texts_cut_elsewhere_by_the_gate_oof": len(wrong)}


def gate_reach(model: Any, llm: list[Any], humans: list[Any]) -> dict[str, int]:
    """What the gated cut adds on the texts as the patterns leave them: LLM-written texts it cuts that would
    otherwise be kept or sent to review, and development human texts it cuts (in sample)."""
    from zcp_core.artifacts.cleaner import domain_of
    from zcp_core.artifacts.titles import glued_title

    def gated_cuts(texts: list[str], domains: list[str]) -> list[float]:
        # the best ordinary score of each text the gate cuts
        best = [max((s for _, s in cs), default=0.0) for cs in model.score(texts, "head", domains)]
        return [b for b, ds in zip(best, model.decide(texts, domains, glued_title))
                if any(d.edge == "head" and d.action == "cut" for d in ds) and b < model.cut["head"]]

    cuts = gated_cuts([t.text for t in llm], [domain_of(t) for t in llm])
    return {"llm_texts": len(llm), "llm_cut_instead_of_kept": sum(b < model.review["head"] for b in cuts),
            "llm_cut_instead_of_review": sum(b >= model.review["head"] for b in cuts),
            "dev_human_texts": len(humans),
            "dev_human_texts_cut": len(gated_cuts([e.text for e in humans], [e.domain for e in humans]))}


def gate_lines(g: dict[str, Any] | None) -> list[str]:
    """The gated threshold's paragraph and its table of the clean texts that set it."""
    from zcp_core.artifacts.titles import GATE_ID

    if not g:
        return []
    n = g["clean_texts_with_a_gated_candidate"]
    if g["cut"] is None:
        return [f"No gated cut: fewer than {MIN_GATE_TEXTS} clean texts have a candidate shaped like a glued title "
                f"({n.get('human', 0)} development human, {n.get('review-clean', 0)} reviewed).", ""]
    reach = (f" On every LLM-written text the patterns keep ({g['llm_texts']}), it cuts "
             f"{g['llm_cut_instead_of_kept']} that would otherwise be kept and {g['llm_cut_instead_of_review']} that "
             f"would otherwise go to review; development human texts it cuts (in sample): {g['dev_human_texts_cut']} "
             f"of {g['dev_human_texts']}." if "llm_texts" in g else "")
    return [f"Gated cut (a head candidate shaped like a glued title, `{GATE_ID}`): {g['cut']:.3f}, the highest "
            f"out-of-fold score of such a candidate in {n.get('human', 0)} development human texts and "
            f"{n.get('review-clean', 0)} reviewed texts marked clean that have one, plus {MARGIN}. Out of fold it "
            f"cuts {g['positive_texts_cut_only_by_the_gate_oof']} positive texts at their known point that the "
            f"cut above does not, and cuts {g['positive_texts_cut_elsewhere_by_the_gate_oof']} elsewhere (a point "
            "other than the known one)." + reach, "",
            "| text id | source | out-of-fold score of its gated candidate |", "|---|---|---:|",
            *(f"| {i} | {src} | {s:.3f} |" for i, s, src in g["highest_clean"]), ""]


def main() -> int:
    """Build, set thresholds, fit, write the model and the results file."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "detectrl"))
    ap.add_argument("--model", default=str(ROOT / "zcp_core" / "artifacts" / "library" / "detectrl.edges.npz"))
    ap.add_argument("--results", default=str(ROOT / "benchmarks" / "results" / "edge_detector.md"))
    ap.add_argument("--training-out", type=Path, default=TRAINING,
                    help="where the list of the LLM-written texts the detector learned from is written")
    ap.add_argument("--training-only", action="store_true",
                    help="only list the texts the bundled model learned from (--training-out); build nothing")
    ap.add_argument("--skip-review", action="append", default=[], type=Path, metavar="REVIEW",
                    help="a review file left out of training (repeatable): rebuilds a detector frozen before it")
    args = ap.parse_args()
    data = Path(args.data)
    if not data.exists():
        print(f"{data} is absent: the detector is built from DetectRL's test splits", file=sys.stderr)
        return 1
    from dataclasses import replace

    import numpy as np
    from clean_residual_sample import load_all

    from zcp_core.artifacts import clean, load_library
    from zcp_core.artifacts.cleaner import domain_of
    from zcp_core.artifacts.edges import DEFAULT_MODEL, EDGES, save_model
    from zcp_core.artifacts.edges_train import build_model, oof_scores, per_example_max, rows
    from zcp_core.artifacts.titles import GATE_ID

    lib = load_library()
    texts, source = load_all(data)
    result = clean(texts, lib)  # patterns only: the detector learns what they leave
    reviews = reviewed(ROOT / "benchmarks" / "results", tuple(args.skip_review))
    examples, counts = examples_from(result, texts, source, reviews)
    print(json.dumps(counts), flush=True)
    if args.training_only:
        return list_training(args.model, args.training_out, examples, counts)
    human = [i for i, e in enumerate(examples) if e.source == "human"]
    cut, review, humans, tops, gate_cut = {}, {}, {}, {}, {}
    figures: dict[str, dict[str, Any]] = {}
    for edge in EDGES:
        r = rows(examples, edge)
        oof = oof_scores(r)
        best = per_example_max(r, oof, len(examples))
        hum = humans[edge] = np.array([best[i] for i in human])
        # the development human texts that set the cut (reported, kept out of the model file)
        tops[edge] = [(examples[i].id, float(best[i]), examples[i].text[:60]) for i in
                      sorted(human, key=lambda i: -best[i])[:TOP_HUMANS]]
        pos = [i for i, e in enumerate(examples) if (e.head if edge == "head" else e.tail)]
        cut[edge] = float(min(0.999, hum.max() + MARGIN)) if len(pos) >= MIN_POSITIVES else OFF
        review[edge] = float(min(cut[edge], np.quantile(hum, 1 - REVIEW_SHARE))) if len(pos) >= MIN_POSITIVES else OFF
        # recall: the example's best candidate is a known point and reaches the threshold
        hit = {k for k, (y, s) in enumerate(zip(r.y, oof)) if y}
        pos_best = {}
        for k, (ex, s) in enumerate(zip(r.example, oof)):
            if ex in pos and (ex not in pos_best or s > pos_best[ex][1]):
                pos_best[ex] = (k, s)
        caught = sum(1 for ex, (k, s) in pos_best.items() if k in hit and s >= cut[edge])
        flagged = sum(1 for ex, (k, s) in pos_best.items() if s >= review[edge])
        figures[edge] = {"rows": len(r.y), "positives": int(r.y.sum()), "positive_examples": len(pos),
                         "human_examples": len(human), "human_max_oof": float(hum.max()),
                         "human_at_review": int((hum >= review[edge]).sum()), "cut": cut[edge],
                         "review": review[edge], "oof_cut_at_the_known_point": caught,
                         "oof_cut_or_review": flagged}
        if edge == "head" and len(pos) >= MIN_POSITIVES:
            at, figures[edge]["gate"] = gated(examples, r, oof, pos, cut[edge])
            if at is not None:
                gate_cut[edge] = at
        print(edge, json.dumps(figures[edge]), flush=True)
    files = sorted(data.glob("*/*.json"))
    meta = {"built_by": "benchmarks/edge_detector.py", "library": f"{lib.version} (sha256 {lib.sha256[:12]})",
            "data": {str(f.relative_to(data)): hashlib.sha256(f.read_bytes()).hexdigest()[:12] for f in files},
            "examples": counts, "figures": figures, "margin": MARGIN, "review_share": REVIEW_SHARE,
            "training_half": "LLM-written texts whose id's sha256 is even", "gate": GATE_ID}
    model = build_model(examples, cut, review, NAME, VERSION, meta)
    # the review cap: scored on every LLM-written text as the patterns leave it
    llm = [t for t in result.texts if t.label == "llm"]
    n_llm = sum(t.label == "llm" for t in texts)
    llm_ids = {t.id for t in texts if t.label == "llm"}
    held = sum(1 for i in result.dropped.loc[result.dropped["kind"] == "held_back", "id"] if i in llm_ids)
    review_cap = max(0.0, SIDE_TARGET - held / n_llm - SIDE_MARGIN)
    for edge in EDGES:
        if cut[edge] >= OFF:
            continue
        best = np.array([max((s for _, s in cs), default=0.0) for cs in
                         model.score([t.text for t in llm], edge, [domain_of(t) for t in llm])])
        at_cut = float((best >= cut[edge]).mean())
        # shares of the texts the patterns keep, scaled to every LLM-written text
        capped = float(np.quantile(best, 1 - min(1.0, at_cut + review_cap * n_llm / len(llm))))
        review[edge] = float(min(cut[edge], max(review[edge], capped)))
        figures[edge].update(review=review[edge], llm_cut_share=at_cut,
                             human_at_review=int((humans[edge] >= review[edge]).sum()),
                             llm_review_share=float(((best >= review[edge]) & (best < cut[edge])).mean()))
    model = replace(model, review=review, meta={**meta, "figures": figures}, gate_cut=gate_cut)
    if gate_cut:
        figures["head"]["gate"].update(gate_reach(model, llm, [examples[i] for i in human]))
        model = replace(model, meta={**meta, "figures": figures})
    save_model(model, args.model)
    if args.training_out != TRAINING or Path(args.model).resolve() == DEFAULT_MODEL.resolve():
        write_training(args.training_out, examples, args.model)  # the bundled list names the bundled model only
    lines = [header(f"edge_detector: the learned edge detector {NAME}-{VERSION}, how it was built and set",
                    f"pattern library {lib.version} (sha256 {lib.sha256[:12]}); DetectRL test splits "
                    "(github.com/NLP2CT/DetectRL 3472f0ae3cc8)"), "",
             "Training examples (see the script's docstring): "
             + ", ".join(f"{k} {v}" for k, v in counts.items()) + ".", "",
             "| edge | candidate rows | positive rows | positive texts | cut at | review at | development human "
             "texts | their highest out-of-fold score | of them at or above review | positive texts cut at the "
             "known point (out of fold) | positive texts cut or sent to review (out of fold) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for edge, f in figures.items():
        lines.append(f"| {edge} | {f['rows']} | {f['positives']} | {f['positive_examples']} | {f['cut']:.3f} | "
                     f"{f['review']:.3f} | {f['human_examples']} | {f['human_max_oof']:.3f} | "
                     f"{f['human_at_review']} | {f['oof_cut_at_the_known_point']} | {f['oof_cut_or_review']} |")
    lines += ["", f"Thresholds: cut = the highest out-of-fold score of a development human text + {MARGIN}; review = "
              f"the score {REVIEW_SHARE:.1%} of development human texts reach, raised where needed so that at most "
              f"{SIDE_TARGET:.0%} of the LLM-written texts are held back or go to review together, less a margin of "
              f"{SIDE_MARGIN:.1%} (held back by the patterns: {held} of {n_llm}; review cap {review_cap:.2%}). "
              f"An edge with fewer than {MIN_POSITIVES} "
              "positive texts decides nothing (both thresholds above 1). The held-out human texts are measured "
              "once, in `clean_residual.md`.", "",
              *(f"- {edge}: {f.get('llm_cut_share', 0):.2%} of the LLM-written texts reach the cut, "
                f"{f.get('llm_review_share', 0):.2%} go to review." for edge, f in figures.items()), "",
              *gate_lines(figures.get("head", {}).get("gate")),
              f"The {TOP_HUMANS} development human texts with the highest out-of-fold scores; the highest sets the "
              "cut (DetectRL has no licence: ids and their first words only):", "",
              "| edge | text id | out-of-fold score | opening |", "|---|---|---:|---|",
              *(f"| {edge} | {i} | {s:.3f} | {json.dumps(t.replace('|', '/'), ensure_ascii=False)} |"
                for edge, rows_ in tops.items() if cut[edge] < OFF for i, s, t in rows_), "",
              f"Model file: `{rel(Path(args.model))}`.", ""]
    Path(args.results).write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
