"""Twin precision: a random sample of numeric twins, solved from the twin question alone, against the twin gold.

Two steps, with a solver in between who sees only ``sample.jsonl`` (id and twin question; never the original,
the generated solution or the gold):

    .venv/bin/python benchmarks/twin_precision.py sample --reference RUN/reference.jsonl --out DIR
    (the solver writes DIR/solved.jsonl: {"id", "answer", "note"} per line, before looking at DIR/key.jsonl)
    .venv/bin/python benchmarks/twin_precision.py report --dir DIR [--dir DIR2]

After a generator change, ``resample --prev DIR --reference NEW/reference.jsonl --out DIR2`` takes the same
items' new twins, keeps the answers of unchanged twin questions and lists the changed ones for the solver.

``report`` compares by numeric equality (strict agreement), applies the hand check of every disagreement
(``DIR/checked.jsonl``: {"id", "twin_right": bool, "why"}), appends ``DIR/remarks.md`` (hand-written) if any, and writes the right-as-generated share with its
Clopper-Pearson 95% interval. The sample seed is fixed here.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from fractions import Fraction
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import header  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATASET = ROOT / "data" / "gsm8k" / "test.jsonl"
SAMPLE_SEED = 20261224
N_SAMPLE = 110
N_FALLBACK = 15  # fallbacks drawn on purpose, when the generator still makes any


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _num(s: object) -> Fraction | None:
    try:
        return Fraction(str(s).replace(",", "").replace("$", "").strip())
    except (ValueError, ZeroDivisionError):
        return None


def _on_purpose(t: dict) -> bool:
    """A twin drawn on purpose: a fallback (v4), one a v6 ambiguity rule made (tied or bound numbers), or (v7) one
    whose solution makes a comparison the twin's values had to keep true."""
    meta = t["metadata"]
    return bool((meta.get("side") or {}).get("fallback") or meta.get("tied") or meta.get("bound")
                or meta.get("comparisons"))


def sample(reference: Path, out: Path, seed: int = SAMPLE_SEED, n_purpose: int = N_FALLBACK) -> None:
    """Draw the sample: twins whose question changed, ``n_purpose`` of them on purpose (:func:`_on_purpose`)."""
    from zcp_core.data import load_items

    originals = {it.id: it for it in load_items(DATASET)}
    twins = [t for t in _jsonl(reference) if t["question"] != originals[t["original_id"]].question]
    methods = {t["metadata"]["method"] for t in twins}
    rng = random.Random(seed)
    fb = [t for t in twins if _on_purpose(t)]
    rest = [t for t in twins if t not in fb]
    picked = rng.sample(fb, min(n_purpose, len(fb)))
    picked += rng.sample(rest, N_SAMPLE - len(picked))
    rng.shuffle(picked)
    out.mkdir(parents=True, exist_ok=True)
    (out / "sample.jsonl").write_text("".join(json.dumps({"id": t["id"], "question": t["question"]}) + "\n"
                                              for t in picked))
    (out / "key.jsonl").write_text("".join(json.dumps({
        "id": t["id"], "gold": t["answer"], "original_id": t["original_id"], "method": t["metadata"]["method"],
        "fallback": bool((t["metadata"].get("side") or {}).get("fallback")),
        "on_purpose": _on_purpose(t)}) + "\n" for t in picked))
    (out / "sample_info.json").write_text(json.dumps({
        "reference": str(reference), "methods": sorted(methods), "twins_changed": len(twins),
        "fallbacks": len(fb), "on_purpose": len(fb), "sample": len(picked), "seed": seed}, indent=1) + "\n")
    print(f"{len(picked)} of {len(twins)} changed twins ({len(fb)} fallbacks, tied/bound or compared) -> "
          f"{out / 'sample.jsonl'}")


def resample(prev: Path, reference: Path, out: Path) -> None:
    """The same items' twins from another build (a later generator): ``sample.jsonl`` and ``key.jsonl`` for
    the items that still get a twin, and ``solved.jsonl`` prefilled from ``prev`` where the twin question is
    unchanged (the solver's answer depends on the question alone); the changed questions go to
    ``to_solve.jsonl`` for the solver."""
    old_q = {r["id"]: r["question"] for r in _jsonl(prev / "sample.jsonl")}
    old_a = {r["id"]: r for r in _jsonl(prev / "solved.jsonl")}
    new = {t["id"]: t for t in _jsonl(reference)}
    kept = [i for i in old_q if i in new]
    out.mkdir(parents=True, exist_ok=True)
    (out / "sample.jsonl").write_text("".join(json.dumps({"id": i, "question": new[i]["question"]}) + "\n"
                                              for i in kept))
    (out / "key.jsonl").write_text("".join(json.dumps({
        "id": i, "gold": new[i]["answer"], "original_id": new[i]["original_id"],
        "method": new[i]["metadata"]["method"],
        "fallback": bool((new[i]["metadata"].get("side") or {}).get("fallback"))}) + "\n" for i in kept))
    same = [i for i in kept if new[i]["question"] == old_q[i]]
    (out / "solved.jsonl").write_text("".join(json.dumps(old_a[i]) + "\n" for i in same))
    (out / "to_solve.jsonl").write_text("".join(json.dumps({"id": i, "question": new[i]["question"]}) + "\n"
                                                for i in kept if i not in same))
    info = json.loads((prev / "sample_info.json").read_text())
    (out / "sample_info.json").write_text(json.dumps({
        **info, "reference": str(reference), "methods": sorted({new[i]["metadata"]["method"] for i in kept}),
        "resampled_from": str(prev), "sample": len(kept), "unchanged": len(same),
        "no_twin_now": sorted(set(old_q) - set(new))}, indent=1) + "\n")
    print(f"{len(kept)} of {len(old_q)} items still get a twin; {len(same)} unchanged, "
          f"{len(kept) - len(same)} to solve -> {out / 'to_solve.jsonl'}")


def _section(d: Path, cmd: str) -> str:
    """One sample's comparison, with its own header."""
    from scipy.stats import binomtest

    key = {k["id"]: k for k in _jsonl(d / "key.jsonl")}
    solved = {s["id"]: s for s in _jsonl(d / "solved.jsonl")}
    checked = {c["id"]: c for c in _jsonl(d / "checked.jsonl")} if (d / "checked.jsonl").exists() else {}
    info = json.loads((d / "sample_info.json").read_text())
    missing = sorted(set(key) - set(solved))
    if missing:
        raise SystemExit(f"{d / 'solved.jsonl'}: no answer for {len(missing)} sampled twins, e.g. {missing[0]}")
    n = len(key)
    agree = [i for i in key if _num(solved[i]["answer"]) is not None and _num(solved[i]["answer"]) == _num(key[i]["gold"])]
    dis = [i for i in key if i not in agree]
    unchecked = [i for i in dis if i not in checked]
    if unchecked:
        raise SystemExit(f"{d / 'checked.jsonl'}: disagreement {unchecked[0]} is not checked by hand")
    right = len(agree) + sum(bool(checked[i]["twin_right"]) for i in dis)

    def ci(k: int) -> str:
        lo, hi = binomtest(k, n).proportion_ci(method="exact")
        return f"{k}/{n} = {k / n:.1%} (Clopper-Pearson 95% CI [{lo:.3f}, {hi:.3f}], lower bound **{lo:.3f}**)"

    fb = [i for i in key if key[i].get("on_purpose", key[i]["fallback"])]
    if "resampled_from" in info:
        drawn = (f"- **Sample:** the same items as `{info['resampled_from']}` (drawn with "
                 f"`random.Random({info['seed']})`), with their twins from `{info['reference']}` (generator "
                 f"{', '.join(info['methods'])}): {n} of them still get a twin ({len(info['no_twin_now'])} no longer "
                 f"do: {', '.join(info['no_twin_now']) or 'none'}); {info['unchanged']} twin questions are unchanged "
                 "and keep the solver's answer, the others were solved afresh the same way.")
    else:
        drawn = (f"- **Sample:** {n} twins whose question changed, drawn with `random.Random({info['seed']})` from "
                 f"the {info['twins_changed']} changed twins of `{info['reference']}` (generator "
                 f"{', '.join(info['methods'])}, GSM8K test, seed 0); {len(fb)} "
                 f"{'drawn on purpose (fallbacks, tied or bound numbers, v7 comparisons)' if 'on_purpose' in info else 'fallbacks'}"
                 f" among them ({info['fallbacks']} in the set).")
    body = [
        drawn + (f" The build: {info['note']}." if info.get("note") else ""),
        "- **Solver:** each twin was solved from its question alone (no original, no generated solution, no "
        "gold), answers written to `solved.jsonl` before `key.jsonl` was opened; compared by numeric equality.",
        f"- **Strict agreement:** {ci(len(agree))}.",
        f"- **Right as generated:** {ci(right)}.", "",
        "### Every disagreement, checked by hand", "",
        *([f"- `{i}`: twin gold {key[i]['gold']}, solver {solved[i]['answer']}. "
           f"{'Twin right' if checked[i]['twin_right'] else '**Twin wrong**'}: {checked[i]['why']}" for i in dis]
          or ["- none"]), "",
        "### Solver notes on agreeing answers", "",
        *([f"- `{i}`: {solved[i]['note']}" for i in agree if solved[i].get("note")] or ["- none"]), "",
        *([(d / "remarks.md").read_text()] if (d / "remarks.md").exists() else []),
    ]
    title = f"Sample `{d}`"
    return header(title, f"generator {', '.join(info['methods'])}, seed 0, sample seed {info['seed']}",
                  command=cmd, level=2) + "\n" + "\n".join(body)


def report(dirs: list[Path], result: Path) -> None:
    """Compare ``solved.jsonl`` with ``key.jsonl`` in each of ``dirs``; write the result file, a section each."""
    cmd = (".venv/bin/python benchmarks/twin_precision.py report " + " ".join(f"--dir {d}" for d in dirs)
           + ("" if result.name == "twin_precision.md" else f" --result {result.resolve().relative_to(ROOT)}"))
    methods = sorted({k["method"] for d in dirs for k in _jsonl(d / "key.jsonl")})
    text = header("Twin precision of the numeric generator (independent solver, fresh sample)",
                  f"generator {', '.join(methods)}, seed 0", command=cmd)
    result.write_text(text + "\n" + "\n".join(_section(d, cmd) for d in dirs))
    print(result.read_text())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="step", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--reference", type=Path, required=True, help="reference.jsonl of `zcp reference build`")
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--sample-seed", type=int, default=SAMPLE_SEED, help="a fresh seed for a fresh sample")
    s.add_argument("--on-purpose", type=int, default=N_FALLBACK, help="twins drawn on purpose (fallbacks, ties and binds, v7 comparisons)")
    rs = sub.add_parser("resample")
    rs.add_argument("--prev", type=Path, required=True, help="an earlier sample folder")
    rs.add_argument("--reference", type=Path, required=True)
    rs.add_argument("--out", type=Path, required=True)
    r = sub.add_parser("report")
    r.add_argument("--dir", type=Path, action="append", required=True, help="a sample folder (repeatable)")
    r.add_argument("--result", type=Path, default=ROOT / "benchmarks" / "results" / "twin_precision.md")
    args = ap.parse_args()
    if args.step == "sample":
        sample(args.reference, args.out, args.sample_seed, args.on_purpose)
    elif args.step == "resample":
        resample(args.prev, args.reference, args.out)
    else:
        report(args.dir, args.result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
