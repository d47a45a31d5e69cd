"""Text and JSON views of a dAFR screen, always in the same order and with the same labels.

1. The paper's line, over the chains whose block states the answer
   (``AFR blind(nohint)=26.6% (n=918) leaked(hint)=47.4% (n=924) signature dAFR=+20.8``).
2. The all-chains version, labelled as such.
3. Provenance: the keep-correct filter and keep mode each arm's records carry.
4. Forced finishes (``box_prefill``) per arm, AFR over the chains that boxed
   their answer themselves, and a warning when forced finishes are more than
   half of an arm.
5. Bootstrap CIs (covered, all, all without answer-in-question items) and inputs.

The CLI, the run summary (``line``, ``line_all_chains``, ``line_own_finish``),
the app page and the notebook all use these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from zcp_core.afr.rate import ALL_CHAINS_LABEL, PAPER_DENOMINATOR, AFRStats, Interval
from zcp_core.afr.screen import NOT_RECORDED, ArmInfo, ScreenResult
from zcp_core.report import (
    MISSING,
    Headline,
    Report,
    fmt_ci,
    fmt_count,
    fmt_num,
    fmt_pp,
    fmt_share,
    fmt_share_ci,
    number,
    portable,
)

__all__ = ["ALL_CHAINS_LABEL", "OWN_FINISH_LABEL", "PAPER_DENOMINATOR", "forced_warnings", "screen_line",
           "report", "screen_line_all", "screen_line_own", "screen_report", "screen_summary"]

OWN_FINISH_LABEL = "own finishes only (chains that boxed their answer themselves)"


# The shared rules (zcp_core.report): a rate over no chains has no value and reads "–", never "nan".
def _pct(x: float) -> str:
    return fmt_share(x)


def _pp(x: float) -> str:
    v = number(x)
    return fmt_num(None if v is None else 100 * v, 1, signed=True)


def _d(x: float) -> str:
    return fmt_num(x, 1, signed=True)


def _pct100(x: Any) -> str:
    """A share stored in percent (the run's json) by the share rule."""
    v = number(x)
    return fmt_share(None if v is None else v / 100)


def _pair(r: ScreenResult, b: AFRStats, lk: AFRStats, covered: bool) -> str:
    bv, bn = (b.afr_covered, b.n_covered) if covered else (b.afr_all, b.n_chains)
    lv, ln = (lk.afr_covered, lk.n_covered) if covered else (lk.afr_all, lk.n_chains)
    return (f"blind({r.arms.blind_name})={_pct(bv)} (n={bn}) "
            f"leaked({r.arms.leaked_name})={_pct(lv)} (n={ln})")


def screen_line(r: ScreenResult) -> str:
    """The paper's line, over covered chains: ``AFR blind(nohint)=26.6% (n=918) leaked(hint)=47.4% (n=924) …``."""
    return f"AFR {_pair(r, r.blind, r.leaked, True)} signature dAFR={_d(r.dafr)}"


def screen_line_all(r: ScreenResult) -> str:
    """The same over all chains, labelled as such."""
    return f"{ALL_CHAINS_LABEL}: {_pair(r, r.blind, r.leaked, False)} dAFR={_d(r.dafr_all)}"


def screen_line_own(r: ScreenResult) -> str:
    """AFR (covered) over the chains that boxed their answer themselves; ``""`` when no chain was forced."""
    if not r.blind_info.n_forced and not r.leaked_info.n_forced:
        return ""
    if not r.blind_info.own.n_chains and not r.leaked_info.own.n_chains:
        return f"{OWN_FINISH_LABEL}: none; no chain in either arm boxed its answer itself"
    return (f"{OWN_FINISH_LABEL}: AFR {_pair(r, r.blind_info.own, r.leaked_info.own, True)} "
            f"dAFR={_d(r.dafr_own)}")


def forced_warnings(r: ScreenResult) -> list[str]:
    """One warning per arm whose chains are mostly forced finishes."""
    out = []
    for side, info in (("blind", r.blind_info), ("leaked", r.leaked_info)):
        if info.forced_majority:
            out.append(f"WARNING: {info.n_forced} of {info.n_chains} chains of the {side} arm ({info.name}) have a "
                       "forced finish: `box_prefill`, not the model, wrote their final answer, which is what the "
                       "keep-correct filter grades. This result is not about the model's own writing.")
    return out


def provenance_text(r: ScreenResult) -> str:
    """Which keep-correct filter and keep mode each arm's records carry."""
    b, lk = r.blind_info, r.leaked_info

    def both(x: str, y: str) -> str:
        return f"{x} (both arms)" if x == y else f"blind {x}, leaked {y}"

    filt = both(b.keep_filter, lk.keep_filter)
    if b.keep_filter == lk.keep_filter == NOT_RECORDED:
        filt += " - these files were not written by `zcp afr filter` (unfiltered arms?)"
    keep = both(b.keep, lk.keep)
    if b.keep == lk.keep == "first":
        keep += ", one chain per problem"
    return (f"keep-correct filter: {filt}; keep: {keep}; arms: blind {b.n_chains} chains on {b.n_problems} problems, "
            f"leaked {lk.n_chains} on {lk.n_problems}")


def forced_text(r: ScreenResult) -> str:
    """Forced-finish counts per arm."""
    b, lk = r.blind_info, r.leaked_info
    if not b.n_chains and not lk.n_chains:
        return "forced finishes (`box_prefill`): no chain in either arm"
    if not b.n_forced and not lk.n_forced:
        return "forced finishes (`box_prefill`): none; every chain boxed its answer itself"
    return f"forced finishes (`box_prefill`): blind {b.n_forced}/{b.n_chains}, leaked {lk.n_forced}/{lk.n_chains}"


def size_note(r: ScreenResult) -> str:
    """A note when an arm has too few problems for a verdict, or arms of unequal size were allowed."""
    from zcp_core.stats import MIN_PAIRS

    notes = []
    n = min(r.blind_info.n_problems, r.leaked_info.n_problems)
    if n < MIN_PAIRS:
        notes.append(f"too few problems for a verdict (n={n} < {MIN_PAIRS}): read these numbers as a check of "
                     "the pipeline, not as a finding")
    if r.blind_info.n_chains != r.leaked_info.n_chains:
        notes.append("arms of unequal size compared on request (--allow-unequal-arms)")
    return "; ".join(notes)


def _ci_text(name: str, iv: Sequence[Interval]) -> str:
    b, lk, d = iv
    return (f"  {name}: blind {_pct(b.value)} [{_pct(b.low)}, {_pct(b.high)}]  leaked {_pct(lk.value)} "
            f"[{_pct(lk.low)}, {_pct(lk.high)}]  dAFR {_pp(d.value)} [{_pp(d.low)}, {_pp(d.high)}]")


def no_think_text(r: ScreenResult) -> str:
    """The chains without a think block, per arm: their own group, never in the paper's denominator."""
    b, lk = r.blind, r.leaked
    if not b.n_no_think and not lk.n_no_think:
        return "every chain has a think block"
    return (f"without a think block (their own group, AFR on the text before the final answer): blind "
            f"{b.n_no_think}/{b.n_chains} chains, AFR {_pct(b.afr_no_think)} (n={b.n_no_think_stated}); leaked "
            f"{lk.n_no_think}/{lk.n_chains}, AFR {_pct(lk.afr_no_think)} (n={lk.n_no_think_stated})")


def screen_report(r: ScreenResult) -> str:
    """The paper's line, the all-chains line, provenance, forced finishes, notes, then labelled CIs."""
    lines = [screen_line(r), screen_line_all(r),
             f"  headline denominator: {PAPER_DENOMINATOR}: blind {r.blind.n_covered}/{r.blind.n_chains}, "
             f"leaked {r.leaked.n_covered}/{r.leaked.n_chains}; {no_think_text(r)}",
             provenance_text(r), forced_text(r)]
    own = screen_line_own(r)
    if own:
        lines.append(own)
    lines += forced_warnings(r)
    note = size_note(r)
    if note:
        lines.append(f"note: {note}")
    lines += [f"95% bootstrap CIs ({r.n_boot} resamples of problems, seed {r.seed}; threshold {r.threshold}):",
              _ci_text("covered chains (paper)", r.ci_covered),
              _ci_text("all chains            ", r.ci_all),
              _ci_text("all, excl. answer-in-question", r.ci_all_excl),
              f"answer-in-question chains excluded: blind {r.blind.n_chains - r.blind.n_chains_excl}, "
              f"leaked {r.leaked.n_chains - r.leaked.n_chains_excl}",
              f"inputs: {r.arms.blind} | {r.arms.leaked} ({'matched' if r.arms.matched else 'unmatched'} arms)"]
    if not r.blind.n_chains or not r.leaked.n_chains:
        lines.append("warning: an arm is empty (no matched pairs?); there is nothing to compare")
    return "\n".join(lines)


def _iv(iv: Interval, scale: float = 100.0) -> dict[str, float]:
    return {"value": scale * iv.value, "low": scale * iv.low, "high": scale * iv.high}


def _info(i: ArmInfo) -> dict[str, Any]:
    return i.to_dict()


def screen_summary(r: ScreenResult) -> dict[str, Any]:
    """The ``--json`` object (percentages) with the run's headline, in the report's order."""
    names = ("afr_blind", "afr_leaked", "dafr")
    return {
        "headline": {"label": f"dAFR ({r.arms.leaked_name} - {r.arms.blind_name}, pp; covered chains, the paper's "
                              "denominator)", "value": r.dafr},
        "line": screen_line(r), "line_all_chains": screen_line_all(r), "line_own_finish": screen_line_own(r),
        "denominator": PAPER_DENOMINATOR, "no_think": no_think_text(r), "dafr_all_chains": r.dafr_all,
        "dafr_own_finish": r.dafr_own,
        "provenance": provenance_text(r), "forced_finish": forced_text(r), "warnings": forced_warnings(r),
        "note": size_note(r),
        "filter": {"blind": r.blind_info.keep_filter, "leaked": r.leaked_info.keep_filter},
        "keep": {"blind": r.blind_info.keep, "leaked": r.leaked_info.keep},
        "arms": {"blind": _info(r.blind_info), "leaked": _info(r.leaked_info)}, "unequal_arms": r.unequal,
        "threshold": r.threshold, "n_boot": r.n_boot, "seed": r.seed,
        "blind_file": str(r.arms.blind), "leaked_file": str(r.arms.leaked), "matched": r.arms.matched,
        "blind": r.blind.to_dict(), "leaked": r.leaked.to_dict(),
        "ci_covered_chains": {k: _iv(v) for k, v in zip(names, r.ci_covered)},
        "ci_all_chains": {k: _iv(v) for k, v in zip(names, r.ci_all)},
        "ci_all_chains_excl_answer_in_question": {k: _iv(v) for k, v in zip(names, r.ci_all_excl)},
    }


# --- The Report of an afr run (zcp_core.report): what the CLI, the app page and the notebooks show. ---------------

COVERED_WORDS = "covered chains (think block states the answer), the paper's denominator"
ALL_WORDS = "all chains, not the paper's denominator"
AFR_COLUMNS = ("Chains", "Answer-first of covered chains", "AFR, covered chains", "95% CI (covered)",
               "AFR, all chains", "95% CI (all chains)")


def _ci_pp(d: Mapping[str, Any]) -> str:
    """A stored difference interval (already in percentage points) as ``[+1.0, +30.0] pp``."""
    ci = fmt_ci(d.get("low"), d.get("high"), 1)
    return ci if ci == MISSING else f"{ci} pp"


def _share_ci_pp(d: Mapping[str, Any]) -> str:
    """A stored AFR interval (in percent) as ``[12.0%, 30.5%]``."""
    lo, hi = number(d.get("low")), number(d.get("high"))
    return fmt_share_ci(None if lo is None else lo / 100, None if hi is None else hi / 100)


def _reading(d: Mapping[str, Any], n_problems: int, what: str) -> str:
    """The difference in words: too few problems, an interval above or below 0, or one that holds 0."""
    from zcp_core.stats import MIN_PAIRS

    lo, hi = number(d.get("low")), number(d.get("high"))
    if n_problems < MIN_PAIRS:
        return f"too few problems for a verdict ({fmt_count(n_problems)} < {MIN_PAIRS})"
    if lo is None or hi is None:
        return "no interval"
    if lo > 0:
        return f"{what} states its answer early more often (the 95% CI lies above 0)"
    if hi < 0:
        return f"{what} states its answer early less often (the 95% CI lies below 0)"
    return "no difference shown (the 95% CI holds 0)"


def _arm_row(label: str, st_: Mapping[str, Any], ci_cov: Mapping[str, Any], ci_all: Mapping[str, Any]) -> tuple[str, ...]:
    return (label, fmt_count(st_.get("n_chains")),
            f"{fmt_count(st_.get('n_answer_first'))} of {fmt_count(st_.get('n_covered'))}",
            fmt_share(st_.get("afr_covered")), _share_ci_pp(ci_cov), fmt_share(st_.get("afr_all")),
            _share_ci_pp(ci_all))


def _no_think_sentence(parts: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """Chains without a think block, per arm or corpus: their own group, never in the paper's denominator."""
    with_none = [(n, s) for n, s in parts if s.get("n_no_think")]
    if not with_none:
        return ""
    return ("Chains without a think block are their own group (AFR on the text before the final answer, never in "
            "the paper's denominator): " + "; ".join(
                f"{n} {fmt_count(s.get('n_no_think'))} of {fmt_count(s.get('n_chains'))} chains, AFR "
                f"{fmt_share(s.get('afr_no_think'))}" for n, s in with_none) + ".")


def _screen_report(run: Any) -> Report:
    s = run.summary
    arms = s.get("arms") or {}
    names = {a: str((arms.get(a) or {}).get("name", a)) for a in ("blind", "leaked")}
    cov, all_ = s.get("ci_covered_chains") or {}, s.get("ci_all_chains") or {}
    n_problems = min(int((arms.get(a) or {}).get("n_problems") or 0) for a in ("blind", "leaked"))
    d, d_all = cov.get("dafr") or {}, all_.get("dafr") or {}
    value = fmt_pp(d.get("value"))
    head = Headline("dAFR, leaked − blind", value, COVERED_WORDS,
                    _reading(d, n_problems, "the leaked arm") if value != MISSING else "",
                    "" if value != MISSING else "an arm has no covered chain", number(d.get("value")))
    rows = [_arm_row(f"{a} ({names[a]})", s.get(a) or {}, cov.get(f"afr_{a}") or {}, all_.get(f"afr_{a}") or {})
            for a in ("blind", "leaked")]
    rows.append(("dAFR, leaked − blind", "", "", value, _ci_pp(d), fmt_pp(d_all.get("value")), _ci_pp(d_all)))
    sentences = [f"dAFR over {COVERED_WORDS}: {value}, 95% CI {_ci_pp(d)}: {head.reading}." if value != MISSING
                 else f"dAFR over {COVERED_WORDS}: none, because {head.reason}.",
                 f"Counting every chain ({ALL_WORDS}): dAFR {fmt_pp(d_all.get('value'))}, 95% CI {_ci_pp(d_all)}."]
    nt = _no_think_sentence([(f"{a} ({names[a]})", s.get(a) or {}) for a in ("blind", "leaked")])
    sentences += [nt] if nt else []
    ex = s.get("excision")
    if isinstance(ex, Mapping):
        gap = number(ex.get("gap_recovered"))
        sentences.append(f"Excision control: {fmt_count(ex.get('n_excised'))} answer-first chains edited; AFR after "
                         f"excision {_pct100(ex.get('afr_excised'))}"
                         + (f", {fmt_share(gap)} of the gap recovered." if gap is not None else
                            ": no gap to recover."))
    notes = [f"Headline denominator: {COVERED_WORDS}; the all-chains columns count every chain.",
             str(s.get("provenance", "")), str(s.get("forced_finish", "")), str(s.get("line_own_finish", "")),
             *map(str, s.get("warnings") or ()),
             *([f"Note: {s['note']}."] if s.get("note") else [])]
    facts = (("Problems in each arm", fmt_count(n_problems)),
             ("Answer-first threshold", fmt_share(s.get("threshold"), 0)),
             ("Bootstrap resamples", fmt_count(s.get("n_boot"))))
    return Report(f"Answer-first rate screen: blind ({names['blind']}) against leaked ({names['leaked']})", head,
                  ("Arm", *AFR_COLUMNS), tuple(rows), tuple(sentences), facts,
                  tuple(n for n in notes if n), _command(run))


def _compare_report(run: Any) -> Report:
    s = run.summary
    a, b = s.get("a") or {}, s.get("b") or {}
    sa, sb = a.get("stats") or {}, b.get("stats") or {}
    paper = all((number(x.get("n_covered")) or 0) > 0 for x in (sa, sb))
    d = (s.get("diff_covered_chains") if paper else s.get("diff_all_chains")) or {}
    none = ", ".join(str(p.get("name")) for p, x in ((a, sa), (b, sb)) if not (number(x.get("n_covered")) or 0))
    subject = COVERED_WORDS if paper else ALL_WORDS
    value = fmt_pp(d.get("value"))
    head = Headline("Difference in AFR, audited − comparison", value, subject,
                    _reading(d, int(s.get("n_common") or 0), "the audited corpus"), "", number(d.get("value")))
    rows = [_arm_row(f"{p.get('name')} ({role})", p.get("stats") or {}, p.get("ci_covered_chains") or {},
                     p.get("ci_all_chains") or {}) for p, role in ((b, "audited"), (a, "comparison"))]
    dc, da = s.get("diff_covered_chains") or {}, s.get("diff_all_chains") or {}
    rows.append(("Difference, audited − comparison", "", "", fmt_pp(dc.get("value")) if paper else MISSING,
                 _ci_pp(dc) if paper else MISSING, fmt_pp(da.get("value")), _ci_pp(da)))
    sentences = [f"AFR of {b.get('name')} (audited) minus {a.get('name')} (comparison) over {subject}: {value}, "
                 f"95% CI {_ci_pp(d)}, on {fmt_count(s.get('n_common'))} common problems: {head.reading}."]
    if paper:
        sentences.append(f"Counting every chain ({ALL_WORDS}): {fmt_pp(da.get('value'))}, 95% CI {_ci_pp(da)}.")
    nt = _no_think_sentence([(str(p.get("name")), p.get("stats") or {}) for p in (b, a)])
    sentences += [nt] if nt else []
    notes = [f"Headline denominator: {subject}." if paper else
             f"Headline denominator: {ALL_WORDS}, because {none} has no covered chain; the covered-chain columns "
             "show – where there is none.", f"Keep-correct filter: {s.get('filter', NOT_RECORDED)}."]
    facts = (("Common problems", fmt_count(s.get("n_common"))), ("Answer-first threshold",
                                                                  fmt_share(_config(run).get("threshold"), 0)))
    return Report(f"Answer-first rate: {b.get('name')} (audited) against {a.get('name')} (comparison)", head,
                  ("Corpus", *AFR_COLUMNS), tuple(rows), tuple(sentences), facts, tuple(notes), _command(run))


def _profile_report(run: Any) -> Report:
    s = run.summary
    st_ = s.get("stats") or {}
    name = str(s.get("name", "corpus"))
    if number(st_.get("n_covered")):
        head = Headline(f"AFR {name}", fmt_share(st_.get("afr_covered")), COVERED_WORDS,
                        f"{fmt_count(st_.get('n_answer_first'))} answer-first of {fmt_count(st_.get('n_covered'))}",
                        "", number(st_.get("afr_covered")))
    else:
        head = Headline(f"AFR {name}", MISSING, COVERED_WORDS, "",
                        "no chain has a think block that states the answer")
    rows = (_arm_row(name, st_, s.get("ci_covered_chains") or {}, s.get("ci_all_chains") or {}),)
    nt = _no_think_sentence([(name, st_)])
    notes = (f"Headline denominator: {COVERED_WORDS}.", f"Keep-correct filter: {s.get('filter', NOT_RECORDED)}.")
    return Report(f"Answer-first rate profile of {name}", head, ("Corpus", *AFR_COLUMNS), rows, (head.text + ".",) +
                  ((nt,) if nt else ()), (("Answer-first threshold", fmt_share(_config(run).get("threshold"), 0)),),
                  notes, _command(run))


def _config(run: Any) -> Mapping[str, Any]:
    return run.manifest.get("config") or {}


def _command(run: Any) -> str:
    ex = run.manifest.get("example") or {}
    return portable(str(ex.get("command") or run.manifest.get("command") or ""))


def report(run: Any) -> Report:
    """The :class:`~zcp_core.report.Report` of an ``afr`` run (a screen, a profile or a comparison of two)."""
    s = run.summary
    if s.get("mode") == "compare":
        return _compare_report(run)
    if s.get("mode") == "profile":
        return _profile_report(run)
    if isinstance(s.get("blind"), Mapping) and isinstance(s.get("leaked"), Mapping):
        return _screen_report(run)
    head = s.get("headline") or {}
    return Report(f"Answer-first rate run {run.path.name}",
                  Headline(str(head.get("label", "AFR")), fmt_num(head.get("value"), 1)), command=_command(run))


def write_screen_run(out: Any, res: ScreenResult, config: dict[str, Any], frame: Any = None,
                     summary: dict[str, Any] | None = None) -> Any:
    """Write an ``afr`` run of a screen (per-chain records and the ``--json`` summary); the CLI and notebooks."""
    from pathlib import Path

    from zcp_core.runs import RunSpec, write_run

    out = Path(out)

    spec = RunSpec(kind="afr", config=config, dataset=(str(res.arms.blind), str(res.arms.leaked)),
                   seed=int(config.get("seed", res.seed)))
    return write_run(out, spec, res.frame if frame is None else frame,
                     screen_summary(res) if summary is None else summary)
