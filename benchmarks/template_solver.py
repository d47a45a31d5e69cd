"""Template twins solved from their question alone: check 5 (first twins) and twin precision (fresh draws).

Two uses, each a sample step, an independent solver who sees only ``questions.jsonl`` (id and twin question;
never the original, the template, the program or the gold), then a record or report step:

    # check 5: each template's first twin (seed 0, twin 1), recorded beside the templates
    .venv/bin/python benchmarks/template_solver.py sample --first --templates data/templates/math500.jsonl --out DIR
    (the solver writes DIR/solved.jsonl: {"id", "answer", "note"} per line, before opening DIR/key.jsonl)
    .venv/bin/python benchmarks/template_solver.py record --dir DIR --templates data/templates/math500.jsonl

    # twin precision: a random sample of twins that are not first draws (seed 1000)
    .venv/bin/python benchmarks/template_solver.py sample --templates data/templates/math500.jsonl --out DIR
    .venv/bin/python benchmarks/template_solver.py report --dir DIR

Answers are compared by math-verify (:func:`zcp_core.answers.grade`, the probe's own grader). ``report``
applies the hand check of every disagreement (``DIR/checked.jsonl``: {"id", "twin_right": bool, "why"}) and
writes the right-as-generated share with its Clopper-Pearson 95% interval.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _provenance import header  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DATASETS = {"math500": "data/math500/test.jsonl", "gsm8k": "data/gsm8k/test.jsonl"}
PRECISION_SEED = 1000  # twins drawn at this seed are not the first draws (seed 0) the templates were checked on
SAMPLE_SEED = 20261205
N_SAMPLE = 110


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def sample(templates: Path, out: Path, first: bool, n: int, seed: int) -> None:
    """Write ``questions.jsonl`` (for the solver) and ``key.jsonl`` (gold, for the record or report)."""
    from zcp_core.data import load_items
    from zcp_core.reference.template import load_templates
    from zcp_core.reference.template_build import template_twins

    items = load_items(ROOT / DATASETS[templates.stem])
    ts = load_templates(templates)
    twins = template_twins([it for it in items if it.id in ts], ts, seed=0 if first else PRECISION_SEED)[0].items
    picked = list(twins) if first else random.Random(seed).sample(list(twins), min(n, len(twins)))
    rng = random.Random(seed + 1)
    rng.shuffle(picked)  # the solver meets them in an order that says nothing about the file
    out.mkdir(parents=True, exist_ok=True)
    qid = {t.id: f"q{k:04d}" for k, t in enumerate(picked)}
    _write(out / "questions.jsonl", [{"id": qid[t.id], "question": t.question} for t in picked])
    _write(out / "key.jsonl", [{"id": qid[t.id], "twin_id": t.id, "source_id": t.original_id, "gold": t.answer,
                                "question_sha256": hashlib.sha256(t.question.encode()).hexdigest(),
                                "subject": t.metadata.get("subject")} for t in picked])
    (out / "sample_info.json").write_text(json.dumps(
        {"templates": str(templates.relative_to(ROOT) if templates.is_absolute() else templates),
         "first": first, "twin_seed": 0 if first else PRECISION_SEED, "sample_seed": seed, "twins": len(twins),
         "sample": len(picked)}, indent=1) + "\n")
    print(f"{len(picked)} twin questions -> {out / 'questions.jsonl'}")


def resample(prev: Path, templates: Path, out: Path) -> None:
    """After a draw-rule change: the same items' twins drawn anew; unchanged questions keep the solver's answer
    (``solved_kept.jsonl``), the changed ones go to ``questions.jsonl`` for the solver."""
    from zcp_core.data import load_items
    from zcp_core.reference.template import load_templates
    from zcp_core.reference.template_build import template_twins

    info = json.loads((prev / "sample_info.json").read_text())
    old = {k["source_id"]: k for k in _jsonl(prev / "key.jsonl")}
    answers = {s["id"]: s for s in _jsonl(prev / "solved.jsonl")}
    items = [it for it in load_items(ROOT / DATASETS[templates.stem]) if it.id in old]
    new = {t.original_id: t for t in template_twins(items, load_templates(templates), seed=info["twin_seed"])[0].items}
    out.mkdir(parents=True, exist_ok=True)
    key, kept, ask = [], [], []
    for sid, k in old.items():
        if sid not in new:
            continue
        t = new[sid]
        sha = hashlib.sha256(t.question.encode()).hexdigest()
        key.append({**k, "twin_id": t.id, "gold": t.answer, "question_sha256": sha})
        if sha == k["question_sha256"]:
            kept.append(answers[k["id"]])
        else:
            ask.append({"id": k["id"], "question": t.question})
    _write(out / "key.jsonl", key)
    _write(out / "solved_kept.jsonl", kept)
    _write(out / "questions.jsonl", ask)
    (out / "sample_info.json").write_text(json.dumps({**info, "resampled_from": str(prev), "sample": len(key),
                                                      "unchanged": len(kept),
                                                      "no_twin_now": sorted(set(old) - set(new))}, indent=1) + "\n")
    print(f"{len(key)} of {len(old)} items still get a twin; {len(kept)} unchanged, {len(ask)} to solve -> "
          f"{out / 'questions.jsonl'} (then append the answers to solved_kept.jsonl as solved.jsonl)")


def _compare(d: Path) -> tuple[list[dict], dict[str, dict]]:
    from zcp_core.answers import grade

    key = _jsonl(d / "key.jsonl")
    solved = {s["id"]: s for s in _jsonl(d / "solved.jsonl")}
    missing = [k["id"] for k in key if k["id"] not in solved]
    if missing:
        raise SystemExit(f"{d / 'solved.jsonl'}: no answer for {len(missing)} questions, e.g. {missing[0]}")
    for k in key:
        k["solver_answer"] = str(solved[k["id"]]["answer"])
        k["agreed"] = grade(k["solver_answer"], k["gold"]).correct
    return key, solved


def record(d: Path, templates: Path, solver: str) -> None:
    """Write ``<templates>.solved.jsonl``: each first twin's question hash, the solver's answer and agreement."""
    key, _ = _compare(d)
    side = templates.with_name(templates.stem + ".solved.jsonl")
    _write(side, sorted(({"source_id": k["source_id"], "question_sha256": k["question_sha256"], "gold": k["gold"],
                          "solver_answer": k["solver_answer"], "agreed": k["agreed"], "solver": solver}
                         for k in key), key=lambda r: r["source_id"]))
    print(f"{sum(k['agreed'] for k in key)} of {len(key)} first twins agreed -> {side}")


def report(d: Path, result: Path) -> None:
    """The right-as-generated share of a precision sample, with every disagreement checked by hand."""
    from scipy.stats import binomtest

    key, solved = _compare(d)
    checked = {c["id"]: c for c in _jsonl(d / "checked.jsonl")} if (d / "checked.jsonl").exists() else {}
    dis = [k for k in key if not k["agreed"]]
    unchecked = [k["id"] for k in dis if k["id"] not in checked]
    if unchecked:
        raise SystemExit(f"{d / 'checked.jsonl'}: disagreement {unchecked[0]} is not checked by hand")
    n = len(key)
    right = n - len(dis) + sum(bool(checked[k["id"]]["twin_right"]) for k in dis)
    info = json.loads((d / "sample_info.json").read_text())

    def ci(k: int) -> str:
        lo, hi = binomtest(k, n).proportion_ci(method="exact")
        return f"{k}/{n} = {k / n:.1%} (Clopper-Pearson 95% CI [{lo:.3f}, {hi:.3f}], lower bound **{lo:.3f}**)"

    cmd = f".venv/bin/python benchmarks/template_solver.py report --dir {d}"
    again = (f" Resampled after a draw-rule change: the same items' twins drawn anew ({info['unchanged']} questions "
             f"unchanged keep the solver's answer; the others were solved afresh the same way; no twin now: "
             f"{', '.join(info['no_twin_now']) or 'none'})." if "resampled_from" in info else "")
    body = [
        f"- **Sample:** {n} twins{' of the items' if again else ''} drawn with `random.Random({info['sample_seed']})` "
        f"from the {info['twins']} twins that `{info['templates']}` gave at seed {info['twin_seed']}"
        f"{' under the earlier draw rule' if again else ''} (not the seed-0 first draws the templates were checked "
        "on)." + again,
        "- **Solver:** an independent model instance saw only each twin's question (no original, template, program "
        "or gold) and wrote its answers to `solved.jsonl` before the key was joined; compared by math-verify.",
        f"- **Strict agreement:** {ci(n - len(dis))}.",
        f"- **Right as generated:** {ci(right)}.", "",
        "## Every disagreement, checked by hand", "",
        *([f"- `{k['twin_id']}`: twin gold {k['gold']}, solver {k['solver_answer']}. "
           f"{'Twin right' if checked[k['id']]['twin_right'] else '**Twin wrong**'}: {checked[k['id']]['why']}"
           for k in dis] or ["- none"]), "",
    ]
    text = header("Twin precision of MATH-500 program templates (independent solver, fresh draws)",
                  f"templates {info['templates']}, method template-v1", command=cmd)
    result.write_text(text + "\n" + "\n".join(body))
    print(result.read_text())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--templates", type=Path, required=True)
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--first", action="store_true", help="every template's first twin (check 5), not a sample")
    s.add_argument("--n", type=int, default=N_SAMPLE)
    s.add_argument("--sample-seed", type=int, default=SAMPLE_SEED)
    r = sub.add_parser("record")
    r.add_argument("--dir", type=Path, required=True)
    r.add_argument("--templates", type=Path, required=True)
    r.add_argument("--solver", default="an independent Claude subagent (question only)")
    rs = sub.add_parser("resample")
    rs.add_argument("--prev", type=Path, required=True)
    rs.add_argument("--templates", type=Path, required=True)
    rs.add_argument("--out", type=Path, required=True)
    p = sub.add_parser("report")
    p.add_argument("--dir", type=Path, required=True)
    p.add_argument("--result", type=Path, default=ROOT / "benchmarks" / "results" / "twin_precision_math500.md")
    a = ap.parse_args()
    if a.cmd == "sample":
        sample(a.templates, a.out, a.first, a.n, a.sample_seed)
    elif a.cmd == "resample":
        resample(a.prev, a.templates, a.out)
    elif a.cmd == "record":
        record(a.dir, a.templates, a.solver)
    else:
        report(a.dir, a.result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
