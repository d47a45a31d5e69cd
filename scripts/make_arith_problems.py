"""Write data/arith/problems.jsonl: seeded one- and two-step arithmetic word problems.

Each line is ``{uid, domain, messages}``: the user message is the question and
the assistant message a short worked solution ending in ``\\boxed{answer}``;
answers are computed, never typed. Written by this project (Apache-2.0).

    python scripts/make_arith_problems.py [--n 40] [--seed 7] [--out data/arith/problems.jsonl]
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

NAMES = ["Tom", "Ana", "Li", "Sam", "Maya", "Omar", "Eva", "Ben", "Zoe", "Raj"]
THINGS = ["apples", "books", "marbles", "stickers", "pencils", "cards", "shells", "coins"]


def one_step(rng: random.Random) -> tuple[str, str, int]:
    """A one-step problem: (question, solution text, answer)."""
    name, thing = rng.choice(NAMES), rng.choice(THINGS)
    a, b = rng.randint(2, 20), rng.randint(2, 12)
    kind = rng.choice(["add", "sub", "mul"])
    if kind == "add":
        return (f"{name} has {a} {thing}. {name} gets {b} more {thing}. How many {thing} does {name} have now?",
                f"{a} + {b} = {a + b}", a + b)
    if kind == "sub":
        a = a + b
        return (f"{name} has {a} {thing} and gives away {b} of them. How many {thing} does {name} have left?",
                f"{a} - {b} = {a - b}", a - b)
    return (f"{name} has {a} bags with {b} {thing} in each bag. How many {thing} does {name} have in total?",
            f"{a} \\times {b} = {a * b}", a * b)


def two_step(rng: random.Random) -> tuple[str, str, int]:
    """A two-step problem: (question, solution text, answer)."""
    name, thing = rng.choice(NAMES), rng.choice(THINGS)
    a, b, c = rng.randint(2, 9), rng.randint(2, 9), rng.randint(1, 15)
    if rng.random() < 0.5:
        return (f"{name} buys {a} boxes of {thing} with {b} {thing} in each box, and already had {c} {thing}. "
                f"How many {thing} does {name} have now?",
                f"{a} \\times {b} = {a * b}, and {a * b} + {c} = {a * b + c}", a * b + c)
    c = min(c, a * b - 1)
    return (f"{name} has {a} packs of {b} {thing} and uses {c} of them. How many {thing} are left?",
            f"{a} \\times {b} = {a * b}, and {a * b} - {c} = {a * b - c}", a * b - c)


def make(n: int, seed: int) -> list[dict]:
    """``n`` problems, alternating one- and two-step, from ``seed``."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        steps = 1 if i % 2 == 0 else 2
        q, sol, ans = one_step(rng) if steps == 1 else two_step(rng)
        out.append({"uid": f"arith-{i + 1:03d}", "domain": f"arith-{steps}step",
                    "messages": [{"role": "user", "content": q},
                                 {"role": "assistant", "content": f"{sol}. The answer is \\boxed{{{ans}}}."}]})
    return out


def main() -> None:
    """Write the file."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent.parent / "data" / "arith" / "problems.jsonl"))
    args = ap.parse_args()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r) + "\n" for r in make(args.n, args.seed)), encoding="utf-8")
    print(f"wrote {args.n} problems to {out}")


if __name__ == "__main__":
    main()
