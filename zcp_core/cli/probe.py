"""``zcp probe``, ``zcp confidence`` and ``zcp release``: the Zero-CoT probe from the command line.

Examples::

    zcp probe --model smollm2 --dataset data/gsm8k/test.jsonl --limit 50 --out runs/probe-gsm8k50 \\
        --metrics acc,con,p_first,p_all --cot-tokens 64
    zcp confidence runs/probe-gsm8k50 --json
    zcp release runs/probe-gsm8k50 --out releases/gsm8k-refreshed
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from zcp_core.cli.common import (
    add_common,
    add_model,
    add_overwrite,
    claim_out,
    emit,
    finite_json,
    log,
    open_probability,
    positive_int,
    probability,
)
from zcp_core.probe.calibrate import CALIBRATE_MODES, PRIOR_BAND
from zcp_core.probe.ktwins import DEFAULT_FDR, DEFAULT_FLAG_METRIC, DEFAULT_TWINS, FLAG_METRICS
from zcp_core.probe.verdict import DEFAULT_REPLACE, REPLACE_MODES


def _floats(s: str) -> tuple[float, ...]:
    return tuple(float(x) for x in s.split(",") if x.strip())


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``probe``, ``confidence`` and ``release``."""
    from zcp_core.cli.data import add_fields

    p = sub.add_parser("probe", help="Zero-CoT probe of a benchmark against its reference twins")
    p.add_argument("--dataset", required=True, help="original benchmark file")
    add_fields(p)
    p.add_argument("--reference", default=None,
                   help="reference twins: an items file with original_id, or a `zcp reference build --out` folder; "
                        "omitted for GSM8K: built by numeric perturbation")
    p.add_argument("--twins", type=positive_int, default=None, metavar="K",
                   help=f"twins each original is scored against (default {DEFAULT_TWINS}); one more, the spare, "
                        "is built beside them (K + 1 twins per item; it takes no part in the item's own p and is "
                        "the twin a release publishes). With --reference: its twins numbered 1..K + 1 (default: "
                        "all it holds). Per-item p-values and their flags need 2 distinct twins")
    p.add_argument("--twin", type=positive_int, default=None, metavar="N",
                   help="probe against twin N alone (metadata twin: 1..K) instead of all of an item's twins")
    p.add_argument("--as-original", type=positive_int, default=None, metavar="N",
                   help="let twin N stand as the original arm against the other twins (a null check)")
    p.add_argument("--fdr", type=open_probability, default=DEFAULT_FDR, metavar="Q",
                   help="false-discovery level of the item flags (Benjamini-Hochberg), in (0, 1)")
    p.add_argument("--flag-metric", choices=list(FLAG_METRICS), default=None,
                   help="metric items are flagged on: a P metric's per-item p (false-discovery controlled), "
                        "or acc (the paper's rule: original right, every twin wrong; no false-discovery control). "
                        f"Default {DEFAULT_FLAG_METRIC}, or its calibrated form when calibration is on")
    p.add_argument("--all-originals", action="store_true",
                   help="also answer originals that have no twin (only the benchmark's accuracy reads them)")
    p.add_argument("--paraphrased", default=None, help="evasive paraphrases (items with original_id)")
    p.add_argument("--out", default=None, help="run folder (default runs/probe-<dataset stem>)")
    add_overwrite(p)
    p.add_argument("--metrics", default="acc,p_first,p_all", help="comma list of acc,con,p_first,p_all")
    p.add_argument("--calibrate", nargs="?", const="on", default="auto", choices=list(CALIBRATE_MODES),
                   help="also measure each logit metric net of its answer's neutral prior (p_first_net/p_all_net: "
                        "the gold after 'The answer is \\boxed{'), which leads the verdict, and calibrated "
                        "(p_first_cal/p_all_cal: the gold after the question with its numbers masked; one more prefill "
                        "per item). auto (default): on where the twins' answers are a priori less (or more) likely than the "
                        f"originals' by more than {PRIOR_BAND} nats, as the audited model scores this run's own pairs "
                        "(template twins: always on; numeric twins: off); --calibrate alone means on")
    p.add_argument("--ratios", default="0", help="truncation ratios, e.g. 0,0.25,0.5,0.75,1")
    p.add_argument("--limit", type=positive_int, default=None, help="first N originals (and their twins)")
    p.add_argument("--cot-tokens", type=int, default=256, help="full-CoT token cap")
    p.add_argument("--full-cot", action="store_true", help="generate the full CoT even when r=0 only")
    p.add_argument("--mode", choices=["prefill", "prompt"], default="prefill",
                   help="prefill (open weights) or prompt (closed APIs)")
    p.add_argument("--suffix", default=None, help="forcing suffix (default: the final answer is \\[ \\boxed)")
    p.add_argument("--max-new-tokens", type=int, default=32)
    p.add_argument("--answer-format", choices=["free", "number", "auto"], default="free",
                   help="free (default): the zero-CoT answer may hold anything up to its closing brace; number: "
                        "only a number (forbids a derivation inside the box; shorter, but a model that memorised "
                        "'The answer is N.' loses Acc); auto: number when every gold is a plain number and the "
                        "backend can constrain decoding")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--prior", type=open_probability, default=0.5, help="prior probability of contamination for C")
    p.add_argument("--paired-test", choices=["permutation", "bootstrap"], default="permutation",
                   help="test of the continuous metrics (p_first, p_all): sign-flip permutation (exact up to 16 "
                        "pairs; holds its size at every n) or the paired bootstrap (anti-conservative at small n)")
    p.add_argument("--n-resamples", type=int, default=10_000,
                   help="random sign vectors (permutation, above 16 pairs) or bootstrap resamples")
    p.add_argument("--control", default=None, metavar="SPEC",
                   help="a control model (a model spec, e.g. the audited model's base) probed on the same pairs: "
                        "the audited gap (original - twin) is also tested against the control's gap, per item "
                        "(sign-flip test on log P_all, log P_first and Acc), and reported relative to the control. "
                        "A control that is itself contaminated on these items hides contamination; the comparison "
                        "assumes models of similar strength (a warning says when their twin means differ by more "
                        "than 2x)")
    add_model(p)
    add_common(p)
    p.set_defaults(func=probe_cmd)

    c = sub.add_parser("confidence", help="Contamination Confidence of a probe run, per metric")
    c.add_argument("run", help="probe run folder")
    c.add_argument("--arm", default="original", choices=["original", "paraphrased"], help="suspect arm")
    c.add_argument("--prior", type=open_probability, default=None, help="recompute with this prior (default: as stored)")
    add_common(c)
    c.set_defaults(func=confidence_cmd)

    r = sub.add_parser("release", help="refreshed benchmark: flagged items replaced by verified twins")
    r.add_argument("run", help="probe run folder")
    r.add_argument("--out", required=True, help="release folder")
    add_overwrite(r)
    r.add_argument("--license", default=None,
                   help=("SPDX id (mit, cc-by-nc-4.0...) or licence file, given by someone who holds permission; "
                         "overrides the source's own (default: identified from its LICENSE or SOURCES.md entry)"))
    r.add_argument("--allow-unlicensed", action="store_true",
                   help=("release data whose source has no identifiable licence (the card says so); never overrides "
                         "'All rights reserved'"))
    r.add_argument("--min-confidence", type=probability, default=0.95,
                   help="replace items only when the run has a verdict (n >= 10 pairs) and its headline "
                        "Contamination Confidence is at least this (default %(default)s), in either --replace mode; "
                        "otherwise the benchmark is written unchanged and the card says why")
    r.add_argument("--replace", choices=list(REPLACE_MODES), default=DEFAULT_REPLACE,
                   help="flagged (default): replace the flagged items that have a verified twin; covered: every item "
                        "that has one, flagged or not (a clean release whatever the per-item power)")
    add_common(r)
    r.set_defaults(func=release_cmd)


def _load_sets(args: argparse.Namespace) -> tuple[list[Any], list[Any], list[Any] | None, dict[str, Any]]:
    from zcp_core.cli.data import fields_from_args
    from zcp_core.data import load_items
    from zcp_core.errors import DataError
    from zcp_core.reference.template import load_templates, shipped_templates

    original = load_items(args.dataset, fmt=args.format, fields=fields_from_args(args))
    if args.limit:
        original = original[: args.limit]
    keep = {o.id for o in original}
    notes: dict[str, Any] = {}
    if args.reference:
        from zcp_core.reference import load_reference

        # A `zcp reference build --out` folder or its reference.jsonl.
        twins = load_reference(args.reference)
        if args.twins:  # K twins and the spare
            twins = [it for it in twins if _twin_number(it) <= args.twins + 1]
        if args.as_original is not None:
            original, reference = _twin_as_original(args, original, twins, keep)
            notes["original_arm"] = f"twin {args.as_original}"
            notes["reference_arm"] = f"twin {args.twin}" if args.twin else "the other twins"
        else:
            reference = _pick_twin(twins, args.twin, keep)
        if twins and original and not reference:
            raise DataError(str(args.reference), None, "original_id",
                            f"none of its {len(twins)} twins names an original of {args.dataset} (twins name e.g. "
                            f"{twins[0].original_id!r}, originals are e.g. {original[0].id!r}; "
                            "map the dataset's id column with --id-field or --format items)")
    elif args.as_original is not None or args.twin is not None:
        raise DataError(args.dataset, None, None, "--twin and --as-original need --reference (a `zcp reference "
                                                  "build --twins K` folder)")
    elif original and all(o.source == "gsm8k" and o.metadata.get("calculations") is not None for o in original):
        from zcp_core.reference import perturb_gsm8k

        k = args.twins or DEFAULT_TWINS
        # as `zcp reference build --twins K + 1`: twin j has its own seed (seed + j - 1); the last is the spare
        sets = [perturb_gsm8k(original, seed=args.seed + j - 1, twin=j) for j in range(1, k + 2)]
        reference = [t for r in sets for t in r.items]
        failures = sets[0].failures
        notes["reference_built"] = {"method": sets[0].method, "twins": len(reference), "k": k, "spare": 1,
                                    "failures": len(failures),
                                    "failure_reasons": [f"{f.id}: {f.reason}" for f in failures][:50]}
        log(f"no --reference: built a numeric reference on the fly ({sets[0].method}): {len(reference)} twins "
            f"({k} per item and a spare), {len(failures)} items could not be traced; it is saved in the run as "
            "items_reference.jsonl")
    elif original and shipped_templates(args.dataset) is not None:  # MATH-500: program templates
        from zcp_core.reference.template_build import solver_records, template_twins

        path = shipped_templates(args.dataset)
        assert path is not None
        k = args.twins or DEFAULT_TWINS
        sets = template_twins(original, load_templates(path), seed=args.seed, twins=k + 1,  # K and the spare
                              solved=solver_records(path))
        reference = [t for r in sets for t in r.items]
        failures = sets[0].failures
        notes["reference_built"] = {"method": sets[0].method, "twins": len(reference), "k": k, "spare": 1,
                                    "failures": len(failures), "templates": str(path),
                                    "failure_reasons": [f"{f.id}: {f.reason}" for f in failures][:50]}
        log(f"no --reference: built template twins on the fly from {path.name} ({sets[0].method}): "
            f"{len(reference)} twins ({k} per item and a spare), {len(failures)} items have none; saved in the run as "
            "items_reference.jsonl")
    else:
        raise DataError(args.dataset, None, None,
                        "--reference is required unless the dataset is GSM8K (numeric twins) or has shipped "
                        "templates (data/templates/<dataset>.jsonl)")
    para = [it for it in load_items(args.paraphrased) if it.original_id in keep] if args.paraphrased else None
    return original, reference, para, notes


def _twin_number(it: Any) -> int:
    return int(it.metadata.get("twin", 1) or 1)


def _pick_twin(twins: list[Any], n: int | None, keep: set[str]) -> list[Any]:
    """The twins whose original is probed: every one, or those numbered ``n`` (``metadata["twin"]``, 1 when
    absent)."""
    return [it for it in twins if it.original_id in keep and (n is None or _twin_number(it) == n)]


def _twin_as_original(args: argparse.Namespace, original: list[Any], twins: list[Any],
                      keep: set[str]) -> tuple[list[Any], list[Any]]:
    """``--as-original N``: twin N stands as the original arm, and the other twins (or twin ``--twin``) are
    re-paired with it (their ``original_id`` becomes twin N's id). Items without both are left out."""
    from dataclasses import replace

    from zcp_core.errors import ZcpError

    if args.as_original == args.twin:
        raise ZcpError(f"--as-original {args.as_original} and --twin {args.twin} name the same twin: pick two")
    stand = {it.original_id: it for it in _pick_twin(twins, args.as_original, keep)}
    if not stand:
        raise ZcpError(f"--as-original {args.as_original}: {args.reference} holds no twin numbered "
                       f"{args.as_original} (build it with `zcp reference build --twins K`)")
    others = [it for it in _pick_twin(twins, args.twin, keep) if _twin_number(it) != args.as_original]
    ref = [replace(it, original_id=stand[it.original_id].id) for it in others if it.original_id in stand]
    paired = {it.original_id for it in ref}
    return [replace(stand[o.id], original_id=None) for o in original if o.id in stand and stand[o.id].id in paired], ref


def probe_cmd(args: argparse.Namespace) -> int:
    """Probe original (and paraphrased) items against reference twins and write a run."""
    from zcp_core.cli.common import backend_from_args
    from zcp_core.probe import DEFAULT_SUFFIX, ProbeConfig, run_probe
    from zcp_core.probe.calibrate import choose_calibration, needs_prior
    from zcp_core.runs import atomic_write_json, load_run

    asked = tuple(m.strip() for m in args.metrics.split(",") if m.strip())
    # The arguments are checked before any data is loaded or twins are built (calibration is decided after).
    config = ProbeConfig(metrics=with_calibration(asked, args.calibrate == "on"), ratios=_floats(args.ratios),
                         suffix=args.suffix or DEFAULT_SUFFIX, max_new_tokens=args.max_new_tokens,
                         cot_tokens=args.cot_tokens, full_cot=args.full_cot, mode=args.mode, seed=args.seed,
                         prior=args.prior, continuous_test=args.paired_test, n_resamples=args.n_resamples,
                         answer_format=args.answer_format, flag_metric=args.flag_metric or DEFAULT_FLAG_METRIC,
                         fdr=args.fdr, originals="all" if args.all_originals else "paired")
    original, reference, para, notes = _load_sets(args)
    out = str(claim_out(args, args.out or f"runs/probe-{Path(args.dataset).stem}", "probe"))
    backend = backend_from_args(args)
    prior = None
    if needs_prior(asked, reference):
        from zcp_core.probe.prior import neutral_prior

        # scored by the audited model on this run's own pairs: a reference card's prior was scored by whatever
        # model built the twins
        prior = neutral_prior(backend, original, reference)
        notes["neutral_prior"] = prior.as_dict()
    choice = choose_calibration(args.calibrate, asked, reference, prior)
    config = replace(config, metrics=with_calibration(asked, choice.on),
                     flag_metric=args.flag_metric or default_flag_metric(choice.on))
    notes["calibration"] = choice.as_dict()
    if choice.on and choice.basis != "asked":
        log(f"calibration on (--calibrate auto: {choice.basis.replace('_', ' ')}): p_first_net/p_all_net (net of "
            "the neutral prior) and p_first_cal/p_all_cal are measured, and p_all_net leads the verdict")
    paths = tuple(p for p in (args.dataset, args.reference, args.paraphrased) if p)
    log(f"probing {len(original)} originals, {len(reference)} twins"
        + (f", {len(para)} paraphrases" if para else "") + f" on {args.model}; CoT generated: {config.needs_cot}")
    control = None
    if getattr(args, "control", None):
        from zcp_core.probe.control import Control

        log(f"control model {args.control}: the same pairs are probed again, relative to the control")
        control = Control(backend_from_args(args, args.control), args.control)
    res = run_probe(backend, original, reference, config, paraphrased=para, out=out, model_spec=args.model,
                    dataset_paths=paths, control=control)
    cache = getattr(backend, "cache", None)
    if cache is not None:  # what a rerun after an interruption reused, so a user can see that it resumed
        log(f"model calls: {cache.misses} computed, {cache.hits} answered from the cache ({cache.path})")
    if notes and res.run_path:
        res.summary.update(notes)
        run = load_run(res.run_path)
        atomic_write_json(res.run_path / "manifest.json", {**run.manifest, "summary": res.summary})
    from zcp_core.probe.report import report

    emit(args, res.summary, f"run written to {res.run_path}\n" + (report(res.run_path).to_text() if res.run_path else ""))
    return 0


def default_flag_metric(calibrated: bool) -> str:
    """The flag metric when ``--flag-metric`` is not given: P_all, net of the neutral prior when calibration is on
    (the raw per-item p leans the same way as the raw test where the twins' answers are a priori less likely, and
    the calibrated one cancels memorisation keyed to the question's words: ``lab_math500.md``)."""
    return f"{DEFAULT_FLAG_METRIC}_net" if calibrated else DEFAULT_FLAG_METRIC


def with_calibration(metrics: tuple[str, ...], calibrate: bool) -> tuple[str, ...]:
    """``metrics`` plus both corrected forms (net of the neutral prior, calibrated) of each logit metric in it when
    ``calibrate`` (``--calibrate``)."""
    from zcp_core.errors import ZcpError

    if not calibrate:
        return metrics
    extra = tuple(f"{m}{suffix}" for m in ("p_first", "p_all") for suffix in ("_net", "_cal")
                  if m in metrics and f"{m}{suffix}" not in metrics)
    if not extra and not any(m.endswith(("_cal", "_net")) for m in metrics):
        raise ZcpError("--calibrate calibrates p_first and p_all: add one of them to --metrics")
    return metrics + extra


def confidence_cmd(args: argparse.Namespace) -> int:
    """Print each metric's n, effect with its interval and lower bound, d_z, p and C for a probe run.

    The text is the run's report (:func:`zcp_core.probe.report.report`); ``--json`` the confidence json with
    the run's ``flags`` block (metric, q, flagged, items with a p, twins per item, p floor; a run made before
    some of these fields carries what it stored), strict JSON (``null`` for a missing or non-finite number).
    """
    from zcp_core.probe.report import confidence_of, report
    from zcp_core.runs import load_run

    run = load_run(args.run)
    rep = report(run, args.arm, args.prior)  # refuses a run that is not a probe run
    out = confidence_of(run, args.arm, args.prior)
    from zcp_core.probe.flags import flag_block

    # the flag block the text shows (runs made before it flagged by acc), twins per item counted distinct
    out["flags"] = flag_block(run.summary, run.table("items") if run.has_table("items") else None)
    out["headline"] = {**out["headline"], "reading": rep.headline.reading}
    if run.summary.get("did"):
        out["control"], out["did"] = run.summary.get("control") or {}, run.summary["did"]
    emit(args, finite_json(out), rep.to_text())
    return 0


def release_cmd(args: argparse.Namespace) -> int:
    """Write a refreshed benchmark from a probe run."""
    from zcp_core.probe import release
    from zcp_core.probe.leftover import leftover_text
    from zcp_core.probe.release_card import scores_text

    res = release(args.run, args.out, license=args.license, allow_unlicensed=args.allow_unlicensed,
                  min_confidence=args.min_confidence, replace=args.replace, overwrite=args.overwrite)
    summary = res.to_dict()
    v = res.verdict
    kept = "kept though they have a twin" if res.mode == "covered" else "flagged but kept"
    text = (f"release written to {res.path} (--replace {res.mode}): {res.n_items} items, {len(res.replaced)} "
            f"replaced by verified twins, {len(res.kept)} {kept}\ncanary: {res.canary}")
    if v is not None:
        from zcp_core.probe.verdict import verdict_lines

        # the card's verdict section, as plain text (one wording for the card and the terminal)
        text += "\n" + "\n".join(line.replace("**", "") for line in verdict_lines(v)[4:] if line)
        text += "\n" + leftover_text(res.leftover, v.controlled)
    if sc := scores_text(res.scores):
        text += "\n" + sc
    emit(args, finite_json(summary), text)
    return 0
