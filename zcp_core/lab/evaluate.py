"""``zcp lab evaluate``: how well ZCP finds the contamination the lab put in.

The probe runs once, batched, on C and U together against their numeric
reference twins; confidences are then computed for C and for U separately.
Per-item detection quality is the AUROC (and the TPR at 5% FPR) of the
zero-CoT original-minus-reference gap, with C items positive and U negative.

The evaluate run (kind ``lab``, ``summary["stage"] == "evaluate"``) holds:
    records: the probe records plus ``split`` (``C``/``U``).
    gaps: ``pair_id, split, label, metric, suspect, reference, gap`` (one row per pair and metric).
    roc: ``metric, fpr, tpr, threshold`` (ROC points of each metric's gap).
    confidence: ``split`` (``C``, ``U`` or ``all``), ``metric, n, effect, p, bf10, confidence, direction,
        reason`` (``reason`` is ``too few pairs for a verdict (n < 10)`` where a split has fewer than
        ``stats.MIN_PAIRS`` pairs; its ``p``, ``bf10`` and ``confidence`` are then empty).
    flips: the probe's per-pair flags (``flip``, ``flagged``, ``p_all_gap``...) plus ``split``.
    dropped: ``id, split, reason`` for C/U items without a reference twin now.
    did_gaps, did_confidence, control_records: with a control model (by default the build's base model,
        :mod:`zcp_core.lab.did`): the per-item difference of gaps, its confidence per split, the control's records.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from zcp_core.lab.config import LAB_AMBIGUITY, LAB_RUN_KIND, LabError
from zcp_core.runs import RunSpec, write_run

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.probe import AnswerFormat, ProbeConfig
    from zcp_core.schema import Item

DEFAULT_METRICS = ("acc", "p_first", "p_all")
#: The issue's targets: C on C for the logit metrics, C on U for every metric, and the clean model.
TARGET_C_ON_C = 0.95
TARGET_C_ON_U = 0.6


@dataclass(frozen=True)
class EvalOptions:
    """How to evaluate a lab build.

    Attributes:
        con: Also measure Con (needs a full CoT per item; slow on a CPU).
        calibrate: Also measure ``p_first_cal``/``p_all_cal`` (answer-prior calibration, one more prefill
            per item; :mod:`zcp_core.probe.calibrate`).
        model: Model spec to audit instead of ``lab:<name>`` (e.g. ``smollm2``: the clean base).
        device: Device for local backends.
        batch_size: Requests per batch.
        cache: Use the persistent response cache.
        seed: Reference and bootstrap seed.
        n_resamples: Bootstrap resamples for continuous metrics.
        max_new_tokens: Zero-CoT answer token budget (the probe's default 32).
        answer_format: The probe's zero-CoT answer format (``free``, ``number``, ``auto``).
        control: Control model probed on the same pairs (:mod:`zcp_core.lab.did`): ``base`` (default, the
            build's base model), a model spec, or ``None``/``none`` for no control.
        took: Run the manipulation check (:mod:`zcp_core.lab.took`: full-CoT accuracy, lab vs base, C minus U).
        cot_max_new_tokens: Full-CoT cap of the manipulation check.
    """

    con: bool = False
    calibrate: bool = False
    model: str | None = None
    device: str = "auto"
    batch_size: int = 16
    cache: bool = True
    seed: int = 0
    n_resamples: int = 10_000
    max_new_tokens: int = 32
    answer_format: AnswerFormat = "free"
    control: str | None = "base"
    took: bool = True
    cot_max_new_tokens: int = 256

    @property
    def metrics(self) -> tuple[str, ...]:
        """Metrics probed: acc, p_first, p_all (+ con, + p_first_cal, p_all_cal)."""
        return (*DEFAULT_METRICS, *(("con",) if self.con else ()),
                *(("p_first_cal", "p_all_cal") if self.calibrate else ()))


@dataclass(frozen=True)
class LabEvaluation:
    """What :func:`evaluate_lab` returns.

    Attributes:
        summary: The ``--json`` object (``contaminated``, ``clean``, ``auroc``, ``tpr_at_5fpr``, ``mode``...; with
            a control also ``control`` and ``did``, the latter shaped like the top level).
        tables: The run's tables (``records``, ``gaps``, ``roc``, ``confidence``, ``flips``, ``dropped``).
        run_path: The run folder, when ``out`` was given.
    """

    summary: Mapping[str, Any]
    tables: Mapping[str, Any]
    run_path: Path | None


def detection_quality(gaps: pd.DataFrame) -> dict[str, dict[str, float]]:
    """AUROC and TPR@5%FPR of each metric's gap (C positive, U negative).

    Args:
        gaps: Columns ``metric``, ``split`` (``C``/``U``) and ``gap``.

    Returns:
        ``{metric: {"auroc", "tpr_at_5fpr", "n_pos", "n_neg"}}``; NaN when a side has no finite gap.
    """
    from zcp_core.stats import auroc, tpr_at_fpr

    out = {}
    for metric, g in gaps.groupby("metric", sort=False):
        pos = g.loc[g["split"] == "C", "gap"].astype(float).tolist()
        neg = g.loc[g["split"] == "U", "gap"].astype(float).tolist()
        out[str(metric)] = {"auroc": auroc(pos, neg), "tpr_at_5fpr": tpr_at_fpr(pos, neg, 0.05),
                            "n_pos": sum(not math.isnan(x) for x in pos), "n_neg": sum(not math.isnan(x) for x in neg)}
    return out


def roc_table(gaps: pd.DataFrame) -> pd.DataFrame:
    """ROC points of each metric's gap: columns ``metric, fpr, tpr, threshold``."""
    import pandas as pd

    from zcp_core.stats import roc_curve

    rows = []
    for metric, g in gaps.groupby("metric", sort=False):
        c = roc_curve(g.loc[g["split"] == "C", "gap"].astype(float).tolist(),
                      g.loc[g["split"] == "U", "gap"].astype(float).tolist())
        rows += [{"metric": metric, "fpr": f, "tpr": t, "threshold": th} for f, t, th in zip(c.fpr, c.tpr, c.thresholds)]
    return pd.DataFrame(rows, columns=["metric", "fpr", "tpr", "threshold"])


def targets_report(contaminated: Mapping[str, float | None], clean: Mapping[str, float | None],
                   logit_metrics: Sequence[str] = ("p_first", "p_all")) -> dict[str, bool | None]:
    """Whether the issue's targets hold: C >= 0.95 on C (logit metrics), C <= 0.6 on U (every metric).

    ``None`` when a metric needed for a target was not measured.
    """
    def ok(vals: list[float | None], test: Any) -> bool | None:
        return None if not vals or any(v is None for v in vals) else all(test(v) for v in vals)

    return {
        "c_on_c_logit_ge_0.95": ok([contaminated.get(m) for m in logit_metrics], lambda v: v >= TARGET_C_ON_C),
        "c_on_u_all_le_0.6": ok(list(clean.values()), lambda v: v <= TARGET_C_ON_U),
    }


@dataclass(frozen=True)
class EvalItems:
    """The C and U items of a build that still have a reference twin.

    Attributes:
        build: The build run's summary (mode, profile, ids...).
        dataset: The benchmark file the build drew its split from.
        originals: Items probed as the suspect arm, C and U mixed.
        twins: Their reference twins.
        split_of: ``{id: "C" | "U"}`` for every item of the split.
        dropped: ``id, split, reason`` for items without a twin now.
    """

    build: Mapping[str, Any]
    dataset: str
    originals: tuple[Item, ...]
    twins: tuple[Item, ...]
    split_of: Mapping[str, str]
    dropped: pd.DataFrame


def eval_items(name: str, seed: int = 0) -> EvalItems:
    """Load a build's C/U split and make the numeric reference twins it is probed against.

    Raises:
        LabError: Unknown build, or no C or no U item with a reference twin.
    """
    from zcp_core.lab.build import resolve_build
    from zcp_core.runs import load_run

    build = load_run(resolve_build(name))
    cfg = build.manifest.get("config", {})
    bs = {**build.summary, "base_model": cfg.get("model") or build.manifest.get("model")}
    return pair_split(str(build.manifest["config"]["dataset"]), bs["contaminated_ids"], bs["clean_ids"], seed,
                      bs, f"lab build {name!r}")


def pair_split(dataset: str, contaminated: Sequence[str], clean: Sequence[str], seed: int = 0,
               build: Mapping[str, Any] | None = None, label: str = "the split") -> EvalItems:
    """The C and U items of ``dataset`` with their numeric reference twins (no build needed).

    Args:
        dataset: Benchmark file.
        contaminated: Ids of C.
        clean: Ids of U.
        seed: Reference seed.
        build: The build's summary, when there is a build (``{}`` otherwise).
        label: Names the split in errors.

    Raises:
        LabError: No C or no U item has a reference twin.
    """
    import pandas as pd

    from zcp_core.data import load_items
    from zcp_core.reference import perturb_gsm8k

    split_of = {i: "C" for i in contaminated} | {i: "U" for i in clean}
    by_id = {it.id: it for it in load_items(dataset)}
    ref = perturb_gsm8k([by_id[i] for i in split_of], seed=seed, ambiguity=LAB_AMBIGUITY)
    paired = {it.original_id for it in ref.items}
    dropped = pd.DataFrame([{"id": f.id, "split": split_of[f.id], "reason": f.reason} for f in ref.failures],
                           columns=["id", "split", "reason"])
    originals = tuple(by_id[i] for i in split_of if i in paired)
    if not any(split_of[it.id] == "C" for it in originals) or not any(split_of[it.id] == "U" for it in originals):
        raise LabError(f"{label}: no C or no U item has a reference twin any more")
    return EvalItems(dict(build or {}), dataset, originals, tuple(ref.items), split_of, dropped)


def split_confidence(records: pd.DataFrame, config: ProbeConfig) -> pd.DataFrame:
    """Contamination Confidence per split: columns ``split, metric, n, effect, p, bf10, confidence, direction, reason``.

    ``all`` pools C and U: the figure that matters for a model that was never fine-tuned (the clean base).
    A split with fewer than ``stats.MIN_PAIRS`` pairs gets no confidence (``None``) and the reason.
    """
    import pandas as pd

    from zcp_core.probe import CONFIDENCE_KEYS, confidence_summary

    rows = []
    for sp in ("C", "U", "all"):
        part = records if sp == "all" else records[records["split"] == sp]
        cs = confidence_summary(part, config.metrics, **config.test_options())
        rows += [{"split": sp, "metric": m, **{k: v.get(k) for k in CONFIDENCE_KEYS}, "reason": v.get("reason", "")}
                 for m, v in cs["metrics"].items() if m in config.metrics]
    return pd.DataFrame(rows)


def split_gaps(records: pd.DataFrame, metrics: Sequence[str], split_of: Mapping[str, str]) -> pd.DataFrame:
    """Per-pair gaps of each metric at r = 0, labelled 1 for C and 0 for U (the input of the ROC)."""
    import pandas as pd

    from zcp_core.probe import item_gaps

    gaps = pd.concat([_float_gaps(item_gaps(records, m)).assign(metric=m) for m in metrics], ignore_index=True)
    gaps["split"] = gaps["pair_id"].map(split_of)
    gaps["label"] = (gaps["split"] == "C").astype(int)
    return gaps


def evaluate_lab(name: str, opts: EvalOptions | None = None, out: str | Path | None = None,
                 backend: Any = None) -> LabEvaluation:
    """Probe a lab build on C and U against their reference twins.

    Args:
        name: Lab build name or alias (``direct``, ``evasive``, ``smoke``...).
        opts: Evaluation options (defaults: acc, p_first, p_all; no Con).
        out: Run folder to write (``None`` writes nothing).
        backend: A ready backend (tests); default: ``load_backend(opts.model or "lab:<name>")``.

    Raises:
        LabError: Unknown build, or no C/U pair left with a reference twin.
    """
    from zcp_core.probe import ProbeConfig, run_probe

    opts = opts or EvalOptions()
    t0 = time.time()
    ev = eval_items(name, opts.seed)
    spec = opts.model or f"lab:{name}"
    if backend is None:
        from zcp_core.backends import load_backend

        backend = load_backend(spec, cache="default" if opts.cache else None, device=opts.device,
                               batch_size=opts.batch_size)
    pcfg = ProbeConfig(metrics=opts.metrics, seed=opts.seed, n_resamples=opts.n_resamples,
                       max_new_tokens=opts.max_new_tokens, answer_format=opts.answer_format)
    control = _control(opts, ev.build)
    res = run_probe(backend, ev.originals, ev.twins, pcfg, model_spec=spec, dataset_paths=(ev.dataset,),
                    control=control)
    records = res.records.assign(split=res.records["pair_id"].map(ev.split_of))
    confidence = split_confidence(records, pcfg)
    gaps = split_gaps(records, opts.metrics, ev.split_of)
    flips = res.items.assign(split=res.items["pair_id"].map(ev.split_of))
    summary = _summary(name, ev, spec, records, confidence, gaps) | {"eval_seconds": time.time() - t0}
    tables = {"gaps": gaps, "roc": roc_table(gaps), "confidence": confidence, "flips": flips, "dropped": ev.dropped}
    if control is not None:
        from zcp_core.lab.did import did_tables

        did_gaps, did_conf = did_tables(res.tables["did_gaps"], ev.split_of, pcfg.test_options())
        summary |= {"control": res.summary["control"], "did": _did_summary(did_gaps, did_conf, control.spec)}
        tables |= {"did_gaps": did_gaps, "did_confidence": did_conf,
                   "control_records": res.tables["control_records"].assign(
                       split=res.tables["control_records"]["pair_id"].map(ev.split_of))}
    if opts.took:  # the manipulation check: did the build take? (zcp_core.lab.took)
        from zcp_core.lab.took import CheckOptions, check_build

        chk = check_build(name, ev, CheckOptions(max_new_tokens=opts.cot_max_new_tokens, seed=opts.seed,
                                                 device=opts.device, batch_size=opts.batch_size, cache=opts.cache),
                          lab=None if opts.model else backend)
        summary |= chk.summary
        tables["took"] = chk.table
    run_path = None
    if out is not None:
        rspec = RunSpec(kind=LAB_RUN_KIND, config={"stage": "evaluate", "name": name, "metrics": list(opts.metrics),
                                                   "seed": opts.seed, "n_resamples": opts.n_resamples,
                                                   "continuous_test": pcfg.continuous_test,
                                                   "max_new_tokens": opts.max_new_tokens,
                                                   "answer_format": opts.answer_format},
                        command=f"zcp lab evaluate --name {name}" + (" --con" if opts.con else "")
                        + (" --calibrate" if opts.calibrate else "")
                        + (f" --answer-format {opts.answer_format}" if opts.answer_format != "free" else "")
                        + (f" --model {opts.model}" if opts.model else "")
                        + (f" --control {opts.control}" if opts.control != "base" else ""),
                        model=spec,
                        model_revision=getattr(backend, "revision", None), dataset=(ev.dataset,), seed=opts.seed)
        run_path = write_run(out, rspec, records, summary, tables=tables)
    return LabEvaluation(summary, {"records": records, **tables}, run_path)


def _control(opts: EvalOptions, build: Mapping[str, Any]) -> Any:
    """The control backend of an evaluation (the build's base model by default), or ``None``."""
    from zcp_core.lab.did import control_spec

    spec = control_spec(opts.control, build)
    if spec is None:
        return None
    from zcp_core.backends import load_backend
    from zcp_core.probe.control import Control

    return Control(load_backend(spec, cache="default" if opts.cache else None, device=opts.device,
                                batch_size=opts.batch_size), spec)


def _did_summary(gaps: pd.DataFrame, confidence: pd.DataFrame, control: str) -> dict[str, Any]:
    """The ``did`` block, shaped like the top level: C of the difference on C and U, its AUROC, the targets."""
    conf = {sp: dict(zip(g["metric"], g["confidence"])) for sp, g in confidence.groupby("split")}
    quality = detection_quality(gaps.rename(columns={"difference": "gap"}))
    head = "p_all" if not math.isnan(quality.get("p_all", {}).get("auroc", math.nan)) else "acc"
    return {"contaminated": conf.get("C", {}), "clean": conf.get("U", {}), "all_items": conf.get("all", {}),
            "auroc": quality[head]["auroc"], "tpr_at_5fpr": quality[head]["tpr_at_5fpr"], "auroc_metric": head,
            "detection": quality, "targets": targets_report(conf.get("C", {}), conf.get("U", {})),
            "relative_to": control}


def _summary(name: str, ev: EvalItems, spec: str, records: pd.DataFrame, confidence: pd.DataFrame,
             gaps: pd.DataFrame) -> dict[str, Any]:
    """The evaluation run's summary: confidence per split, AUROC of the headline metric, targets."""
    conf = {sp: dict(zip(g["metric"], g["confidence"])) for sp, g in confidence.groupby("split")}
    quality = detection_quality(gaps)
    head = "p_all" if not math.isnan(quality.get("p_all", {}).get("auroc", math.nan)) else "acc"
    bs = ev.build
    return {
        "contaminated": conf.get("C", {}), "clean": conf.get("U", {}), "all_items": conf.get("all", {}),
        "auroc": quality[head]["auroc"], "tpr_at_5fpr": quality[head]["tpr_at_5fpr"], "mode": bs["mode"],
        "stage": "evaluate", "auroc_metric": head, "detection": quality, "name": name, "build": bs["name"],
        "model": spec, "profile": bs["profile"], "upper_bound": bool(bs.get("upper_bound")),
        "n_c": int((records["split"] == "C").sum() // 2), "n_u": int((records["split"] == "U").sum() // 2),
        "n_dropped": len(ev.dropped), "acc_rate": _acc_rates(records), "mean_p_all": _mean_p_all(records),
        "targets": targets_report(conf.get("C", {}), conf.get("U", {})),
        "headline": {"label": f"AUROC ({head} gap, C vs U)", "value": quality[head]["auroc"]},
    }


def _float_gaps(g: pd.DataFrame) -> pd.DataFrame:
    """Bool metrics (acc, con) as 0/1 floats, so every metric's gaps share one column type."""
    import pandas as pd

    for col in ("suspect", "reference"):
        g[col] = pd.to_numeric(g[col].astype("Float64"), errors="coerce").astype(float)
    return g


def _acc_rates(records: pd.DataFrame) -> dict[str, float]:
    z = records[records["ratio"] == 0.0]
    return {f"{sp}_{arm}": float(g["acc"].mean()) for (sp, arm), g in z.groupby(["split", "arm"])}


def _mean_p_all(records: pd.DataFrame) -> dict[str, float]:
    z = records[records["ratio"] == 0.0]
    return {f"{sp}_{arm}": float(g["p_all"].mean()) for (sp, arm), g in z.groupby(["split", "arm"])}
