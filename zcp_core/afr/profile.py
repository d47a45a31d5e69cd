"""AFR profiles of existing chain corpora, alone or compared on the same problems.

A profile is one corpus's AFR (both denominators, with and without
answer-in-question items), bootstrap CIs and the distribution of the answer
position. Text and summaries put the paper's denominator (covered chains:
those whose think block states the answer) first and label the all-chains
figure; chains without a think block are reported apart as their own group
(AFR on the text before the final answer), never in the paper's denominator.
No keep-correct filter runs here: every chain of the corpus counts. A
comparison restricts two corpora to their common problems (uids) and
bootstraps the difference paired on problems, e.g. a long-chain model against
its short-chain base.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zcp_core.afr.rate import (
    ALL_CHAINS_LABEL,
    DEFAULT_THRESHOLD,
    NO_THINK_LABEL,
    PAPER_DENOMINATOR,
    AFRStats,
    Interval,
    afr_frame,
    afr_stats,
    bootstrap_afr,
    histogram,
)
from zcp_core.report import MISSING, fmt_num, fmt_share

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
        ci_no_think: Bootstrap interval of the AFR of the chains without a think block (their own group).
    """

    name: str
    stats: AFRStats
    ci_all: Interval
    ci_covered: Interval
    hist: tuple[int, ...]
    frame: pd.DataFrame
    ci_no_think: Interval = Interval(math.nan, math.nan, math.nan)


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
    (ci_n,) = bootstrap_afr([fr], "no_think", n_boot, seed)
    return Profile(name, afr_stats(fr), ci_a, ci_c, tuple(histogram(fr)), fr, ci_n)


def compare(a: pd.DataFrame, b: pd.DataFrame, names: tuple[str, str], threshold: float = DEFAULT_THRESHOLD,
            n_boot: int = 2000, seed: int = 0) -> Comparison:
    """Profile two corpora on the problems they share and bootstrap their difference."""
    common = set(a["uid"]) & set(b["uid"])
    pa = profile(a[a["uid"].isin(common)].reset_index(drop=True), names[0], threshold, n_boot, seed)
    pb = profile(b[b["uid"].isin(common)].reset_index(drop=True), names[1], threshold, n_boot, seed)
    d_all = bootstrap_afr([pa.frame, pb.frame], "all", n_boot, seed)[2]
    d_cov = bootstrap_afr([pa.frame, pb.frame], "covered", n_boot, seed)[2]
    return Comparison(pa, pb, len(common), d_all, d_cov)


# The shared rules (zcp_core.report): a rate over no chains reads "–", never "nan" or "n/a".
def _pct(x: float) -> str:
    return fmt_share(x)


def _pp(x: float) -> str:
    return fmt_num(None if math.isnan(x) else 100 * x, 1, signed=True)


NO_FILTER = "none: a corpus profile counts every chain (no keep-correct filter)"


def _ci(iv: Interval) -> str:
    return f"[95% CI {_pct(iv.low)}, {_pct(iv.high)}]"


NO_COVERED = f"{MISSING}: no chain has a think block that states the answer"


def profile_line(p: Profile) -> str:
    """The paper's denominator first: ``AFR <name>=22.3% (n=373) [95% CI …]`` over covered chains."""
    if not p.stats.n_covered:
        return f"AFR {p.name}={NO_COVERED} (n=0)"
    return f"AFR {p.name}={_pct(p.stats.afr_covered)} (n={p.stats.n_covered}) {_ci(p.ci_covered)}"


def profile_line_no_think(p: Profile) -> str:
    """The chains without a think block, as their own group."""
    s = p.stats
    if not s.n_no_think:
        return f"{NO_THINK_LABEL}: {p.name}: none"
    return (f"{NO_THINK_LABEL}: {p.name}: {s.n_no_think} chains, AFR={_pct(s.afr_no_think)} "
            f"(n={s.n_no_think_stated} whose text states the answer) {_ci(p.ci_no_think)}")


def profile_line_all(p: Profile) -> str:
    """The same over all chains, labelled as such."""
    return f"{ALL_CHAINS_LABEL}: {p.name}={_pct(p.stats.afr_all)} (n={p.stats.n_chains}) {_ci(p.ci_all)}"


def _details(p: Profile) -> list[str]:
    s = p.stats
    bars = " ".join(f"{c}" for c in p.hist)
    return [
        f"  {p.name}: {s.n_chains} chains, {p.frame['uid'].nunique()} problems; think blocks: "
        f"{s.n_think}; covered (think block states the answer): {s.n_covered}/{s.n_chains}; without a think "
        f"block: {s.n_no_think}; filter: {NO_FILTER}",
        f"  without answer-in-question items: covered {_pct(s.afr_covered_excl)} "
        f"({s.n_answer_first_excl}/{s.n_covered_excl}), all {_pct(s.afr_all_excl)} "
        f"({s.n_answer_first_all_excl}/{s.n_chains_excl})",
        f"  answer position (covered chains), 10 bins over [0,1]: {bars}",
    ]


def profile_text(p: Profile) -> str:
    """A human summary of a profile: the paper's denominator first, then all chains, then details."""
    return "\n".join([profile_line(p), profile_line_all(p), profile_line_no_think(p),
                      f"  headline denominator: {PAPER_DENOMINATOR}", *_details(p)])


def comparison_line(c: Comparison) -> str:
    """Both corpora over covered chains (the paper's denominator) and their difference."""
    a, b = c.a.stats, c.b.stats
    if not a.n_covered or not b.n_covered:
        none = ", ".join(p.name for p in (c.a, c.b) if not p.stats.n_covered)
        def one(p: Profile) -> str:
            return f"{p.name}={_pct(p.stats.afr_covered) if p.stats.n_covered else MISSING} (n={p.stats.n_covered})"

        return (f"AFR {one(c.a)} {one(c.b)} difference={MISSING}: {none} has no think block that states the answer, "
                "so the paper's denominator cannot compare them")
    return (f"AFR {c.a.name}={_pct(a.afr_covered)} (n={a.n_covered}) {c.b.name}={_pct(b.afr_covered)} "
            f"(n={b.n_covered}) difference={_pp(c.diff_covered.value)} pp "
            f"[95% CI {_pp(c.diff_covered.low)}, {_pp(c.diff_covered.high)}]")


def comparison_line_all(c: Comparison) -> str:
    """The same over all chains, labelled as such."""
    a, b = c.a.stats, c.b.stats
    return (f"{ALL_CHAINS_LABEL}: {c.a.name}={_pct(a.afr_all)} (n={a.n_chains}) {c.b.name}={_pct(b.afr_all)} "
            f"(n={b.n_chains}) difference={_pp(c.diff_all.value)} pp "
            f"[95% CI {_pp(c.diff_all.low)}, {_pp(c.diff_all.high)}]")


def comparison_text(c: Comparison) -> str:
    """A human summary of a comparison, in the same order as a profile."""
    lines = [comparison_line(c), comparison_line_all(c),
             f"  {c.n_common} common problems; paired bootstrap; headline denominator: {PAPER_DENOMINATOR}"]
    for p in (c.a, c.b):
        lines += ["  " + profile_line(p), "  " + profile_line_all(p), "  " + profile_line_no_think(p), *_details(p)]
    return "\n".join(lines)


def _iv(iv: Interval) -> dict[str, float]:
    return {"value": 100 * iv.value, "low": 100 * iv.low, "high": 100 * iv.high}


def profile_summary(p: Profile) -> dict[str, Any]:
    """JSON-able summary of a profile (percentages), the paper's denominator first."""
    return {"name": p.name, "line": profile_line(p), "line_all_chains": profile_line_all(p),
            "line_no_think": profile_line_no_think(p), "denominator": PAPER_DENOMINATOR, "filter": NO_FILTER,
            "stats": p.stats.to_dict(), "ci_covered_chains": _iv(p.ci_covered), "ci_all_chains": _iv(p.ci_all),
            "ci_no_think_chains": _iv(p.ci_no_think), "hist": list(p.hist)}


def write_profile_run(out: str | Path, result: Profile | Comparison, files: tuple[str, ...], config: dict[str, Any],
                      ) -> Path:
    """Write an ``afr`` run: per-chain records (column ``corpus``) and the summary."""
    import pandas as pd

    from zcp_core.runs import RunSpec, write_run

    if isinstance(result, Comparison):
        frame = pd.concat([result.a.frame, result.b.frame], ignore_index=True)
        paper = bool(result.a.stats.n_covered and result.b.stats.n_covered)
        headline = ({"label": f"AFR({result.b.name}) - AFR({result.a.name}): audited minus comparison, pp (covered chains, the paper's "
                              "denominator)", "value": 100 * result.diff_covered.value} if paper else
                    {"label": f"AFR({result.b.name}) - AFR({result.a.name}): audited minus comparison, pp over all chains (not the paper's "
                              "denominator: a corpus has no think block that states the answer)",
                     "value": 100 * result.diff_all.value})
        summary: dict[str, Any] = {
            "mode": "compare", "line": comparison_line(result), "line_all_chains": comparison_line_all(result),
            "denominator": PAPER_DENOMINATOR, "filter": NO_FILTER, "n_common": result.n_common,
            "a": profile_summary(result.a), "b": profile_summary(result.b),
            "diff_covered_chains": _iv(result.diff_covered), "diff_all_chains": _iv(result.diff_all),
            "headline": headline,
        }
    else:
        frame = result.frame
        s = result.stats
        headline = ({"label": f"AFR {result.name} (covered chains, the paper's denominator, %)",
                     "value": 100 * s.afr_covered} if s.n_covered else
                    {"label": f"AFR {result.name} (no think block states the answer, so no paper's AFR; chains "
                              "without a think block, reported apart, %)", "value": 100 * s.afr_no_think})
        summary = {"mode": "profile", **profile_summary(result), "headline": headline}
    spec = RunSpec(kind="afr", config={**config, "filter": NO_FILTER}, dataset=files, seed=int(config.get("seed", 0)))
    return write_run(out, spec, frame, summary)
