"""The evidence beside each Contamination Confidence: effect, interval, lower bound, effect size, counts.

One metric's entry of ``zcp confidence --json`` (and of the run summary) is built
by :func:`evidence_entry` from a test's fields, either a fresh
``stats.TestResult.to_dict()`` or a row of a stored ``tests`` table, so runs made
before these fields existed get them from what they stored:

* ``n``: pairs tested;
* ``effect``: the mean paired difference original - twin in the metric's units
  (for Acc the risk difference ``(b - c) / n``);
* ``effect_ci``: its two-sided 95% interval ``[low, high]``;
* ``effect_lower``: the one-sided 95% lower bound that matches the one-sided test
  (``p < 0.05`` exactly when it is above 0; the two-sided interval matches a
  one-sided test at 2.5%, so the two can differ for 0.025 <= p < 0.05);
* ``effect_size``: Cohen's ``d_z``;
* ``p``, ``bf10``, ``confidence`` and ``bound`` (C above ``stats.C_CAP`` is shown as "≥ 0.999");
* ``direction`` and ``reading`` (the direction in words: a reversed effect reads
  "twins favoured: no evidence of contamination");
* ``discordant`` for binary metrics: ``[original only right, twin only right]``.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

#: Keys of one metric's entry, in order (``discordant`` only for binary metrics).
EVIDENCE_KEYS = ("n", "effect", "effect_ci", "effect_lower", "effect_size", "p", "bf10", "confidence", "bound",
                 "direction", "reading")
READINGS = {
    "original>reference": "originals favoured",
    "reference>original": "twins favoured: no evidence of contamination",
    "none": "no difference between originals and twins",
}


def _num(x: Any) -> float | None:
    """A finite float, or ``None`` (NaN, inf, missing)."""
    if x is None:
        return None
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _int(x: Any) -> int | None:
    v = _num(x)
    return None if v is None else int(v)


def evidence_entry(t: Mapping[str, Any]) -> dict[str, Any]:
    """One metric's evidence from a test's fields (a ``TestResult`` dict or a stored ``tests`` row).

    Fields a run made before them did not store are derived from what it did: ``effect_size`` from
    the stored ``effect`` (``d_z``) or, for McNemar, from the discordant counts; McNemar's interval
    and lower bound are recomputed exactly from ``b``, ``c`` and ``n``; a stored Student-t interval
    of a continuous metric gives the matching one-sided t bound (``ci_method`` says which).
    """
    from zcp_core.intervals import dz_from_counts, mcnemar_bounds, t_lower_from_ci
    from zcp_core.stats import C_CAP, MCNEMAR_CI

    n = _int(t.get("n"))
    mean = _num(t.get("mean_diff"))
    lo, hi = _num(t.get("ci_low")), _num(t.get("ci_high"))
    lower = _num(t.get("effect_lower"))
    size = _num(t.get("effect_size"))
    method = str(t.get("ci_method") or "")
    b, c = _int(t.get("discordant_b")), _int(t.get("discordant_c"))
    binary = t.get("test") == "mcnemar"
    if binary and b is not None and c is not None and n:
        if not method:  # stored before the exact bounds: recompute them from the counts
            lo, hi, lower = (_num(x) for x in mcnemar_bounds(b, c, n))
            method = MCNEMAR_CI
        if size is None:
            size = _num(dz_from_counts(b, c, n))
    elif not method and n and mean is not None and lo is not None and hi is not None:
        lower = _num(t_lower_from_ci(mean, lo, hi, n))
        method = "Student t (stored by an older run)"
    if size is None and t.get("effect_name") == "cohens_dz":
        size = _num(t.get("effect"))
    conf = _num(t.get("confidence"))
    bound = bool(t.get("bound")) if t.get("bound") is not None and not _isnan(t.get("bound")) else False
    if conf is not None and conf > C_CAP:  # older runs stored C above the one ceiling
        conf, bound = C_CAP, True
    direction = t.get("direction") if isinstance(t.get("direction"), str) else None
    out: dict[str, Any] = {
        "n": n, "effect": mean, "effect_ci": [lo, hi], "effect_lower": lower, "effect_size": size,
        "p": _num(t.get("p")), "bf10": _num(t.get("bf10")), "confidence": conf, "bound": bound,
        "direction": direction, "reading": READINGS.get(direction or "", None), "ci_method": method,
    }
    if binary:
        out["discordant"] = [b, c]
    return out


def _isnan(x: Any) -> bool:
    return isinstance(x, float) and math.isnan(x)


def format_confidence_value(v: Mapping[str, Any]) -> str:
    """C as printed: ``0.834``, or ``≥ 0.999`` at the one ceiling, or ``-`` without a verdict."""
    c = v.get("confidence")
    if c is None:
        return "-"
    return f"≥ {c:.3f}" if v.get("bound") else f"{c:.3f}"
