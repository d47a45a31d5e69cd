"""Tables as a reader sees them: column labels in words, numbers rounded.

Stored tables keep short machine names (``bf10``, ``ci_low``) that the CLI and notebooks rely on; only what the
app shows is renamed, here, in one place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:
    import pandas as pd

COLUMN_LABELS: dict[str, str] = {
    # statistics
    "n": "Pairs", "p": "p-value", "p_value": "p-value", "bf10": "Bayes factor", "confidence": "Confidence",
    "ci_low": "95% CI low", "ci_high": "95% CI high", "mean_diff": "Mean difference", "effect": "Effect",
    "effect_name": "Effect measure", "effect_lower": "One-sided 95% lower bound", "effect_size": "Effect size (d_z)",
    "bound": "C at the 0.999 ceiling", "reading": "Reading", "discordant_b": "Original only right",
    "discordant_c": "Twin only right", "test": "Test", "metric": "Metric", "reason": "Reason", "direction": "Direction",
    # Time-Travel
    "partition": "Partition", "rouge_l_guided": "ROUGE-L guided", "rouge_l_general": "ROUGE-L general",
    "exact": "Exact matches", "near_exact": "Near-exact matches", "contaminated": "Contaminated (judge rule)",
    "overlap_significant": "Overlap significant",
    # artifacts
    "llm_type": "Generator", "data_type": "Data type", "label": "Label", "texts": "Texts", "rejection": "Rejection",
    "prompt": "Prompt echo", "assistant": "Assistant", "beginning": "Beginning", "ending": "Ending",
    "domain": "Domain (low precision)", "flagged": "Flagged", "rate": "Share flagged",
    # detectors
    "trained_on": "Trained on", "evaluated_on": "Evaluated on", "n_human": "Human texts", "n_llm": "LLM texts",
    "roc_auc": "ROC-AUC", "f1": "F1", "accuracy": "Accuracy", "tpr_at_1pct_fpr": "TPR at 1% FPR",
    "tpr_at_001pct_fpr": "TPR at 0.01% FPR", "notes": "Notes", "prefix": "Prefix",
    "classified_human": "Called human (attacked)", "classified_llm": "Called LLM (attacked)",
    "flip_rate": "Flipped to LLM", "before_human": "Called human (before)", "before_llm": "Called LLM (before)",
    "mean_p_llm_before": "Mean P(LLM) before", "mean_p_llm_after": "Mean P(LLM) after",
}
#: Columns that are shares: shown as percentages.
SHARE_COLUMNS = frozenset({"rate", "flip_rate"})


def label(column: str) -> str:
    """A column's label in words (unknown names: underscores to spaces, first letter capital)."""
    return COLUMN_LABELS.get(column, column.replace("_", " ")[:1].upper() + column.replace("_", " ")[1:])


def readable(df: pd.DataFrame, digits: int = 3, words: Mapping[str, str] | None = None) -> pd.DataFrame:
    """A copy of ``df`` with worded column labels, floats rounded to ``digits`` and shares as ``12.5%`` text.

    ``words`` adds a method's own labels (e.g. ``probe.viz.COLUMN_WORDS``), which win over the shared ones.
    Integers stay integers; missing values stay missing (the page shows them empty).
    """
    import pandas as pd

    out = df.copy()
    for c in out.columns:
        col = out[c]
        if c in SHARE_COLUMNS and pd.api.types.is_numeric_dtype(col):
            out[c] = [None if v != v else f"{v:.1%}" for v in col]
        elif pd.api.types.is_float_dtype(col):
            out[c] = col.round(digits)
    extra = words or {}
    return out.rename(columns={c: extra.get(str(c)) or label(str(c)) for c in out.columns})
