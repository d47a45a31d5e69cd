"""Whether a change to the numeric twins changes the contamination lab's default splits.

The lab draws C and U from the items that have a numeric twin, ordered by
``sha256(f"{seed}:{id}")`` (:func:`zcp_core.lab.draw_split`); the evasive kind first keeps, in that
order, the items with a good enough paraphrase. Given the ``reference.jsonl`` of two
``zcp reference build --method numeric`` runs over the lab's dataset (before and after), this prints
the items that lost their twin or whose twin changed, where each stands in the hash order of the old
pool, and whether the default direct and evasive splits differ. It trains and loads no model.

Usage: .venv/bin/python scripts/lab_split_impact.py BEFORE/reference.jsonl AFTER/reference.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path


def _twins(path: Path) -> dict[str, tuple[str, str, str]]:
    """Original id -> (question, solution, answer) of its twin."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return {r["original_id"]: (r["question"], r["solution"], r["answer"]) for r in rows}


def main() -> None:
    from zcp_core.data import load_items
    from zcp_core.lab import draw_split
    from zcp_core.lab.config import profile_config
    from zcp_core.lab.split import paraphrasable_pool

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    args = ap.parse_args()
    old, new = _twins(args.before), _twins(args.after)
    before, after = list(old), list(new)
    direct, evasive = profile_config("default", "direct"), profile_config("default", "evasive")
    seed, n = direct.seed, direct.n_contaminated
    order = sorted(set(before), key=lambda i: hashlib.sha256(f"{seed}:{i}".encode()).hexdigest())
    lost = sorted(set(before) - set(after), key=order.index)
    print(f"dataset {direct.dataset}, seed {seed}, n {n}: the split takes the first {2 * n} of the hash order")
    print(f"pool {len(before)} -> {len(after)}; lost {len(lost)}, gained {len(set(after) - set(before))}")
    for i in lost:
        print(f"  {i}: position {order.index(i) + 1} of {len(order)} in the old pool's order"
              f" ({'inside' if order.index(i) < 2 * n else 'outside'} the first {2 * n})")
    changed = sorted((i for i in new if i in old and new[i] != old[i]), key=order.index)
    print(f"twins changed: {len(changed)}")
    for i in changed:
        print(f"  {i}: position {order.index(i) + 1} ({'inside' if order.index(i) < 2 * n else 'outside'} the"
              f" first {2 * n}; a lab evaluation reads the twins of its split)")
    a, b = draw_split(before, n, seed), draw_split(after, n, seed)
    same = (a.contaminated, a.clean) == (b.contaminated, b.clean)
    print(f"default direct/solution/verbatim split unchanged: {same}")
    items = {it.id: it for it in load_items(direct.dataset)}
    splits = []
    for ids in (before, after):
        pool, _ = paraphrasable_pool([items[i] for i in ids], evasive, need=2 * evasive.n_contaminated)
        splits.append(draw_split([it.id for it in pool], evasive.n_contaminated, evasive.seed))
    same_ev = (splits[0].contaminated, splits[0].clean) == (splits[1].contaminated, splits[1].clean)
    print(f"default evasive split unchanged: {same_ev}")


if __name__ == "__main__":
    main()
