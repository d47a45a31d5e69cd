"""``zcp lab matrix --replicates R``: each kind built R times, each build with its own split and training seed.

One build per kind reads one realisation as the kind's property; two builds of one recipe have read very
differently. Replicate ``r`` (0 .. R-1) is a whole matrix run whose builds use seed ``r`` for the C/U split,
the shuffling and the LoRA initialisation (``LabConfig.seed``); the reference, Time-Travel and bootstrap
seeds stay the command's own. Replicate 0 is the single-build matrix itself. Kinds in ``single`` (by default
``evasive`` and ``paper``, the slowest to build) get replicate 0 only, and every surface marks them so.

Per kind and detector the table gives the median AUROC over replicates, its range, and how many replicates
caught the leak (that replicate's own exact two-sided p, Holm-adjusted across its cells, below 0.05 with the
AUROC above 0.5). The pooled test is stratified: C/U labels are permuted within each replicate, the statistic
is the sum over replicates of the C items' mid-rank sum minus its mean, and its exact distribution is the
convolution of each replicate's exact one (:func:`stratified_exact_p`). Holm's correction runs across every
cell of the reading, ``cot_acc`` excepted (it restates the manipulation check).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from zcp_core.lab.matrix import MatrixOptions, MatrixResult

#: Kinds built once unless told otherwise: their builds take longest, and their single builds stand.
SINGLE_BUILD_KINDS: tuple[str, ...] = ("evasive", "paper")
LEVEL = 0.05
REPLICATE_COLUMNS = ("kind", "detector", "replicates", "single_build", "auroc_median", "auroc_min", "auroc_max",
                     "caught", "inverted", "pooled_p", "pooled_p_holm", "reading")


def stratified_exact_p(strata: Sequence[tuple[Sequence[float], Sequence[float]]]) -> float:
    """Exact two-sided p of the pooled rank statistic, labels permuted within each stratum (replicate).

    The statistic is the sum over strata of the C items' doubled mid-rank sum minus its null mean; its
    distribution is the convolution of the strata's exact ones (ties by mid-ranks). With one stratum it is
    :func:`zcp_core.lab.quality.exact_auroc_p`. NaN when no stratum has both C and U scores.
    """
    import numpy as np

    from zcp_core.lab.quality import rank_sum_distribution

    pooled: np.ndarray | None = None
    low = observed = 0  # the pooled array's index 0 is the centred value ``low``
    for pos, neg in strata:
        got = rank_sum_distribution(pos, neg)
        if got is None:
            continue
        dist, mean, obs = got
        pooled = dist if pooled is None else np.convolve(pooled, dist)
        low -= mean
        observed += obs - mean
    if pooled is None:
        return math.nan
    values = np.arange(pooled.size) + low
    return float(min(1.0, pooled[np.abs(values) >= abs(observed) - 1e-9].sum()))


def replicate_table(records: Sequence[pd.DataFrame], tables: Sequence[pd.DataFrame],
                    single: Sequence[str] = SINGLE_BUILD_KINDS) -> pd.DataFrame:
    """The replicates' reading, one row per kind and detector (:data:`REPLICATE_COLUMNS`).

    Args:
        records: Each replicate's per-item scores (the matrix run's ``records``), replicate 0 first.
        tables: Each replicate's matrix table (with ``auroc`` and ``auroc_p_holm``), in the same order.
        single: Kinds built once on purpose (marked ``single_build``).
    """
    import pandas as pd

    from zcp_core.lab.quality import OUTSIDE_FAMILY, holm

    rows = []
    keys = list(dict.fromkeys((r.kind, r.detector) for r in tables[0].itertuples(index=False)))
    for kind, det in keys:
        aurocs, caught, inverted, strata = [], 0, 0, []
        for rec, tab in zip(records, tables, strict=True):
            cell = tab[(tab["kind"] == kind) & (tab["detector"] == det)]
            if cell.empty:
                continue
            a, ph = cell["auroc"].iloc[0], cell["auroc_p_holm"].iloc[0]
            if a is not None and not math.isnan(float(a)):
                aurocs.append(float(a))
                hit = ph is not None and not math.isnan(float(ph)) and float(ph) < LEVEL
                caught += int(hit and a > 0.5)
                inverted += int(hit and a < 0.5)
            g = rec[(rec["kind"] == kind) & (rec["detector"] == det)]
            strata.append((g.loc[g["split"] == "C", "score"].tolist(), g.loc[g["split"] == "U", "score"].tolist()))
        srt = sorted(aurocs)
        median = (srt[(len(srt) - 1) // 2] + srt[len(srt) // 2]) / 2 if srt else math.nan
        rows.append({"kind": kind, "detector": det, "replicates": len(aurocs), "single_build": kind in single,
                     "auroc_median": median, "auroc_min": srt[0] if srt else math.nan,
                     "auroc_max": srt[-1] if srt else math.nan, "caught": caught, "inverted": inverted,
                     "pooled_p": stratified_exact_p(strata)})
    out = pd.DataFrame(rows, columns=[c for c in REPLICATE_COLUMNS if c not in ("pooled_p_holm", "reading")])
    family = [p if d not in OUTSIDE_FAMILY else math.nan for p, d in zip(out["pooled_p"], out["detector"])]
    out["pooled_p_holm"] = holm(family)
    out["reading"] = [_reading(r) for r in out.itertuples(index=False)]
    return out


def _reading(r: Any) -> str:
    from zcp_core.lab.quality import OUTSIDE_FAMILY

    if r.detector in OUTSIDE_FAMILY:
        return "restates took"
    if r.pooled_p_holm is None or math.isnan(float(r.pooled_p_holm)) or r.pooled_p_holm >= LEVEL:
        return ""
    return "caught" if r.auroc_median > 0.5 else "inverted"


def run_replicates(opts: MatrixOptions, replicates: int, out: str | Path | None = None,
                   single: Sequence[str] = SINGLE_BUILD_KINDS, progress: bool = True) -> MatrixResult:
    """Run the matrix ``replicates`` times (replicate ``r``: build seed ``r``) and pool the replicates.

    Each replicate's matrix run is written under ``out/replicate-<r>``; ``out`` itself holds the pooled run
    (``summary["stage"] == "replicates"``, table ``replicates``, records: every replicate's scores with a
    ``replicate`` column).

    Raises:
        LabError: ``replicates`` below 1, or a build missing with ``missing="fail"``.
    """
    import pandas as pd

    from zcp_core.lab.config import DEFAULT_DATASET, LAB_RUN_KIND, LabError
    from zcp_core.lab.matrix import MatrixResult, command, run_matrix
    from zcp_core.lab.quality import json_rows
    from zcp_core.runs import RunSpec, write_run

    if replicates < 1:
        raise LabError(f"--replicates takes a whole number of at least 1, not {replicates}")
    t0 = time.time()
    base_build = tuple((k, v) for k, v in opts.build if k != "seed")
    runs: list[MatrixResult] = []
    for r in range(replicates):
        kinds = opts.kinds if r == 0 else tuple(k for k in opts.kinds if k not in single)
        if not kinds:
            break
        sub = replace(opts, kinds=kinds, build=base_build + (("seed", r),))
        runs.append(run_matrix(sub, out=None if out is None else Path(out) / f"replicate-{r}", progress=progress))
    records = [res.tables["records"] for res in runs]
    tables = [res.tables["matrix"] for res in runs]
    table = replicate_table(records, tables, single)
    rows = json_rows(table)
    summary = {"stage": "replicates", "replicates": replicates, "single_build": [k for k in opts.kinds if k in single],
               "kinds": list(opts.kinds), "detectors": list(opts.detectors), "rows": rows,
               "builds": [b | {"replicate": r} for r, res in enumerate(runs) for b in res.summary["builds"]],
               "took": [t | {"replicate": r} for r, res in enumerate(runs) for t in res.summary["took"]],
               "seconds": time.time() - t0,
               "headline": {"label": "cells caught by the pooled exact test (Holm-adjusted p < 0.05)",
                            "value": int((table["reading"] == "caught").sum())}}
    all_records = pd.concat([rec.assign(replicate=r) for r, rec in enumerate(records)], ignore_index=True)
    run_path = None
    if out is not None:
        cmd = command(opts) + f" --replicates {replicates}"
        rspec = RunSpec(kind=LAB_RUN_KIND, config={"stage": "replicates", "replicates": replicates,
                                                   "single_build": list(single)},
                        command=cmd, model=str(dict(opts.build).get("model", "smollm2")),
                        dataset=(str(dict(opts.build).get("dataset", DEFAULT_DATASET)),), seed=opts.seed)
        run_path = write_run(out, rspec, all_records, summary, tables={"replicates": table})
    return MatrixResult(summary, {"records": all_records, "replicates": table}, run_path)
