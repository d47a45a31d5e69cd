"""Add the re-execution record to the bundled example twins, so their runs can be released.

The example probe runs (``data/examples/probe-*``) were made from a twins file that
kept only id, question and answer, so ``zcp release`` found no verification record
and replaced nothing. This script makes each twin again from its GSM8K original with
the numeric generator (seed 0, which re-executes every twin it makes), checks that the
question and gold it makes are exactly the stored ones, and only then writes the
generator's ``method`` and ``verification`` record into the stored twin. A twin that
differs is left as it is and reported.

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/verify_example_twins.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "data" / "examples"
FILES = ("lab-direct-twins.jsonl", "probe-lab-direct/items_reference.jsonl",
         "probe-smollm2-lab-items/items_reference.jsonl")


def main() -> int:
    """Rewrite the example twin files with their verification records; exit 1 if any twin differs."""
    sys.path.insert(0, str(ROOT))
    from zcp_core.data import load_items
    from zcp_core.reference import perturb_gsm8k

    by_id = {it.id: it for it in load_items(ROOT / "data" / "gsm8k" / "test.jsonl")}
    differs = 0
    for name in FILES:
        path = EXAMPLES / name
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        made = {t.original_id: t for t in perturb_gsm8k([by_id[r["original_id"]] for r in rows], seed=0).items}
        for r in rows:
            t = made.get(r["original_id"])
            if t is None or (t.question, t.answer) != (r["question"], r["answer"]):
                differs += 1
                print(f"{name}: twin of {r['original_id']} differs from the generator's; left unverified")
                continue
            record = {"method": t.metadata["method"], "verification": t.metadata["verification"]}
            if "metadata" in r:  # items format (a run's item set)
                r["metadata"] = {**r["metadata"], **record}
            else:
                r.update(record)
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        print(f"{name}: {len(rows)} twins, {sum(r['original_id'] in made for r in rows)} re-executed")
    return 1 if differs else 0


if __name__ == "__main__":
    raise SystemExit(main())
