"""Detector runs as every surface shows them: :func:`report` builds the run's :class:`~zcp_core.report.Report`.

The CLI's text, the detector page and notebook 04 lay out this one value: metrics in words, detectors named
for what they were trained on, "not estimable" said in a sentence, every number through ``zcp_core.report``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Mapping

from zcp_core.report import MISSING, Headline, Report, fmt_count, fmt_num, fmt_share, number, portable

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.runs import Run

#: Detectors (the run's ``detector`` / ``trained_on`` values) in words.
DETECTOR_WORDS = {"original": "original-trained", "cleaned": "cleaned-trained",
                  "original:attacked": "original-trained, on attacked human texts",
                  "cleaned:attacked": "cleaned-trained, on attacked human texts"}
METRIC_COLUMNS = ("Trained on", "Evaluated on", "Texts", "Human", "LLM", "ROC-AUC", "F1", "Accuracy",
                  "TPR at 1% FPR", "TPR at 0.01% FPR")
ATTACK_COLUMNS = ("Detector", "Attacked human texts", "Called human", "Called LLM", "Share called LLM",
                  "Flipped to LLM", "Called LLM before the attack", "Mean P(LLM) before", "Mean P(LLM) after")
#: The metrics module's notes (``tpr@1%fpr: …``) in words.
_NOTE_WORDS = (("tpr@0.01%fpr", "TPR at 0.01% FPR"), ("tpr@1%fpr", "TPR at 1% FPR"), ("roc_auc", "ROC-AUC"),
               (">=", "≥"))
NOTE_TPR = ("TPR at 1% FPR needs at least 100 human texts and at 0.01% FPR at least 10,000; "
            "“–” means not estimable on this sample.")


def detector_words(name: Any) -> str:
    """A detector's name in words (``original:attacked`` is "original-trained, on attacked human texts")."""
    return DETECTOR_WORDS.get(str(name), str(name).replace("_", " ").replace(":", ", "))


def note_words(note: Any) -> str:
    """A metrics note in words: ``tpr@1%fpr: not estimable: needs >= 100…`` as "TPR at 1% FPR not estimable…"."""
    text = "" if number(note) is not None or note is None else str(note)
    for raw, word in _NOTE_WORDS:
        text = text.replace(raw, word)
    return re.sub(r": not estimable: ", " not estimable: ", text)


def metric_rows(metrics: pd.DataFrame) -> tuple[tuple[str, ...], ...]:
    """The metrics table (``trained_on, evaluated_on, n…``) as rows of text under :data:`METRIC_COLUMNS`."""
    return tuple((str(r.get("trained_on", MISSING)), str(r.get("evaluated_on", MISSING)), fmt_count(r["n"]),
                  fmt_count(r["n_human"]), fmt_count(r["n_llm"]), fmt_num(r["roc_auc"]), fmt_num(r["f1"]),
                  fmt_num(r["accuracy"]), fmt_num(r["tpr_at_1pct_fpr"]), fmt_num(r["tpr_at_001pct_fpr"]))
                 for r in metrics.to_dict("records"))


def metric_notes(metrics: pd.DataFrame) -> tuple[str, ...]:
    """The metrics' notes in words, each once; a note not about every row names the rows it is about."""
    rows: dict[str, list[str]] = {}
    records = metrics.to_dict("records")
    for r in records:
        for part in str(r.get("notes") or "").split("; "):
            if part.strip() and number(part) is None and part.strip().lower() not in ("nan", "none"):
                rows.setdefault(note_words(part), []).append(
                    f"{r.get('trained_on', MISSING)}-trained on {r.get('evaluated_on', MISSING)} texts")
    return tuple(note + ("" if len(where) == len(records) else f" ({'; '.join(where)})") + "."
                 for note, where in rows.items())


def attack_rows(attack: pd.DataFrame) -> tuple[tuple[str, ...], ...]:
    """The prefix-attack table as rows of text under :data:`ATTACK_COLUMNS`."""
    return tuple((detector_words(r["trained_on"]), fmt_count(r["n"]), fmt_count(r["classified_human"]),
                  fmt_count(r["classified_llm"]), fmt_share(r["classified_llm"] / r["n"] if r["n"] else None),
                  fmt_share(r["flip_rate"]), fmt_count(r["before_llm"]), fmt_num(r["mean_p_llm_before"]),
                  fmt_num(r["mean_p_llm_after"])) for r in attack.to_dict("records"))


def frame(columns: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> pd.DataFrame:
    """Rows of text as a DataFrame (the app's and the notebook's tables)."""
    import pandas as pd

    return pd.DataFrame(list(rows), columns=list(columns))


def share_sentences(shares: Mapping[str, Any]) -> tuple[str, ...]:
    """One sentence per detector: its share of |SHAP| on artifact spans."""
    order = list(DETECTOR_WORDS)
    keys = sorted(shares, key=lambda k: (order.index(k) if k in order else len(order), k))
    return tuple(f"Share of |SHAP| on artifact spans, {detector_words(k)}: {fmt_share(shares[k])}." for k in keys)


def _attack_sentences(attack: pd.DataFrame, prefix: str) -> tuple[str, ...]:
    out = [f"Prefix attack: “{prefix}” prepended to each human test text."] if prefix else []
    for r in attack.to_dict("records"):
        out.append(f"The {detector_words(r['trained_on'])} detector calls {fmt_count(r['classified_llm'])} of "
                   f"{fmt_count(r['n'])} attacked human texts LLM "
                   f"({fmt_share(r['classified_llm'] / r['n'] if r['n'] else None)}).")
    return tuple(out)


def _facts(s: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    return (("Input texts", fmt_count(s.get("n_records"))), ("Distinct texts", fmt_count(s.get("n_unique"))),
            ("Training texts", fmt_count(s.get("n_train"))), ("Test texts", fmt_count(s.get("n_test"))))


def compare_report(run: Run) -> Report:
    """A ``compare`` run: attribution on artifact spans, the prefix attack, both detectors' metrics."""
    s = run.summary
    shares = s.get("artifact_share", {})
    holds = s.get("paper_result_holds")
    reading = ("the paper's result holds: the original-trained detector falls for the prefix attack, the "
               "cleaned-trained one does not" if holds else "the paper's result does not hold on this run")
    attack = run.table("attack") if run.has_table("attack") else None
    metrics = run.table("metrics")
    return Report(
        title="Detector shortcuts: original- against cleaned-trained detector",
        headline=Headline("Share of |SHAP| on artifact spans", fmt_share(shares.get("original")),
                          "original-trained detector", reading, raw=number(shares.get("original"))),
        columns=METRIC_COLUMNS, rows=metric_rows(metrics),
        sentences=(*(_attack_sentences(attack, str(s.get("prefix", ""))) if attack is not None else ()),
                   *share_sentences(shares)),
        facts=(*_facts(s), ("Dropped by cleaning", fmt_count(s.get("dropped_by_cleaning"))),
               ("Edits applied", fmt_count(s.get("edits_applied")))),
        notes=("Rows: the detector trained on original or cleaned texts, evaluated on the original or cleaned "
               "test texts.", NOTE_TPR, *metric_notes(metrics),
               "The paper's result holds when the original-trained detector calls more than 50% of attacked "
               "human texts LLM and the cleaned-trained one at most 50%."),
        command=portable(str(run.manifest.get("command", ""))))


def train_report(run: Run) -> Report:
    """A ``train`` run: one detector's test metrics."""
    s = run.summary
    metrics = run.table("metrics")
    kind = {"tfidf": "TF-IDF", "transformer": "transformer"}.get(str(s.get("kind")), str(s.get("kind")))
    return Report(
        title=f"{str(s.get('form', '')).capitalize()}-trained {kind} detector",
        headline=Headline("ROC-AUC (test)", fmt_num(s.get("headline", {}).get("value")),
                          f"{s.get('form', MISSING)}-trained {kind} detector", raw=number(s.get("headline", {}).get("value")),
                          reason="" if number(s.get("headline", {}).get("value")) is not None else "needs both labels"),
        columns=METRIC_COLUMNS, rows=metric_rows(metrics), facts=_facts(s),
        notes=(NOTE_TPR, *metric_notes(metrics)), command=portable(str(run.manifest.get("command", ""))))


CROSS_COLUMNS = ("Trained on (domain)", "Trained on", "Evaluated on (domain)", "Evaluated on", "Excluded",
                 "Texts", "ROC-AUC", "F1", "Accuracy")


def cross_report(run: Run) -> Report:
    """A ``crossdomain`` run: out-of-domain ROC-AUC for each form trained on and evaluated on."""
    s = run.summary
    cross = run.table("cross_domain")
    gaps = s.get("out_of_domain_mean_auc", {})
    rows = tuple((str(r["train_domain"]), str(r["train_form"]), str(r["eval_domain"]), str(r["eval_form"]),
                  fmt_count(r["n_excluded"]), fmt_count(r["n"]), fmt_num(r["roc_auc"]), fmt_num(r["f1"]),
                  fmt_num(r["accuracy"])) for r in cross.to_dict("records"))
    return Report(
        title="Cross-domain transfer of detectors",
        headline=Headline("Mean out-of-domain ROC-AUC", fmt_num(gaps.get("cleaned->cleaned")),
                          "cleaned-trained, on cleaned texts", raw=number(gaps.get("cleaned->cleaned"))),
        columns=CROSS_COLUMNS, rows=rows,
        sentences=tuple(f"Mean out-of-domain ROC-AUC, {k.split('->')[0]}-trained on {k.split('->')[1]} texts: "
                        f"{fmt_num(v)}." for k, v in gaps.items()),
        facts=(("Domains", ", ".join(map(str, s.get("domains", [])))),),
        notes=("Evaluation texts equal to a training text of the detector are excluded.",),
        command=portable(str(run.manifest.get("command", ""))))


def report(run: Run) -> Report:
    """The :class:`~zcp_core.report.Report` of a ``detector`` run (compare, train or crossdomain)."""
    command = run.manifest.get("config", {}).get("command")
    if command == "train":
        return train_report(run)
    if command == "crossdomain":
        return cross_report(run)
    return compare_report(run)
