"""Could holding back the texts the edge detector finds riskiest close the residual gap?

A text held back is left out of a release, so it counts as clean; the issue's cap is 2% of the LLM texts held
back or in review together. This script asks how far that lever reaches. Each text's *risk* is the edge
detector's best score over every head and tail candidate (``zcp_core/artifacts/edges.py``). Three figures per
threshold, each against independent truth:

* reviewed rounds: on the cleaned texts of each reviewed round named (as the reviewers saw them), how many of the
  texts they marked with an artifact score at or above it, and the residual share among the texts that would
  stay in the release; the rounds must be ones the detector never learned from (checked against
  ``benchmarks/results/edge_detector_training.jsonl``), so these are out-of-sample scores;
* the population: the share of all kept LLM texts, cleaned as a release cleans them now, at or above it (what
  holding them back would cost against the 2% cap, on top of what is held back and in review already);
* human texts: how many of the 1,528 held-out human texts (Multi_LLM, disjoint from development) score at or
  above it, as the measure; the 4,507 development human texts are the detector's training negatives, so their
  count is in-sample and only listed.

DetectRL has no licence: the data is read from ``../shared/data/detectrl``.

    .venv/bin/python benchmarks/residual_holdback.py --round round13 --round round14 --round round15
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]
from _provenance import header  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
THRESHOLDS = (0.99, 0.95, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3)


def risks(model: Any, texts: Sequence[str], domains: Sequence[str]) -> list[float]:
    """Each text's best candidate score over both edges (0 for a text with no candidate)."""
    head, tail = model.score(texts, "head", domains), model.score(texts, "tail", domains)
    return [max([s for _, s in h] + [s for _, s in t] + [0.0]) for h, t in zip(head, tail)]


def reviewed(name: str) -> list[dict[str, Any]]:
    """A round's sampled texts with the first reading's mark (``artifact``)."""
    rows = (RESULTS / f"clean_residual_{name}_sample.jsonl").read_text(encoding="utf-8").splitlines()
    marks = {r["sample_id"]: bool(r["artifact"]) for r in
             map(json.loads, (RESULTS / f"clean_residual_{name}_review.jsonl").read_text(encoding="utf-8").splitlines())}
    return [{**s, "artifact": marks[s["sample_id"]]} for s in map(json.loads, rows[1:])]


def best_case(share: float, room: float) -> float:
    """The residual share left were a hold-back to take only texts with an artifact: ``room`` of the kept texts
    taken from a population whose share with an artifact is ``share``. No ranking can do better."""
    take = min(room, share)
    return (share - take) / (1 - take)


def main() -> int:
    """Score, count and write the table."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "detectrl")
    ap.add_argument("--round", action="append", default=[], required=True,
                    help="a reviewed round the detector never learned from (e.g. round15; repeatable)")
    ap.add_argument("--out", type=Path, default=RESULTS / "residual_holdback.md")
    args = ap.parse_args()
    if not args.data.exists():
        print(f"{args.data} is absent; nothing to measure", file=sys.stderr)
        return 1
    for name in args.round:
        if not (RESULTS / f"clean_residual_{name}_review.jsonl").exists():
            ap.error(f"--round: no reviewed round {name!r} in {RESULTS}")
    from clean_residual_sample import load_all
    from edge_detector import SIDE_TARGET, TRAINING, training_ids

    from zcp_core.artifacts import CleanConfig, clean, load_library
    from zcp_core.artifacts.cleaner import domain_of
    from zcp_core.artifacts.edges import DEFAULT_MODEL, load_model
    from zcp_core.artifacts.heldout import hold_out

    model, learned = load_model(DEFAULT_MODEL), training_ids(TRAINING, DEFAULT_MODEL)
    texts, source = load_all(args.data)
    by_id = {t.id: t for t in texts}
    rows = [r for name in args.round for r in reviewed(name)]
    if seen := sorted({r["id"] for r in rows} & learned):
        ap.error(f"--round: {seen[0]} (and {len(seen) - 1} more) taught the detector; its score is in-sample")
    r_risk = risks(model, [r["cleaned_text"] for r in rows], [domain_of(by_id[r["id"]]) for r in rows])
    result = clean(texts, load_library(), config=CleanConfig(edges="auto"))
    llm = [t for t in result.texts if t.label == "llm"]
    p_risk = risks(model, [t.text for t in llm], [domain_of(t) for t in llm])
    dev = [t for t in texts if source[t.id].split("/")[0] in ("Multi_Domain", "Direct_Prompt")]
    held = {t.id for t in hold_out([t for t in texts if source[t.id].split("/")[0] == "Multi_LLM"], dev).kept
            if t.label == "human"}
    humans = [t for t in result.texts if t.label == "human"]
    h_risk = dict(zip((t.id for t in humans), risks(model, [t.text for t in humans], [domain_of(t) for t in humans])))
    dev_h = [s for i, s in h_risk.items() if source[i].split("/")[0] != "Multi_LLM"]
    held_h = [h_risk[i] for i in held]
    k = sum(r["artifact"] for r in rows)
    llm_ids = {t.id for t in texts if t.label == "llm"}
    n_llm = max(1, len(llm_ids))
    now = len(set(result.dropped.loc[result.dropped["kind"] == "held_back", "id"]) & llm_ids) / n_llm
    lines = [header("residual_holdback: holding back the riskiest texts",
                    f"edge detector {model.name}-{model.version}; rounds {', '.join(args.round)}; DetectRL test "
                    "splits (github.com/NLP2CT/DetectRL 3472f0ae3cc8)"), "",
             f"Reviewed texts: {len(rows)} (rounds {', '.join(args.round)}, none of them in the detector's "
             f"training), {k} marked with an artifact ({k / len(rows):.2%}). Population: {len(llm):,} kept LLM "
             f"texts. Held-out human texts: {len(held_h):,}.", "",
             "| risk at or above | residual texts it would hold back | residual among the texts left | "
             "kept LLM texts it would hold back | held-out human texts at or above | development human texts "
             "(in-sample) |", "|---|---|---|---|---|---|"]
    for thr in THRESHOLDS:
        hit = [r["artifact"] for r, s in zip(rows, r_risk) if s >= thr]
        left = [r["artifact"] for r, s in zip(rows, r_risk) if s < thr]
        lines.append(f"| {thr} | {sum(hit)} of {k} | {sum(left)} of {len(left)} ({sum(left) / len(left):.2%}) | "
                     f"{sum(s >= thr for s in p_risk) / len(p_risk):.2%} | {sum(s >= thr for s in held_h)} of "
                     f"{len(held_h):,} | {sum(s >= thr for s in dev_h)} of {len(dev_h):,} |")
    review = len(set(result.flags.loc[result.flags["kind"].str.startswith("edges_review"), "id"])
                 & {t.id for t in llm})
    room = max(0.0, SIDE_TARGET - now - review / n_llm)
    lines += ["", f"Held back already (texts that cutting cannot repair): {now:.2%} of the LLM texts, and in review "
              f"{review / n_llm:.2%}; the cap on the two together is {SIDE_TARGET:.0%}, so {room:.2%} is left for a hold-back by "
              "risk.", "",
              f"A perfect ranking, holding back only texts with an artifact up to the cap, would take "
              f"{room * n_llm / len(llm):.2%} of the kept texts and leave "
              f"{best_case(k / len(rows), room * n_llm / len(llm)):.2%} at the reviewed share ({k / len(rows):.2%}): "
              "a hold-back alone cannot bring the residual much below that; the rest must be cut.", ""]
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
