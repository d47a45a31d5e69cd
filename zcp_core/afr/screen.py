"""The dAFR screen: blind against leaked arm, bootstrap CIs, and the excision control.

``dAFR = AFR(leaked) − AFR(blind)`` in percentage points, read off unlabeled
generations. Inputs are chain-record files (see :mod:`zcp_core.afr.filter`).
The headline AFRs use the all-chains denominator (the paper's line); the
covered denominator and the answer-in-question exclusions are reported too.

The per-chain frame (the ``afr`` run's records) has the columns of
:func:`zcp_core.afr.filter.records_frame` plus those of
:func:`zcp_core.afr.afr_frame` and ``arm`` (``blind``/``leaked``/``excised``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zcp_core.afr.filter import read_records, record_chain, records_frame, write_records
from zcp_core.afr.rate import DEFAULT_THRESHOLD, AFRStats, Interval, afr_frame, afr_stats, bootstrap_afr
from zcp_core.errors import DataError

if TYPE_CHECKING:
    import pandas as pd


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
class ScreenResult:
    """A screen's numbers.

    Attributes:
        arms: The files read.
        blind: Blind-arm AFR statistics.
        leaked: Leaked-arm AFR statistics.
        ci_all: Intervals (fractions) for AFR(blind), AFR(leaked), dAFR, all-chains denominator.
        ci_covered: The same over covered chains.
        ci_all_excl: The same over all chains without answer-in-question items.
        frame: Per-chain frame of both arms (column ``arm``).
        threshold: Answer-first cut-off.
        n_boot: Bootstrap replicates.
        seed: Bootstrap seed.
    """

    arms: ArmFiles
    blind: AFRStats
    leaked: AFRStats
    ci_all: tuple[Interval, Interval, Interval]
    ci_covered: tuple[Interval, Interval, Interval]
    ci_all_excl: tuple[Interval, Interval, Interval]
    frame: pd.DataFrame
    threshold: float
    n_boot: int
    seed: int

    @property
    def dafr(self) -> float:
        """dAFR in percentage points (all-chains denominator)."""
        return 100 * (self.leaked.afr_all - self.blind.afr_all)


def screen(arms: ArmFiles, threshold: float = DEFAULT_THRESHOLD, n_boot: int = 2000, seed: int = 0) -> ScreenResult:
    """Measure AFR in both arms and bootstrap their CIs and dAFR (paired on uids)."""
    import pandas as pd

    fb = afr_frame(records_frame(read_records(arms.blind), arms.blind_name), threshold).assign(arm="blind")
    fl = afr_frame(records_frame(read_records(arms.leaked), arms.leaked_name), threshold).assign(arm="leaked")
    cis = {(den, ex): tuple(bootstrap_afr([fb, fl], den, n_boot, seed, ex))  # type: ignore[arg-type]
           for den, ex in (("all", False), ("covered", False), ("all", True))}
    return ScreenResult(arms, afr_stats(fb), afr_stats(fl), cis[("all", False)], cis[("covered", False)],  # type: ignore[arg-type]
                        cis[("all", True)], pd.concat([fb, fl], ignore_index=True), threshold, n_boot, seed)  # type: ignore[arg-type]


def _pct(x: float) -> str:
    return "nan" if math.isnan(x) else f"{100 * x:.1f}%"


def screen_line(r: ScreenResult) -> str:
    """The paper's line: ``AFR  blind(nohint)=26.6% (n=918)  leaked(hint)=47.4% (n=924)  signature dAFR=+20.8``."""
    d = "nan" if math.isnan(r.dafr) else f"{r.dafr:+.1f}"
    return (f"AFR  blind({r.arms.blind_name})={_pct(r.blind.afr_all)} (n={r.blind.n_chains})  "
            f"leaked({r.arms.leaked_name})={_pct(r.leaked.afr_all)} (n={r.leaked.n_chains})  signature dAFR={d}")


def _pp(x: float) -> str:
    return "nan" if math.isnan(x) else f"{100 * x:+.1f}"


def _ci_text(name: str, iv: Sequence[Interval]) -> str:
    b, lk, d = iv
    return (f"  {name}: blind {_pct(b.value)} [{_pct(b.low)}, {_pct(b.high)}]  leaked {_pct(lk.value)} "
            f"[{_pct(lk.low)}, {_pct(lk.high)}]  dAFR {_pp(d.value)} [{_pp(d.low)}, {_pp(d.high)}]")


def screen_report(r: ScreenResult) -> str:
    """The screen line followed by labelled bootstrap CIs and the denominators."""
    lines = [screen_line(r),
             f"95% bootstrap CIs ({r.n_boot} resamples of problems, seed {r.seed}; threshold {r.threshold}):",
             _ci_text("all chains     ", r.ci_all),
             _ci_text("covered chains ", r.ci_covered),
             _ci_text("all, excl. answer-in-question", r.ci_all_excl),
             f"covered (block states the answer): blind {r.blind.n_covered}/{r.blind.n_chains}, "
             f"leaked {r.leaked.n_covered}/{r.leaked.n_chains}; answer-in-question chains excluded: "
             f"blind {r.blind.n_chains - r.blind.n_chains_excl}, leaked {r.leaked.n_chains - r.leaked.n_chains_excl}",
             f"inputs: {r.arms.blind} | {r.arms.leaked} ({'matched' if r.arms.matched else 'unmatched'} arms)"]
    if not r.blind.n_chains or not r.leaked.n_chains:
        lines.append("warning: an arm is empty (no matched pairs?); there is nothing to compare")
    return "\n".join(lines)


def _iv(iv: Interval, scale: float = 100.0) -> dict[str, float]:
    return {"value": scale * iv.value, "low": scale * iv.low, "high": scale * iv.high}


def screen_summary(r: ScreenResult) -> dict[str, Any]:
    """The ``--json`` object (percentages) with the run's headline."""
    names = ("afr_blind", "afr_leaked", "dafr")
    return {
        "headline": {"label": f"dAFR ({r.arms.leaked_name} - {r.arms.blind_name}, pp)", "value": r.dafr},
        "line": screen_line(r), "threshold": r.threshold, "n_boot": r.n_boot, "seed": r.seed,
        "blind_file": str(r.arms.blind), "leaked_file": str(r.arms.leaked), "matched": r.arms.matched,
        "blind": r.blind.to_dict(), "leaked": r.leaked.to_dict(),
        "ci_all_chains": {k: _iv(v) for k, v in zip(names, r.ci_all)},
        "ci_covered_chains": {k: _iv(v) for k, v in zip(names, r.ci_covered)},
        "ci_all_chains_excl_answer_in_question": {k: _iv(v) for k, v in zip(names, r.ci_all_excl)},
    }


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
        gap_recovered: ``(AFR(leaked) − AFR(excised)) / dAFR``; NaN when dAFR is 0.
        frame: Per-chain frame of the excised copy (``arm`` = ``excised``).
    """

    path: Path
    n_excised: int
    stats: AFRStats
    gap_recovered: float
    frame: pd.DataFrame


def excision_control(r: ScreenResult, out: str | Path) -> ExcisionResult:
    """Write the excised leaked arm to ``out`` and measure its AFR."""
    recs = read_records(r.arms.leaked)
    lf = r.frame[r.frame["arm"] == "leaked"].reset_index(drop=True)
    ex = excise(recs, lf)
    path = write_records(out, ex)
    ef = afr_frame(records_frame(ex, r.arms.leaked_name), r.threshold).assign(arm="excised")
    st = afr_stats(ef)
    gap = r.leaked.afr_all - r.blind.afr_all
    rec = (r.leaked.afr_all - st.afr_all) / gap if gap else math.nan
    return ExcisionResult(path, sum(1 for x in ex if "excision" in x), st, rec, ef)
