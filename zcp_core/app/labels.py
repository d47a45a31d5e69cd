"""Tables as a reader sees them: column labels in words, numbers rounded.

Stored tables keep short machine names (``bf10``, ``ci_low``) that the CLI and notebooks rely on; only what the
app shows is renamed, here, in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

# The missing mark and the reading of C are the report layer's, re-exported here for the pages that import them
# from this module: one rule, not two copies that drift apart.
from zcp_core.report import (
    C_DEFINITION,
    EFFECT_NAMES,
    METRIC_NAMES,
    TEST_NAMES,
    effect_name,
    fmt_num,
    metric_name,
    statistical_test_name,
)
from zcp_core.report import EVIDENCE_LEVELS as EVIDENCE_LEVELS
from zcp_core.report import MISSING as MISSING
from zcp_core.report import evidence_words as evidence_words

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
    "overlap_significant": "Overlap significant", "first_piece": "First piece", "second_piece": "True second piece",
    "n_units": "Units", "unit": "Unit", "cut": "Cut after unit", "fraction": "Share given",
    "match_label": "Judge's call", "guided": "Guided completion", "general": "General completion",
    # AFR chains
    "condition": "Condition", "uid": "Problem", "pred": "Prediction", "stage": "Graded by",
    "forced_finish": "Forced finish", "correct": "Correct",
    # artifacts
    "llm_type": "Generator", "data_type": "Data type", "label": "Label", "texts": "Texts", "rejection": "Rejection",
    "substitute": "Refusal + substitute", "transcript": "Prompt transcript",
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
#: Values of the statistics tables in words (stored tables keep the machine names): tests and effects are named
#: by the report layer (``report.statistical_test_name``, ``report.effect_name``), so every surface agrees.
TEST_WORDS: Mapping[str, str] = TEST_NAMES
EFFECT_WORDS: Mapping[str, str] = EFFECT_NAMES
DIRECTION_WORDS: dict[str, str] = {
    "original>reference": "original > twin", "reference>original": "twin > original", "none": "no difference",
    "guided>general": "guided > general", "general>guided": "general > guided",
}
#: Metrics in words: the report layer's names (``report.metric_name``), as every surface shows them.
METRIC_WORDS: Mapping[str, str] = METRIC_NAMES
VALUE_WORDS: dict[str, Mapping[str, str]] = {"test": TEST_WORDS, "effect_name": EFFECT_WORDS,
                                             "direction": DIRECTION_WORDS, "metric": METRIC_WORDS}
#: Contamination Confidence explained beside the number (the probe and the lab pages, notebook 01).
CONFIDENCE_EXPLAINED = (
    "**Contamination Confidence C** is " + C_DEFINITION + " It comes from the paired test between "
    "originals and their twins, the role-permutation test: under \"the model treats the original like its twins\" "
    "any of an item's questions could have played the original, so the test permutes which one does, in every "
    f"item (exact for {metric_name('acc')} and {metric_name('con')}, enumerated or Monte Carlo for "
    f"{metric_name('p_first')} and {metric_name('p_all')}; with one twin per item it is the exact "
    "McNemar test and the sign-flip test). The table below names the test each run used. Its p-value becomes the largest "
    "Bayes factor any test with that p-value allows, BF = 1 / (−e·p·ln p) (Sellke, Bayarri and Berger), so C is "
    "an upper bound; with the prior P(contaminated) = {prior} it gives C = BF·prior / (BF·prior + 1 − prior). "
    "C = 0.5 (BF = 1) is no evidence either way; C near 1 means the originals beat their twins far more often than "
    "chance allows. Reading used here: C < 0.75 no evidence, 0.75–0.95 weak evidence, ≥ 0.95 evidence of "
    "contamination. Below 10 pairs there is no C.")


#: Columns that are shares: shown as percentages.
SHARE_COLUMNS = frozenset({"rate", "flip_rate"})


def label(column: str) -> str:
    """A column's label in words (unknown names: underscores to spaces, first letter capital)."""
    return COLUMN_LABELS.get(column, column.replace("_", " ")[:1].upper() + column.replace("_", " ")[1:])


def readable(df: pd.DataFrame, digits: int = 3, words: Mapping[str, str] | None = None) -> pd.DataFrame:
    """A copy of ``df`` with worded column labels, floats rounded to ``digits`` and shares as ``12.5%`` text.

    ``words`` adds a method's own labels (e.g. ``probe.viz.COLUMN_WORDS``), which win over the shared ones.
    Integers stay integers; the names of tests, effects, directions and metrics become words
    (``VALUE_WORDS``); a missing value is shown as ``–`` (never ``None`` or ``nan``).
    """
    import pandas as pd

    from zcp_core.probe.browse import FLIP_WORDS

    value_words = {**VALUE_WORDS, "flip": FLIP_WORDS, "match_label": MATCH_WORDS}
    out = df.copy()
    # A column with nothing in it (e.g. no reason on any row) says nothing: it is left out.
    empty = [c for c in out.columns if all(v is None or v == "" or (isinstance(v, float) and v != v) for v in out[c])]
    out = out.drop(columns=empty) if len(empty) < len(out.columns) else out
    for c in out.columns:
        col = out[c]
        if c in SHARE_COLUMNS and pd.api.types.is_numeric_dtype(col):
            out[c] = [MISSING if v != v else f"{v:.1%}" for v in col]
        elif pd.api.types.is_float_dtype(col):
            whole = bool(((col.dropna() % 1) == 0).all())
            if col.isna().any():  # shown as text, so a missing value reads "–" and not None/nan
                out[c] = [MISSING if v != v else f"{int(v):,}" if whole else f"{round(v, digits):g}" for v in col]
            else:
                out[c] = col.astype("int64") if whole and len(col) else col.round(digits)
        elif c in ("effect_name", "test", "metric"):  # named as every report names them, unknown names included
            name = {"effect_name": effect_name, "test": statistical_test_name, "metric": metric_name}[c]
            out[c] = [name(v) if isinstance(v, str) else v for v in col]
        elif c in value_words:
            out[c] = [value_words[c].get(v, v) if isinstance(v, str) else v for v in col]
        if out[c].isna().any():
            out[c] = [MISSING if v is None or (isinstance(v, float) and v != v) else v for v in out[c]]
    extra = words or {}
    return out.rename(columns={c: extra.get(str(c)) or label(str(c)) for c in out.columns})


def evidence_sentence(tests: pd.DataFrame, metric: str | None, arm: str = "original") -> str:
    """The evidence behind one metric's C in words: test, effect with its 95% CI, discordant pairs, p and BF.

    ``""`` when the tests table has no tested row for ``metric``.
    """
    rows = tests[(tests["arm"] == arm) & (tests["metric"] == metric)] if metric else tests.iloc[0:0]
    if rows.empty or rows.iloc[0].get("confidence") is None or rows.iloc[0]["confidence"] != rows.iloc[0]["confidence"]:
        return ""
    r = rows.iloc[0]
    name = metric_name(metric)
    parts = [f"For **{name}**: {statistical_test_name(r.get('test'))} over {int(r['n'])} pairs"]
    effect, diff, lo, hi = (r.get(k) for k in ("effect", "mean_diff", "ci_low", "ci_high"))
    ci = f" (95% CI {lo:+.3f} to {hi:+.3f})" if lo is not None and lo == lo and hi is not None and hi == hi else ""
    if str(r.get("effect_name")) == "risk_difference" and effect is not None and effect == effect:
        parts.append(f"difference in accuracy, original minus twin, {effect:+.3f}{ci}")
    elif diff is not None and diff == diff:
        parts.append(f"mean difference, original minus twin, {diff:+.3f}{ci}")
        if effect is not None and effect == effect and r.get("effect_name"):
            parts.append(f"{effect_name(r['effect_name'])} {effect:+.3f}")
    b, c = r.get("discordant_b"), r.get("discordant_c")
    if b is not None and b == b and c is not None and c == c:
        parts.append(f"{int(b)} pairs with only the original right, {int(c)} with only the twin right")
    parts.append(f"p = {r['p']:.2g}, Bayes factor bound {r['bf10']:,.1f}, C = {r['confidence']:.3f} "
                 f"({evidence_words(float(r['confidence']))}; {DIRECTION_WORDS.get(str(r.get('direction')), '')})")
    return "; ".join(parts) + "."


MATCH_WORDS = {"exact": "exact match", "near_exact": "near-exact match", "none": "no match"}


def judge_words(raw: str, label: str, reason: str = "") -> str:
    """A Time-Travel judge's call in words: ``rule: edit_sim=0.303`` + ``none`` -> the rule, the score, the call."""
    import re

    m = re.fullmatch(r"rule:\s*edit_sim=([0-9.]+)", str(raw).strip())
    how = (f"the model-free rule judge found an edit similarity of {fmt_num(m.group(1))} with the true second piece"
           if m else f"the judge model answered “{str(raw).strip()[:200]}”" if str(raw).strip() else "the judge")
    return f"Judge: {how}, so **{MATCH_WORDS.get(str(label), str(label))}**" + (f" ({reason})" if reason else "") + "."


def bleurt_words(note: str) -> str:
    """The BLEURT status of a Time-Travel run in words (``skipped: the bleurt package is not installed``)."""
    note = str(note)
    if note.startswith("skipped"):
        why = note.split(":", 1)[1].strip() if ":" in note else "not available here"
        return f"BLEURT (a learned similarity score) was not computed: {why}. ROUGE-L and edit similarity were."
    if note in ("", "not recorded"):
        return "BLEURT: this run did not record whether it was computed."
    return f"BLEURT: {note}."


@dataclass(frozen=True)
class Headline:
    """One metric of a page's headline: label, value as shown, and the detail behind it."""

    label: str
    value: str
    help: str | None = None


def _pct(x: Any) -> str:
    return MISSING if x is None or x != x else f"{100 * x:.1f}%"


def _pp(x: Any) -> str:
    return MISSING if x is None or x != x else f"{x:+.1f} pp"


def _ci_pp(iv: Mapping[str, Any] | None) -> str | None:
    if not iv or iv.get("low") is None or iv["low"] != iv["low"]:
        return None
    return f"95% CI {iv['low']:+.1f} to {iv['high']:+.1f} pp"


def afr_headline(summary: Mapping[str, Any]) -> list[Headline]:
    """The AFR page's headline metrics (covered chains, the paper's denominator); ``[]`` for an unknown run.

    A screen shows AFR blind, AFR leaked and dAFR = leaked − blind; a comparison of two corpora shows both
    AFRs and their difference, the audited corpus (``--compare``) minus the comparison (``FILE``).
    """
    if summary.get("mode") == "compare" and "a" in summary and "b" in summary:
        a, b = summary["a"], summary["b"]
        # The paper's denominator needs think blocks in both corpora; without them the page says so and
        # falls back to every chain, as the CLI's headline does.
        paper = all((p.get("stats", {}).get("n_covered") or 0) > 0 for p in (a, b))
        d = summary.get("diff_covered_chains" if paper else "diff_all_chains") or {}
        key, den = ("afr_covered", "covered chains") if paper else ("afr_all", "chains (all, not the paper's)")
        def one(p: Mapping[str, Any], role: str) -> Headline:
            st_ = p.get("stats", {})
            n_af, n = ((st_.get("n_answer_first", 0), st_.get("n_covered", 0)) if paper
                       else (st_.get("n_answer_first_all", 0), st_.get("n_chains", 0)))
            return Headline(f"AFR {p['name']} ({role})", _pct(st_.get(key)), f"{n_af} answer-first of {n} {den}")
        suffix = "" if paper else " (all chains)"
        return [one(b, "audited"), one(a, "comparison"),
                Headline(f"Difference, audited − comparison{suffix}", _pp(d.get("value")), _ci_pp(d))]
    if "blind" in summary and "leaked" in summary and isinstance(summary["blind"], Mapping):
        ci = summary.get("ci_covered_chains") or {}
        names = {arm: (summary.get("arms", {}).get(arm, {}) or {}).get("name", arm) for arm in ("blind", "leaked")}
        out = [Headline(f"AFR {arm} ({names[arm]})", _pct(summary[arm].get("afr_covered")),
                        f"{summary[arm].get('n_answer_first', 0)} answer-first of {summary[arm].get('n_covered', 0)} "
                        "covered chains") for arm in ("blind", "leaked")]
        dafr = ci.get("dafr") or {}
        out.append(Headline("dAFR, leaked − blind", _pp(dafr.get("value")), _ci_pp(dafr)))  # stored in pp
        return out
    head = summary.get("headline") or {}
    if head.get("value") is not None:
        return [Headline(str(head.get("label", "AFR")), f"{head['value']:.1f}")]
    return []


def all_chains_sentence(summary: Mapping[str, Any]) -> str:
    """The all-chains line (every chain in the denominator, not the paper's) as one readable sentence."""
    line = str(summary.get("line_all_chains", ""))
    return "Counting every chain (not the paper's denominator): " + line.split(":", 1)[-1].strip()
