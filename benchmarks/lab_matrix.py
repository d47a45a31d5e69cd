"""The full lab matrix, cold then cached: every detector against every kind, with each build's manipulation check.

Runs ``zcp lab matrix --kinds direct,evasive,verbatim,solution,paper,none --build-missing --json`` twice into the
same run folder: first as the cache finds it (on an empty ``ZCP_CACHE`` this is the cold matrix: every build
trained, every response generated), then again (the cached rerun: only statistics are recomputed). It writes
``benchmarks/results/lab_matrix.md``: both wall times, which builds the first pass had to make, each kind's
manipulation check (``took``, the full-CoT gain C - U against the base with its 95% CI, and ``memorised``),
and every detector's AUROC with its 95% and family-wise CIs and its Confidence on C and on U. A row of a build
that did not take is marked: it says nothing about its detectors.

    ZCP_CACHE=/empty/dir HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/lab_matrix.py
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from twin_probe_common import ROOT, Clock, write_result, zcp  # noqa: E402

KINDS = "direct,evasive,verbatim,solution,paper,none"


def _ci(v: object) -> str:
    return f"[{v[0]:.2f}, {v[1]:.2f}]" if isinstance(v, list) and len(v) == 2 and None not in v else "-"


def _f(v: object, fmt: str = ".3f") -> str:
    return format(v, fmt) if isinstance(v, (int, float)) and v == v else "-"


def _cached_builds() -> set[str]:
    lab = Path(os.environ.get("ZCP_CACHE", ROOT / ".zcp_cache")) / "lab"
    return {p.name for p in lab.iterdir() if (p / "build" / "manifest.json").exists()} if lab.is_dir() else set()


def _build_line(b: dict, made: set[str]) -> str:
    lab = Path(os.environ.get("ZCP_CACHE", ROOT / ".zcp_cache")) / "lab"
    path = lab / b["build"] / "build" / "manifest.json"
    s = json.loads(path.read_text())["summary"] if b["build"] and path.exists() else {}
    return (f"| {b['kind']} | {b['build'] or '(base model)'} | {'this run' if b['build'] in made else 'cache'} | "
            f"{_f(s.get('build_seconds'), '.0f')} | {s.get('n_train_texts', '-')} | {_f(s.get('final_loss'))} | "
            f"{b['n_c']}/{b['n_u']} | {b['split_sha'][:12] if b.get('split_sha') else '-'} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kinds", default=KINDS)
    ap.add_argument("--out", default="runs/bench-lab-matrix")
    ap.add_argument("--result", default=str(ROOT / "benchmarks" / "results" / "lab_matrix.md"))
    args = ap.parse_args()
    cmd = ["lab", "matrix", "--kinds", args.kinds, "--build-missing", "--out", args.out, "--json"]
    before = _cached_builds()
    clock = Clock()
    zcp(*cmd)
    first = clock()
    made = _cached_builds() - before
    clock = Clock()
    zcp(*cmd)
    second = clock()
    s = json.loads((Path(args.out) / "manifest.json").read_text())["summary"]
    took = {t["kind"]: t for t in s.get("took", [])}
    state = "cold: an empty cache, every build trained and every response generated" if not before else \
        f"the cache already held {len(before)} builds"
    body = [f"`zcp {' '.join(cmd)}`, run twice into the same folder.", "",
            f"- First pass ({state}): **{first:.0f} s** ({first / 60:.1f} min) wall; builds made in it: "
            f"{', '.join(sorted(made)) or 'none'}.",
            f"- Second pass (cached: builds and model responses from the cache): **{second:.0f} s** "
            f"({second / 60:.1f} min) wall.", "", "## Builds", "",
            "| kind | build | made | build s | training texts | final loss | C/U items | split |",
            "|---|---|---|---|---|---|---|---|", *[_build_line(b, made) for b in s["builds"]], "",
            "## Manipulation check", "",
            "Full-CoT accuracy (greedy, 256 tokens, the kind's own prompt style), lab against its base on the same "
            "items; the gain is the difference in differences C - U with its 95% CI. `memorised`: the kind's own "
            "training text, mean per-token log-probability lab minus base, C minus U (never decides `took`).", "",
            "| kind | took | gain C-U (95% CI) | p | accuracy C lab/base | U lab/base | style | memorised |",
            "|---|---|---|---|---|---|---|---|"]
    for kind, t in took.items():
        if kind == "none":
            continue
        body.append(f"| {kind} | {t.get('took')} | {_f(t.get('took_gain'), '+.3f')} "
                    f"{_ci([t.get('took_ci_lo'), t.get('took_ci_hi')])} | {_f(t.get('took_p'), '.3g')} | "
                    f"{_f(t.get('c_lab'))}/{_f(t.get('c_base'))} | {_f(t.get('u_lab'))}/{_f(t.get('u_base'))} | "
                    f"{t.get('prompt_style') or '-'} | {_f(t.get('memorised'), '+.3f')} |")
    body += ["", "## Matrix", "",
             "AUROC of the per-item score, C positive and U negative; FW CI is family-wise over the kind's measured "
             "detectors. A kind whose build did not take is marked `(did not take)`: a silent detector there says "
             "nothing.", "",
             "| kind | detector | AUROC | 95% CI | FW CI | TPR@5%FPR | C on C | C on U | note |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in s["rows"]:
        t = took.get(r["kind"], {})
        kind = r["kind"] + (" (did not take)" if t.get("took") is False else "")
        note = r.get("reason") or ""
        body.append(f"| {kind} | {r['detector']} | {_f(r.get('auroc'))} | {_ci(r.get('auroc_ci'))} | "
                    f"{_ci(r.get('auroc_ci_fw'))} | {_f(r.get('tpr_at_5fpr'))} | {_f(r.get('c_contaminated'))} | "
                    f"{_f(r.get('c_clean'))} | {note[:90]} |")
    body += ["", "## What it means", "", "(written by hand below, after the run)", ""]
    from zcp_core.lab.config import LAB_AMBIGUITY
    from zcp_core.reference.numeric import method_for

    twins = method_for(ambiguity=LAB_AMBIGUITY)  # the lab's own generator, not the default

    write_result(Path(args.result), "Lab matrix (v5 twins): every detector against every kind, cold and cached",
                 "python benchmarks/lab_matrix.py" + ("" if args.kinds == KINDS else f" --kinds {args.kinds}"), body,
                 f"lab kinds {args.kinds} (profile default), base smollm2, twins {twins}")
    print(Path(args.result).read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
