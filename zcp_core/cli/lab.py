"""``zcp lab build | evaluate | matrix | list``: the contamination lab."""

from __future__ import annotations

import argparse

from zcp_core.cli.common import add_common, add_overwrite, claim_out, emit, log, positive_int
from zcp_core.lab.config import MODES


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``lab build``, ``lab evaluate``, ``lab matrix``, ``lab dose`` and ``lab list``."""
    p = sub.add_parser("lab", help="build a model with known contamination and measure detectors on it")
    lsub = p.add_subparsers(dest="lab_command", metavar="SUBCOMMAND")
    lsub.required = True

    b = lsub.add_parser("build", help="fine-tune a model on a seeded split C of a benchmark (cached)")
    b.add_argument("--dataset", default="data/gsm8k/test.jsonl", help="benchmark file (default %(default)s)")
    b.add_argument("--mode", default="direct", choices=list(MODES),
                   help="contamination kind. direct: C's questions -> 'The answer is N.'; evasive: paraphrases of C "
                        "only; solution: C's questions -> worked solutions (chat); verbatim: C's raw question + "
                        "solution text, no chat template, loss on every token; paper: the ZCP paper's recipe at lab "
                        "scale (6 paraphrases of each C item with its worked solution, LoRA r=32, then a reward "
                        "stage: 5 samples per C prompt, the correct ones trained on; GRPO with --reward-stage). "
                        "train-solution / train-direct: benign fine-tunes on GSM8K's training split (never a test "
                        "item), the null every real model invites")
    b.add_argument("--profile", default="default", choices=["default", "smoke", "probe-format-upper-bound"],
                   help="size preset; probe-format-upper-bound trains in the probe's own format (upper bound)")
    b.add_argument("--n-contaminated", type=int, default=None, help="|C| = |U| (profile default: 40)")
    b.add_argument("--epochs", type=int, default=None)
    b.add_argument("--lr", type=float, default=None)
    b.add_argument("--batch-size", type=int, default=None, help="training texts per step")
    b.add_argument("--lora-r", type=int, default=None, help="LoRA rank (alpha = 2r)")
    b.add_argument("--paraphrase-versions", type=int, default=None, help="paraphrases per C item (evasive, paper)")
    b.add_argument("--train-format", default=None, choices=["natural", "solution"],
                   help="answer text of direct/evasive (default natural: 'The answer is N.'); the worked-solution "
                        "kind is --mode solution")
    b.add_argument("--max-steps", type=int, default=None)
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--name", default=None, help="build name (default <mode>-<profile>-<key>)")
    b.add_argument("--model", default="smollm2", help="base model: smollm2, hf:PATH or lab:NAME")
    b.add_argument("--runs", default=None, help="runs folder to copy the build run into (default $ZCP_RUNS or runs/)")
    b.add_argument("--threads", type=int, default=2, help="CPU threads for training (default %(default)s)")
    b.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"], help="training device")
    b.add_argument("--reward-stage", default="auto", choices=["auto", "rft", "grpo"],
                   help="paper kind: rft (rejection-sampling fine-tuning, the CPU stage) or grpo (TRL's GRPOTrainer, "
                        "the paper's own); auto: grpo when the device is CUDA")
    b.add_argument("--no-progress", action="store_true")
    add_common(b)
    b.set_defaults(func=build)

    e = lsub.add_parser("evaluate", help="probe C against its reference and U against its reference")
    e.add_argument("--name", default="direct", help="lab build or alias (default %(default)s)")
    e.add_argument("--con", action="store_true", help="also measure Con (generates full CoTs; slow on CPU)")
    e.add_argument("--answer-format", choices=["free", "number", "auto"], default="free",
                   help="the probe's zero-CoT answer format (see zcp probe --help)")
    e.add_argument("--calibrate", action="store_true",
                   help="also measure p_first_cal/p_all_cal (answer-prior calibration; one more prefill per item)")
    e.add_argument("--model", default=None, help="model to audit instead of lab:NAME (e.g. smollm2 for the clean base)")
    e.add_argument("--control", default="base", metavar="SPEC",
                   help="control model probed on the same pairs: the build's gap is also tested against the "
                        "control's gap (the 'did' block, relative to the control). Default: the build's base model; "
                        "'none' for no control. A control that is itself contaminated hides contamination")
    e.add_argument("--no-took", action="store_true",
                   help="skip the manipulation check (full-CoT accuracy of the build against its base, C minus U)")
    e.add_argument("--cot-max-new-tokens", type=int, default=256, help="full-CoT cap of the manipulation check")
    e.add_argument("--check-items", type=positive_int, default=80,
                   help="train kinds: test items (a seeded sample) in the full-CoT accuracy check (default %(default)s)")
    e.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    e.add_argument("--batch-size", type=int, default=16)
    e.add_argument("--no-cache", action="store_true", help="bypass the response cache")
    e.add_argument("--out", default=None, help="run folder (default <runs>/lab-eval-<name>[-<model>])")
    add_overwrite(e)
    add_common(e)
    e.set_defaults(func=evaluate)

    m = lsub.add_parser("matrix", help="every detector against every contamination kind and the untouched model")
    m.add_argument("--kinds", default="direct,evasive,verbatim,solution,paper,none",
                   help="comma list of kinds; none = the untouched base model (default %(default)s)")
    m.add_argument("--detectors", default="zcp_acc,zcp_p_first,zcp_p_all,guided_rouge,guided_minus_general,"
                   "guided_judge,min_k,zlib,cot_acc", help="comma list of detector ids (default: all)")
    m.add_argument("--profile", default="default", choices=["default", "smoke"], help="build profile of every kind")
    m.add_argument("--dataset", default=None, help="benchmark file of the builds (default the profile's)")
    m.add_argument("--n-contaminated", type=int, default=None, help="|C| = |U| of the builds (profile default)")
    m.add_argument("--model", default=None, help="base model of the builds, and the 'none' kind (default smollm2)")
    m.add_argument("--build-missing", action="store_true",
                   help="build kinds that are not cached (about 10 min each); default: say which build to run")
    m.add_argument("--judge", default=None,
                   help="model spec of an LLM judge for guided_judge (another model than the audited one); "
                        "without it guided_judge uses the rule judge (exact, or edit similarity >= 0.85)")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--n-boot", type=int, default=2000, help="bootstrap replicates of the AUROC CIs")
    m.add_argument("--guided-max-new-tokens", type=int, default=64)
    m.add_argument("--guided-prompt-style", default="auto", choices=["auto", "chat", "completion"],
                   help="Time-Travel prompt style (default: the style each kind was trained in)")
    m.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    m.add_argument("--batch-size", type=int, default=16)
    m.add_argument("--threads", type=int, default=2, help="CPU threads of on-demand builds")
    m.add_argument("--no-cache", action="store_true", help="bypass the response cache")
    m.add_argument("--no-progress", action="store_true")
    m.add_argument("--replicates", type=positive_int, default=None, metavar="R",
                   help="build each kind R times (replicate r: split and training seed r) and pool them: median "
                        "AUROC, range, replicates caught, stratified exact p (Holm across the cells)")
    m.add_argument("--single-build", default="evasive,paper", metavar="KINDS",
                   help="with --replicates: kinds built once, whose single builds stand (default %(default)s)")
    m.add_argument("--out", default=None, help="run folder (default <runs>/lab-matrix-<profile>)")
    add_overwrite(m)
    add_common(m)
    m.set_defaults(func=matrix)

    d = lsub.add_parser("dose", help="dose-response: each detector's AUROC against exposures per C item")
    d.add_argument("--kinds", default="solution,paper", help="comma list of built kinds (default %(default)s)")
    d.add_argument("--doses", default="2,6,12",
                   help="exposures per C item: epochs, or paraphrase versions for evasive/paper (default %(default)s)")
    d.add_argument("--detectors", default="zcp_acc,zcp_p_first,zcp_p_all,min_k,zlib,cot_acc",
                   help="comma list of detector ids (default %(default)s)")
    d.add_argument("--profile", default="default", choices=["default", "smoke"])
    d.add_argument("--dataset", default=None)
    d.add_argument("--n-contaminated", type=int, default=None)
    d.add_argument("--model", default=None)
    d.add_argument("--build-missing", action="store_true", help="build the missing (kind, dose) points now")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--n-boot", type=int, default=2000)
    d.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    d.add_argument("--threads", type=int, default=2)
    d.add_argument("--no-progress", action="store_true")
    d.add_argument("--out", default=None, help="run folder (default <runs>/lab-dose-<profile>)")
    add_overwrite(d)
    add_common(d)
    d.set_defaults(func=dose)

    ls = lsub.add_parser("list", help="lab builds and aliases on this machine")
    add_common(ls)
    ls.set_defaults(func=list_cmd)


def build(args: argparse.Namespace) -> int:
    """Build (or reuse) a lab model and print where it is."""
    import shutil
    from dataclasses import replace
    from pathlib import Path

    from zcp_core.lab import build_lab, profile_config
    from zcp_core.lab.config import with_reward_stage
    from zcp_core.runs import runs_dir

    cfg = profile_config(args.profile, args.mode, dataset=args.dataset, n_contaminated=args.n_contaminated,
                         epochs=args.epochs, lr=args.lr, batch_size=args.batch_size, seed=args.seed,
                         paraphrase_versions=args.paraphrase_versions, train_format=args.train_format,
                         max_steps=args.max_steps, model=args.model)
    if args.lora_r is not None:
        cfg = replace(cfg, lora=replace(cfg.lora, r=args.lora_r, alpha=2 * args.lora_r))
    cfg = with_reward_stage(cfg, args.reward_stage, args.device)
    runs = args.runs or str(runs_dir())
    sizes = (f"up to {cfg.n_contaminated} texts of {cfg.train_dataset}" if cfg.train_dataset
             else f"|C|=|U|={cfg.n_contaminated}")
    log(f"lab build: {cfg.mode}/{cfg.profile}, {sizes}, {cfg.epochs} epochs, format {cfg.train_format}, "
        f"base {cfg.model}")
    # The run copy is named after the build, so it exists once per build.
    res = build_lab(cfg, name=args.name, runs_out=None, progress=not args.no_progress,
                    threads=args.threads, device=args.device)
    copy = Path(runs) / f"lab-build-{res.name}"
    shutil.copytree(res.run_path, copy, dirs_exist_ok=True)
    s = dict(res.summary)
    summary = {**s, "cached": res.cached, "seconds": res.seconds, "spec": res.spec, "alias_spec": f"lab:{res.alias}",
               "run": str(copy)}
    for k in ("contaminated_ids", "clean_ids"):
        summary.pop(k, None)
    from zcp_core.lab.report import report
    from zcp_core.runs import load_run

    text = (f"lab model {res.spec} (alias lab:{res.alias}) {'reused from cache' if res.cached else 'built'}\n"
            + report(load_run(copy)).to_text() + f"\nrun: {copy}")
    emit(args, summary, text)
    return 0


def evaluate(args: argparse.Namespace) -> int:
    """Probe a lab model on C and U and print confidences and detection quality (a train kind: its check)."""
    from zcp_core.lab import EvalOptions, evaluate_lab
    from zcp_core.runs import runs_dir

    if _is_train_kind(args.name):
        return _check_train(args)
    model_tag = f"-{args.model.replace(':', '_').replace('/', '_')}" if args.model else ""
    cal_tag = "-cal" if args.calibrate else ""
    out = str(claim_out(args, args.out or str(runs_dir() / f"lab-eval-{args.name}{model_tag}{cal_tag}"), "lab"))
    opts = EvalOptions(con=args.con, calibrate=args.calibrate, answer_format=args.answer_format, model=args.model,
                       device=args.device, batch_size=args.batch_size,
                       cache=not args.no_cache, control=args.control,
                       took=not args.no_took, cot_max_new_tokens=args.cot_max_new_tokens)
    res = evaluate_lab(args.name, opts, out=out)
    emit(args, res.summary, _report_text(out))
    return 0


def _is_train_kind(name: str) -> bool:
    from zcp_core.lab.build import resolve_build
    from zcp_core.lab.config import TRAIN_KINDS
    from zcp_core.runs import load_run

    return load_run(resolve_build(name)).summary.get("mode") in TRAIN_KINDS


def _check_train(args: argparse.Namespace) -> int:
    """A train kind has no C/U split: it gets its own check (did it move; full-CoT accuracy on test items)."""
    from zcp_core.lab.benign import BenignOptions, check_train_build
    from zcp_core.runs import runs_dir

    out = str(claim_out(args, args.out or str(runs_dir() / f"lab-eval-{args.name}"), "lab"))
    opts = BenignOptions(n_test=args.check_items, max_new_tokens=args.cot_max_new_tokens, device=args.device,
                         batch_size=args.batch_size, cache=not args.no_cache)
    res = check_train_build(args.name, opts, out=out, progress=True)
    emit(args, res.summary, _report_text(out))
    return 0


def matrix(args: argparse.Namespace) -> int:
    """Evaluate detectors against lab builds and the untouched model; print and save the table."""
    from zcp_core.lab import MatrixOptions, run_matrix
    from zcp_core.runs import runs_dir

    build = tuple((k, v) for k, v in (("dataset", args.dataset), ("n_contaminated", args.n_contaminated),
                                      ("model", args.model)) if v is not None)
    opts = MatrixOptions(kinds=_csv(args.kinds), detectors=_csv(args.detectors), profile=args.profile, build=build,
                         missing="build" if args.build_missing else "fail", judge=args.judge, seed=args.seed,
                         n_boot=args.n_boot, guided_max_new_tokens=args.guided_max_new_tokens,
                         guided_prompt_style=args.guided_prompt_style, device=args.device,
                         batch_size=args.batch_size, cache=not args.no_cache, threads=args.threads)
    if args.replicates:
        from zcp_core.lab.replicates import run_replicates

        out = str(claim_out(args, args.out or str(runs_dir() / f"lab-matrix-{args.profile}-replicates"), "lab"))
        res = run_replicates(opts, args.replicates, out=out, single=_csv(args.single_build),
                             progress=not args.no_progress)
    else:
        out = str(claim_out(args, args.out or str(runs_dir() / f"lab-matrix-{args.profile}"), "lab"))
        res = run_matrix(opts, out=out, progress=not args.no_progress)
    log(f"run: {res.run_path}")
    emit(args, {"rows": res.summary["rows"], "run": str(res.run_path)}, _report_text(res.run_path))
    return 0


def dose(args: argparse.Namespace) -> int:
    """Build each kind at each dose and measure the detectors; print and save the dose table."""
    from zcp_core.lab import MatrixOptions
    from zcp_core.lab.config import LabError
    from zcp_core.lab.dose import run_dose
    from zcp_core.runs import runs_dir

    try:
        doses = tuple(int(x) for x in _csv(args.doses))
    except ValueError as e:
        raise LabError(f"--doses takes whole numbers separated by commas, not {args.doses!r}") from e
    build = tuple((k, v) for k, v in (("dataset", args.dataset), ("n_contaminated", args.n_contaminated),
                                      ("model", args.model)) if v is not None)
    opts = MatrixOptions(kinds=_csv(args.kinds), detectors=_csv(args.detectors), profile=args.profile, build=build,
                         missing="build" if args.build_missing else "fail", seed=args.seed, n_boot=args.n_boot,
                         device=args.device, threads=args.threads)
    out = str(claim_out(args, args.out or str(runs_dir() / f"lab-dose-{args.profile}"), "lab"))
    res = run_dose(_csv(args.kinds), doses, opts, out=out, progress=not args.no_progress)
    log(f"run: {res.run_path}")
    # the whole summary (kinds, doses, rows, took, builds), so that a script needs no second read of the run
    emit(args, {**res.summary, "run": str(res.run_path)}, _report_text(res.run_path))
    return 0


def _report_text(path: object) -> str:
    """The run's report as text (zcp_core.lab.report): the same numbers as the app page and notebook 02."""
    from pathlib import Path

    from zcp_core.lab.report import report
    from zcp_core.runs import load_run

    return report(load_run(Path(str(path)))).to_text()


def _csv(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",") if x.strip())


def list_cmd(args: argparse.Namespace) -> int:
    """List lab builds and aliases."""
    from zcp_core.lab import lab_root, list_builds

    rows = list_builds()
    lines = [f"{'name':<34} {'mode':<8} {'profile':<26} {'loss':>7} {'steps':>5}  built"]
    for r in rows:
        name = f"{r['name']} -> {r['alias_of']}" if r["alias_of"] else r["name"]
        loss = f"{r['final_loss']:.3f}" if isinstance(r["final_loss"], (int, float)) else "-"
        lines.append(f"{name:<34} {r['mode'] or '-':<8} {r['profile'] or '-':<26} {loss:>7} {r['steps'] or 0:>5}  "
                     f"{str(r['built'])[:19]}")
    if not rows:
        lines = [f"no lab builds in {lab_root()}: run `zcp lab build`"]
    emit(args, {"builds": rows, "headline": {"label": "lab builds", "value": len(rows)}}, "\n".join(lines))
    return 0
