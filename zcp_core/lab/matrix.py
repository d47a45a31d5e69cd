"""``zcp lab matrix``: every detector against every contamination kind, and the untouched model, on C and U.

A kind is a lab build (``direct``, ``evasive``, ``verbatim``, ``solution``)
or ``none``: the untouched base model, on the split a ``direct`` build of the
same profile draws (``solution`` and ``verbatim`` draw that split too;
``evasive`` draws from the items it can paraphrase, so its split may differ:
the ``builds`` table records each kind's split). Every detector scores each
C and U item of a kind once, higher meaning "more likely in C":

- ``zcp_acc``, ``zcp_p_first``, ``zcp_p_all``: the Zero-CoT probe's
  original-minus-twin gap (:func:`zcp_core.lab.evaluate.split_gaps`); their
  Confidence on C and on U is the probe's paired test per split.
- ``guided_rouge``, ``guided_minus_general``: Time-Travel guided ROUGE-L, and
  guided minus general ROUGE-L; the partition's sign-flip permutation test
  (guided > general) is the Confidence of ``guided_minus_general``. Prompts
  are in the style the kind was trained in (``completion`` for raw-text
  kinds such as ``verbatim``, ``chat`` otherwise; ``guided_prompt_style``
  overrides it); the ``guided`` table records the style of every row.
- ``guided_judge``: 1 when the judge calls the guided completion an exact
  or near-exact match, else 0. The judge is the paper's criteria as a rule
  (exact string, or near-exact at edit similarity >= 0.85) unless an LLM
  judge other than the audited model is given (``judge``).
- ``min_k``, ``zlib``: the membership-inference baselines on the question
  text (:mod:`zcp_core.baselines`); they have no Confidence.
- ``cot_acc``: full-CoT accuracy (greedy, 256 tokens, the kind's prompt
  style) of the original minus its twin; Confidence from the exact McNemar
  test per split, as ``zcp_acc``. It reuses the manipulation check's
  generations and adds the twins'.

Each built kind also gets the manipulation check (:mod:`zcp_core.lab.took`):
``took`` and ``took_gain`` on each of its rows, and the ``took`` table. A
build that did not take says nothing about its detectors.

A kind whose build is not cached stops the command with the ``zcp lab
build`` commands to run (``missing="fail"``, the default), or is built on the
spot (``missing="build"``, ``--build-missing``). Model calls go through the
backend response cache, so a rerun recomputes only the statistics.

The run (kind ``lab``, ``summary["stage"] == "matrix"``) holds:
    records: per-item scores ``kind, detector, id, split, score, reason``.
    matrix: the table, :data:`zcp_core.lab.quality.ROW_COLUMNS` (also ``summary["rows"]``).
    guided: the Time-Travel records of every kind, plus ``kind`` (the completions behind the guided rows).
    builds: ``kind, model, build, key, n_c, n_u, split_sha``.
    took: one row per kind (:func:`zcp_core.lab.took.took_row`): the check's verdict, gain, CI, accuracies.
"""

from __future__ import annotations

import hashlib
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Mapping

from zcp_core.lab.config import LAB_RUN_KIND, LabError, Profile
from zcp_core.runs import RunSpec, write_run

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.lab.build import BuildPlan
    from zcp_core.lab.evaluate import EvalItems

KINDS: tuple[str, ...] = ("direct", "evasive", "verbatim", "solution", "paper", "none")
#: The kinds a matrix evaluates unless told (``paper``'s cold build is the longest; ask for it by name).
DEFAULT_KINDS: tuple[str, ...] = ("direct", "evasive", "verbatim", "solution", "none")
DETECTORS: tuple[str, ...] = ("zcp_acc", "zcp_p_first", "zcp_p_all", "guided_rouge", "guided_minus_general",
                              "guided_judge", "min_k", "zlib", "cot_acc")
JUDGE_NO_C = "the judge gives a count verdict (exact / near-exact matches), not a Contamination Confidence"
ROUGE_NO_C = ("Time-Travel tests guided against general overlap: its Confidence is on the guided_minus_general row; "
              "guided ROUGE-L alone has no test")
BASELINE_NO_C = ("a membership score has no Contamination Confidence of its own: it means something only against "
                 "known non-members (the AUROC)")
Missing = Literal["fail", "build"]


@dataclass(frozen=True)
class MatrixOptions:
    """What the matrix measures and how.

    Attributes:
        kinds: Kinds to evaluate (:data:`KINDS`; ``none`` = the untouched base model).
        detectors: Detector ids (:data:`DETECTORS`).
        profile: Build profile of every kind (``default``, ``smoke``).
        build: ``LabConfig`` overrides shared by every kind's build (e.g. ``(("n_contaminated", 20),)``).
        missing: ``fail`` (say which ``zcp lab build`` to run) or ``build`` (build missing kinds now).
        judge: Model spec of the LLM judge for ``guided_judge`` (``None``: the rule judge, the paper's
            exact / near-exact criteria without a model).
        seed: Reference, guided-cut and bootstrap seed.
        n_resamples: Resamples of the probe's and the guided partition's tests.
        n_boot: Bootstrap replicates of the AUROC CIs.
        max_new_tokens: Zero-CoT answer budget.
        guided_max_new_tokens: Time-Travel completion budget.
        guided_prompt_style: ``auto`` (the style each kind was trained in), ``chat`` or ``completion``.
        device: Device of local backends.
        batch_size: Requests per batch.
        cache: Use the persistent response cache.
        threads: CPU threads for on-demand builds.
        took: Run the manipulation check on every built kind.
        cot_max_new_tokens: Full-CoT cap of the check and of ``cot_acc``.
    """

    kinds: tuple[str, ...] = DEFAULT_KINDS
    detectors: tuple[str, ...] = DETECTORS
    profile: Profile = "default"
    build: tuple[tuple[str, Any], ...] = ()
    missing: Missing = "fail"
    judge: str | None = None
    seed: int = 0
    n_resamples: int = 10_000
    n_boot: int = 2000
    max_new_tokens: int = 32
    guided_max_new_tokens: int = 64
    guided_prompt_style: str = "auto"
    device: str = "auto"
    batch_size: int = 16
    cache: bool = True
    threads: int = 2
    took: bool = True
    cot_max_new_tokens: int = 256

    def __post_init__(self) -> None:
        from zcp_core.lab.config import TRAIN_KINDS

        if benign := [k for k in self.kinds if k in TRAIN_KINDS]:
            raise LabError(f"{', '.join(benign)}: a train kind saw neither C nor U, so it reads 0.5 in the matrix by "
                           "construction; probe it on the test set instead (`zcp probe --model lab:train-direct`, "
                           "benchmarks/probe_train_null.py)")
        bad = [k for k in self.kinds if k not in KINDS] + [d for d in self.detectors if d not in DETECTORS]
        if bad:
            raise LabError(f"unknown kinds or detectors {bad}; kinds: {', '.join(KINDS)}; "
                           f"detectors: {', '.join(DETECTORS)}")
        if not self.kinds or not self.detectors:
            raise LabError("the matrix needs at least one kind and one detector")


@dataclass(frozen=True)
class MatrixResult:
    """What :func:`run_matrix` returns: the summary (with ``rows``), the run's tables and its folder."""

    summary: Mapping[str, Any]
    tables: Mapping[str, Any]
    run_path: Path | None


def build_command(kind: str, opts: MatrixOptions) -> str:
    """The ``zcp lab build`` command that makes a kind's build for these options."""
    extra = "".join(f" --{k.replace('_', '-')} {v}" for k, v in opts.build
                    if k in ("dataset", "n_contaminated", "epochs", "seed", "model"))
    return f"zcp lab build --mode {kind} --profile {opts.profile}{extra}"


def plan_kinds(opts: MatrixOptions) -> dict[str, BuildPlan]:
    """Each kind's build plan (``none`` gets the ``direct`` plan: its split, not its weights)."""
    from zcp_core.lab.build import load_pool, plan_build
    from zcp_core.lab.config import profile_config

    cfgs = {k: profile_config(opts.profile, "direct" if k == "none" else k, **dict(opts.build))  # type: ignore[arg-type]
            for k in opts.kinds}
    pool = load_pool(next(iter(cfgs.values())).dataset)  # every kind shares the dataset: find its twins once
    return {k: plan_build(cfg, pool=pool) for k, cfg in cfgs.items()}


def ensure_builds(plans: Mapping[str, BuildPlan], opts: MatrixOptions, progress: bool = True) -> None:
    """Check every kind's build is cached; build the missing ones when ``opts.missing == "build"``.

    Raises:
        LabError: Naming the ``zcp lab build`` command of each missing kind (``missing="fail"``).
    """
    todo = [k for k, p in plans.items() if k != "none" and not p.built]
    if todo and opts.missing == "fail":
        cmds = "\n  ".join(build_command(k, opts) for k in todo)
        raise LabError(f"no cached build for {', '.join(todo)}; run\n  {cmds}\n"
                       "or pass --build-missing to build them now (about 10 minutes each on 2 cores)")
    from zcp_core.lab.build import build_lab

    for k in todo:
        build_lab(plans[k].cfg, progress=progress, threads=opts.threads)


def _row(kind: str, det: str, item_id: str, split: str, score: float, reason: str = "") -> dict[str, Any]:
    finite = score is not None and not (isinstance(score, float) and math.isnan(score))
    return {"kind": kind, "detector": det, "id": item_id, "split": split,
            "score": float(score) if finite else math.nan, "reason": "" if finite else (reason or "not scored")}


def _conf(kind: str, det: str, c: Any, u: Any, reason: str = "") -> dict[str, Any]:
    def f(v: Any) -> float:
        return math.nan if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)

    return {"kind": kind, "detector": det, "c_contaminated": f(c), "c_clean": f(u), "c_reason": reason}


def zcp_scores(kind: str, backend: Any, ev: EvalItems, dets: tuple[str, ...], opts: MatrixOptions,
               spec: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per-item original-minus-twin gaps and per-split Confidence of the zcp_* detectors."""
    from zcp_core.lab.evaluate import split_confidence, split_gaps
    from zcp_core.probe import ProbeConfig, run_probe

    metrics = tuple(m for m in ("acc", "p_first", "p_all") if f"zcp_{m}" in dets)
    pcfg = ProbeConfig(metrics=metrics, seed=opts.seed, n_resamples=opts.n_resamples,
                       max_new_tokens=opts.max_new_tokens)
    res = run_probe(backend, ev.originals, ev.twins, pcfg, model_spec=spec, dataset_paths=(ev.dataset,))
    records = res.records.assign(split=res.records["pair_id"].map(ev.split_of))
    gaps = split_gaps(records, metrics, ev.split_of)
    conf = split_confidence(records, pcfg)
    rows = [_row(kind, f"zcp_{g.metric}", g.pair_id, g.split, g.gap, "no gap: a metric is missing on one arm")
            for g in gaps.itertuples(index=False)]
    confs = []
    for m in metrics:
        by = {r.split: r for r in conf[conf["metric"] == m].itertuples(index=False)}
        why = "; ".join(sorted({f"{sp}: {by[sp].reason}" for sp in ("C", "U") if sp in by and by[sp].reason}))
        confs.append(_conf(kind, f"zcp_{m}", getattr(by.get("C"), "confidence", None),
                           getattr(by.get("U"), "confidence", None), why))
    return rows, confs


def guided_style(kind: str, backend: Any, opts: MatrixOptions, train_format: str = "natural") -> str:
    """The Time-Travel prompt style of a kind: the option, or the style the kind was trained in.

    ``none`` (the untouched model) gets ``chat`` when its tokenizer has a chat template, else ``completion``.
    """
    if opts.guided_prompt_style != "auto":
        return opts.guided_prompt_style
    return kind_style(kind, backend, train_format)


def kind_style(kind: str, backend: Any, train_format: str = "natural") -> str:
    """The prompt style a kind was trained in; for ``none``, ``chat`` when the model has a chat template."""
    from zcp_core.guided import default_prompt_style
    from zcp_core.lab.config import trained_style

    if kind != "none":
        return trained_style(train_format)
    tok = getattr(backend, "tokenizer", None)
    return default_prompt_style(tok is None or bool(getattr(tok, "chat_template", None)))


def guided_scores(kind: str, backend: Any, ev: EvalItems, dets: tuple[str, ...], opts: MatrixOptions,
                  judge: Any, progress: bool, style: str = "chat"
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], pd.DataFrame]:
    """Per-item guided ROUGE-L, guided minus general, judge matches; the partition test's Confidence."""
    import pandas as pd

    from zcp_core.guided import GuidedConfig, run_partition, split_items

    name = (ev.originals[0].source or Path(ev.dataset).parent.name).upper()
    parts = {}
    for sp in ("C", "U"):
        its = [it for it in ev.originals if ev.split_of[it.id] == sp]
        cfg = GuidedConfig(name, Path(ev.dataset).stem.split("_")[0], seed=opts.seed,
                           max_new_tokens=opts.guided_max_new_tokens, n_resamples=opts.n_resamples, partition=sp,
                           prompt_style=style)  # type: ignore[arg-type]
        parts[sp] = run_partition(backend, split_items(its, seed=opts.seed), cfg, judge=judge,
                                  judge_mode="rule" if judge is None else "model", progress=progress)
    rows = []
    for sp, part in parts.items():
        for r in part.records.itertuples(index=False):
            scores = {"guided_rouge": r.rouge_l_guided, "guided_minus_general": r.rouge_l_guided - r.rouge_l_general,
                      "guided_judge": float(r.match_label in ("exact", "near_exact"))}
            rows += [_row(kind, d, r.id, sp, scores[d]) for d in dets if d in scores]
        rows += [_row(kind, d, s.id, sp, math.nan, f"no guided instance: {s.reason}")
                 for s in part.skipped.itertuples(index=False) for d in dets if d.startswith("guided_")]
    c, u = parts["C"].summary, parts["U"].summary
    why = "; ".join(f"{sp}: {s['reason']}" for sp, s in (("C", c), ("U", u)) if s.get("reason"))
    confs = {"guided_rouge": _conf(kind, "guided_rouge", None, None, ROUGE_NO_C),
             "guided_minus_general": _conf(kind, "guided_minus_general", c["confidence"], u["confidence"], why),
             "guided_judge": _conf(kind, "guided_judge", None, None, JUDGE_NO_C)}
    records = pd.concat([p.records for p in parts.values()], ignore_index=True).assign(kind=kind, prompt_style=style)
    return rows, [confs[d] for d in dets if d in confs], records


def baseline_scores(kind: str, backend: Any, ev: EvalItems, dets: tuple[str, ...]
                    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per-item Min-K% Prob and zlib ratio of the question text (no Confidence)."""
    from zcp_core.baselines import BaselineConfig, score_items

    df = score_items(backend, ev.originals, BaselineConfig())
    rows = [_row(kind, d, r["id"], ev.split_of[r["id"]], r[d], r["logprob_reason"])
            for r in df.to_dict("records") for d in dets if d in ("min_k", "zlib")]
    return rows, [_conf(kind, d, None, None, BASELINE_NO_C) for d in dets if d in ("min_k", "zlib")]


def score_kind(kind: str, spec: str, ev: EvalItems, opts: MatrixOptions, judge: Any = None,
               progress: bool = True, backend: Any = None, train_format: str = "natural"
               ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Every chosen detector on one kind: ``(scores, confidences, guided records)`` (see :func:`run_matrix`).

    ``train_format`` is the kind's training format (it sets the Time-Travel prompt style).
    """
    import pandas as pd

    if backend is None:
        from zcp_core.backends import load_backend

        backend = load_backend(spec, cache="default" if opts.cache else None, device=opts.device,
                               batch_size=opts.batch_size)
    dets = opts.detectors
    rows: list[dict[str, Any]] = []
    confs: list[dict[str, Any]] = []
    guided = pd.DataFrame()
    if any(d.startswith("zcp_") for d in dets):
        r, c = zcp_scores(kind, backend, ev, dets, opts, spec)
        rows, confs = rows + r, confs + c
    if any(d.startswith("guided_") for d in dets):
        style = guided_style(kind, backend, opts, train_format)
        r, c, guided = guided_scores(kind, backend, ev, dets, opts, judge, progress, style)
        rows, confs = rows + r, confs + c
    if any(d in ("min_k", "zlib") for d in dets):
        r, c = baseline_scores(kind, backend, ev, dets)
        rows, confs = rows + r, confs + c
    if "cot_acc" in dets:
        from zcp_core.lab.took import cot_acc_confidence, cot_acc_pairs

        pairs = cot_acc_pairs(backend, ev, kind_style(kind, backend, train_format), opts.cot_max_new_tokens, progress)
        rows += [_row(kind, "cot_acc", p.id, p.split, p.gap) for p in pairs.itertuples(index=False)]
        cc = cot_acc_confidence(pairs)
        confs.append(_conf(kind, "cot_acc", cc["C"][0], cc["U"][0],
                           "; ".join(f"{sp}: {cc[sp][1]}" for sp in ("C", "U") if cc[sp][1])))
    order = {d: i for i, d in enumerate(dets)}
    conf = pd.DataFrame(confs).sort_values("detector", key=lambda s: s.map(order), kind="stable")
    return pd.DataFrame(rows), conf, guided


def split_sha(contaminated: tuple[str, ...], clean: tuple[str, ...]) -> str:
    """A short fingerprint of a C/U split (equal for kinds evaluated on the same items)."""
    return hashlib.sha256(("C:" + ",".join(contaminated) + "|U:" + ",".join(clean)).encode()).hexdigest()[:12]


def run_matrix(opts: MatrixOptions | None = None, out: str | Path | None = None,
               progress: bool = True) -> MatrixResult:
    """Evaluate the chosen detectors on the chosen kinds and write the matrix run.

    Args:
        opts: What to measure (default: every kind and detector, default profile).
        out: Run folder (``None`` writes nothing).
        progress: Show progress bars on stderr.

    Raises:
        LabError: A missing build (with the command that makes it), or no C/U item with a twin.
    """
    import pandas as pd

    from zcp_core.lab.evaluate import pair_split
    from zcp_core.lab.quality import json_rows, matrix_rows

    opts = opts or MatrixOptions()
    t0 = time.time()
    plans = plan_kinds(opts)
    ensure_builds(plans, opts, progress)
    judge = None
    if opts.judge and "guided_judge" in opts.detectors:
        from zcp_core.backends import load_backend

        judge = load_backend(opts.judge, cache="default" if opts.cache else None, device=opts.device,
                             batch_size=opts.batch_size)
    scores, confs, guided, builds, took = [], [], [], [], []
    for kind, plan in plans.items():
        spec = plan.cfg.model if kind == "none" else f"lab:{plan.name}"
        ev = pair_split(plan.cfg.dataset, plan.split.contaminated, plan.split.clean, opts.seed, label=f"kind {kind}")
        backend = _load(spec, opts)
        took.append(_took(kind, plan, ev, backend, opts, progress))
        s, c, g = score_kind(kind, spec, ev, opts, judge, progress, backend, train_format=plan.cfg.train_format)
        scores.append(s)
        confs.append(c)
        guided.append(g)
        builds.append({"kind": kind, "model": spec, "build": "" if kind == "none" else plan.name,
                       "key": "" if kind == "none" else plan.key, "n_c": len(plan.split.contaminated),
                       "n_u": len(plan.split.clean), "split_sha": split_sha(plan.split.contaminated, plan.split.clean)})
    records = pd.concat(scores, ignore_index=True)
    table = matrix_rows(records, pd.concat(confs, ignore_index=True), opts.n_boot, opts.seed)
    took_table = pd.DataFrame(took)
    for col in ("took", "took_gain"):  # every row carries its build's verdict (None: untouched model or no check)
        table[col] = table["kind"].map(dict(zip(took_table["kind"], took_table[col]))).astype(object)
        table[col] = table[col].where(table[col].notna(), None)
    rows = json_rows(table)
    tables = {"matrix": table, "guided": pd.concat(guided, ignore_index=True), "builds": pd.DataFrame(builds),
              "took": took_table}
    summary = {"stage": "matrix", "rows": rows, "kinds": list(opts.kinds), "detectors": list(opts.detectors),
               "profile": opts.profile, "builds": builds, "judge": opts.judge, "seconds": time.time() - t0,
               "took": json_rows(took_table),
               "headline": _headline(rows)}
    run_path = None
    if out is not None:
        rspec = RunSpec(kind=LAB_RUN_KIND, config={"stage": "matrix", **_config(opts)}, command=command(opts),
                       model=str(plans[opts.kinds[0]].cfg.model), dataset=(plans[opts.kinds[0]].cfg.dataset,),
                       seed=opts.seed)
        run_path = write_run(out, rspec, records, summary, tables=tables)
    return MatrixResult(summary, {"records": records, **tables}, run_path)


def _load(spec: str, opts: MatrixOptions) -> Any:
    from zcp_core.backends import load_backend

    return load_backend(spec, cache="default" if opts.cache else None, device=opts.device, batch_size=opts.batch_size)


def _took(kind: str, plan: BuildPlan, ev: EvalItems, backend: Any, opts: MatrixOptions,
          progress: bool) -> dict[str, Any]:
    """The manipulation check of a built kind as a ``took`` table row (``none`` and ``took=False``: empty)."""
    from zcp_core.lab.took import CheckOptions, manipulation_check, took_row

    if kind == "none" or not opts.took:
        return took_row(kind, None)
    copts = CheckOptions(max_new_tokens=opts.cot_max_new_tokens, seed=opts.seed, device=opts.device,
                         batch_size=opts.batch_size, cache=opts.cache)
    chk = manipulation_check(ev, backend, _load(plan.cfg.model, opts), plan.cfg.train_format, plan.base, copts,
                             progress)
    return took_row(kind, chk)


def _config(opts: MatrixOptions) -> dict[str, Any]:
    from dataclasses import asdict

    d = asdict(opts)
    d["build"] = {k: (asdict(v) if hasattr(v, "__dataclass_fields__") else v) for k, v in opts.build}
    return d


def command(opts: MatrixOptions) -> str:
    """The ``zcp lab matrix`` command line that reruns these options."""
    cmd = f"zcp lab matrix --kinds {','.join(opts.kinds)} --detectors {','.join(opts.detectors)}"
    cmd += f" --profile {opts.profile}" + (f" --judge {opts.judge}" if opts.judge else "")
    if opts.guided_prompt_style != "auto":
        cmd += f" --guided-prompt-style {opts.guided_prompt_style}"
    return cmd + (" --build-missing" if opts.missing == "build" else "")


def _headline(rows: list[dict[str, Any]]) -> dict[str, Any]:
    live = [r for r in rows if r["kind"] != "none" and r["auroc"] is not None]
    if not live:
        return {"label": "best AUROC on a contaminated kind", "value": None, "reason": "no AUROC measured"}
    best = max(live, key=lambda r: r["auroc"])
    return {"label": f"best AUROC on a contaminated kind ({best['detector']} on {best['kind']})",
            "value": best["auroc"]}
