"""Does a small language model see where a title ends? A feasibility study for the edge detector.

The residual reviews keep finding titles and headlines joined to the body by a space ("…Hall of Fame Snub Ian
Woosnam led Europe…"), which the learned edge detector, reading a segment's shape and words, scores far below
its cut. A language model reads grammar: after a complete title it expects a line break, in the middle of a
phrase it does not. This script measures that signal on the reviewed rounds, against the shipped detector on the
same texts, before anyone builds on it.

For each text, every head candidate of the edge detector (a space or a glue before a capital, in the first
:data:`MAX_AT` characters) gets the embedded model's (SmolLM2-135M-Instruct) probability that a line break comes
next, from one teacher-forced pass over the text's opening, and the shipped detector's score. Then:

* *titles*: the texts a review under the written criteria (round 6 on) marked with a ``format`` artifact that
  opens the text and is joined to the body by a space or a glue; the title's end is the point a cut should take;
* *clean openings*: the texts those reviews marked clean, and the 1,528 held-out human texts (Multi_LLM,
  disjoint from development), which no model here learned from.

The detector learned from the reviews before round 13 (its scores on them are in-sample, so they are not
compared) and from the development human texts; rounds 13 and 14 and the held-out human texts it never saw. So
the comparison is made there: how often the title's end is the text's best candidate, and how many titles reach a
threshold set just above every clean opening (the detector's own cut too). The language model learned from none
of these, so it is also scored on every round's titles; the rules and the detector were written after reading
the rounds, the model was not. DetectRL has no licence: the data is read from ``../shared/data/detectrl``.

    .venv/bin/python benchmarks/title_boundary_lm.py
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]
from _provenance import header  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
MAX_AT = 220
ROUNDS = ("round6", "round7", "round8", "round9", "round10", "round11", "dev12", "round12", "round13", "round14")
UNSEEN = ("round13", "round14")  # rounds the shipped detector did not learn from


def reviewed_texts() -> tuple[list[tuple[str, str, int]], list[tuple[str, str]]]:
    """(round, text, title end) of the reviewed titles joined to the body at a candidate; (round, text) of the
    reviewed clean texts."""
    from edge_holdout import sample_rows

    titles, clean = [], []
    for name in ROUNDS:
        review = {r["sample_id"]: r for r in
                  map(json.loads, (RESULTS / f"clean_residual_{name}_review.jsonl").read_text().splitlines())}
        for s in sample_rows(f"{name}_"):
            r, text = review[s["sample_id"]], s["cleaned_text"]
            if not r["artifact"]:
                clean.append((name, text))
                continue
            span = str(r.get("span") or "").strip()
            if r.get("kind") != "format" or not span or not text.lstrip().startswith(span):
                continue
            end = text.index(span) + len(span)
            at = set(points(text))
            point = next((p for p in (end, end + 1) if p in at), None)  # the span may leave its space out
            if point is not None:
                titles.append((name, text, point))
    return titles, clean


def points(text: str) -> list[int]:
    """The head candidates both signals score: a space or a glue before a capital, in the first :data:`MAX_AT`
    characters."""
    from zcp_core.artifacts.edges import candidates

    return [c.at for c in candidates(text, "head") if c.kind in ("space", "glue") and c.at <= MAX_AT]


def lm_scores(texts: list[str]) -> list[dict[int, float]]:
    """Per text, each head candidate's log probability of a line break next (from the text's opening)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from zcp_core.backends import ensure_converted

    path = ensure_converted()
    tok = AutoTokenizer.from_pretrained(path)
    tok.pad_token = tok.pad_token or tok.eos_token  # right padding: a causal model's earlier logits are unchanged
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    newline = [i for t, i in tok.get_vocab().items() if t.startswith("Ċ")]  # tokens that open with a line break
    out: list[dict[int, float]] = []
    for k in range(0, len(texts), 16):
        batch = [t[: MAX_AT + 40] for t in texts[k: k + 16]]
        enc = tok(batch, return_tensors="pt", padding=True, return_offsets_mapping=True)
        offsets = enc.pop("offset_mapping")
        with torch.no_grad():
            logp = torch.log_softmax(model(**enc).logits, dim=-1)[..., newline].logsumexp(-1)
        for b in range(len(batch)):
            starts = {int(s): j for j, (s, e) in enumerate(offsets[b].tolist()) if e > s}
            scores = {}
            for at in points(texts[k + b]):
                # the token the body opens with starts at the candidate (" Ian"), or just after its space
                j = starts.get(at, starts.get(at + 1) if texts[k + b][at: at + 1] == " " else None)
                if j is not None and j > 0:
                    scores[at] = float(logp[b, j - 1])  # the prediction made before that token
            out.append(scores)
    return out


def detector_scores(texts: list[str]) -> list[dict[int, float]]:
    """Per text, the shipped detector's score of each of the candidates the LM scores (:func:`points`; no domain,
    as the reviews' texts carry none in their ids for every file)."""
    from zcp_core.artifacts.edges import load_model

    out = []
    for text, scored in zip(texts, load_model().score(texts, "head")):
        keep = set(points(text))
        out.append({c.at: s for c, s in scored if c.at in keep})
    return out


def summary(name: str, which: str, titles: list[tuple[Any, Any, int]], tscores: list[dict[int, float]],
            negatives: list[dict[int, float]], threshold: float | None = None) -> str:
    """One table row: top-1 rate, the threshold (just above every negative's best candidate unless given), and
    titles whose end is their best candidate and reaches it."""
    def best(sc: dict[int, float]) -> int:
        return max(sc, key=lambda a: (sc[a], -a))

    top1 = sum(1 for (_, _, p), sc in zip(titles, tscores) if sc and best(sc) == p)
    bar = threshold if threshold is not None else max(max(sc.values()) for sc in negatives if sc) + 1e-9
    hit = sum(1 for (_, _, p), sc in zip(titles, tscores) if sc and best(sc) == p and sc[p] >= bar)
    n = len(titles)
    return f"| {name} | {which} ({n}) | {top1} ({top1 / max(n, 1):.0%}) | {bar:.3g} | **{hit} of {n}** |"


def main() -> int:
    """Collect, score, write the results file."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "detectrl"))
    ap.add_argument("--out", default=str(RESULTS / "title_boundary_lm.md"))
    args = ap.parse_args()
    if not Path(args.data).exists():
        print(f"{args.data} is absent: the study reads DetectRL's test splits", file=sys.stderr)
        return 1
    from clean_residual_sample import load_all

    from zcp_core.artifacts.edges import load_model
    from zcp_core.artifacts.heldout import hold_out

    titles, clean = reviewed_texts()
    clean = [c for c in clean if c[0] in UNSEEN]
    texts, source = load_all(Path(args.data))
    dev = [t for t in texts if source[t.id].split("/")[0] in ("Multi_Domain", "Direct_Prompt")]
    humans = sorted(t.text for t in hold_out([t for t in texts if source[t.id].split("/")[0] == "Multi_LLM"],
                                             dev).kept if t.label == "human")
    every = [t for _, t, _ in titles] + [t for _, t in clean] + humans
    start = time.perf_counter()
    lm = lm_scores(every)
    lm_s = time.perf_counter() - start
    start = time.perf_counter()
    det = detector_scores(every)
    det_s = time.perf_counter() - start
    n_t = len(titles)
    unseen = [k for k, (name, _, _) in enumerate(titles) if name in UNSEEN]
    pick = [titles[k] for k in unseen]
    model = load_model()
    lines = [header("title_boundary_lm: does a small language model see where a title ends?",
                    f"SmolLM2-135M-Instruct (embedded, fp32, CPU); edge detector {model.name}-{model.version}; "
                    "DetectRL test splits (github.com/NLP2CT/DetectRL 3472f0ae3cc8)"), "",
             f"Titles joined to the body at a head candidate, in the reviewed rounds {', '.join(ROUNDS)}: {n_t}, "
             f"{len(pick)} of them in rounds {' and '.join(UNSEEN)}, which the detector never saw. Clean openings: "
             f"the {len(clean)} texts those two rounds marked clean and the {len(humans)} held-out human texts.", "",
             "| signal | titles | title end is the best candidate | threshold | titles cut at their end, "
             "threshold above every clean opening |", "|---|---|---|---|---|",
             summary("LM: log P(line break next)", f"rounds {' and '.join(UNSEEN)}", pick,
                     [lm[k] for k in unseen], lm[n_t:]),
             summary("shipped detector, just above every clean opening", f"rounds {' and '.join(UNSEEN)}", pick,
                     [det[k] for k in unseen], det[n_t:]),
             summary("shipped detector, its own cut", f"rounds {' and '.join(UNSEEN)}", pick,
                     [det[k] for k in unseen], det[n_t:], model.cut["head"]),
             summary("LM: log P(line break next)", "every round", titles, lm[:n_t], lm[n_t:]), "",
             f"Scoring time on this machine, same run: LM {lm_s:.0f} s, detector {det_s:.1f} s, for "
             f"{len(every)} texts (ratio {lm_s / max(det_s, 1e-9):.0f}x).", ""]
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
