"""Scan and clean runs as every surface shows them: :func:`report` builds the run's :class:`~zcp_core.report.Report`.

The CLI's text, the artifacts page, notebook 03 and the clean release card all lay out this one value, so a
count reads the same everywhere. Two counts are named apart on purpose: **input texts** are the records read
(duplicates included) and **distinct texts** are what was scanned or cleaned (each duplicate counted once).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from zcp_core.artifacts.edits import DROP_ACTIONS
from zcp_core.artifacts.patterns import FAMILY_ORDER
from zcp_core.report import MISSING, Headline, Report, fmt_count, fmt_share, number, portable

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.runs import Run

#: The two text counts, named identically on every surface.
INPUT_TEXTS = "Input texts"
DISTINCT_TEXTS = "Distinct texts"
DUPLICATES = "Duplicates (counted once)"
#: What a breakdown's rows are, in words (the run's tables are keyed by these columns).
GROUP_WORDS = {"llm_type": "Generator", "data_type": "Data type", "label": "Label"}
#: What each kind of clean flag means (the run's flags table has one row per flag).
FLAG_WORDS = {"pattern": "matches of review-only patterns (left in place)",
              "shrunk": "edited texts that shrank too much",
              "sentences_far": "edited texts with a sentence count far from their domain's",
              "tokens_far": "edited texts with a token count far from their domain's",
              "residual_score": "texts the under-cleaning scorer marked",
              "edges_review": "texts the learned edge detector was unsure of (nothing cut)"}
NOTE_FIRST_MATCH = ("Each text is counted once, under the first family that matches (first match wins); the "
                    "domain family is low-precision, reported apart and never counted as flagged.")
NOTE_HUMAN = "Human texts flagged by a high-precision family are false positives."


def words(value: Any) -> str:
    """A stored value (a data type, a generator) as shown: underscores as spaces."""
    return str(value).replace("_", " ")


def input_texts(summary: Mapping[str, Any]) -> str:
    """The records read: distinct texts plus the duplicates counted once (``–`` for runs that kept no count)."""
    texts, dups = number(summary.get("texts")), number(summary.get("duplicates"))
    return MISSING if texts is None or dups is None else fmt_count(texts + dups)


def text_counts(summary: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The input / distinct / duplicate facts every scan and clean surface opens with."""
    return ((INPUT_TEXTS, input_texts(summary)), (DISTINCT_TEXTS, fmt_count(summary.get("texts"))),
            (DUPLICATES, fmt_count(summary.get("duplicates"))))


def breakdown(table: pd.DataFrame, by: str) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    """A Table-2-shaped count table (``family_table``) as column labels and rows of text."""
    fams = [f for f in FAMILY_ORDER if f in table.columns]
    columns = (GROUP_WORDS.get(by, words(by)), "Texts", *fams, "Flagged", "Share flagged")
    rows = tuple((words(r[by]), fmt_count(r["texts"]), *(fmt_count(r[f]) for f in fams), fmt_count(r["flagged"]),
                  fmt_share(r["rate"])) for r in table.to_dict("records"))
    return columns, rows


def breakdown_frame(table: pd.DataFrame, by: str) -> pd.DataFrame:
    """:func:`breakdown` as a DataFrame of text (the app's tables, notebook 03)."""
    import pandas as pd

    columns, rows = breakdown(table, by)
    return pd.DataFrame(list(rows), columns=list(columns))


def _share_of(k: Any, n: Any) -> str:
    kv, nv = number(k), number(n)
    return fmt_share(kv / nv) if kv is not None and nv else MISSING


def scan_report(run: Run) -> Report:
    """A ``scan`` run: texts flagged, by generator, the human false-positive rate."""
    s = run.summary
    hp = s.get("human_false_positives", {})
    columns, rows = breakdown(run.table("by_llm_type"), "llm_type")
    by_label = {str(r["label"]): r for r in run.table("by_label").to_dict("records")}
    sentences = tuple(
        f"{'Human' if lab == 'human' else 'LLM' if lab == 'llm' else words(lab)} texts flagged: "
        f"{fmt_count(r['flagged'])} of {fmt_count(r['texts'])} ({fmt_share(r['rate'])}"
        + ("; false positives)." if lab == "human" else ").") for lab, r in by_label.items())
    lib = s.get("library", {})
    return Report(
        title="Artifact scan",
        headline=Headline("Texts flagged by high-precision families", fmt_count(s.get("flagged")),
                          f"of {fmt_count(s.get('texts'))} distinct texts",
                          _share_of(s.get("flagged"), s.get("texts")), raw=number(s.get("flagged"))),
        columns=columns, rows=rows, sentences=sentences,
        facts=(*text_counts(s), ("Flagged (high-precision families)", fmt_count(s.get("flagged"))),
               ("Human texts flagged (false positives)",
                f"{fmt_count(hp.get('flagged'))} of {fmt_count(hp.get('texts'))} ({fmt_share(hp.get('rate'))})"),
               ("Domain-family flags (reported apart)", fmt_count(s.get("domain_flagged"))),
               ("Pattern library", str(lib.get("version", MISSING)))),
        notes=("Rows: LLM texts by generator.", NOTE_FIRST_MATCH, NOTE_HUMAN),
        command=portable(str(run.manifest.get("command", ""))))


def flags_sentence(flags: Mapping[str, Any]) -> str:
    """``Flags to review: 97 matches of review-only patterns (left in place); 3 …``, or that there are none."""
    parts = [f"{fmt_count(n)} {FLAG_WORDS.get(kind, words(kind))}"
             for kind, n in sorted(flags.items(), key=lambda kv: -int(kv[1]))]
    return "Flags to review: " + ("; ".join(parts) if parts else "none") + "."


def under_cleaning_sentence(under: Mapping[str, Any], note: str | None = None) -> str:
    """The under-cleaning flag in one sentence: how many scored texts it marked, and its rule."""
    rule = str(under.get("rule_text", "")) or MISSING
    if not under.get("assessed"):
        return f"Under-cleaning flag: not assessed ({note or 'no residual scorer was given'}); rule: {rule}."
    return (f"Under-cleaning flag: {fmt_count(under.get('marked'))} of {fmt_count(under.get('scored'))} scored "
            f"(edited) texts marked ({_share_of(under.get('marked'), under.get('scored'))}); rule: {rule}.")


def clean_report(run: Run) -> Report:
    """A ``clean`` run: texts edited or dropped, edits per family, the flags to review."""
    s = run.summary
    edits = run.table("edits") if run.has_table("edits") else run.records
    applied = edits[edits["applied"]] if len(edits) else edits
    kept_edited = applied[~applied["action"].isin(DROP_ACTIONS)]["id"].nunique() if len(applied) else 0
    rows = tuple((fam, fmt_count(int((applied["family"] == fam).sum())),
                  fmt_count(applied[applied["family"] == fam]["id"].nunique()))
                 for fam in FAMILY_ORDER if len(applied) and (applied["family"] == fam).any())
    note = run.manifest.get("config", {}).get("scorer_note")
    lib = s.get("library", {})
    return Report(
        title="Artifact cleaning",
        headline=Headline("Texts edited or dropped", fmt_count(s.get("edited_texts")),
                          f"of {fmt_count(s.get('texts'))} distinct texts",
                          _share_of(s.get("edited_texts"), s.get("texts")), raw=number(s.get("edited_texts"))),
        columns=("Family", "Edits applied", "Texts"), rows=rows,
        sentences=(flags_sentence(s.get("flags", {})), under_cleaning_sentence(s.get("under_cleaning", {}), note)),
        facts=(*text_counts(s), ("Texts edited or dropped", fmt_count(s.get("edited_texts"))),
               ("Edited and kept", fmt_count(kept_edited)), ("Dropped", fmt_count(s.get("dropped"))),
               *held_back_facts(s), *edges_facts(s),
               ("Kept", fmt_count(s.get("kept"))), ("Edits applied", fmt_count(s.get("applied"))),
               ("Edits rejected by decision", fmt_count(s.get("rejected"))),
               ("Pattern library", str(lib.get("version", MISSING)))),
        notes=("Every edit keeps its span and original text in the run, so it can be reviewed and undone; "
               "dropped texts keep their original too.",),
        command=portable(str(run.manifest.get("command", ""))))


def edges_facts(s: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The learned edge detector's counts as a fact (none when it was off or the run predates it)."""
    e = s.get("edges") or {}
    if not e:
        return ()
    detector = f"{e['name']}: {fmt_count(e.get('cut'))} texts cut, {fmt_count(e.get('review'))} sent to review"
    facts: tuple[tuple[str, str], ...] = (("Learned edge detector", detector),)
    for rule, n in (e.get("rules") or {}).items():  # runs made before the stage's rules lack them
        facts += ((f"Texts cut by {rule}", fmt_count(n)),)
    return facts


def held_back_facts(s: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The held-back count of a clean run's summary, as a fact (none for runs made before hold-backs existed)."""
    if s.get("held_back") is None:
        return ()
    rule = ("taken out of the release" if s.get("held_back_rule", "drop") == "drop"
            else "kept in the release, flagged (--held-back keep)")
    llm = s.get("held_back_llm")
    share = f", {_share_of(llm, s.get('llm_texts'))} of the LLM-written texts" if s.get("llm_texts") else ""
    return (("Held back (cannot be repaired by cutting)",
             f"{fmt_count(s.get('held_back'))}: {rule}{share}"),)


def report(run: Run) -> Report:
    """The :class:`~zcp_core.report.Report` of a ``scan`` or ``clean`` run."""
    if run.kind == "scan":
        return scan_report(run)
    if run.kind == "clean":
        return clean_report(run)
    raise ValueError(f"{run.path} is a {run.kind} run, not a scan or clean run")
