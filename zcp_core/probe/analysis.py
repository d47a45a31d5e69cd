"""Analyses of probe records: Contamination Confidence, item flags, truncation and sample-size curves.

All functions take the ``records`` DataFrame of :mod:`zcp_core.probe` (one row
per arm x item x ratio) and return plain dicts or DataFrames, so a run stores
them and the app only reads them. Confidence tests use r = 0 rows (ZCP).

Tests (from :mod:`zcp_core.stats`): with one twin per item, binary metrics (``acc``, ``con``) use the
exact one-sided McNemar test, continuous ones (``p_first``, ``p_all`` and their
answer-prior calibrated forms ``p_first_cal``, ``p_all_cal``) the
sign-flip permutation test (``continuous_test="permutation"``, the default,
exact up to 16 pairs) or the seeded paired bootstrap (``"bootstrap"``). With K >= 2
twins the permutation test becomes the role-permutation test of
:mod:`zcp_core.stats.ktwins` (which of the K + 1 questions plays the original),
exact at every K; at K = 1 it is the same test. Pairs
are joined on ``pair_id``; originals without a twin are left out (and counted
by the caller). With fewer than ``stats.MIN_PAIRS`` pairs a metric gets no
verdict: ``p``, ``bf10`` and ``confidence`` are ``None`` and ``reason`` is
``stats.TOO_FEW_PAIRS`` (``n``, ``effect`` and ``direction`` stay, as description).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.stats import ContinuousTest, TestResult

BINARY = ("acc", "con")
CONTINUOUS = ("p_first", "p_all", "p_first_cal", "p_all_cal", "p_first_net", "p_all_net")
ALL_METRICS = ("acc", "con", "p_first", "p_all", "p_first_cal", "p_all_cal", "p_first_net", "p_all_net")
#: Scalar keys of a metric's confidence entry, the columns of tables that hold them (e.g. the lab's).
CONFIDENCE_KEYS = ("n", "effect", "effect_lower", "effect_size", "p", "bf10", "confidence", "bound", "direction")
#: The keys a metric loses below ``stats.MIN_PAIRS`` pairs (they would read as a verdict).
VERDICT_KEYS = ("p", "bf10", "confidence")
SAMPLE_SIZES = (50, 100, 200, 500, 1000)
# Headline preference: the logprob metric is stable at 50-100 items (paper), accuracy is the fallback.
# A calibrated P_all leads when the user asked for it: it is the form that survives a twin's answer prior.
HEADLINE_ORDER = ("p_all_net", "p_all_cal", "p_all", "acc", "p_first_net", "p_first_cal", "p_first", "con")


def _zero(records: pd.DataFrame) -> pd.DataFrame:
    return records[records["ratio"] == 0.0]


def item_gaps(records: pd.DataFrame, metric: str, suspect_arm: str = "original") -> pd.DataFrame:
    """Per-pair values at r = 0; with K twins per item the reference value is the mean of its twins.

    Returns:
        Columns ``pair_id``, ``suspect``, ``reference`` (the twins' mean), ``n_twins`` (twins with a value)
        and ``gap`` (suspect - reference; bools as 0/1, NaN when either side is missing), in the suspect
        arm's order.
    """
    import pandas as pd

    z = _zero(records)
    s = z[z["arm"] == suspect_arm][["pair_id", metric]].rename(columns={metric: "suspect"})
    r = z[z["arm"] == "reference"][["pair_id", metric]]
    vals = pd.to_numeric(r[metric].astype("Float64"), errors="coerce").astype(float)
    agg = pd.DataFrame({"pair_id": r["pair_id"], "v": vals}).groupby("pair_id", sort=False)["v"].agg(
        reference="mean", n_twins="count").reset_index()
    m = s.merge(agg, on="pair_id", how="inner")
    m["n_twins"] = m["n_twins"].astype(int)
    m["gap"] = (pd.to_numeric(m["suspect"].astype("Float64"), errors="coerce").astype(float)
                - m["reference"].astype(float))
    return m[["pair_id", "suspect", "reference", "n_twins", "gap"]].reset_index(drop=True)


def graded(records: pd.DataFrame) -> pd.DataFrame:
    """The records without zero-CoT answers whose box holds no number: those were not graded, so they say
    nothing about accuracy (a pair whose original is such an answer, or whose every twin is, leaves Acc)."""
    if "grade_status" not in records:
        return records
    from zcp_core.probe.config import NOT_GRADED

    return records[~((records["ratio"] == 0.0) & records["grade_status"].isin(NOT_GRADED))]


def _unmeasured(reason: str) -> dict[str, Any]:
    from zcp_core.probe.evidence import EVIDENCE_KEYS

    return {**dict.fromkeys(EVIDENCE_KEYS), "bound": False, "reason": reason}


def metric_tests(records: pd.DataFrame, metrics: Sequence[str], suspect_arm: str = "original", prior: float = 0.5,
                 n_resamples: int = 10_000, seed: int = 0, continuous_test: ContinuousTest = "permutation",
                 intervals: bool = True) -> dict[str, TestResult | str]:
    """The paired test of each metric, or the reason it could not be run.

    A test with fewer than ``stats.MIN_PAIRS`` pairs is still returned (its ``n``, effect and direction
    describe the data); :func:`confidence_summary` and :func:`tests_table` withhold its verdict.
    ``intervals=False`` skips the permutation test's interval (the sample-size curve needs only C).
    """
    from zcp_core.probe.ktwins import twin_scores, twin_test
    from zcp_core.stats import mcnemar_test, paired_permutation_test, paired_test

    out: dict[str, TestResult | str] = {}
    arms = set(records["arm"]) if len(records) else set()
    for m in ALL_METRICS:
        if m not in metrics:
            out[m] = "not measured (add --calibrate)" if m.endswith(("_cal", "_net")) else f"not measured (add {m} to --metrics)"
            continue
        if suspect_arm not in arms or "reference" not in arms:
            out[m] = f"no {suspect_arm if suspect_arm not in arms else 'reference'} arm in the records"
            continue
        g = item_gaps(records, m, suspect_arm)
        if m in BINARY:
            words = not_numbers(records, suspect_arm)
            if words.worst_share > 0.5:
                out[m] = (f"not measured: {words.worst} of {words.worst_n} answers in the box are not numbers"
                          if not words.unclosed else f"not measured: {words.worst} of {words.worst_n} answers hold "
                          "no number or never close their box")
                continue
            # a box with no number was not graded, so its answer says nothing about accuracy
            g = item_gaps(graded(records), m, suspect_arm).dropna(subset=["suspect", "reference"])
            g = g[g["n_twins"] > 0]
            if g.empty:
                out[m] = "no pair has a value (no full-CoT answer to compare with)" if m == "con" else "no pairs"
                continue
            if int(g["n_twins"].max()) == 1:  # one twin: the exact McNemar test (the same test, in counts)
                out[m] = mcnemar_test(g["suspect"].astype(bool).tolist(), g["reference"].astype(bool).tolist(),
                                      metric=m, prior=prior)
            else:
                out[m] = twin_test(twin_scores(graded(records), m, suspect_arm), m, "binary", prior, n_resamples,
                                   seed)
        else:
            if g["gap"].isna().all():
                z = _zero(records)
                col = "calibration_reason" if m.endswith(("_cal", "_net")) else "logprob_reason"
                reasons = sorted({str(x) for x in z[col] if x}) if col in z else []
                out[m] = f"unavailable: {', '.join(reasons) or 'no logprobs'}"
                continue
            if continuous_test == "permutation" and int(g["n_twins"].max()) > 1:
                out[m] = twin_test(twin_scores(records, m, suspect_arm), m, "continuous", prior, n_resamples, seed)
                continue
            o, r = g["suspect"].astype(float).tolist(), g["reference"].astype(float).tolist()
            out[m] = (paired_permutation_test(o, r, m, n_resamples, seed, prior, intervals=False)
                      if continuous_test == "permutation" and not intervals else
                      paired_test(o, r, continuous_test, metric=m, n_resamples=n_resamples, seed=seed, prior=prior))
    return out


@dataclass(frozen=True)
class NotNumbers:
    """Zero-CoT answers that are not graded (:data:`~zcp_core.probe.config.NOT_GRADED`): a box that holds no
    number, or a prefilled box the model never closed.

    Attributes:
        pairs: Pair ids where either arm's answer is not graded (they leave Acc's and Con's pairs).
        worst: The larger count of such answers of the two arms.
        worst_n: That arm's answers.
        unclosed: How many of all such answers never closed their box.
    """

    pairs: frozenset[str]
    worst: int
    worst_n: int
    unclosed: int = 0

    @property
    def worst_share(self) -> float:
        """The larger share of the two arms."""
        return self.worst / self.worst_n if self.worst_n else 0.0


def not_numbers(records: pd.DataFrame, suspect_arm: str = "original") -> NotNumbers:
    """Which zero-CoT pairs have a box with no number, and the worst arm's count."""
    z = _zero(records)
    if "grade_status" not in z:
        return NotNumbers(frozenset(), 0, 0)
    from zcp_core.probe.config import NOT_GRADED

    bad = z["grade_status"].isin(NOT_GRADED)
    worst, worst_n = 0, 0
    for arm in (suspect_arm, "reference"):
        a = z["arm"] == arm
        k, n = int((bad & a).sum()), int(a.sum())
        if n and (k / n > (worst / worst_n if worst_n else -1)):
            worst, worst_n = k, n
    return NotNumbers(frozenset(str(p) for p in z.loc[bad, "pair_id"]), worst, worst_n,
                      int((z["grade_status"] == "unclosed").sum()))


def _metric_entry(t: TestResult | str) -> dict[str, Any]:
    """One metric of the confidence json; below ``MIN_PAIRS`` pairs the verdict keys are withheld."""
    from zcp_core.probe.evidence import evidence_entry
    from zcp_core.stats import min_pairs_reason

    if isinstance(t, str):
        return _unmeasured(t)
    out = evidence_entry(t.to_dict())
    why = min_pairs_reason(t.n)
    return {**out, **dict.fromkeys(VERDICT_KEYS), "bound": False, "reason": why} if why else out


def enforce_min_pairs(conf: dict[str, Any]) -> dict[str, Any]:
    """A confidence json with the minimum-sample rule applied (for runs written before it existed).

    Metrics with ``n < MIN_PAIRS`` lose ``p``, ``bf10`` and ``confidence`` and get the reason; the
    headline is chosen again. A json that already follows the rule comes back equal.
    """
    from zcp_core.stats import min_pairs_reason

    metrics = {}
    for m, v in conf["metrics"].items():
        why = min_pairs_reason(v["n"]) if v.get("n") is not None and v.get("confidence") is not None else ""
        metrics[m] = {**v, **dict.fromkeys(VERDICT_KEYS), "bound": False, "reason": why} if why else dict(v)
    return {**conf, "metrics": metrics, "headline": _headline(metrics)}


def confidence_from_tests(tests: pd.DataFrame, arm: str = "original") -> dict[str, Any] | None:
    """The confidence json of one suspect arm rebuilt from a stored ``tests`` table (``None`` without rows).

    Runs made before the evidence fields (``effect_ci``, ``effect_lower``, ``effect_size``,
    ``discordant``, ``bound``) get them from what the table stored; see :mod:`zcp_core.probe.evidence`.
    """
    from zcp_core.probe.evidence import evidence_entry

    if tests is None or not len(tests) or "arm" not in tests:
        return None
    rows = tests[tests["arm"] == arm]
    if not len(rows):
        return None
    metrics: dict[str, Any] = {}
    for row in rows.to_dict("records"):
        reason = row.get("reason")
        reason = reason if isinstance(reason, str) else ""
        if reason and (row.get("n") is None or row.get("n") != row.get("n")):  # not tested at all
            metrics[str(row["metric"])] = _unmeasured(reason)
            continue
        entry = evidence_entry(row)
        metrics[str(row["metric"])] = {**entry, "reason": reason} if reason else entry
    return enforce_min_pairs({"metrics": metrics, "headline": _headline(metrics)})


def enforce_min_pairs_table(tests: pd.DataFrame) -> pd.DataFrame:
    """A stored ``tests`` table with the minimum-sample rule applied (rows of runs written before it existed)."""
    from zcp_core.stats import MIN_PAIRS, TOO_FEW_PAIRS

    if "n" not in tests or not len(tests):
        return tests
    small = tests["n"].notna() & (tests["n"] < MIN_PAIRS) & tests["confidence"].notna()
    out = tests.copy()
    out.loc[small, list(VERDICT_KEYS)] = float("nan")
    out.loc[small, "reason"] = TOO_FEW_PAIRS
    return out


def _headline(metrics: dict[str, Any]) -> dict[str, Any]:
    """The headline metric (first of ``HEADLINE_ORDER`` with a confidence), or why there is none."""
    from zcp_core.stats import TOO_FEW_PAIRS

    head = next((m for m in HEADLINE_ORDER if m in metrics and metrics[m]["confidence"] is not None), None)
    if head is None:
        # Say why there is no verdict: too few pairs wins over a per-metric reason (unavailable...).
        reasons = [str(metrics[m].get("reason") or "") for m in HEADLINE_ORDER if m in metrics]
        why = TOO_FEW_PAIRS if TOO_FEW_PAIRS in reasons else next(
            (r for r in reasons if r and not r.startswith("not measured")), "no metric could be tested")
        return {"metric": None, "confidence": None, "label": "Contamination Confidence", "value": None,
                "reason": why}
    conf = metrics[head]["confidence"]
    return {"metric": head, "confidence": conf, "label": f"Contamination Confidence ({head})", "value": conf,
            "bound": bool(metrics[head].get("bound"))}


def confidence_summary(records: pd.DataFrame, metrics: Sequence[str], suspect_arm: str = "original",
                       prior: float = 0.5, n_resamples: int = 10_000, seed: int = 0,
                       continuous_test: ContinuousTest = "permutation") -> dict[str, Any]:
    """The ``zcp confidence --json`` object for one suspect arm against the reference (at r = 0).

    Shape: ``{"metrics": {m: {"n", "effect", "effect_ci", "effect_lower", "effect_size", "p", "bf10",
    "confidence", "bound", "direction", "reading", "ci_method"[, "discordant"]}}, "headline": {"metric",
    "confidence", "label", "value", "bound"}}`` (the keys are explained in :mod:`zcp_core.probe.evidence`). Unmeasured metrics carry ``None`` values and a
    ``"reason"``; so do the verdict keys (``p``, ``bf10``, ``confidence``) of a metric with fewer than
    ``stats.MIN_PAIRS`` pairs (reason ``too few pairs for a verdict (n < 10)``). The headline metric is
    ``p_all`` when it has a confidence, else ``acc``...; with none, the headline's value is ``None`` and
    it carries the ``reason``. With a :class:`~zcp_core.probe.ProbeConfig` at hand, pass ``config.metrics``
    and ``**config.test_options()``.
    """
    tests = metric_tests(records, metrics, suspect_arm, prior, n_resamples, seed, continuous_test)
    out = {m: _metric_entry(t) for m, t in tests.items()}
    return {"metrics": out, "headline": _headline(out)}


def tests_table(records: pd.DataFrame, metrics: Sequence[str], arms: Sequence[str] = ("original",),
                prior: float = 0.5, n_resamples: int = 10_000, seed: int = 0,
                continuous_test: ContinuousTest = "permutation") -> pd.DataFrame:
    """Every test's full result (CI, discordant counts...), one row per suspect arm x metric.

    Columns: ``arm``, ``metric``, ``reason`` (``""`` when tested) and the fields of ``stats.TestResult``.
    Below ``stats.MIN_PAIRS`` pairs ``p``, ``bf10`` and ``confidence`` are empty and ``reason`` says why.
    """
    import pandas as pd

    from zcp_core.stats import min_pairs_reason

    rows = []
    for arm in arms:
        for m, t in metric_tests(records, metrics, arm, prior, n_resamples, seed, continuous_test).items():
            if isinstance(t, str):
                rows.append({"arm": arm, "metric": m, "reason": t})
                continue
            why = min_pairs_reason(t.n)
            d = {**t.to_dict(), **dict.fromkeys(VERDICT_KEYS)} if why else t.to_dict()
            rows.append({"arm": arm, "metric": m, "reason": why, **d})
    return pd.DataFrame(rows)


def truncation_curve(records: pd.DataFrame, metrics: Sequence[str] = ALL_METRICS) -> pd.DataFrame:
    """Mean of each metric per arm and truncation ratio.

    Returns:
        Columns ``arm``, ``ratio``, ``metric``, ``value`` (mean over items with a value), ``n``.
    """
    import pandas as pd

    rows = []
    for m in metrics:
        if m not in records:
            continue
        for (arm, ratio), g in records.groupby(["arm", "ratio"], sort=True):
            v = pd.to_numeric(g[m].astype("Float64"), errors="coerce").dropna()
            if len(v):
                rows.append({"arm": arm, "ratio": float(ratio), "metric": m, "value": float(v.mean()), "n": len(v)})
    return pd.DataFrame(rows, columns=["arm", "ratio", "metric", "value", "n"])


def sample_size_curve(records: pd.DataFrame, metrics: Sequence[str], suspect_arm: str = "original",
                      sizes: Sequence[int] = SAMPLE_SIZES, repeats: int = 20, seed: int = 0, prior: float = 0.5,
                      n_resamples: int = 2_000, continuous_test: ContinuousTest = "permutation") -> pd.DataFrame:
    """C against the number of pairs N, by seeded repeated subsampling of pairs without replacement.

    Sizes above the number of pairs are capped to it (that size is the full set, evaluated once);
    sizes below ``stats.MIN_PAIRS`` give no verdict and are left out. Resampling tests use
    ``n_resamples`` (2,000 by default, enough for the curve's spread); a Monte Carlo p at its floor is
    redrawn like every test's, so the curve shares the one ceiling ``stats.C_CAP`` (``bound_share``: the
    share of repeats at it, shown as "≥ 0.999").

    Returns:
        Columns ``metric``, ``n``, ``repeats``, ``confidence_mean``, ``confidence_median``,
        ``confidence_q10``, ``confidence_q90``, ``significant_share`` (share of repeats with p < 0.05),
        ``bound_share`` (share of repeats at the ceiling C = 0.999).
    """
    import numpy as np
    import pandas as pd

    from zcp_core.stats import MIN_PAIRS

    z = _zero(records)
    pairs = np.array(sorted(set(z[z["arm"] == suspect_arm]["pair_id"]) & set(z[z["arm"] == "reference"]["pair_id"])))
    rows = []
    total = len(pairs)
    rng = np.random.default_rng(seed)
    for n in sorted({min(int(s), total) for s in sizes if s > 0} - set(range(MIN_PAIRS))) if total else []:
        reps = 1 if n == total else repeats
        draws = [pairs if n == total else rng.choice(pairs, size=n, replace=False) for _ in range(reps)]
        for m in metrics:
            confs, ps, bounds = [], [], []
            for k, ids in enumerate(draws):
                sub = records[records["pair_id"].isin(set(ids))]
                t = metric_tests(sub, [m], suspect_arm, prior, n_resamples, seed + k, continuous_test,
                                 intervals=False)[m]
                if isinstance(t, str):
                    break
                confs.append(t.confidence)
                ps.append(t.p)
                bounds.append(t.bound)
            if not confs:
                continue
            c = np.asarray(confs)
            rows.append({"metric": m, "n": n, "repeats": len(c), "confidence_mean": float(c.mean()),
                         "confidence_median": float(np.median(c)), "confidence_q10": float(np.quantile(c, 0.1)),
                         "confidence_q90": float(np.quantile(c, 0.9)),
                         "significant_share": float(np.mean(np.asarray(ps) < 0.05)),
                         "bound_share": float(np.mean(bounds))})
    cols = ["metric", "n", "repeats", "confidence_mean", "confidence_median", "confidence_q10", "confidence_q90",
            "significant_share", "bound_share"]
    return pd.DataFrame(rows, columns=cols)
