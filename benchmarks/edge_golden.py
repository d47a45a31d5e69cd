"""Write the edge detector's golden decisions on 50 fixed texts (tests/data/edges_golden.jsonl).

The texts are the bundled DetectRL sample (data/detectrl_sample, attributed there) as the patterns leave them:
every one the model cuts or sends to review, then texts it keeps, in id order, up to 50; and a few written here
(a glued headline, a human-like opening) so each decision kind is covered. Rerun after every rebuild of the
model; the test fails on any other decision or a score that moved by more than 1e-3.

    .venv/bin/python benchmarks/edge_golden.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]
OUT = ROOT / "tests" / "data" / "edges_golden.jsonl"
WRITTEN = (
    ("written", "document", "Council Approves New Budget After Long Debate The council approved its budget on Monday "
                            "after a six-hour meeting. Critics said the plan was rushed."),
    ("written", "document", "Rail Strike Called Off at Last MinuteUnions called off the strike on Sunday night."),
    ("written", "story", "Day 1: The ship left port at dawn. Nobody on board knew where it was going."),
    ("written", "abstract", "We study the stability of thin films under shear. We find two regimes."),
)


def main() -> int:
    """Clean the sample with the patterns, decide, pick 50, write."""
    from zcp_core.artifacts import clean, dedupe_texts, load_library
    from zcp_core.artifacts.cleaner import domain_of
    from zcp_core.artifacts.edges import load_model
    from zcp_core.artifacts.edges_apply import gate_for
    from zcp_core.data import load_texts

    texts, _ = dedupe_texts(load_texts(sorted((ROOT / "data" / "detectrl_sample").glob("*.json"))))
    cleaned = sorted(clean(texts, load_library()).texts, key=lambda t: t.id)
    model = load_model()
    rows = [(t.id, domain_of(t), t.text) for t in cleaned] + [(f"written-{i}", d, x) for i, (_, d, x) in
                                                              enumerate(WRITTEN)]
    found = model.decide([x for _, _, x in rows], [d for _, d, _ in rows], gate_for(model))
    acted = [k for k, ds in enumerate(found) if ds]
    written = [k for k in range(len(cleaned), len(rows))]
    kept = [k for k, ds in enumerate(found) if not ds and k < len(cleaned)]
    pick = sorted(set(written + acted[: 50 - len(written) - 10]))
    pick += kept[: 50 - len(pick)]
    out = []
    for k in sorted(pick):
        rid, dom, text = rows[k]
        out.append(json.dumps({"id": rid, "domain": dom, "text": text,
                               "decisions": [[d.edge, d.start, d.end, d.action] for d in found[k]],
                               "scores": [round(d.score, 4) for d in found[k]]}, ensure_ascii=False))
    OUT.write_text("\n".join(out) + "\n")
    kinds = [d.action for k in pick for d in found[k]]
    print(f"wrote {len(out)} texts to {OUT}: {kinds.count('cut')} cuts, {kinds.count('review')} reviews, "
          f"{sum(1 for k in pick if not found[k])} kept")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
