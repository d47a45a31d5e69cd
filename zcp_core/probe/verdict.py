"""The verdict a release follows: the headline C against ``--min-confidence``, and the flags chance gives.

Used by :mod:`zcp_core.probe.release`. A release replaces items only when the run has a
verdict (``n >= stats.MIN_PAIRS``) and its headline Contamination Confidence is at least
``--min-confidence``; :func:`run_verdict` says whether, and the card's sentence when not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: Default ``--min-confidence``: the headline C a run needs before its flagged items are replaced.
DEFAULT_MIN_CONFIDENCE = 0.95


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


def run_verdict(summary: dict[str, Any], flags: Any, min_confidence: float = DEFAULT_MIN_CONFIDENCE) -> Verdict:
    """The run's verdict against ``min_confidence``, and the flags chance alone gives (from ``items`` flips).

    Args:
        summary: The probe run's summary (its ``headline`` and ``metrics``).
        flags: The run's ``items`` table (``flip``: ``orig_only`` / ``ref_only`` / ...).
        min_confidence: The headline C needed to replace items.
    """
    from zcp_core.intervals import mcnemar_bounds
    from zcp_core.probe.analysis import enforce_min_pairs
    from zcp_core.stats import C_CAP, MIN_PAIRS, TOO_FEW_PAIRS

    if not 0.0 <= min_confidence <= 1.0:
        raise ValueError(f"--min-confidence must be in [0, 1], got {min_confidence}")
    conf = enforce_min_pairs({"metrics": summary.get("metrics") or {}, "headline": summary.get("headline") or {}})
    head = conf["headline"]
    metric = head.get("metric")
    n = (conf["metrics"].get(metric) or {}).get("n") if metric else None
    if n is None:  # no verdict: take the pairs any metric tested, to say "too few pairs" when that is why
        n = max((v["n"] for v in conf["metrics"].values() if v.get("n") is not None), default=None)
    c_value = head.get("confidence")
    if isinstance(c_value, (int, float)):
        c_value = min(float(c_value), C_CAP)  # the one ceiling, also for runs stored before it
    shown = _shown(c_value if isinstance(c_value, float) else None, bool(head.get("bound")))
    if n is None or n < MIN_PAIRS or head.get("reason") == TOO_FEW_PAIRS:
        why = f"not replaced: {TOO_FEW_PAIRS}"
    elif c_value is None:
        why = f"not replaced: no verdict ({head.get('reason') or 'no metric could be tested'})"
    elif c_value < min_confidence:
        why = f"not replaced: Contamination Confidence {shown} is below --min-confidence {min_confidence:g}"
    else:
        why = ""
    flips = flags["flip"].value_counts() if "flip" in flags else {}
    b, c = int(flips.get("orig_only", 0)), int(flips.get("ref_only", 0))
    pairs = len(flags)
    ci = None
    if pairs:
        lo, hi, _ = mcnemar_bounds(b, c, pairs)
        ci = (lo * pairs, hi * pairs)
    return Verdict(c_value if isinstance(c_value, float) else None, metric, n, min_confidence, why, b, c, b - c, ci)


def verdict_lines(v: Verdict | None) -> list[str]:
    """The card's verdict section: the gate, and how many flags chance alone gives."""
    from zcp_core.report import fmt_count, metric_name

    if v is None:
        return []
    from zcp_core.report import C_DEFINED

    lines = ["## Verdict", "", f"{C_DEFINED}", ""]
    if v.not_replaced:
        lines += [f"**{v.not_replaced}.** The benchmark is written unchanged.", ""]
    else:
        lines += [f"Replaced: Contamination Confidence {_shown(v.confidence)} ({metric_name(v.metric)}, "
                  f"{fmt_count(v.n)} pairs) is at least --min-confidence {v.min_confidence:g}.", ""]
    lines += [f"- Flagged (right only on the original, b): {v.b}.",
              f"- Right only on the twin (c): {v.c}. This is how many flags chance alone gives at this size: "
              "with no contamination, original and twin are equally likely to be the one answered right.",
              f"- Estimated memorised items, b - c: {v.memorised_text} (exact, conditional on the b + c discordant "
              "pairs).", ""]
    return lines
