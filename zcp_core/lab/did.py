"""The lab's control comparison: the build against its own base model, on C and on U.

``zcp lab evaluate`` probes the build's base model (the perfect control: the same
weights without the contamination) on the same pairs, and tests the build's
per-item gap against the base's (:mod:`zcp_core.probe.control`). The ``did``
block is shaped like the evaluation's top level: Contamination Confidence of the
difference on C (``contaminated``), on U (``clean``: the placebo check, where the
two models should not differ) and pooled, and the AUROC of the per-item difference
with C items positive and U items negative.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    import pandas as pd

#: ``EvalOptions.control`` value that means "the build's base model".
BASE = "base"


def control_spec(control: str | None, build: Mapping[str, Any]) -> str | None:
    """The control's model spec: the build's base model for ``base``, none for ``none``/``None``, else as given."""
    if control in (None, "", "none"):
        return None
    if control == BASE:
        return str(build.get("base_model") or "smollm2")
    return control


def did_tables(did_gaps: pd.DataFrame, split_of: Mapping[str, str], test_options: Mapping[str, Any]
               ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``did_gaps`` table with ``split``/``label`` and the per-split confidence of the difference.

    Returns:
        ``(gaps, confidence)``: gaps with ``split`` and ``label`` (1 for C) added; confidence with columns
        ``split`` (``C``, ``U``, ``all``), ``metric`` and ``probe.CONFIDENCE_KEYS`` plus ``reason``.
    """
    import pandas as pd

    from zcp_core.probe import CONFIDENCE_KEYS
    from zcp_core.probe.control import did_confidence

    gaps = did_gaps.assign(split=did_gaps["pair_id"].map(split_of))
    gaps["label"] = (gaps["split"] == "C").astype(int)
    rows = []
    for sp in ("C", "U", "all"):
        part = gaps if sp == "all" else gaps[gaps["split"] == sp]
        conf = did_confidence(part, int(test_options.get("n_resamples", 10_000)), int(test_options.get("seed", 0)),
                              float(test_options.get("prior", 0.5)))
        rows += [{"split": sp, "metric": m, **{k: v.get(k) for k in CONFIDENCE_KEYS}, "reason": v.get("reason", "")}
                 for m, v in conf["metrics"].items()]
    return gaps, pd.DataFrame(rows)
