"""Cut the small bundled chain-corpus samples in data/afr_sample/ from ../shared/data.

The first N records of each corpus are copied byte for byte (same format, so
the named adapters read them unchanged), with the licences.

    .venv/bin/python scripts/make_afr_sample.py
"""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
OUT = ROOT / "data" / "afr_sample"
# (source folder, file, records kept, licence files)
PARTS = [
    ("skythought_math500_traces", "sky-t1-math-correct-5k-27b_math500.jsonl", 15, ("LICENSE", "LICENSE.evaluation-harness-MIT")),
    ("skythought_math500_traces", "gemma-2-27b-it_math500.jsonl", 15, ()),
    ("qwen25math_math_cot_100", "math_cot_100.jsonl", 3, ("LICENSE",)),
    ("gsm8k_model_solutions_gpt3", "example_model_solutions.jsonl", 20, ("LICENSE",)),
]


def main() -> None:
    """Write the samples."""
    for folder, name, n, licences in PARTS:
        dst = OUT / folder
        dst.mkdir(parents=True, exist_ok=True)
        lines = (SHARED / folder / name).read_text(encoding="utf-8").splitlines(keepends=True)[:n]
        (dst / name).write_text("".join(lines), encoding="utf-8")
        for lic in licences:
            shutil.copy(SHARED / folder / lic, dst / lic)
        print(f"{dst / name}: {n} records, {(dst / name).stat().st_size} bytes")


if __name__ == "__main__":
    main()
