"""Give the bundled example items and twins their worked solutions and source, so releases carry them.

The example runs in ``data/examples/`` were made from items files holding only id, question and gold. The
probe reads nothing else (its numbers do not change), but a release made from them had empty ``solution``
and ``source`` columns. This script adds them, in place and idempotently:

* an original's solution is GSM8K's own, found by exact question text in ``data/gsm8k/test.jsonl``, and its
  source ``gsm8k``;
* a twin's solution is re-derived from its original (:func:`zcp_core.reference.retrace.twin_solution`) and
  kept only when re-execution verifies it; its source is the original's.

It rewrites ``lab-direct-items.jsonl``, ``lab-direct-twins.jsonl`` and each example run's
``items_original.jsonl``/``items_reference.jsonl`` (matched by id), sets the sha256 the run manifests
record for the two items files to the files' own, and notes the change in each manifest's ``example.solutions``.

    .venv/bin/python scripts/example_solutions.py          # writes data/examples/ in place
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
NOTE = ("solutions and source added by scripts/example_solutions.py after the run: originals' from GSM8K by exact "
        "question text, twins' re-derived and verified by re-execution; the probe reads only question and answer, "
        "so no number of the run changed")


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def solutions(examples: Path, gsm8k: Path) -> dict[str, tuple[str, str]]:
    """id -> (solution, source) for every example original and twin; fails loudly on any it cannot verify."""
    from zcp_core.data import load_items
    from zcp_core.reference.retrace import twin_solution
    from zcp_core.schema import Item

    upstream = {it.question: it for it in load_items(gsm8k)}
    out: dict[str, tuple[str, str]] = {}
    originals: dict[str, Item] = {}
    for row in _read(examples / "lab-direct-items.jsonl"):
        src = upstream.get(row["question"])
        if src is None:
            raise SystemExit(f"{row['id']}: question not found in {gsm8k}")
        originals[row["id"]] = src
        out[row["id"]] = (src.solution or "", "gsm8k")
    for row in _read(examples / "lab-direct-twins.jsonl"):
        twin = Item(id=row["id"], question=row["question"], answer=row["answer"], original_id=row["original_id"])
        got = twin_solution(originals[row["original_id"]], twin)
        if got.item is None:
            raise SystemExit(f"{row['id']}: no verified solution ({got.reason})")
        out[row["id"]] = (got.item.solution or "", "gsm8k-numeric-ref")  # the generator's source for its twins
    return out


def _fill(rows: list[dict[str, Any]], sols: dict[str, tuple[str, str]]) -> int:
    n = 0
    for r in rows:
        # a run's stored twins carry their file's id in metadata.id (runs made before ids were read)
        rid = (r.get("metadata") or {}).get("id") or r["id"]
        if rid in sols:
            r["solution"], r["source"] = sols[rid]
            n += 1
    return n


def main(argv: list[str] | None = None) -> int:
    """Add solutions and source to the bundled examples; print what changed."""
    from zcp_core.runs import sha256_file

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=Path, default=ROOT / "data" / "examples")
    ap.add_argument("--gsm8k", type=Path, default=ROOT / "data" / "gsm8k" / "test.jsonl")
    args = ap.parse_args(argv)
    sols = solutions(args.examples, args.gsm8k)
    shas = {}  # file name -> its sha256 now (a manifest records the path it read)
    for name in ("lab-direct-items.jsonl", "lab-direct-twins.jsonl"):
        path = args.examples / name
        rows = _read(path)
        _fill(rows, sols)
        _write(path, rows)
        shas[name] = sha256_file(path)
    for manifest_path in sorted(args.examples.glob("*/manifest.json")):
        run = manifest_path.parent
        filled = 0
        for name in ("items_original.jsonl", "items_reference.jsonl"):
            if (run / name).exists():
                rows = _read(run / name)
                filled += _fill(rows, sols)
                _write(run / name, rows)
        manifest = json.loads(manifest_path.read_text())
        touched = False
        for d in manifest.get("datasets", []):
            name = Path(str(d.get("path", ""))).name
            if name in shas and d.get("sha256") != shas[name]:
                d["sha256"] = shas[name]
                touched = True
        if touched or filled:
            manifest.setdefault("example", {})["solutions"] = NOTE
            manifest_path.write_text(json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n")
            print(f"{run.name}: {filled} item rows given solutions", file=sys.stderr)
    print(f"{len(sols)} solutions verified", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
