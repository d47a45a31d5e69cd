"""AFR profiles of existing chain corpora, alone or compared on the same problems.

A profile is one corpus's AFR (both denominators, with and without
answer-in-question items), bootstrap CIs and the distribution of the answer
position. A comparison restricts two corpora to their common problems (uids)
and bootstraps the difference paired on problems, e.g. a long-chain model
against its short-chain base.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zcp_core.afr.rate import DEFAULT_THRESHOLD, AFRStats, Interval, afr_frame, afr_stats, bootstrap_afr, histogram

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Profile:
    """One corpus's AFR profile.

    Attributes:
        name: Corpus label.
        stats: AFR statistics.
        ci_all: Bootstrap interval of AFR over all chains (fraction).
        ci_covered: Bootstrap interval of AFR over covered chains.
        hist: Counts of the answer-position fraction (covered chains) in ten bins over [0, 1].
        frame: Per-chain frame (:func:`zcp_core.afr.afr_frame` columns plus ``corpus``).
    """

    name: str
    stats: AFRStats
    ci_all: Interval
    ci_covered: Interval
    hist: tuple[int, ...]
    frame: pd.DataFrame


@dataclass(frozen=True)
class Comparison:
    """Two corpora on their common problems.

    Attributes:
        a: Profile of the first corpus (common problems only).
        b: Profile of the second.
        n_common: Common problems.
        diff_all: AFR(b) − AFR(a), all chains, paired bootstrap interval.
        diff_covered: The same over covered chains.
    """

    a: Profile
    b: Profile
    n_common: int
    diff_all: Interval
    diff_covered: Interval


def profile(chains: pd.DataFrame, name: str, threshold: float = DEFAULT_THRESHOLD, n_boot: int = 2000,
            seed: int = 0) -> Profile:
    """Profile a chains frame (from :func:`zcp_core.afr.adapters.load_chains`)."""
    fr = afr_frame(chains, threshold).assign(corpus=name)
    (ci_a,) = bootstrap_afr([fr], "all", n_boot, seed)
    (ci_c,) = bootstrap_afr([fr], "covered", n_boot, seed)
    return Profile(name, afr_stats(fr), ci_a, ci_c, tuple(histogram(fr)), fr)


def compare(a: pd.DataFrame, b: pd.DataFrame, names: tuple[str, str], threshold: float = DEFAULT_THRESHOLD,
            n_boot: int = 2000, seed: int = 0) -> Comparison:
    """Profile two corpora on the problems they share and bootstrap their difference."""
    common = set(a["uid"]) & set(b["uid"])
    pa = profile(a[a["uid"].isin(common)].reset_index(drop=True), names[0], threshold, n_boot, seed)
    pb = profile(b[b["uid"].isin(common)].reset_index(drop=True), names[1], threshold, n_boot, seed)
    d_all = bootstrap_afr([pa.frame, pb.frame], "all", n_boot, seed)[2]
    d_cov = bootstrap_afr([pa.frame, pb.frame], "covered", n_boot, seed)[2]
    return Comparison(pa, pb, len(common), d_all, d_cov)


def _pct(x: float) -> str:
    return "nan" if math.isnan(x) else f"{100 * x:.1f}%"


def profile_text(p: Profile) -> str:
    """A human summary of a profile, denominators labelled."""
    s = p.stats
    bars = " ".join(f"{c}" for c in p.hist)
    return "\n".join([
        f"{p.name}: {s.n_chains} chains, {p.frame['uid'].nunique()} problems; think blocks: "
        f"{int((p.frame['block_kind'] == 'think').sum())}",
        f"  AFR over all chains     = {_pct(s.afr_all)} [{_pct(p.ci_all.low)}, {_pct(p.ci_all.high)}] "
        f"({s.n_answer_first}/{s.n_chains})",
        f"  AFR over covered chains = {_pct(s.afr_covered)} [{_pct(p.ci_covered.low)}, {_pct(p.ci_covered.high)}] "
        f"({s.n_answer_first}/{s.n_covered}; covered = block states the answer)",
        f"  without answer-in-question items: all {_pct(s.afr_all_excl)} ({s.n_answer_first_excl}/{s.n_chains_excl}),"
        f" covered {_pct(s.afr_covered_excl)} ({s.n_answer_first_excl}/{s.n_covered_excl})",
        f"  answer position (covered chains), 10 bins over [0,1]: {bars}",
    ])


def comparison_text(c: Comparison) -> str:
    """A human summary of a comparison."""
    return "\n".join([
        f"{c.n_common} common problems",
        profile_text(c.a), profile_text(c.b),
        f"AFR({c.b.name}) - AFR({c.a.name}): all chains {100 * c.diff_all.value:+.1f} pp "
        f"[{100 * c.diff_all.low:+.1f}, {100 * c.diff_all.high:+.1f}]; covered {100 * c.diff_covered.value:+.1f} pp "
        f"[{100 * c.diff_covered.low:+.1f}, {100 * c.diff_covered.high:+.1f}]",
    ])


def _iv(iv: Interval) -> dict[str, float]:
    return {"value": 100 * iv.value, "low": 100 * iv.low, "high": 100 * iv.high}


def profile_summary(p: Profile) -> dict[str, Any]:
    """JSON-able summary of a profile (percentages)."""
    return {"name": p.name, "stats": p.stats.to_dict(), "ci_all_chains": _iv(p.ci_all),
            "ci_covered_chains": _iv(p.ci_covered), "hist": list(p.hist)}


def write_profile_run(out: str | Path, result: Profile | Comparison, files: tuple[str, ...], config: dict[str, Any],
                      ) -> Path:
    """Write an ``afr`` run: per-chain records (column ``corpus``) and the summary."""
    import pandas as pd

    from zcp_core.runs import RunSpec, write_run

    if isinstance(result, Comparison):
        frame = pd.concat([result.a.frame, result.b.frame], ignore_index=True)
        summary: dict[str, Any] = {
            "mode": "compare", "n_common": result.n_common, "a": profile_summary(result.a),
            "b": profile_summary(result.b), "diff_all_chains": _iv(result.diff_all),
            "diff_covered_chains": _iv(result.diff_covered),
            "headline": {"label": f"AFR({result.b.name}) - AFR({result.a.name}), pp", "value": 100 * result.diff_all.value},
        }
    else:
        frame = result.frame
        summary = {"mode": "profile", **profile_summary(result),
                   "headline": {"label": f"AFR {result.name} (all chains, %)", "value": 100 * result.stats.afr_all}}
    spec = RunSpec(kind="afr", config=config, dataset=files, seed=int(config.get("seed", 0)))
    return write_run(out, spec, frame, summary)
