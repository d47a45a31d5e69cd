"""Make the bundled DetectRL sample (data/detectrl_sample/, <= 1 MB) from ../shared/data/detectrl/Multi_LLM.

Seeded: for each Multi_LLM test file, 75 human and 75 LLM records drawn with random.Random(SEED), kept in
their original order, each with a ``source_index`` field (its index in the original file).

Usage: .venv/bin/python scripts/make_detectrl_sample.py [--src ../shared/data/detectrl] [--per-label 75]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SEED = 2026


def main() -> int:
    """Write one sampled JSON array per Multi_LLM file."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--src", default=str(ROOT.parent / "shared" / "data" / "detectrl"))
    ap.add_argument("--out", default=str(ROOT / "data" / "detectrl_sample"))
    ap.add_argument("--per-label", type=int, default=75)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    total = 0
    for f in sorted((Path(args.src) / "Multi_LLM").glob("*.json")):
        rows = json.loads(f.read_text(encoding="utf-8"))
        rng = random.Random(f"{SEED}-{f.name}")
        picked: list[int] = []
        for label in ("human", "llm"):
            idx = [i for i, r in enumerate(rows) if r["label"] == label]
            picked += rng.sample(idx, min(args.per_label, len(idx)))
        sample = [{**rows[i], "source_index": i} for i in sorted(picked)]
        body = json.dumps(sample, ensure_ascii=False, indent=0)
        (out / f.name).write_text(body + "\n", encoding="utf-8")
        total += len(body.encode("utf-8"))
        print(f"{f.name}: {len(sample)} records, {len(body.encode('utf-8'))} bytes")
    print(f"total {total} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
