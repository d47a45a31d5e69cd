"""``zcp afr``: answer-leakage screening (generate, filter, screen, profile).

    zcp afr generate --model smollm2 --problems data/arith/problems.jsonl --conditions nohint,hint --out runs/arith
    zcp afr filter runs/arith --conditions nohint,hint [--filter paper] [--keep all]
    zcp afr screen runs/arith [--excise] [--allow-unequal-arms]
    zcp afr profile base.jsonl --adapter skythought --compare long.jsonl --adapter2 skythought
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from zcp_core.cli.common import add_common, add_model, add_overwrite, claim_out, emit, log, positive_int


def _conditions(s: str) -> list[str]:
    from zcp_core.afr import CONDITIONS

    out = [c.strip() for c in s.split(",") if c.strip()]
    bad = [c for c in out if c not in CONDITIONS]
    if bad:
        raise argparse.ArgumentTypeError(f"unknown condition(s) {', '.join(bad)}; choose from {','.join(CONDITIONS)}")
    return out


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``afr generate|filter|screen|profile``."""
    p = sub.add_parser("afr", help="answer-leakage screening: chains in conditions, keep-correct, AFR and dAFR")
    asub = p.add_subparsers(dest="afr_command", metavar="SUBCOMMAND")
    asub.required = True

    g = asub.add_parser("generate", help="generate chains in conditions (nohint, hint, derivefirst, ignore, finalcheck)")
    add_model(g)
    g.add_argument("--problems", required=True, help="{uid,domain,messages} JSONL, or a GSM8K/MATH file")
    g.add_argument("--conditions", type=_conditions, default=["nohint", "hint"])
    g.add_argument("--n", type=int, default=1, help="samples per problem (seeds seed..seed+n-1)")
    g.add_argument("--out", default=None, help="folder for <condition>.jsonl and the chains run (required unless --dry-run)")
    add_overwrite(g)
    g.add_argument("--system", default=None, help="system message (some models need one to think)")
    g.add_argument("--dry-run", action="store_true", help="print the rendered prompts of two problems and stop")
    g.add_argument("--max-new-tokens", type=int, default=4096)
    g.add_argument("--temperature", type=float, default=0.6)
    g.add_argument("--top-p", type=float, default=0.95)
    g.add_argument("--top-k", type=int, default=20)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--thinking", choices=["auto", "on", "off"], default="on")
    g.add_argument("--finish", choices=["as_is", "box_prefill"], default="as_is",
                   help="box_prefill: give chains without \\boxed{} a boxed final answer by a short greedy "
                        "continuation (for weak models; the appended tail is recorded)")
    g.add_argument("--limit", type=positive_int, default=None, help="first N problems only")
    add_common(g)
    g.set_defaults(func=generate)

    f = asub.add_parser("filter", help="keep-correct filter and matched arms (one chain per problem by default)")
    f.add_argument("dir")
    f.add_argument("--conditions", type=_conditions, default=["nohint", "hint"])
    f.add_argument("--filter", dest="keep_filter", choices=["mathverify", "paper"], default="mathverify",
                   help="mathverify: math-verify only (default); paper: the seed's exact -> math-verify -> "
                        "digit-stripping cascade, for reproducing published numbers")
    f.add_argument("--keep", choices=["first", "all"], default="first",
                   help="first: the first kept chain per problem (lowest sample index) in each arm, as the paper "
                        "(default); all: every kept chain (arms may then differ in size)")
    add_common(f)
    f.set_defaults(func=filter_cmd)

    s = asub.add_parser("screen", help="AFR of the blind and leaked arms, dAFR and bootstrap CIs")
    s.add_argument("dir", nargs="?", default=".")
    s.add_argument("--blind", default="nohint", help="condition name or JSONL file (default nohint)")
    s.add_argument("--leaked", default="hint", help="condition name or JSONL file (default hint)")
    s.add_argument("--threshold", type=float, default=0.2)
    s.add_argument("--excise", action="store_true", help="excision control: drop the answer-stating line")
    s.add_argument("--allow-unequal-arms", action="store_true",
                   help="compare arms of different sizes (refused by default: the paper holds data per arm fixed)")
    s.add_argument("--n-boot", type=int, default=2000)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--out", default=None, help="run folder (default DIR/screen)")
    add_overwrite(s)
    add_common(s)
    s.set_defaults(func=screen_cmd)

    r = asub.add_parser("profile", help="AFR profile of a chain corpus, or two compared on common problems")
    r.add_argument("file", help="the chain corpus to profile; with --compare, the comparison (e.g. the base model)")
    r.add_argument("--adapter", default="messages", help="skythought, qwen25math, gpt3-gsm8k or messages")
    r.add_argument("--compare", default=None,
                   help="the audited corpus on the same problems (e.g. the long-chain model); the difference is "
                        "AFR(--compare) - AFR(FILE): audited minus comparison, as dAFR is leaked minus blind")
    r.add_argument("--adapter2", default=None, help="its adapter (default: --adapter)")
    r.add_argument("--threshold", type=float, default=0.2)
    r.add_argument("--n-boot", type=int, default=2000)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--limit", type=positive_int, default=None, help="first N problems only")
    r.add_argument("--out", default=None, help="run folder (default runs/afr-profile-<name>)")
    add_overwrite(r)
    add_common(r)
    r.set_defaults(func=profile_cmd)


def generate(args: argparse.Namespace) -> int:
    """Generate chains and write ``<out>/<condition>.jsonl`` plus a chains run."""
    from zcp_core.afr import ChainConfig, dry_run, generate_chains, load_problems, save_chains
    from zcp_core.cli.common import backend_from_args

    problems = load_problems(args.problems, limit=args.limit)
    cfg = ChainConfig(n=args.n, max_new_tokens=args.max_new_tokens, temperature=args.temperature, top_p=args.top_p,
                      top_k=args.top_k, seed=args.seed, system=args.system, thinking=args.thinking,
                      finish=args.finish)
    backend = backend_from_args(args)
    if args.dry_run:
        print(dry_run(backend, problems, args.conditions, cfg))
        return 0
    if not args.out:
        from zcp_core.errors import ZcpError

        raise ZcpError("--out is required (unless --dry-run)")
    claim_out(args, args.out, "chains")
    log(f"{len(problems)} problems x {args.n} samples x {len(args.conditions)} conditions on {backend.model_id}")
    chains = generate_chains(backend, problems, args.conditions, cfg)
    out = save_chains(args.out, chains, cfg, model=args.model, model_revision=backend.revision, dataset=args.problems)
    from zcp_core.runs import load_run

    summary = dict(load_run(out).summary)
    emit(args, summary, f"wrote {len(chains)} chains to {out}: " + ", ".join(f"{c}.jsonl" for c in args.conditions)
         + f" ({summary['boxed_by_model']} boxed by the model, {summary['forced_finish']} forced finishes, "
         f"{summary['truncated']} truncated)")
    return 0


def filter_cmd(args: argparse.Namespace) -> int:
    """Keep-correct filter and matched files; writes a chains run in DIR/filter."""
    from zcp_core.afr import FILTER_DESCRIPTIONS, filter_dir, filter_warnings
    from zcp_core.runs import RunSpec, write_run

    res = filter_dir(args.dir, args.conditions, args.keep_filter, args.keep)
    warnings = filter_warnings(res)
    summary = {"headline": {"label": "matched problems", "value": len(res.matched_uids)},
               "conditions": args.conditions, "filter": res.keep_filter,
               "filter_description": FILTER_DESCRIPTIONS[res.keep_filter], "keep": res.keep,
               "counts": {k: dict(v) for k, v in res.counts.items()}, "matched_uids": len(res.matched_uids),
               "files": dict(res.files), "warnings": warnings}
    cfg = {"conditions": args.conditions, "step": "filter", "filter": res.keep_filter, "keep": res.keep}
    write_run(Path(args.dir) / "filter", RunSpec(kind="chains", config=cfg,
                                                 dataset=tuple(str(Path(args.dir) / f"{c}.jsonl") for c in args.conditions)),
              res.verdicts, summary)
    keep = "first kept chain per problem (lowest sample index)" if res.keep == "first" else "every kept chain"
    lines = [f"keep-correct filter: {res.keep_filter} ({FILTER_DESCRIPTIONS[res.keep_filter]}); keep: {res.keep} "
             f"({keep})"]
    lines += [f"{c}: {v['kept']}/{v['chains']} chains correct ({v['kept_uids']} problems); "
              f"{v['matched_chains']} chains in {c}_matched.jsonl ({v['matched_forced']} forced finishes)"
              for c, v in res.counts.items()]
    lines.append(f"matched problems (kept by every condition): {len(res.matched_uids)}")
    emit(args, summary, "\n".join(lines + warnings))
    return 0


def screen_cmd(args: argparse.Namespace) -> int:
    """Write an afr run of the screen and print its report (the paper's denominator first, then all chains)."""
    import pandas as pd

    from zcp_core.afr import excision_control, report, resolve_arms, screen, screen_summary, write_screen_run
    from zcp_core.runs import load_run

    arms = resolve_arms(args.dir, args.blind, args.leaked)
    claim_out(args, Path(args.out) if args.out else Path(args.dir) / "screen", "afr")
    res = screen(arms, args.threshold, args.n_boot, args.seed, "allow" if args.allow_unequal_arms else "refuse")
    summary = screen_summary(res)
    frame = res.frame
    if args.excise:
        ex = excision_control(res, Path(args.dir) / f"{arms.leaked_name}_excised.jsonl")
        st = ex.stats
        summary["excision"] = {"file": str(ex.path), "n_excised": ex.n_excised, "afr_excised": 100 * st.afr_covered,
                               "afr_excised_all": 100 * st.afr_all, "stats": st.to_dict(),
                               "gap_recovered": ex.gap_recovered, "gap_recovered_all": ex.gap_recovered_all}
        frame = pd.concat([frame, ex.frame], ignore_index=True)
    out = Path(args.out) if args.out else Path(args.dir) / "screen"
    cfg = {"threshold": args.threshold, "n_boot": args.n_boot, "seed": args.seed, "blind": args.blind,
           "leaked": args.leaked, "excise": args.excise, "unequal_arms": res.unequal,
           "filter": summary["filter"], "keep": summary["keep"]}
    run = write_screen_run(out, res, cfg, frame, summary)
    log(f"run written to {out}")
    emit(args, summary, report(load_run(run)).to_text())
    return 0


def profile_cmd(args: argparse.Namespace) -> int:
    """One corpus's AFR profile, or two compared on their common problems; writes an afr run."""
    from zcp_core.afr import compare, load_chains, profile, profile_summary, report, write_profile_run

    a = load_chains(args.file, args.adapter, args.limit)
    name_a = Path(args.file).stem
    claim_out(args, Path(args.out) if args.out else Path("runs") / f"afr-profile-{name_a}", "afr")
    cfg = {"adapter": args.adapter, "threshold": args.threshold, "n_boot": args.n_boot, "seed": args.seed,
           "compare": args.compare, "adapter2": args.adapter2 or args.adapter, "limit": args.limit}
    if args.compare:
        b = load_chains(args.compare, args.adapter2 or args.adapter, args.limit)
        name_b = Path(args.compare).stem
        if name_b == name_a:
            name_a, name_b = f"{name_a}(1)", f"{name_b}(2)"
        res = compare(a, b, (name_a, name_b), args.threshold, args.n_boot, args.seed)
        files: tuple[str, ...] = (args.file, args.compare)
    else:
        res = profile(a, name_a, args.threshold, args.n_boot, args.seed)  # type: ignore[assignment]
        files = (args.file,)
    out = Path(args.out) if args.out else Path("runs") / f"afr-profile-{name_a}"
    run = write_profile_run(out, res, files, cfg)
    from zcp_core.runs import load_run

    summary = dict(load_run(run).summary)
    if not args.compare:
        summary.update(profile_summary(res))  # type: ignore[arg-type]
    log(f"run written to {run}")
    emit(args, summary, report(load_run(run)).to_text())
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run ``zcp afr ...`` alone (``python -m zcp_core.cli.afr screen DIR``), with zcp's error handling."""
    from zcp_core.errors import ZcpError

    parser = argparse.ArgumentParser(prog="zcp")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["afr", *(sys.argv[1:] if argv is None else argv)])
    try:
        return int(args.func(args) or 0)
    except ZcpError as e:
        print(f"zcp afr: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
