"""Did the lab's builds take, and does Time-Travel as a completion catch verbatim leakage? (issue 25)

Two measurements, written as one results file:

1. The manipulation check (:mod:`zcp_core.lab.took`) of each named build that is in the cache:
   full-CoT accuracy (greedy, 256 tokens, the kind's prompt style), lab vs base, C minus U, with the
   permutation interval; and ``memorised`` apart.
2. Time-Travel in ``completion`` style on the lab matrix's C/U split (``guided_rouge``,
   ``guided_minus_general``, ``guided_judge`` with the rule judge), for each named kind whose build is
   cached and for ``none`` (the untouched model). AUROCs get the matrix's family-wise CI, with the
   family of the full matrix (every detector, :data:`zcp_core.lab.DETECTORS`).

    python benchmarks/lab_took.py --builds direct,verbatim --guided-kinds verbatim,none \\
        --out benchmarks/results/lab_took.md
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def _head(command: str) -> list[str]:
    from zcp_core.backends.embedded import CONVERTED
    from zcp_core.lab.config import LAB_AMBIGUITY, TRAIN_CODE_VERSION
    from zcp_core.reference.numeric import method_for

    twins = method_for(ambiguity=LAB_AMBIGUITY)  # the lab's own generator, not the default

    sha = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                         cwd=Path(__file__).resolve().parent.parent).stdout.strip()
    return [f"Command: `{command}`",
            f"Made at commit {sha} on {datetime.date.today().isoformat()}. Versions: base model {CONVERTED}, "
            f"lab training {TRAIN_CODE_VERSION}, twins {twins}."]


def _f(v: Any, fmt: str = "+.3f") -> str:
    return "-" if v is None else format(v, fmt)


def took_section(names: list[str], tokens: int) -> tuple[list[str], list[dict[str, Any]]]:
    """The manipulation check of each cached build; a missing one is said to be missing."""
    from zcp_core.lab import LabError
    from zcp_core.lab.evaluate import eval_items
    from zcp_core.lab.matrix import split_sha
    from zcp_core.lab.took import CheckOptions, check_build

    lines = ["| build | kind | split | build s (final loss) | style | lab C / base C | lab U / base U | took_gain | "
             "95% CI | p | took | memorised (C-U) | memorised 95% CI | check s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    out = []
    for name in names:
        try:
            ev = eval_items(name)
        except LabError as e:
            lines.append(f"| {name} | - | - | - | - | - | - | - | - | - | not built: {e} | - | - | - |")
            continue
        t0 = time.time()
        chk = check_build(name, ev, CheckOptions(max_new_tokens=tokens, device="cpu"), progress=True)
        s, d = chk.summary, chk.summary["took_detail"]
        a, m = d["accuracy"], s["memorised"] or {}
        secs = time.time() - t0
        b = ev.build
        sha = split_sha(tuple(b.get("contaminated_ids", ())), tuple(b.get("clean_ids", ())))
        lines.append(f"| {b.get('name', name)} | {b.get('mode')} | {sha} | {_f(b.get('build_seconds'), '.0f')} "
                     f"({_f(b.get('final_loss'), '.3f')}) | {d['prompt_style']} | "
                     f"{a['C_lab']:.3f} / {a['C_base']:.3f} | {a['U_lab']:.3f} / {a['U_base']:.3f} | "
                     f"{_f(s['took_gain'])} | [{_f(s['took_ci'][0])}, {_f(s['took_ci'][1])}] | {d['p']:.2g} | "
                     f"{s['took']} | {_f(m.get('gain'))} | [{_f((m.get('ci') or [None])[0])}, "
                     f"{_f((m.get('ci') or [None, None])[1])}] | {secs:.0f} |")
        out.append({"name": name, "build": b.get("name"), "split_sha": sha, "build_seconds": b.get("build_seconds"),
                    "final_loss": b.get("final_loss"), "seconds": secs, **s})
    return lines, out


def guided_section(kinds: list[str], tokens: int) -> tuple[list[str], list[dict[str, Any]]]:
    """Time-Travel in completion style on the matrix split, AUROC with the full matrix's family-wise CI."""
    from zcp_core.lab import DETECTORS, MatrixOptions
    from zcp_core.lab.evaluate import pair_split
    from zcp_core.lab.matrix import plan_kinds, score_kind, split_sha
    from zcp_core.lab.quality import quality

    dets = ("guided_rouge", "guided_minus_general", "guided_judge")
    opts = MatrixOptions(kinds=tuple(kinds), detectors=dets, guided_prompt_style="completion", took=False,
                         guided_max_new_tokens=tokens, device="cpu")
    plans = plan_kinds(opts)
    lines = [f"| kind | model | split | detector | AUROC | 95% CI | family-wise CI ({len(DETECTORS)} detectors) | "
             "C on C | C on U | mean C / U |", "|---|---|---|---|---|---|---|---|---|---|"]
    out = []
    for kind, plan in plans.items():
        if kind != "none" and not plan.built:
            lines.append(f"| {kind} | - | - | - | not built | - | - | - | - | - |")
            continue
        spec = plan.cfg.model if kind == "none" else f"lab:{plan.name}"
        ev = pair_split(plan.cfg.dataset, plan.split.contaminated, plan.split.clean, opts.seed, label=kind)
        scores, confs, _ = score_kind(kind, spec, ev, opts, None, True, train_format=plan.cfg.train_format)
        cf = confs.set_index("detector")
        sha = split_sha(plan.split.contaminated, plan.split.clean)
        for d in dets:
            g = scores[scores["detector"] == d]
            pos, neg = g.loc[g["split"] == "C", "score"].tolist(), g.loc[g["split"] == "U", "score"].tolist()
            q = quality(pos, neg, family_size=len(DETECTORS))
            cc, cu = cf.loc[d, "c_contaminated"], cf.loc[d, "c_clean"]
            mc, mu = sum(pos) / len(pos), sum(neg) / len(neg)
            lines.append(f"| {kind} | {spec} | {sha} | {d} | {q.auroc:.3f} | [{q.auroc_ci[0]:.2f}, {q.auroc_ci[1]:.2f}] | "
                         f"[{q.auroc_ci_fw[0]:.2f}, {q.auroc_ci_fw[1]:.2f}] | {_f(None if cc != cc else cc, '.3f')} | "
                         f"{_f(None if cu != cu else cu, '.3f')} | {mc:.3f} / {mu:.3f} |")
            out.append({"kind": kind, "model": spec, "split_sha": sha, "detector": d, "auroc": q.auroc, "ci": q.auroc_ci,
                        "ci_fw": q.auroc_ci_fw, "c_contaminated": cc, "c_clean": cu})
    return lines, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--builds", default="direct,verbatim", help="lab builds or aliases for the check")
    ap.add_argument("--guided-kinds", default="verbatim,none", help="kinds for Time-Travel in completion style")
    ap.add_argument("--cot-tokens", type=int, default=256)
    ap.add_argument("--guided-tokens", type=int, default=64)
    ap.add_argument("--out", default=None)
    ap.add_argument("--json", default=None, help="also write the figures as JSON here")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    command = "python benchmarks/lab_took.py " + " ".join(argv if argv is not None else sys.argv[1:])
    head = _head(command)
    names = [x.strip() for x in args.builds.split(",") if x.strip()]
    kinds = [x.strip() for x in args.guided_kinds.split(",") if x.strip()]
    took_lines, took = took_section(names, args.cot_tokens) if names else ([], [])
    guided_lines, guided = guided_section(kinds, args.guided_tokens) if kinds else ([], [])
    text = "\n".join(["# Lab manipulation check and Time-Travel as a completion (issue 25)", "", *head, "",
                      "## Did the build take?", "",
                      "Full-CoT accuracy, greedy, the kind's prompt style, on the build's C and U items, lab model "
                      "and its base; took_gain = mean(lab - base on C) - mean(lab - base on U); the 95% CI inverts "
                      "the two-sample permutation test of the C/U labels (10,000 relabellings); took = CI above 0. "
                      "memorised = mean per-token logprob of the kind's training text, lab - base, C - U "
                      "(reported apart; never decides took).", "", *took_lines, "",
                      "## Time-Travel in completion style", "",
                      "Guided prompt `<dataset>, <split> split:\\n<first piece>`, general prompt the first piece "
                      "alone, no chat template, greedy; completions cut at their first line break; judge = rule "
                      "(exact, or edit similarity >= 0.85). C on C / C on U: the sign-flip permutation test of "
                      "guided > general ROUGE-L per split.", "", *guided_lines, ""])
    if args.out:
        Path(args.out).write_text(text)
    if args.json:
        Path(args.json).write_text(json.dumps({"took": took, "guided": guided}, indent=1, default=str))
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
