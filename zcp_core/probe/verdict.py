"""The verdict a release follows: the run's flags, the flag metric's C against ``--min-confidence``.

Used by :mod:`zcp_core.probe.release`. Under ``--replace flagged`` (the default) the flags are the gate.
On a P metric they are Benjamini-Hochberg discoveries at level q, and BH is itself a level-q test of "no
item is contaminated": no discovery, no replacement. BH's guarantee is an average over audits: across
audits the expected share of false flags is at most about q (the per-item p are approximate, items not
being exactly exchangeable), and a given list can hold more (with no contamination at all, every flag is
false). ``--replace covered`` replaces every item with a verified twin whatever the flags. In both modes
``--min-confidence`` is a gate on the paper's Contamination Confidence of the flag metric, which needs
``n >= stats.MIN_PAIRS`` pairs. Under the paper's ``acc`` rule (and in runs made before the flags carried
a false-discovery rate) the flags have no such control, and the card gives how many flags chance alone
gives. :func:`run_verdict` says whether items may be replaced, and the card's sentence when not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

#: Default ``--min-confidence``: the headline C a run needs before its flagged items are replaced.
DEFAULT_MIN_CONFIDENCE = 0.95

#: Which items a release replaces (``zcp release --replace``): the flagged ones with a verified twin, or every
#: item with a verified twin (a clean release whatever the per-item power).
ReplaceMode = Literal["flagged", "covered"]
REPLACE_MODES: tuple[str, ...] = get_args(ReplaceMode)
DEFAULT_REPLACE: ReplaceMode = "flagged"
#: BH's guarantee in words: an average over audits, not a bound on the list found.
BH_GUARANTEE = ("Across audits, the expected share of false flags is at most about q (approximately: items are "
                "not exactly exchangeable); a given list can hold more.")


@dataclass(frozen=True)
class Verdict:
    """Whether a run's verdict allows replacing items, and the flags chance alone gives.

    Attributes:
        confidence: The headline Contamination Confidence (None without a verdict).
        metric: The headline metric.
        n: Pairs of the headline metric (None when untested).
        min_confidence: The ``--min-confidence`` asked for.
        not_replaced: ``""`` when items may be replaced, else the card's sentence saying why not.
        b: Pairs right only on the original (the flags).
        c: Pairs right only on the twin: the number of flags chance alone gives at this size.
        memorised: ``b - c``, the estimated number of memorised items.
        memorised_ci: Its exact 95% CI (conditional on the ``b + c`` discordant pairs; ``None`` without pairs).
        flag_metric: The metric items were flagged on.
        fdr_q: The flags' false-discovery level q (``None`` under the ``acc`` rule: no control).
        flagged: Items flagged.
        tested: Items with a per-item p (every pair under the ``acc`` rule).
        k_twins: The most twins an item has. Above 1 the twin-only count is no chance comparator for the
            ``acc`` rule's flags (original right and all K twins wrong), so the card gives none.
        mode: Which items the release replaces (``--replace``).
    """

    confidence: float | None
    metric: str | None
    n: int | None
    min_confidence: float
    not_replaced: str
    b: int
    c: int
    memorised: int
    memorised_ci: tuple[float, float] | None
    flag_metric: str = "acc"
    fdr_q: float | None = None
    flagged: int = 0
    tested: int = 0
    k_twins: int = 1
    mode: ReplaceMode = DEFAULT_REPLACE

    @property
    def controlled(self) -> bool:
        """Whether the flags carry a false-discovery rate."""
        return self.fdr_q is not None

    @property
    def memorised_text(self) -> str:
        """``b - c`` with its CI, as the card writes it."""
        from zcp_core.report import fmt_ci

        ci = f" (95% CI {fmt_ci(*self.memorised_ci, digits=1)})" if self.memorised_ci else ""
        return f"{self.memorised}{ci}"


def _shown(c: float | None, bound: bool = False) -> str:
    """A confidence as every surface writes it (``zcp_core.report.fmt_c``): ``0.998``, ``≥ 0.999``, ``–``."""
    from zcp_core.report import fmt_c

    return fmt_c(c, bound)


def run_verdict(summary: dict[str, Any], flags: Any, min_confidence: float = DEFAULT_MIN_CONFIDENCE,
                mode: ReplaceMode = DEFAULT_REPLACE) -> Verdict:
    """Whether the run's flags may replace items, and the flags chance alone gives (from ``items`` flips).

    Args:
        summary: The probe run's summary (its ``metrics`` and ``flags``).
        flags: The run's ``items`` table (``flagged``; ``flip``: ``orig_only`` / ``ref_only`` / ...).
        min_confidence: The flag metric's C needed to replace items.
        mode: ``flagged``: the flags gate too (no discovery, no replacement); ``covered``: only C does.
    """
    from zcp_core.intervals import mcnemar_bounds
    from zcp_core.probe.analysis import enforce_min_pairs
    from zcp_core.report import fmt_count, metric_name
    from zcp_core.stats import C_CAP, MIN_PAIRS, TOO_FEW_PAIRS

    if not 0.0 <= min_confidence <= 1.0:
        raise ValueError(f"--min-confidence must be in [0, 1], got {min_confidence}")
    if mode not in REPLACE_MODES:
        raise ValueError(f"--replace must be one of {REPLACE_MODES}, got {mode!r}")
    conf = enforce_min_pairs({"metrics": summary.get("metrics") or {}, "headline": summary.get("headline") or {}})
    block = summary.get("flags") or {}
    metric = str(block.get("metric") or "acc")  # runs made before the flags block flagged by the acc rule
    q = block.get("q") if block.get("controlled") else None
    flagged = int(flags["flagged"].sum()) if "flagged" in flags else 0
    entry = conf["metrics"].get(metric) or {}
    n = entry.get("n")
    c_value = entry.get("confidence")
    if isinstance(c_value, (int, float)):
        c_value = min(float(c_value), C_CAP)  # the one ceiling, also for runs stored before it
    shown = _shown(c_value if isinstance(c_value, float) else None, bool(entry.get("bound")))
    tested = int(block.get("items") or 0) if q is not None else len(flags)
    gated = mode == "flagged"  # covered replaces whatever the flags say, so only C gates it
    if gated and q is not None and not tested:
        why = f"not replaced: {block.get('note') or 'no item has a per-item p'}"
    elif gated and q is not None and not flagged:
        why = (f"not replaced: no item is a discovery at false-discovery level q = {q:g} on {metric_name(metric)} "
               f"({fmt_count(tested)} items tested)")
    elif n is None or n < MIN_PAIRS or entry.get("reason") == TOO_FEW_PAIRS:
        why = f"not replaced: {TOO_FEW_PAIRS}"
    elif c_value is None:
        why = f"not replaced: no verdict on {metric_name(metric)} ({entry.get('reason') or 'not tested'})"
    elif c_value < min_confidence:
        why = (f"not replaced: Contamination Confidence {shown} on {metric_name(metric)} is below "
               f"--min-confidence {min_confidence:g}")
    else:
        why = ""
    flips = flags["flip"].value_counts() if "flip" in flags else {}
    b, c = int(flips.get("orig_only", 0)), int(flips.get("ref_only", 0))
    pairs = len(flags)
    ci = None
    if pairs:
        lo, hi, _ = mcnemar_bounds(b, c, pairs)
        ci = (lo * pairs, hi * pairs)
    k = int(flags["n_twins"].max()) if "n_twins" in flags and len(flags) else 1
    return Verdict(c_value if isinstance(c_value, float) else None, metric, n, min_confidence, why, b, c, b - c,
                   ci if k == 1 else None, metric, float(q) if q is not None else None, flagged, tested, k, mode)


def verdict_lines(v: Verdict | None) -> list[str]:
    """The card's verdict section: the gate, and how many flags chance alone gives."""
    from zcp_core.report import fmt_count, metric_name

    if v is None:
        return []
    from zcp_core.report import C_DEFINED

    lines = ["## Verdict", "", f"{C_DEFINED}", ""]
    which = {"flagged": "the flagged items with a verified twin",
             "covered": "every item with a verified twin, flagged or not"}[v.mode]
    if v.not_replaced:
        lines += [f"**{v.not_replaced}.** The benchmark is written unchanged.", ""]
    else:
        lines += [f"Replaced (--replace {v.mode}): {which}; {v.flagged} items are flagged, and Contamination "
                  f"Confidence {_shown(v.confidence)} ({metric_name(v.metric)}, {fmt_count(v.n)} pairs) is at least "
                  f"--min-confidence {v.min_confidence:g}.", ""]
    if v.controlled:
        lines += [f"- Flagged: {v.flagged} of {fmt_count(v.tested)} items are Benjamini-Hochberg discoveries at "
                  f"q = {v.fdr_q:g} on {metric_name(v.flag_metric)}, each from its own p against its twins. "
                  f"{BH_GUARANTEE}", ""]
        return lines
    if v.k_twins > 1:
        return lines + [f"- Flagged (original right, all of its up to {v.k_twins} twins wrong): {v.flagged}; no "
                        "false-discovery control, and no count of the flags chance alone gives (use a P metric's "
                        "flags, which carry one).", ""]
    lines += [f"- Flagged (right only on the original, b): {v.b}; no false-discovery control.",
              f"- Right only on the twin (c): {v.c}. This is how many flags chance alone gives at this size: "
              "with no contamination, original and twin are equally likely to be the one answered right.",
              f"- Estimated memorised items, b - c: {v.memorised_text} (exact, conditional on the b + c discordant "
              "pairs).", ""]
    return lines
