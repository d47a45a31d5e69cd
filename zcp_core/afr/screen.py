"""The dAFR screen: blind against leaked arm, bootstrap CIs, and the excision control.

``dAFR = AFR(leaked) − AFR(blind)`` in percentage points, read off unlabeled
generations. Inputs are chain-record files (see :mod:`zcp_core.afr.filter`).
The headline uses the paper's denominator: the chains whose block states the
answer (``covered``); the all-chains denominator and the answer-in-question
exclusions are reported next, labelled. Each arm also states the keep-correct
filter and keep mode its records carry, and how many of its chains had their
final answer forced by ``box_prefill``; AFR is given again over the chains
that boxed their answer themselves. Arms of unequal size are refused unless
``unequal="allow"``: the paper holds the amount of data per arm fixed.

The per-chain frame (the ``afr`` run's records) has the columns of
:func:`zcp_core.afr.filter.records_frame` plus those of
:func:`zcp_core.afr.afr_frame` and ``arm`` (``blind``/``leaked``/``excised``).
Text and JSON views of a result are in :mod:`zcp_core.afr.report`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from zcp_core.afr.filter import read_records, record_chain, records_frame, write_records
from zcp_core.afr.rate import DEFAULT_THRESHOLD, AFRStats, Denominator, Interval, afr_frame, afr_stats, bootstrap_afr
from zcp_core.errors import DataError, ZcpError

if TYPE_CHECKING:
    import pandas as pd

UnequalArms = Literal["refuse", "allow"]
NOT_RECORDED = "not recorded"


@dataclass(frozen=True)
class ArmFiles:
    """The two files a screen reads, and why they were chosen.

    Attributes:
        blind: Blind-arm file.
        leaked: Leaked-arm file.
        blind_name: Label of the blind arm (its condition, e.g. ``nohint``).
        leaked_name: Label of the leaked arm (e.g. ``hint``).
        matched: Whether both are ``*_matched.jsonl`` files.
    """

    blind: Path
    leaked: Path
    blind_name: str
    leaked_name: str
    matched: bool


def _label(spec: str) -> str:
    name = Path(spec).name
    for suffix in (".jsonl", "_matched", "_kept"):
        name = name.removesuffix(suffix)
    return name


def _as_file(spec: str, d: Path) -> Path | None:
    """``spec`` as a file (as given, or inside ``d``) when it names one; None for a condition name."""
    p = Path(spec)
    if p.suffix != ".jsonl":
        return None
    for cand in (p, d / p):
        if cand.is_file():
            return cand
    raise DataError(str(p), None, None, "file not found")


def resolve_arms(folder: str | Path | None, blind: str = "nohint", leaked: str = "hint") -> ArmFiles:
    """Choose the blind and leaked files.

    ``blind``/``leaked`` are file paths or condition names. Conditions are read
    from ``folder`` as ``<cond>_matched.jsonl`` when *both* matched files exist,
    else as ``<cond>.jsonl`` when both of those exist; a matched file is never
    paired with an unmatched one.

    Raises:
        DataError: When only one arm has a matched file, or files are missing.
    """
    d = Path(folder) if folder else Path(".")
    paths = {"blind": _as_file(blind, d), "leaked": _as_file(leaked, d)}
    conds = {a: s for a, s in (("blind", blind), ("leaked", leaked)) if paths[a] is None}
    if conds:
        has_m = {a: (d / f"{s}_matched.jsonl").exists() for a, s in conds.items()}
        use_matched = all(has_m.values())
        if any(has_m.values()) and not use_matched:
            raise DataError(str(d), None, None, "only one arm has a *_matched.jsonl file; run `zcp afr filter` "
                            "for both conditions, or name the files with --blind/--leaked")
        for a, s in conds.items():
            p = d / (f"{s}_matched.jsonl" if use_matched else f"{s}.jsonl")
            if not p.exists():
                raise DataError(str(p), None, None, f"no {s}_matched.jsonl or {s}.jsonl in {d}")
            paths[a] = p
    b, lk = paths["blind"], paths["leaked"]
    assert b is not None and lk is not None
    return ArmFiles(b, lk, _label(str(b)), _label(str(lk)),
                    b.name.endswith("_matched.jsonl") and lk.name.endswith("_matched.jsonl"))


@dataclass(frozen=True)
class ArmInfo:
    """What one arm holds and where it came from.

    Attributes:
        name: The arm's label (its condition, e.g. ``nohint``).
        n_chains: Chains in the arm.
        n_problems: Distinct problems (uids).
        keep_filter: Keep-correct filter its records carry (``mathverify``, ``paper``, ``mixed: …`` or
            ``not recorded`` for files the filter did not write, e.g. unfiltered arms).
        keep: ``first`` (one chain per problem), ``all``, ``mixed: …`` or ``not recorded``.
        n_forced: Chains whose final answer ``box_prefill`` forced.
        own: AFR over the chains that boxed their answer themselves.
    """

    name: str
    n_chains: int
    n_problems: int
    keep_filter: str
    keep: str
    n_forced: int
    own: AFRStats

    @property
    def forced_majority(self) -> bool:
        """Whether forced finishes are more than half of the arm."""
        return 2 * self.n_forced > self.n_chains

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for summaries."""
        return {"name": self.name, "n_chains": self.n_chains, "n_problems": self.n_problems,
                "filter": self.keep_filter, "keep": self.keep, "n_forced": self.n_forced,
                "forced_majority": self.forced_majority, "own": self.own.to_dict()}


def _one_or_mixed(values: Iterable[str]) -> str:
    vals = sorted(set(values))
    if not vals:
        return NOT_RECORDED
    return vals[0] if len(vals) == 1 else "mixed: " + ", ".join(vals)


def arm_info(name: str, records: Sequence[Mapping[str, Any]], frame: pd.DataFrame) -> ArmInfo:
    """An arm's provenance and forced-finish count from its records and their AFR frame (row for row)."""
    prov = [r.get("keep_correct") or {} for r in records]
    own = frame[~frame["forced_finish"].astype(bool)]
    return ArmInfo(name, len(frame), int(frame["uid"].nunique()),
                   _one_or_mixed(str(x.get("filter", NOT_RECORDED)) for x in prov),
                   _one_or_mixed(str(x.get("keep", NOT_RECORDED)) for x in prov),
                   int(frame["forced_finish"].astype(bool).sum()), afr_stats(own))


@dataclass(frozen=True)
class ScreenResult:
    """A screen's numbers.

    Attributes:
        arms: The files read.
        blind: Blind-arm AFR statistics.
        leaked: Leaked-arm AFR statistics.
        ci_covered: Intervals (fractions) for AFR(blind), AFR(leaked), dAFR over covered chains (the paper's).
        ci_all: The same over all chains.
        ci_all_excl: The same over all chains without answer-in-question items.
        frame: Per-chain frame of both arms (column ``arm``).
        threshold: Answer-first cut-off.
        n_boot: Bootstrap replicates.
        seed: Bootstrap seed.
        blind_info: Blind arm's size, filter, keep mode and forced finishes.
        leaked_info: The same for the leaked arm.
        unequal: Whether arms of unequal size were refused or allowed.
    """

    arms: ArmFiles
    blind: AFRStats
    leaked: AFRStats
    ci_covered: tuple[Interval, Interval, Interval]
    ci_all: tuple[Interval, Interval, Interval]
    ci_all_excl: tuple[Interval, Interval, Interval]
    frame: pd.DataFrame
    threshold: float
    n_boot: int
    seed: int
    blind_info: ArmInfo
    leaked_info: ArmInfo
    unequal: UnequalArms = "refuse"

    @property
    def dafr(self) -> float:
        """dAFR in percentage points over covered chains (the paper's denominator; the headline)."""
        return 100 * (self.leaked.afr_covered - self.blind.afr_covered)

    @property
    def dafr_all(self) -> float:
        """dAFR in percentage points over all chains."""
        return 100 * (self.leaked.afr_all - self.blind.afr_all)

    @property
    def dafr_own(self) -> float:
        """dAFR (covered) over the chains that boxed their answer themselves."""
        return 100 * (self.leaked_info.own.afr_covered - self.blind_info.own.afr_covered)


def check_equal_arms(arms: ArmFiles, blind: ArmInfo, leaked: ArmInfo) -> None:
    """Raise when the arms differ in size, saying why that matters.

    Raises:
        ZcpError: Naming both files and sizes.
    """
    if blind.n_chains == leaked.n_chains:
        return
    raise ZcpError(
        f"the arms differ in size: blind {arms.blind} has {blind.n_chains} chains on {blind.n_problems} problems, "
        f"leaked {arms.leaked} has {leaked.n_chains} on {leaked.n_problems}. dAFR compares two students that saw "
        "the same amount of data, so the paper keeps one chain per problem in each arm. Run `zcp afr filter` with "
        "the default --keep first, or pass --allow-unequal-arms (unequal='allow') to compare them anyway.")


def screen(arms: ArmFiles, threshold: float = DEFAULT_THRESHOLD, n_boot: int = 2000, seed: int = 0,
           unequal: UnequalArms = "refuse") -> ScreenResult:
    """Measure AFR in both arms and bootstrap their CIs and dAFR (paired on uids).

    Raises:
        ZcpError: When the arms differ in size and ``unequal`` is ``refuse``.
    """
    import pandas as pd

    rb, rl = read_records(arms.blind), read_records(arms.leaked)
    fb = afr_frame(records_frame(rb, arms.blind_name), threshold).assign(arm="blind")
    fl = afr_frame(records_frame(rl, arms.leaked_name), threshold).assign(arm="leaked")
    ib, il = arm_info(arms.blind_name, rb, fb), arm_info(arms.leaked_name, rl, fl)
    if unequal == "refuse":
        check_equal_arms(arms, ib, il)

    def cis(den: Denominator, exclude_aiq: bool) -> tuple[Interval, Interval, Interval]:
        b, lk, d = bootstrap_afr([fb, fl], den, n_boot, seed, exclude_aiq)
        return b, lk, d

    return ScreenResult(arms, afr_stats(fb), afr_stats(fl), cis("covered", False), cis("all", False),
                        cis("all", True), pd.concat([fb, fl], ignore_index=True), threshold, n_boot, seed,
                        ib, il, unequal)


def excise(records: Sequence[Mapping[str, Any]], frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Copy ``records`` with the line stating the answer removed from each answer-first chain.

    ``frame`` is the records' :func:`~zcp_core.afr.afr_frame`, row for row. The
    removed line and its offset are stored under ``excision`` so
    :func:`restore_excised` undoes the edit; other records are copied unchanged.
    """
    out = []
    for rec, (_, row) in zip(records, frame.iterrows()):
        new = {**rec, "messages": [dict(m) for m in rec["messages"]]}
        if bool(row["answer_first"]):
            chain = record_chain(rec)
            s = chain.rfind("\n", 0, int(row["mention_start"])) + 1
            e = chain.find("\n", int(row["mention_end"]))
            e = len(chain) if e < 0 else e + 1
            msg = [m for m in new["messages"] if m.get("role") == "assistant"][-1]
            msg["content"] = chain[:s] + chain[e:]
            new["excision"] = {"start": s, "removed": chain[s:e],
                               "reason": "excision control: line with the first statement of the answer"}
        out.append(new)
    return out


def restore_excised(records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Undo :func:`excise`: put each removed line back and drop the ``excision`` field."""
    out = []
    for rec in records:
        new = {k: v for k, v in rec.items() if k != "excision"}
        new["messages"] = [dict(m) for m in rec["messages"]]
        ex = rec.get("excision")
        if ex:
            msg = [m for m in new["messages"] if m.get("role") == "assistant"][-1]
            c = str(msg["content"])
            msg["content"] = c[: ex["start"]] + ex["removed"] + c[ex["start"] :]
        out.append(new)
    return out


@dataclass(frozen=True)
class ExcisionResult:
    """The excision control on the leaked arm.

    Attributes:
        path: The excised copy written.
        n_excised: Chains edited.
        stats: AFR of the excised copy.
        gap_recovered: ``(AFR(leaked) − AFR(excised)) / dAFR`` over covered chains (the headline's
            denominator); NaN when dAFR is 0.
        frame: Per-chain frame of the excised copy (``arm`` = ``excised``).
        gap_recovered_all: The same over all chains.
    """

    path: Path
    n_excised: int
    stats: AFRStats
    gap_recovered: float
    frame: pd.DataFrame
    gap_recovered_all: float = math.nan


def excision_control(r: ScreenResult, out: str | Path) -> ExcisionResult:
    """Write the excised leaked arm to ``out`` and measure its AFR."""
    recs = read_records(r.arms.leaked)
    lf = r.frame[r.frame["arm"] == "leaked"].reset_index(drop=True)
    ex = excise(recs, lf)
    path = write_records(out, ex)
    ef = afr_frame(records_frame(ex, r.arms.leaked_name), r.threshold).assign(arm="excised")
    st = afr_stats(ef)
    gap, gap_all = r.leaked.afr_covered - r.blind.afr_covered, r.leaked.afr_all - r.blind.afr_all
    rec = (r.leaked.afr_covered - st.afr_covered) / gap if gap and not math.isnan(gap) else math.nan
    rec_all = (r.leaked.afr_all - st.afr_all) / gap_all if gap_all and not math.isnan(gap_all) else math.nan
    return ExcisionResult(path, sum(1 for x in ex if "excision" in x), st, rec, ef, rec_all)

