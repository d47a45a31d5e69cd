"""A seeded sample of cleaned DetectRL LLM texts for an independent residual-artifact review.

Cleans every DetectRL test split (distinct texts) with the bundled pattern
library, draws exactly ``--n`` (320) cleaned LLM-written texts with a fixed
seed, and writes one JSON row per text: ``sample_id``, ``id``,
``source_file``, ``llm_type``, ``cleaned_text`` and ``edits`` (what was
removed, by which pattern and why). The first line is a header object
(command, commit, date, versions), not a sample row. It also prints a regex
sweep of residual artifacts over all cleaned LLM texts: a re-scan with the
library's high-precision families, and an independent list of residue
regexes (:data:`SWEEP`, written apart from the library, as a user would).

DetectRL ships no licence: the sample is a small attributed excerpt for review
inside this project (github.com/NLP2CT/DetectRL 3472f0ae3cc8).

Usage: .venv/bin/python benchmarks/clean_residual_sample.py [--data ../shared/data/detectrl] [--n 320] [--seed 39]
       [--exclude earlier_sample.jsonl] [--out benchmarks/results/clean_residual_sample.jsonl] [--overwrite]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]  # this checkout's zcp_core, not an installed one
from _provenance import command_line, git_commit  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "clean_residual_sample.jsonl"
# Residue a reader spots at a cleaned text's start (first 300 characters) or anywhere; independent of the library.
SWEEP = {
    "opener": r"\A\W{0,5}(?:[a-z]{2,12},? )?(?:here is|here's|here are)\b[^.!?\n]{0,120}:",
    "acknowledgement": r"\A\W{0,5}(?:sure|srue|suer|okay|certainly|of course|absolutely)\b[^.!?\n]{0,80}\bhere",
    "leading_tag": r"\A\W{0,5}\[[^\]\n]{1,20}\]",
    "label": r"\A\W{0,5}\**\s*(?:abstract|abstact|title|headline|continued review|continue review|polished \w+)"
             r"\s*\**\s*:|\A\W{0,5}\*\*\s*(?:abstract|title)\s*\*\*",
    "task_echo": r"\A[^.!?\n]{0,150}\b(?:first sentence|based on the (?:given|provided)|you requested|as requested"
                 r"|according to your)\b",
    "length_echo": r"\A[^.!?\n]{0,150}\b\d+[- ]?sentences?\b[^.!?\n]{0,80}:",
    "role_tag": r"\[(?:system|assistant|user)\]|\*\*assistant\*\*|(?:\A|\s)- is the \w+\.",
    "disclaimer": r"\bas an AI\b|\blanguage model\b",
    "closing": r"\bI hope (?:this|these|that)\b[^.!?]{0,40}\b(?:helps|meets|captures)\b",
}
_SWEEP = {k: re.compile(v, re.IGNORECASE) for k, v in SWEEP.items()}


def sweep_hits(text: str) -> list[str]:
    """The :data:`SWEEP` residue kinds a text shows (start kinds on its first 300 characters)."""
    head = text[:300]
    return [k for k, rx in _SWEEP.items() if rx.search(head if rx.pattern.startswith(r"\A") else text)]


def load_all(data: Path) -> tuple[list[Any], dict[str, str]]:
    """Distinct texts of every DetectRL test split, and each id's source file (relative to ``data``)."""
    from zcp_core.artifacts import dedupe_texts
    from zcp_core.data import load_texts

    files = sorted(data.glob("*/*.json"))
    source: dict[str, str] = {}
    for f in files:
        for t in load_texts([f]):
            source.setdefault(t.id, str(f.relative_to(data)))
    texts, _ = dedupe_texts(load_texts(files))
    return list(texts), source


def edit_summary(edits: Any) -> list[dict[str, Any]]:
    """Applied edits of one text, in order: pattern, family, action, re-scan pass, removed text."""
    rows = edits[edits["applied"]].sort_values("start")
    out = []
    for e in rows.itertuples():
        m = re.search(r":r(\d+)$", str(e.edit_id))
        out.append({"pattern_id": e.pattern_id, "family": e.family, "action": e.action,
                    "pass": int(m.group(1)) if m else 0, "start": int(e.start), "removed": e.original})
    return out


def residual_counts(texts: Sequence[Any], lib: Any) -> dict[str, Any]:
    """Cleaned LLM texts still matching a high-precision family (re-scan) and the :data:`SWEEP` kinds."""
    from zcp_core.artifacts import HIGH_PRECISION, scan

    m = scan(texts, lib)
    hp = m[m["family"].isin(HIGH_PRECISION) & (m["action"] != "flag")]
    review = m[m["family"].isin(HIGH_PRECISION) & (m["action"] == "flag")]
    kinds: dict[str, int] = {}
    any_hit = 0
    for t in texts:
        hits = sweep_hits(t.text)
        any_hit += bool(hits)
        for k in hits:
            kinds[k] = kinds.get(k, 0) + 1
    return {"texts": len(texts), "rescan_high_precision": int(hp["id"].nunique()),
            "flagged_for_review": int(review["id"].nunique()), "sweep_any": any_hit,
            "sweep_by_kind": dict(sorted(kinds.items()))}


def heldout_humans(texts: Sequence[Any], source: dict[str, str], result: Any) -> dict[str, int]:
    """The held-out human texts (Multi_LLM, disjoint from the development splits) and what the cleaning did to
    them: edited (by a pattern or the edge detector), held back or dropped, sent to review."""
    from zcp_core.artifacts.heldout import hold_out

    dev = [t for t in texts if source[t.id].split("/")[0] in ("Multi_Domain", "Direct_Prompt")]
    held = {t.id for t in hold_out([t for t in texts if source[t.id].split("/")[0] == "Multi_LLM"], dev).kept
            if t.label == "human"}
    edited = set(result.edits.loc[result.edits["applied"], "id"])
    dropped = set(result.dropped["id"])
    review = set(result.flags.loc[result.flags["kind"].str.startswith("edges_review"), "id"])
    return {"texts": len(held), "edited": len(held & (edited - dropped)), "held_back_or_dropped": len(held & dropped),
            "in_review": len(held & review)}


def excluded_ids(files: Sequence[str]) -> set[str]:
    """Text ids of earlier sample files (their header lines skipped), to keep a fresh sample disjoint."""
    out: set[str] = set()
    for f in files:
        for line in Path(f).read_text().splitlines():
            row = json.loads(line) if line.strip() else {}
            if "id" in row and not row.get("header"):
                out.add(str(row["id"]))
    return out


def main() -> int:
    """Clean, sample, write the JSONL and print the residual sweep."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "detectrl"))
    ap.add_argument("--n", type=int, default=320)
    ap.add_argument("--seed", type=int, default=39)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--exclude", action="append", default=[],
                    help="a sample file (JSONL) whose ids are left out of the draw (repeatable)")
    ap.add_argument("--edges", default="none",
                    help="the edge detector the cleaning runs (as `zcp clean --edges`: auto, none or a model file); "
                         "with it on, the LLM texts the detector learned from "
                         "(benchmarks/results/edge_detector_training.jsonl) are left out of the draw")
    ap.add_argument("--training", choices=["learned", "half"], default="learned",
                    help="with --edges on, which LLM texts of the detector's training are left out of the draw: "
                         "'learned' (default) the ones it learned from, 'half' its whole training half (how rounds "
                         "9 to 14 were drawn, to draw one of them again)")
    ap.add_argument("--overwrite", action="store_true",
                    help="replace an existing --out file (a sample a review may already mark)")
    args = ap.parse_args()
    if Path(args.out).exists() and not args.overwrite:
        ap.error(f"--out: {args.out} exists (a review may mark it); pass --overwrite to replace it")
    data = Path(args.data)
    if not data.exists():
        print(f"{data} is absent; nothing to sample", file=sys.stderr)
        return 1
    import datetime as _dt

    from zcp_core.artifacts import CleanConfig, clean, load_library
    from zcp_core.artifacts.edges_apply import edges_label

    lib = load_library()
    texts, source = load_all(data)
    result = clean(texts, lib, config=CleanConfig(edges=args.edges))  # held-back texts are dropped, as in a release
    llm = sorted((t for t in result.texts if t.label == "llm"), key=lambda t: t.id)
    excluded = excluded_ids(args.exclude)
    training: set[str] = set()
    if args.edges != "none":
        from edge_detector import TRAINING, training_half, training_ids

        from zcp_core.artifacts.edges import DEFAULT_MODEL

        model_path = DEFAULT_MODEL if args.edges == "auto" else Path(args.edges)
        training = ({t.id for t in llm if training_half(t.id)} if args.training == "half"
                    else training_ids(TRAINING, model_path) & {t.id for t in llm})
    pool = [t for t in llm if t.id not in excluded and t.id not in training]
    in_review = set(result.flags.loc[result.flags["kind"].str.startswith("edges_review"), "id"])
    drawn = random.Random(args.seed).sample(pool, args.n)
    by_id = dict(tuple(result.edits.groupby("id")))
    header = {"header": True, "command": command_line(), "commit": git_commit(),
              "date": _dt.datetime.now(_dt.timezone.utc).date().isoformat(),
              "versions": f"pattern library {lib.version} (sha256 {lib.sha256[:12]}); data DetectRL test splits "
                          "(github.com/NLP2CT/DetectRL 3472f0ae3cc8), no licence: an attributed review sample",
              "population": f"{len(llm)} cleaned LLM texts (distinct, dropped ones excluded) of {len(texts)}",
              "sample": f"{args.n} drawn with random.Random({args.seed}).sample over ids in sorted order"
                        + (f", {len(excluded & {t.id for t in llm})} ids of {', '.join(args.exclude)} excluded first"
                           if excluded else "")
                        + ((f", and the edge detector's training half ({len(training)} ids) left out"
                            if args.training == "half" else
                            f", and the {len(training)} texts the edge detector learned from "
                            "(benchmarks/results/edge_detector_training.jsonl) left out") if training else ""),
              "llm_texts": sum(t.label == "llm" for t in texts), "edges": args.edges, "edges_model": edges_label(args.edges), "pool": len(pool),
              "held_back_llm": int(sum(1 for i in result.dropped.loc[result.dropped["kind"] == "held_back", "id"]
                                       if i in {t.id for t in texts if t.label == "llm"})),
              "in_review_llm": len(in_review & {t.id for t in llm}),
              "heldout_human": heldout_humans(texts, source, result),
              "residuals": residual_counts(llm, lib)}
    rows = [json.dumps(header, ensure_ascii=False)]
    for i, t in enumerate(drawn, 1):
        edits = by_id.get(t.id)
        rows.append(json.dumps({"sample_id": f"s{i:03d}", "id": t.id, "source_file": source[t.id],
                                "llm_type": t.llm_type, "data_type": t.data_type, "cleaned_text": t.text,
                                "status": "in review (the edge detector was unsure)" if t.id in in_review else "released",
                                "edits": edit_summary(edits) if edits is not None else []}, ensure_ascii=False))
    Path(args.out).write_text("\n".join(rows) + "\n")
    print(json.dumps(header["residuals"], indent=1))
    print(f"wrote {args.n} rows (+1 header line) to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
