"""The whole answer-leakage pipeline on the embedded SmolLM2-135M over data/arith/problems.jsonl.

generate (nohint, hint; greedy, short chains) -> keep-correct filter -> matched arms -> screen (+ excision).
Model calls go through the response cache, so a rerun with the same settings
makes no new calls. Writes benchmarks/results/afr_embedded.md and, with
--bundle, copies the chain files to data/afr_sample/arith_smollm2/.

    .venv/bin/python benchmarks/afr_embedded.py [--max-new-tokens 96] [--n-boot 2000] [--bundle]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]  # this checkout's zcp_core, not an installed one
from _provenance import header  # noqa: E402

from zcp_core.afr import (  # noqa: E402  (after HF_HUB_OFFLINE is set)
    FILTER_DESCRIPTIONS,
    ChainConfig,
    excision_control,
    filter_dir,
    filter_warnings,
    generate_chains,
    grade_records,
    load_problems,
    read_records,
    resolve_arms,
    save_chains,
    screen,
    screen_report,
)
from zcp_core.backends import load_backend  # noqa: E402


def forced_reading(verdicts, n_chains: int) -> str:  # type: ignore[no-untyped-def]
    """What the forced finishes did to the filter, from the verdicts (measured, not assumed)."""
    forced = verdicts[verdicts["forced_finish"]]
    if 2 * len(forced) <= n_chains:
        return ""
    per = "; ".join(f"{c}: {int(g['correct'].sum())} of {len(g)} forced answers graded correct"
                    for c, g in forced.groupby("condition", sort=False))
    return (f"{len(forced)} of {n_chains} chains end in a forced finish, so the keep-correct filter mostly graded "
            f"answers that box_prefill wrote ({per}; in the hint arm a correct forced answer is the hinted one). "
            "The screens above are therefore not about the model's own writing. ")


def _pct(x: float, n: int) -> str:
    return f"{100 * x:.1f}%" if n else "n/a"


def main() -> None:
    """Run the pipeline and write the results file."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--problems", default=str(ROOT / "data" / "arith" / "problems.jsonl"))
    ap.add_argument("--out", default=str(ROOT / "runs" / "afr-arith-smollm2"))
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument("--temperature", type=float, default=0.0)
    ap.add_argument("--n-boot", type=int, default=2000)
    ap.add_argument("--finish", default="box_prefill", choices=["as_is", "box_prefill"])
    ap.add_argument("--bundle", action="store_true", help="copy the chain files to data/afr_sample/arith_smollm2")
    ap.add_argument("--chains", default=None,
                    help="re-screen chain files saved before (e.g. data/afr_sample/arith_smollm2) instead of generating")
    args = ap.parse_args()
    conds = ["nohint", "hint"]
    t0 = time.perf_counter()
    problems = load_problems(args.problems)
    if args.chains:  # the saved arms, copied so that filtering writes nothing beside the originals
        from zcp_core.afr import records_frame

        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        for c in conds:
            shutil.copy(Path(args.chains) / f"{c}.jsonl", out / f"{c}.jsonl")
        chains = pd.concat([records_frame(read_records(out / f"{c}.jsonl"), c) for c in conds], ignore_index=True)
        revision = "as recorded in the chain files"
    else:
        backend = load_backend("smollm2")
        cfg = ChainConfig(n=1, max_new_tokens=args.max_new_tokens, temperature=args.temperature, finish=args.finish)
        chains = generate_chains(backend, problems, conds, cfg)
        out = save_chains(args.out, chains, cfg, model="smollm2", model_revision=backend.revision,
                          dataset=args.problems)
        revision = backend.revision
    t_gen = time.perf_counter() - t0
    filt = filter_dir(out, conds)  # defaults: filter mathverify, keep first (one chain per problem)
    res = screen(resolve_arms(out), n_boot=args.n_boot)
    ex = excision_control(res, out / "hint_excised.jsonl")
    raw = screen(resolve_arms(out, str(out / "nohint.jsonl"), str(out / "hint.jsonl")), n_boot=args.n_boot)
    boxed = chains.assign(own=~chains["forced_finish"]).groupby("condition")["own"].sum()
    # The seed's cascade on the same chains, graded only (the matched files above stay mathverify's).
    paper = {c: grade_records(read_records(out / f"{c}.jsonl"), c, keep_filter="paper") for c in conds}
    lines = [
        header("Answer-leakage pipeline on the embedded model (SmolLM2-135M-Instruct, CPU)",
               f"model smollm2 revision {revision}; AFR definition of issue 26 (covered = a think block "
               "states the answer; chains without one apart)").rstrip(), "",
        f"Problems: `data/arith/problems.jsonl` ({len(problems)} one- and two-step arithmetic word problems, "
        f"seeded script). Conditions nohint and hint, 1 chain per problem, temperature {args.temperature} "
        f"(0 = greedy), max {args.max_new_tokens} new tokens, finish `{args.finish}` (chains without a \\boxed{{}} "
        "answer get one from a short greedy continuation of `The final answer is $\\boxed{`; the tail is recorded). "
        + (f"The chains were not generated by this run: they are the saved chain files `{Path(args.chains).name}/` "
           "(made by this script's generation with the same settings), re-filtered and re-screened here."
           if args.chains else f"Generation + model load took {t_gen:.0f} s wall on a shared 2-core CPU box "
           "(0 s when the response cache already holds the chains)."), "",
        f"Keep-correct filter: `{filt.keep_filter}` ({FILTER_DESCRIPTIONS[filt.keep_filter]}); keep: "
        f"`{filt.keep}` (the first kept chain per problem, lowest sample index, in each arm). A *forced finish* is "
        "a chain whose final answer box_prefill wrote, not the model.", "",
        "| condition | chains | boxed by the model | forced finishes | correct (mathverify) | correct (paper "
        "cascade, graded only) | problems kept | matched chains | forced finishes among matched |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in conds:
        k = filt.counts[c]
        lines.append(f"| {c} | {k['chains']} | {boxed.get(c, 0)} | {k['chains'] - boxed.get(c, 0)} | {k['kept']} | "
                     f"{int(paper[c]['kept'].sum())} | {k['kept_uids']} | {k['matched_chains']} | "
                     f"{k['matched_forced']} |")
    lines += ["", f"**Matched pairs kept (problems correct in both arms): {len(filt.matched_uids)} of {len(problems)}.**",
              "", *filter_warnings(filt), "", "Screen on the matched arms (the first line uses the paper's "
              "denominator, chains whose think block states the answer, with each n; SmolLM2 writes no think "
              "block, so it has no paper's AFR and its chains are reported apart, as their own group):", "", "```", screen_report(res), "```", "",
              f"Excision control: {ex.n_excised} answer-first leaked chains edited; AFR of the excised leaked arm "
              f"{_pct(ex.stats.afr_covered, ex.stats.n_covered)} (n={ex.stats.n_covered}, covered chains); all chains "
              f"{100 * ex.stats.afr_all:.1f}% (n={ex.stats.n_chains}).", "",
              "For reference, the screen on the unfiltered arms (all 40 chains each, before keep-correct):", "",
              "```", screen_report(raw), "```", "",
              forced_reading(filt.verdicts, len(chains)) + "With this few matched pairs the run shows that the "
              "pipeline works end to end on the embedded model; it is not a finding about the model."]
    dest = ROOT / "benchmarks" / "results" / "afr_embedded.md"
    dest.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    if args.bundle:
        b = ROOT / "data" / "afr_sample" / "arith_smollm2"
        b.mkdir(parents=True, exist_ok=True)
        for c in conds:
            for suffix in ("", "_matched"):
                shutil.copy(out / f"{c}{suffix}.jsonl", b / f"{c}{suffix}.jsonl")
        print(f"copied chain files to {b}")


if __name__ == "__main__":
    main()
