"""``zcp reference build`` and ``zcp reference paraphrase``: reference twins and evasive paraphrases.

Both write their items as JSONL (``reference.jsonl`` / ``paraphrase.jsonl``,
items format, ``original_id`` set) into ``--out`` and make that folder a run
(kind ``reference``) with one record per item: what was made, or why not.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zcp_core.cli.common import add_common, add_overwrite, claim_out, emit, log, positive_int
from zcp_core.cli.data import add_fields, fields_from_args

if TYPE_CHECKING:
    from zcp_core.reference.llm import JudgePolicy


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``reference build`` and ``reference paraphrase``."""
    p = sub.add_parser("reference", help="build reference twins and evasive paraphrases of a benchmark")
    rsub = p.add_subparsers(dest="reference_command", metavar="SUBCOMMAND")
    rsub.required = True

    b = rsub.add_parser("build", help="numeric (GSM8K annotations) or LLM isomorphic reference twins")
    b.add_argument("--dataset", required=True, help="benchmark file (GSM8K jsonl for --method numeric)")
    b.add_argument("--method", choices=["numeric", "template", "auto", "llm"], default="numeric",
                   help="numeric (GSM8K calculator traces), template (program templates: --templates, else "
                        "data/templates/<dataset>.jsonl), auto (numeric where it holds, else a template), llm")
    b.add_argument("--templates", default=None, help="templates file for --method template or auto")
    b.add_argument("--generator", default="smollm2", help="model spec of the LLM generator (--method llm)")
    b.add_argument("--judge", default=None,
                   help="model spec of judge 1 (--method llm; required, and not the generator's model)")
    b.add_argument("--judge2", default=None,
                   help="model spec of judge 2 (--method llm; required, and not the generator's or judge 1's model)")
    b.add_argument("--allow-self-judge", action="store_true",
                   help="accept judges equal to the generator or to each other (one vote, not three; "
                        "such twins are recorded as not independently judged and `zcp release` will not use them)")
    b.add_argument("--attempts", type=int, default=3, help="LLM attempts per item (judges' reasons fed back)")
    b.add_argument("--max-tries", type=int, default=50, help="numeric draws per item before giving up")
    b.add_argument("--twins", type=int, default=1, metavar="K",
                   help="twins per item (numeric and template), each with its own coin and seed (twin k uses seed + k - 1; "
                        "metadata twin: 1..K; ids <id>-ref, <id>-ref2, ...); an item's twins never repeat one another, "
                        "and an item with fewer distinct twins gets fewer (failure kind distinct)")
    b.add_argument("--round-rule", choices=["required", "preferred"], default="required",
                   help="numeric: required (default) gives an item a twin only when both sides have one keeping the "
                        "answer's trailing zero and multiple of 5; preferred keeps that only where it can, for more "
                        "coverage and less roundness balance (method ...+round-preferred)")
    b.add_argument("--ambiguity", choices=["tie", "hold"], default="tie",
                   help="numeric: a literal with several readings is tied or bound where that keeps every reading "
                        "true (tie, generator v7, the default) or always held (hold, v5, the lab's twins)")
    b.add_argument("--order", choices=["keep", "off"], default="keep",
                   help="numeric: a twin keeps the original's order between every step result and the numbers the "
                        "question states beside the chain, with their products and sums (keep, generator v8, the "
                        "default), or not (off, v7)")
    b.add_argument("--prior-model", default="smollm2",
                   help="model whose neutral prior of the answers goes into the twin card (`none`: leave it out)")
    _shared(b)
    b.set_defaults(func=build)

    q = rsub.add_parser("paraphrase", help="evasive paraphrases: same numbers and answer, new words")
    q.add_argument("--dataset", required=True)
    q.add_argument("--method", choices=["deterministic", "llm"], default="deterministic")
    q.add_argument("--versions", type=int, default=1, help="paraphrases per item")
    q.add_argument("--model", default="smollm2", help="model spec for --method llm")
    _shared(q)
    q.set_defaults(func=paraphrase)

    from zcp_core.cli import reference_templates

    reference_templates.register(rsub)


def _shared(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="output folder (a run folder)")
    add_overwrite(p)
    p.add_argument("--limit", type=positive_int, default=None, help="only the first N items")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--no-cache", action="store_true", help="bypass the response cache")
    add_fields(p)
    add_common(p)


def _items(args: argparse.Namespace) -> list[Any]:
    from zcp_core.data import load_items

    items = load_items(args.dataset, fmt=args.format, fields=fields_from_args(args))
    return items[: args.limit] if args.limit else items


def _backend(spec: str, args: argparse.Namespace) -> Any:
    from zcp_core.cli.common import backend_from_args

    return backend_from_args(args, spec)


def _judge_specs(args: argparse.Namespace) -> tuple[str, str]:
    """Judge 1 and 2 specs, refused (before any model loads) when they are not independent votes."""
    from zcp_core.errors import ZcpError
    from zcp_core.reference import judge_conflicts

    if args.allow_self_judge:
        j1 = args.judge or args.generator
        return j1, args.judge2 or j1
    if not args.judge or not args.judge2:
        raise ZcpError("--method llm needs two judges that are other models than the generator: pass --judge "
                          "SPEC and --judge2 SPEC (or --allow-self-judge to accept one model voting for itself)")
    clash = judge_conflicts(args.generator, [args.judge, args.judge2])
    if clash:
        raise ZcpError("; ".join(clash) + ": greedy, cached judges of one model are one vote. Pass other "
                          "models, or --allow-self-judge to accept this")
    return args.judge, args.judge2


def _build_llm(args: argparse.Namespace, items: list[Any], config: dict[str, Any]) -> tuple[Any, str, Any]:
    """LLM twins with two judges; records which models generated and judged (config and each twin)."""
    from zcp_core.errors import ZcpError
    from zcp_core.reference import build_reference_llm, judge_conflicts

    j1_spec, j2_spec = _judge_specs(args)
    loaded: dict[str, Any] = {}
    for spec in (args.generator, j1_spec, j2_spec):
        if spec not in loaded:
            loaded[spec] = _backend(spec, args)
    gen = loaded[args.generator]
    policy: JudgePolicy = "allow_self" if args.allow_self_judge else "distinct"
    # Two specs can name one model ("smollm2" and its hf: path): check the loaded model ids as well.
    clash = judge_conflicts(gen.model_id, [loaded[j1_spec].model_id, loaded[j2_spec].model_id])
    if clash and policy == "distinct":
        raise ZcpError("; ".join(clash) + " (by model id): pass other models, or --allow-self-judge")
    rs = build_reference_llm(gen, [loaded[j1_spec], loaded[j2_spec]], items, attempts=args.attempts,
                             seed=args.seed, judge_policy=policy)
    config.update(generator=args.generator, judge=j1_spec, judge2=j2_spec, attempts=args.attempts,
                  judge_policy=policy, models={
                      "generator": {"spec": args.generator, "model": gen.model_id, "revision": gen.revision},
                      "judges": [{"spec": s, "model": loaded[s].model_id, "revision": loaded[s].revision}
                                 for s in (j1_spec, j2_spec)]})
    return rs, args.generator, gen.revision


def build(args: argparse.Namespace) -> int:
    """Build reference twins and write them with a run."""
    import pandas as pd

    from zcp_core.data import write_items_jsonl
    from zcp_core.reference import failure_kind, perturb_gsm8k
    from zcp_core.reference.coverage import coverage_comparison
    from zcp_core.reference.distinct import repeats, twins_per_item_histogram
    from zcp_core.reference.order import ORDER
    from zcp_core.runs import RunSpec, write_run

    items = _items(args)
    claim_out(args, args.out, "reference")
    model = None
    revision = None
    config: dict[str, Any] = {"subcommand": "build", "method": args.method, "limit": args.limit}
    if args.method == "numeric":
        if not any(it.metadata.get("calculations") for it in items):
            log("note: no <<expr=result>> calculator annotations found; --method numeric needs GSM8K-style data")
        order = ORDER if args.order == "keep" else None
        sets = [perturb_gsm8k(items, seed=args.seed + k - 1, max_tries=args.max_tries, twin=k,
                              round_rule=args.round_rule, ambiguity=args.ambiguity, order=order)
                for k in range(1, max(args.twins, 1) + 1)]
        rs = sets[0]
        config.update(max_tries=args.max_tries, twins=max(args.twins, 1), round_rule=args.round_rule,
                      ambiguity=args.ambiguity, order=args.order)
    elif args.method in ("template", "auto"):
        from zcp_core.cli.reference_templates import build_sets

        sets = build_sets(args, items, config)
        rs = sets[0]
    else:
        rs, model, revision = _build_llm(args, items, config)
        sets = [rs]
    out = Path(args.out)
    jsonl = write_items_jsonl(out / "reference.jsonl", [t for r in sets for t in r.items])
    rows = []
    for k, r in enumerate(sets, 1):
        by_orig = {it.original_id: it for it in r.items}
        fails = {f.id: f for f in r.failures}
        rows += [_row(it, by_orig.get(it.id), fails.get(it.id), config, r.method, k) for it in items]
    n, ok = len(items), len(rs.items)
    kinds = dict(Counter(failure_kind(f.reason) for f in rs.failures))
    summary = {
        "method": rs.method, "n": n, "traced": ok, "failed": n - ok, "traced_share": ok / n if n else 0.0,
        "failures_by_kind": kinds, "reference": str(jsonl), "out": str(out),
        "headline": {"label": {"numeric": "traced share", "llm": "accepted share"}.get(args.method, "covered share"),
                     "value": round(ok / n, 4) if n else 0.0},
    }
    if "shares" in config:
        summary["shares"] = config["shares"]
    if len(sets) > 1:
        summary["twins"] = [{"twin": k, "traced": len(r.items)} for k, r in enumerate(sets, 1)]
        every = [t for r in sets for t in r.items]
        # JSON keys are text: "2": 40 items with exactly 2 distinct twins
        histogram = twins_per_item_histogram(every, items)
        summary["twins_per_item"] = {str(n): c for n, c in histogram.items()}
        summary["repeated_twins"] = repeats(every)
    card = _card(args, items, rs)  # twin 1: do the twins look like their originals, and are they as easy?
    summary["twin_card"] = card.as_dict()
    coverage = coverage_comparison(items, {t.original_id for t in rs.items if t.original_id})
    summary["coverage"] = coverage.to_dict()
    write_run(out, RunSpec(kind="reference", config=config, command=" ".join(["zcp", *sys.argv[1:]]), model=model,
                           model_revision=revision, dataset=(args.dataset,), seed=args.seed,
                           inherits=_inherits(args.dataset, out, f"reference twins made by zcp ({rs.method})")),
              pd.DataFrame(rows), summary, tables={"twin_card": card.frame()})
    text = [f"{ok}/{n} items got a reference twin ({rs.method}); wrote {jsonl}"]
    text += [f"  failed ({k}): {v}" for k, v in sorted(kinds.items(), key=lambda kv: -kv[1])]
    if len(sets) > 1:
        text.append("  distinct twins per item: " + ", ".join(f"{n}: {c}" for n, c in histogram.items()))
    if "shares" in config:
        sh = config["shares"]
        text.append(f"  by method: numeric {sh['numeric']}, template {sh['template']} of {sh['items']} items")
    text += ["twin card (originals against twins):", card.markdown(), coverage.sentence]
    emit(args, summary, "\n".join(text))
    return 0


def _inherits(dataset: str, out: Path, derived: str) -> dict[str, Any]:
    """The source's licence (its file copied into the run) and citation, which the twins inherit."""
    from zcp_core.publish import derived_ref, license_record

    return {"license": license_record([dataset], out), "source": derived_ref([dataset], derived)}


def _row(it: Any, twin: Any, fail: Any, config: dict[str, Any], method: str, k: int) -> dict[str, Any]:
    """One record of a build: what twin ``k`` of ``it`` is, or why it is missing."""
    from zcp_core.reference import failure_kind

    # Which models generated and judged each twin (LLM); numeric twins are computed, not judged.
    models = config.get("models") or {}
    return {
        "id": twin.id if twin else "", "original_id": it.id, "status": "ok" if twin else "failed",
        "reason": fail.reason if fail else "", "failure_kind": failure_kind(fail.reason) if fail else "", "twin": k,
        "answer": twin.answer if twin else "", "original_answer": it.answer,
        "attempts": len(fail.attempts) if fail else len(twin.metadata.get("attempts", [])) if twin else 0,
        "generated_by": (models.get("generator") or {}).get("model") or method,
        "judged_by": ", ".join(j["model"] for j in models.get("judges", [])),
        "fallback": bool((twin.metadata.get("side") or {}).get("fallback")) if twin else False,
    }


def _card(args: argparse.Namespace, items: list[Any], rs: Any) -> Any:
    """The twin card of ``rs`` against ``items``, with the neutral prior of ``--prior-model`` unless `none`."""
    from zcp_core.reference import failure_kind, twin_card
    from zcp_core.reference.card import with_neutral_prior

    card = twin_card(items, rs.items, [failure_kind(f.reason) for f in rs.failures])
    if args.prior_model.lower() != "none" and rs.items:
        card = with_neutral_prior(card, _backend(args.prior_model, args), items, rs.items)
    return card


def paraphrase(args: argparse.Namespace) -> int:
    """Write evasive paraphrases with a run."""
    import pandas as pd

    from zcp_core.data import write_items_jsonl
    from zcp_core.reference import failure_kind, paraphrase_llm, reword_deterministic
    from zcp_core.runs import RunSpec, write_run

    items = _items(args)
    claim_out(args, args.out, "reference")
    model = revision = None
    if args.method == "deterministic":
        ps = reword_deterministic(items, versions=args.versions, seed=args.seed)
    else:
        backend = _backend(args.model, args)
        ps = paraphrase_llm(backend, items, versions=args.versions, seed=args.seed)
        model, revision = args.model, backend.revision
    out = Path(args.out)
    jsonl = write_items_jsonl(out / "paraphrase.jsonl", ps.items)
    rows = [{"id": p.id, "original_id": p.original_id, "version": int(p.metadata.get("version", 0)),
             "status": "ok", "reason": "", "failure_kind": "", "change_fraction": f}
            for p, f in zip(ps.items, ps.change_fraction, strict=True)]
    for fl in ps.failures:
        orig, _, k = fl.id.rpartition("-para")
        rows.append({"id": fl.id, "original_id": orig, "version": int(k or 0), "status": "failed",
                     "reason": fl.reason, "failure_kind": failure_kind(fl.reason), "change_fraction": float("nan")})
    fr = list(ps.change_fraction)
    want = len(items) * args.versions
    summary = {
        "method": ps.method, "n_items": len(items), "versions": args.versions, "made": len(ps.items),
        "failed": len(ps.failures), "change_fraction_mean": sum(fr) / len(fr) if fr else None,
        "change_fraction_min": min(fr) if fr else None,
        "failures_by_kind": dict(Counter(failure_kind(f.reason) for f in ps.failures)),
        "paraphrase": str(jsonl), "out": str(out),
        "headline": {"label": "paraphrases made", "value": round(len(ps.items) / want, 4) if want else 0.0},
    }
    config = {"subcommand": "paraphrase", "method": args.method, "versions": args.versions, "limit": args.limit}
    write_run(out, RunSpec(kind="reference", config=config, command=" ".join(["zcp", *sys.argv[1:]]), model=model,
                           model_revision=revision, dataset=(args.dataset,), seed=args.seed,
                           inherits=_inherits(args.dataset, out, f"paraphrases made by zcp ({ps.method})")),
              pd.DataFrame(rows).sort_values(["original_id", "version"], kind="stable"), summary)
    mean = f"{summary['change_fraction_mean']:.3f}" if fr else "n/a"
    lo = f"{summary['change_fraction_min']:.3f}" if fr else "n/a"
    emit(args, summary, f"{len(ps.items)}/{want} paraphrases ({ps.method}); non-numeric change mean {mean}, "
                        f"min {lo}; {len(ps.failures)} failed; wrote {jsonl}")
    return 0
