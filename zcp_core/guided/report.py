"""The Report of a ``guided`` (Time-Travel) run: what the CLI, the app page and notebook 06 show.

Every number is formatted here by the shared rules (:mod:`zcp_core.report`), so a partition's
Contamination Confidence reads the same in the tile, the table, the sentences and the terminal.
One row per partition: mean ROUGE-L of guided and general completions, the paired test of the
compared overlap score (its mean difference, 95% CI, p and C) and the judge's exact and near-exact
matches with the judge rule's verdict (the paper's two algorithms, read side by side).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zcp_core.report import (
    C_DEFINED,
    MISSING,
    Headline,
    Report,
    capital,
    evidence_words,
    fmt_c,
    fmt_ci,
    fmt_count,
    fmt_num,
    fmt_p,
    metric_name,
    number,
    portable,
    statistical_test_name,
)

__all__ = ["COLUMNS", "JUDGE_RULE_WORDS", "MATCH_WORDS", "STYLE_WORDS", "judge_name", "partition_summaries",
           "report"]

COLUMNS = ("Partition", "Instances", "ROUGE-L, guided", "ROUGE-L, general", "Compared score",
           "Mean difference, guided − general", "95% CI", "Test", "p", "Contamination Confidence",
           "Exact matches", "Near-exact matches", "Judge rule")
#: The judge's labels in words (records' ``match_label``).
MATCH_WORDS = {"exact": "exact match", "near_exact": "near-exact match", "none": "no match"}
#: Prompt styles in words.
STYLE_WORDS = {"chat": "chat (the paper's instructions through the chat template)",
               "completion": "completion (plain text to continue, no template)"}
#: What the model-free rule judge does.
JUDGE_RULE_WORDS = "the model-free rule (exact string, or edit similarity of at least 0.85: near-exact)"


def partition_summaries(run: Any) -> list[Mapping[str, Any]]:
    """The run's per-partition summaries (one for a single partition, in the order they were run)."""
    s = run.summary
    parts = s.get("partitions")
    return list(parts) if isinstance(parts, list) else [s]


def judge_name(judge: Mapping[str, Any]) -> str:
    """The judge of a partition in words: the rule, another model, or the audited model judging itself."""
    mode, model = str(judge.get("mode") or "rule"), str(judge.get("model") or "")
    if mode == "rule" or model == "rule":
        return JUDGE_RULE_WORDS
    if mode == "self":
        return f"the audited model ({model}) judging its own completions"
    return f"the judge model {model}" if model else "a judge model"


def _tested(s: Mapping[str, Any]) -> bool:
    return number(s.get("confidence")) is not None


def _verdict(s: Mapping[str, Any]) -> str:
    return "contaminated" if s.get("contaminated") else "not contaminated"


def _row(s: Mapping[str, Any]) -> tuple[str, ...]:
    d = s.get("details") or {}
    t = d.get("test") or {}
    rl = s.get("rouge_l") or {}
    tested = _tested(s)
    return (str(s.get("partition", MISSING)), fmt_count(s.get("n")), fmt_num(rl.get("guided")),
            fmt_num(rl.get("general")), metric_name(d.get("metric", "rouge_l")),
            fmt_num(t.get("mean_diff"), signed=True), fmt_ci(t.get("ci_low"), t.get("ci_high")),
            statistical_test_name(t.get("test")) if t.get("test") else MISSING,
            fmt_p(s.get("p")) if tested else MISSING, fmt_c(s.get("confidence")) if tested else MISSING,
            fmt_count(s.get("exact")), fmt_count(s.get("near_exact")), _verdict(s))


def _sentence(s: Mapping[str, Any]) -> str:
    """A partition under both of the paper's algorithms, in words."""
    d = s.get("details") or {}
    t = d.get("test") or {}
    rl = s.get("rouge_l") or {}
    metric = metric_name(d.get("metric", "rouge_l"))
    head = (f"Partition {s.get('partition')} ({fmt_count(s.get('n'))} instances): mean ROUGE-L "
            f"{fmt_num(rl.get('guided'))} guided against {fmt_num(rl.get('general'))} general; {metric} mean "
            f"difference {fmt_num(t.get('mean_diff'), signed=True)} (95% CI {fmt_ci(t.get('ci_low'), t.get('ci_high'))})")
    if _tested(s):
        sig = "significantly" if d.get("overlap_significant") else "not significantly"
        head += (f", {statistical_test_name(t.get('test'))} p = {fmt_p(s.get('p'))}, Contamination Confidence "
                 f"{fmt_c(s.get('confidence'))} ({evidence_words(s.get('confidence'))}): guided overlap is {sig} "
                 "higher than general.")
    else:
        head += f": no Contamination Confidence, {s.get('reason') or 'not tested'}."
    rule = str(d.get("rule") or "").replace(">=", "≥")
    return (head + f" Judge: {fmt_count(s.get('exact'))} exact and {fmt_count(s.get('near_exact'))} near-exact "
            f"matches, so the judge rule{f' ({rule})' if rule else ''} says {_verdict(s)}.")


def _headline(sums: list[Mapping[str, Any]]) -> Headline:
    rated = [s for s in sums if _tested(s)]
    if not rated:
        reason = next((str(s["reason"]) for s in sums if s.get("reason")), "no partition could be tested")
        return Headline("Contamination Confidence", MISSING, reading="no verdict", reason=reason)
    best = max(rated, key=lambda s: float(s["confidence"]))
    metric = metric_name((best.get("details") or {}).get("metric", "rouge_l"))
    where = f"partition {best.get('partition')}" + (", the highest of the partitions" if len(sums) > 1 else "")
    c = float(best["confidence"])
    return Headline("Contamination Confidence", fmt_c(c), f"{where}; {metric}, guided against general",
                    evidence_words(c), raw=c)


def _facts(run: Any, sums: list[Mapping[str, Any]]) -> tuple[tuple[str, str], ...]:
    d = sums[0].get("details") or {} if sums else {}
    style = str(sums[0].get("prompt_style") or d.get("prompt_style") or "chat") if sums else "chat"
    return (("Model", str(run.manifest.get("model") or MISSING)),
            ("Dataset", str(d.get("dataset_name") or MISSING)),
            ("Instances", " + ".join(fmt_count(s.get("n")) for s in sums) or MISSING),
            ("Skipped", fmt_count(sum(int(number((s.get("details") or {}).get("n_skipped")) or 0) for s in sums))),
            ("Prompts", STYLE_WORDS.get(style, style)))


def _bleurt(sums: list[Mapping[str, Any]]) -> str:
    notes = {str(((s.get("details") or {}).get("bleurt") or {}).get("status") or "") for s in sums} - {""}
    skipped = sorted(n.split(":", 1)[1].strip() if ":" in n else n for n in notes if n.startswith("skipped"))
    if skipped:
        return f"BLEURT (a learned similarity score) was not computed: {'; '.join(skipped)}."
    return ""


def _notes(sums: list[Mapping[str, Any]]) -> tuple[str, ...]:
    from zcp_core.stats import MIN_PAIRS

    notes = ([C_DEFINED, "Here the originals are the guided completions and their twins the general completions of "
              "the same first pieces."] if any(_tested(s) for s in sums) else [])
    judges = sorted({judge_name((s.get("details") or {}).get("judge") or {}) for s in sums})
    notes += [f"Guided and general completions of the same first piece are paired; the test is one-sided (guided "
              f"higher), and there is no Contamination Confidence below {MIN_PAIRS} instances.",
              f"Judge: {'; '.join(judges)}. The judge rule is the paper's second algorithm; the overlap test its first.",
              "ROUGE-L and edit similarity compare a completion with the true second piece (0: nothing in common, "
              "1: the same)."]
    notes += [b] if (b := _bleurt(sums)) else []
    return tuple(notes)


def _command(run: Any) -> str:
    ex = run.manifest.get("example") or {}
    return portable(str(ex.get("command") or run.manifest.get("command") or ""))


def report(run: Any) -> Report:
    """The :class:`~zcp_core.report.Report` of a ``guided`` run (one partition, or several side by side)."""
    sums = partition_summaries(run)
    d = (sums[0].get("details") or {}) if sums else {}
    dataset = str(d.get("dataset_name") or "a benchmark")
    title = f"Time-Travel guided-instruction probe of {run.manifest.get('model') or 'a model'} on {dataset}"
    head = _headline(sums)
    sentences = [capital(head.text) + ".", *(_sentence(s) for s in sums)]
    return Report(title, head, COLUMNS, tuple(_row(s) for s in sums), tuple(sentences), _facts(run, sums),
                  _notes(sums), _command(run))
