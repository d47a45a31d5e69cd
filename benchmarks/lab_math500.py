"""MATH-500 with a positive control: lab builds probed against template twins, the null beside them, and the
default verdict metric decided by the rule written in docs/methods/templates.md before these runs.

For each twin seed (A = 0, B = 1):

- twins: ``zcp reference build --method template --dataset data/math500/test.jsonl --seed S --twins K+1``;
- null: the untouched embedded model on every covered item, originals against their twins and twin 1 against
  twins 2..K+1 (``zcp probe --calibrate on``, so raw and calibrated are both measured); Holm across the four P
  tests of each form;
- controls: each MATH-500 lab build (``direct``; the probe-format profile), probed on its 80 lab items.

A build took when its manipulation check (the mean per-token log-probability of its own training text, lab
minus base, C minus U: ``zcp_core.lab.took.text_logprobs`` and ``did_interval``) has one-sided permutation p
below 0.025. The CoT-accuracy check of the GSM8K lab is not used: the 135M model solves almost no MATH item
with or without training, so it has no power here. A control is caught under a metric when the benchmark-level
test on its 80 items has p < 0.05 and the items' evidence ranks C above U (AUROC, exact one-sided Mann-Whitney
p < 0.05).

    .venv/bin/python benchmarks/lab_math500.py --out benchmarks/results/lab_math500.md
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]
from _provenance import header  # noqa: E402
from twin_probe_common import Clock, zcp  # noqa: E402

DATASET = "data/math500/test.jsonl"
SEEDS = {"A": 0, "B": 1}
#: P metrics are teacher-forced on the gold: one generated token is enough, and Acc is left out (the model
#: answers almost no MATH item at zero-CoT, so it could not differ)
PROBE = ("--metrics", "p_first,p_all", "--calibrate", "on", "--max-new-tokens", "1", "--seed", "0")
#: The forms of P_first and P_all: raw; calibrated (net of the gold after the question with its numbers masked);
#: net (net of the gold after the question-free context ``The answer is \\boxed{``, scored by the run's own model:
#: the candidate proposed after seed A, see docs/methods/templates.md)
FORMS = {"raw": ("p_first", "p_all"), "calibrated": ("p_first_cal", "p_all_cal"), "net": ("p_first_net", "p_all_net")}
CANDIDATES = ("p_all", "p_all_cal", "p_all_net")
BUILDS = {"direct": ("--mode", "direct"), "probe-format": ("--mode", "direct", "--profile", "probe-format-upper-bound")}
TOOK_LEVEL = 0.025


def twins(seed: int, k: int, out: Path) -> tuple[Path, dict[str, Any]]:
    """The seed's template twins (built once; a rerun reads the folder)."""
    ref = out / f"ref-seed{seed}"
    if not (ref / "reference.jsonl").exists():
        zcp("reference", "build", "--method", "template", "--dataset", DATASET, "--seed", str(seed), "--twins",
            str(k + 1), "--prior-model", "none", "--out", str(ref), "--json")
    return ref, json.loads((ref / "manifest.json").read_text())["summary"]


def probe(model: str, dataset: str, ref: Path, out: Path, *extra: str) -> Path:
    """``zcp probe`` (resumed: a finished run is read, not redone)."""
    if not (out / "records.parquet").exists():
        fmt = () if dataset == DATASET else ("--format", "items")
        zcp("probe", "--model", model, "--dataset", dataset, *fmt, "--reference", str(ref / "reference.jsonl"),
            *PROBE, *extra, "--out", str(out))
    return out


def summary(run: Path) -> dict[str, Any]:
    return json.loads((run / "manifest.json").read_text())["summary"]


def with_net(run: Path, model: str) -> Any:
    """The run's r = 0 records with ``p_first_net``/``p_all_net`` where the run predates them: log P_first and mean
    log P_all of the gold after the question, minus the same after the neutral context, scored by ``model`` (the
    run's own) through the probe's own :func:`~zcp_core.probe.calibrate.neutral_values`, as ``zcp probe`` now
    records them (a heavy test checks the two agree)."""
    import numpy as np
    import pandas as pd

    from zcp_core.backends import load_backend
    from zcp_core.probe.calibrate import neutral_values

    r = pd.read_parquet(run / "records.parquet")
    r = r[r["ratio"] == 0.0].copy()
    if "p_all_net" in r and r["p_all_net"].notna().any():
        return r
    nv = neutral_values(load_backend(model, cache="default"), r["gold"].astype(str).str.strip().tolist())
    gold = r["gold"].astype(str).str.strip()
    r["p_first_net"] = np.log(r["p_first"].astype(float)) - gold.map(lambda g: nv[g][0])
    r["p_all_net"] = np.log(r["p_all"].astype(float)) - gold.map(lambda g: nv[g][1])
    return r


def as_metric(records: Any, metric: str) -> tuple[Any, str]:
    """The records and the metric name the probe's own tests read: a net form rides in its calibrated column (both
    are log-ratios in nats, tested alike)."""
    if not metric.endswith("_net"):
        return records, metric
    cal = metric.replace("_net", "_cal")
    return records.assign(**{cal: records[metric], "calibration_reason": ""}), cal


def test_of(records: Any, metric: str) -> dict[str, Any]:
    """The probe's benchmark-level test of one metric (its default resamples): n, p, confidence."""
    from zcp_core.probe import ProbeConfig, confidence_summary

    frame, name = as_metric(records, metric)
    cfg = ProbeConfig(metrics=(name,))
    v = confidence_summary(frame, cfg.metrics, **cfg.test_options())["metrics"][name]
    return {"n": v.get("n"), "p": v.get("p"), "confidence": v.get("confidence")}


def null_family(runs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Holm across the four tests (P_first, P_all; original and twin arm) of each form."""
    from zcp_core.lab.quality import holm

    out = {}
    for form, metrics in FORMS.items():
        tests = [(f"{arm} {m}", test_of(records, m)["p"]) for arm, records in runs.items() for m in metrics]
        adj = holm([p for _, p in tests])
        out[form] = {"tests": tests, "adjusted": adj, "passes": min(adj) >= 0.05}
    return out


def build(kind: str) -> dict[str, Any]:
    """Build (or reuse) a MATH-500 lab build; its summary with ``name``."""
    got = json.loads(zcp("lab", "build", "--dataset", DATASET, *BUILDS[kind], "--no-progress", "--json"))
    from zcp_core.lab.build import resolve_build
    from zcp_core.runs import load_run

    run = load_run(resolve_build(got["name"]))
    return {**run.summary, "name": got["name"], "config": run.manifest.get("config", {})}


def took(b: dict[str, Any]) -> dict[str, Any]:
    """The manipulation check: the training text's log-probability, lab minus base, C minus U."""
    from zcp_core.backends import load_backend
    from zcp_core.data import load_items
    from zcp_core.lab.took import did_interval, text_logprobs
    from zcp_core.lab.train import base_model_path

    fmt = str(b.get("train_format") or b["config"].get("train_format") or "natural")
    by_id = {it.id: it for it in load_items(DATASET)}
    c, u = [by_id[i] for i in b["contaminated_ids"]], [by_id[i] for i in b["clean_ids"]]
    base_path = base_model_path("smollm2")
    lab, base = load_backend(f"lab:{b['name']}", cache="default"), load_backend("smollm2", cache="default")
    d = [x - y for x, y in zip(text_logprobs(lab, base_path, c + u, fmt), text_logprobs(base, base_path, c + u, fmt),
                               strict=True)]
    r = did_interval(d[: len(c)], d[len(c):])
    return {"format": fmt, "gain": r.gain, "ci": r.ci, "p": r.p, "took": r.p < TOOK_LEVEL}


def control(b: dict[str, Any], ref: Path, out: Path) -> dict[str, Any]:
    """Probe a build on its 80 items; per metric: benchmark test, AUROC C vs U, C on C and U, flags."""
    import numpy as np
    from scipy.stats import mannwhitneyu

    from zcp_core.probe.ktwins import item_pvalues
    from zcp_core.stats.itemp import bh_flags

    split = {i: "C" for i in b["contaminated_ids"]} | {i: "U" for i in b["clean_ids"]}
    items = out / "items.jsonl"
    items.parent.mkdir(parents=True, exist_ok=True)
    rows = [json.loads(line) for line in (ROOT / DATASET).read_text().splitlines() if line.strip()]
    items.write_text("".join(json.dumps({"id": r["unique_id"], "question": r["problem"], "answer": r["answer"]}) + "\n"
                             for r in rows if r["unique_id"] in split))
    model = f"lab:{b['name']}"
    records = with_net(probe(model, str(items), ref, out / "probe"), model)
    records["split"] = records["pair_id"].map(split)
    res: dict[str, Any] = {"metrics": {}}
    for m in (x for ms in FORMS.values() for x in ms):
        frame, name = as_metric(records, m)
        ip = item_pvalues(frame, name)
        lab = ip["pair_id"].map(split)
        sc, p = ip["item_score"].to_numpy(dtype=float), ip["item_p"].to_numpy(dtype=float)
        c_sc, u_sc = sc[(lab == "C").to_numpy()], sc[(lab == "U").to_numpy()]
        mw = mannwhitneyu(c_sc, u_sc, alternative="greater", method="exact")
        _, flagged = bh_flags(p, 0.1)
        bench = test_of(records, m)
        res["metrics"][m] = {
            "auroc": float(mw.statistic) / (len(c_sc) * len(u_sc)), "auroc_p": float(mw.pvalue),
            "n_c": len(c_sc), "n_u": len(u_sc), "bench_p": bench["p"], "bench_c": bench["confidence"],
            "c_on_c": test_of(records[records["split"] == "C"], m)["confidence"],
            "c_on_u": test_of(records[records["split"] == "U"], m)["confidence"],
            "flag_c": int(np.sum(flagged & (lab == "C").to_numpy())),
            "flag_u": int(np.sum(flagged & (lab == "U").to_numpy())),
        }
        r = res["metrics"][m]
        r["caught"] = r["bench_p"] is not None and r["bench_p"] < 0.05 and r["auroc_p"] < 0.05
    return res


def _f(x: Any, spec: str = ".3f") -> str:
    return "-" if x is None else format(x, spec)


def seed_section(tag: str, seed: int, card: dict[str, Any], null: dict[str, Any], prior: dict[str, Any] | None,
                 controls: dict[str, dict[str, Any]]) -> list[str]:
    """One twin seed's section of the results file."""
    tc = card.get("twin_card") or {}
    lines = [f"## Twin seed {tag} (`--seed {seed}`)", "",
             f"Twins: {card['traced']} of {card['n']} items covered; distinct twins per item: "
             + ", ".join(f"{k}: {v}" for k, v in (card.get("twins_per_item") or {}).items() if k != "0")
             + f"; fallbacks (a digit boundary took the other side) {_f(tc.get('fallback_share'), '.1%')}; "
             f"larger share {_f(tc.get('larger_share'))}; mean log ratio {_f(tc.get('log_ratio_mean'), '+.4f')}.", ""]
    if prior:
        lines += ["Neutral prior of the null run's own pairs, scored by the audited (untouched) model, original minus "
                  "twin (nats):", "", "| pairs | n | mean | 90% CI |", "|---|---|---|---|"]
        for part in ("pooled", "numeric", "other"):
            v = prior[part]
            ci = v.get("ci90")
            lines.append(f"| {part} | {v['n_pairs']} | {_f(v.get('diff'), '+.4f')} | "
                         f"{'-' if not ci else f'[{ci[0]:+.4f}, {ci[1]:+.4f}]'} |")
        lines.append("")
    lines += ["### Null: the untouched model", "", "| form | test | p | Holm-adjusted p |", "|---|---|---|---|"]
    for form, fam in null.items():
        lines += [f"| {form} | {n} | {p:.3g} | {a:.3g} |" for (n, p), a in zip(fam["tests"], fam["adjusted"],
                                                                              strict=True)]
    lines += ["", *(f"- {form}: smallest Holm-adjusted p {min(fam['adjusted']):.3g}: "
                    f"{'passes' if fam['passes'] else 'FAILS'}." for form, fam in null.items()), ""]
    for kind, c in controls.items():
        lines += [f"### Control `{kind}`", "", "| metric | benchmark C (p) | AUROC C vs U (exact p) | C on C | C on U "
                  "| flagged C / U (q = 0.1) | caught |", "|---|---|---|---|---|---|---|"]
        for m, r in c["metrics"].items():
            lines.append(f"| {m} | {_f(r['bench_c'])} ({_f(r['bench_p'], '.2g')}) | {_f(r['auroc'])} "
                         f"({_f(r['auroc_p'], '.2g')}; {r['n_c']} C, {r['n_u']} U) | {_f(r['c_on_c'])} | "
                         f"{_f(r['c_on_u'])} | {r['flag_c']} / {r['flag_u']} | {'yes' if r['caught'] else 'no'} |")
        lines.append("")
    return lines


def decide(null: dict[str, Any], controls: dict[str, dict[str, Any]]) -> dict[str, bool]:
    """Per candidate: passes the null and catches every control that took."""
    form_of = {"p_all": "raw", "p_all_cal": "calibrated", "p_all_net": "net"}
    return {m: null[form_of[m]]["passes"] and all(c["metrics"][m]["caught"] for c in controls.values())
            for m in CANDIDATES}


def _verdict(got: dict[str, bool], names: tuple[str, ...]) -> str:
    ok = [m for m in names if got[m]]
    return (f"{', '.join(ok)} meet{'s' if len(ok) == 1 else ''} the rule." if ok else
            "neither meets the rule.")


def main() -> None:
    """Build, probe and write the file."""
    from zcp_core.probe.ktwins import DEFAULT_TWINS

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", default="runs/bench-lab-math500", help="work folder (resumed)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "lab_math500.md"))
    args = ap.parse_args()
    work, clock, k = ROOT / args.runs, Clock(), DEFAULT_TWINS
    builds = {kind: build(kind) for kind in BUILDS}
    checks = {kind: took(b) for kind, b in builds.items()}
    body = ["Builds (`zcp lab build --dataset data/math500/test.jsonl ...`; 40 C and 40 U drawn from items with a "
            "template twin):", "", "| build | name | training format | manipulation check: gain (95% CI) | p | took |",
            "|---|---|---|---|---|---|"]
    for kind, b in builds.items():
        t = checks[kind]
        body.append(f"| {kind} | `{b['name']}` | {t['format']} | {t['gain']:+.3f} ({t['ci'][0]:+.3f} to "
                    f"{t['ci'][1]:+.3f}) | {t['p']:.2g} | {'yes' if t['took'] else 'no'} |")
    body += ["", "The manipulation check is the mean per-token log-probability of the build's own training text, lab "
             "minus base, C minus U, with a permutation test of the C/U labels (took when one-sided p < 0.025).", ""]
    decisions = {}
    for tag, seed in SEEDS.items():
        ref, card = twins(seed, k, work)
        runs = {"original": probe("smollm2", DATASET, ref, work / f"null-seed{seed}" / "original"),
                "twin": probe("smollm2", DATASET, ref, work / f"null-seed{seed}" / "twin", "--as-original", "1")}
        null = null_family({arm: with_net(run, "smollm2") for arm, run in runs.items()})
        controls = {kind: control(b, ref, work / f"{kind}-seed{seed}") for kind, b in builds.items()
                    if checks[kind]["took"]}
        body += seed_section(tag, seed, card, null, summary(runs["original"]).get("neutral_prior"), controls)
        decisions[tag] = decide(null, controls)
    a, bb = decisions["A"], decisions["B"]
    body += ["## Decision (the rule in docs/methods/templates.md)", "",
             "| candidate | seed A: null passes and every control that took is caught | seed B |", "|---|---|---|",
             *[f"| {m} | {'yes' if a[m] else 'no'} | {'yes' if bb[m] else 'no'} |" for m in CANDIDATES], "",
             "Raw and calibrated P_all were written down before any run (decided on seed A, confirmed on seed B). "
             "P_all net of the neutral prior was proposed after seed A, so its seed A row is exploratory and seed B "
             "alone decides it.", "",
             f"- Pre-registered candidates on seed A: {_verdict(a, ('p_all', 'p_all_cal'))}",
             f"- `p_all_net` on seed B (fresh): {'passes the null and catches every control' if bb['p_all_net'] else 'does NOT meet the rule'}.",
             "", f"Wall time: {clock():.0f} s."]
    from zcp_core.reference.template_build import METHOD_TEMPLATE

    text = header(f"MATH-500 lab: positive controls and nulls on template twins (K = {k} and a spare)",
                  f"twins `{METHOD_TEMPLATE}` (digits kept), lab builds on smollm2 (SmolLM2-135M-Instruct, embedded)")
    Path(args.out).write_text(text + "\n" + "\n".join(body) + "\n")
    print(Path(args.out).read_text())


if __name__ == "__main__":
    main()
