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

import math
from collections.abc import Sequence
from typing import Any

from zcp_core.afr.rate import ALL_CHAINS_LABEL, PAPER_DENOMINATOR, AFRStats, Interval
from zcp_core.afr.screen import NOT_RECORDED, ArmInfo, ScreenResult

__all__ = ["ALL_CHAINS_LABEL", "OWN_FINISH_LABEL", "PAPER_DENOMINATOR", "forced_warnings", "screen_line",
           "screen_line_all", "screen_line_own", "screen_report", "screen_summary"]

OWN_FINISH_LABEL = "own finishes only (chains that boxed their answer themselves)"


# A rate over no chains has no value: it reads "n/a", never "nan".
def _pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{100 * x:.1f}%"


def _pp(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{100 * x:+.1f}"


def _d(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:+.1f}"


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
                       "forced finish: box_prefill, not the model, wrote their final answer, which is what the "
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
        return "forced finishes (box_prefill): no chain in either arm"
    if not b.n_forced and not lk.n_forced:
        return "forced finishes (box_prefill): none; every chain boxed its answer itself"
    return f"forced finishes (box_prefill): blind {b.n_forced}/{b.n_chains}, leaked {lk.n_forced}/{lk.n_chains}"


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
