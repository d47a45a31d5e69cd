"""One number, one place: the formatting rules every method's report follows, and the ``Report`` value.

A foundation module (beside ``stats`` and ``intervals``) because every surface of every method (the CLI,
the app's pages, the notebooks, release cards) renders a run through it: a method's ``report(run)`` builds
a :class:`Report`, and the surfaces only lay it out (:meth:`Report.to_text`, :meth:`Report.to_markdown`,
:meth:`Report.to_dict`), so a number reads the same wherever it is shown. It imports nothing of zcp_core
at module level, so any package may use it without an import circle.

Rules (one each, used everywhere):

* missing: :data:`MISSING` ("–"), never ``None``, ``nan`` or ``n/a``;
* counts: integers as integers with thousands separators (``103``, ``1,204``), never ``103.000``;
* numbers: :data:`DIGITS` decimals (3); effects and CIs signed (``+0.094``), CIs as ``[+0.222, +0.349]``;
* shares: percentages with one decimal (``33.8%``, CIs ``[12.0%, 30.5%]``); their differences in percentage
  points, signed (``+20.8 pp``);
* p-values: 3 decimals from 0.001 up, else scientific with 2 significant digits (``1.1e-07``);
* Bayes factors: one decimal with thousands separators (``399.5``);
* Contamination Confidence C: 3 decimals, ``≥ 0.999`` at or above the one ceiling (``stats.C_CAP``, where a
  Monte Carlo p-value reaches its floor) and ``≤ 0.001`` below its mirror (reached only with a tiny prior:
  C is bounded below by the prior, since the Bayes-factor bound is at least 1), so no C ever reads 1.000
  or 0.000;
* names in words: :data:`METRIC_NAMES`, :data:`TEST_NAMES`, :data:`EFFECT_NAMES` (an effect is named for
  what it is: a raw mean difference is a "mean difference", Cohen's d only when it is d);
* the reading of C: :func:`evidence_words` (:data:`EVIDENCE_LEVELS`);
* the reproduce command: portable (``zcp_core.publish.portable_command``: no ``--out``, no local paths).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: How a missing value is shown.
MISSING = "–"
#: Decimals of every rounded number (effects, CIs, C, shares of one).
DIGITS = 3
#: C at or above this is shown as "≥ 0.999" (mirrors ``stats.C_CAP``; a test checks they agree).
C_CEILING = 0.999
#: C below this is shown as "≤ 0.001" (only reachable with a tiny prior).
C_FLOOR = 0.001

#: Metrics in words, the same on every surface.
METRIC_NAMES: dict[str, str] = {
    "acc": "accuracy (Acc)", "con": "consistency with its own CoT (Con)",
    "p_first": "P(first answer token)", "p_all": "P(all answer tokens)",
    "p_first_cal": "P(first answer token), calibrated", "p_all_cal": "P(all answer tokens), calibrated",
    "p_first_net": "P(first answer token), net of the neutral prior",
    "p_all_net": "P(all answer tokens), net of the neutral prior",
    "rouge_l": "ROUGE-L", "edit_sim": "edit similarity", "bleurt": "BLEURT",
}
#: Tests in words.
TEST_NAMES: dict[str, str] = {
    "mcnemar": "exact McNemar test", "permutation": "sign-flip permutation test", "bootstrap": "paired bootstrap",
    "exact_sign_flip": "exact sign-flip test (original against the mean of its twins)",
    "exact_role_permutation": "exact role-permutation test (which of an item's questions plays the original)",
    "role_permutation": "role-permutation test (which of an item's questions plays the original)",
}
#: Effect measures in words: named for what they are.
EFFECT_NAMES: dict[str, str] = {
    "risk_difference": "difference in accuracy", "mean_diff": "mean difference",
    "mean_difference": "mean difference (original minus the mean of its twins)",
    "cohens_dz": "Cohen's d_z (standardised mean difference)",
}
#: What a Contamination Confidence is: the one definition every surface renders where C appears (the app,
#: ``zcp confidence``, the notebooks, release cards, the docs). A test finds it in each.
C_DEFINITION = ("how strongly a run's evidence says the model has seen the benchmark: about 0.5 is no evidence, "
                "near 1 strong evidence. Formally, it is the ZCP paper's bound from the test's p-value: "
                "an upper bound on the posterior probability, at the stated prior, that originals score higher "
                "than their twins. Memorisation is one cause; twins harder than their originals are another, "
                "which the twin card and the nulls check.")
#: The definition as a sentence about C.
C_DEFINED = "Contamination Confidence C is " + C_DEFINITION

#: The one reading of a Contamination Confidence C (posterior at the run's prior, 0.5 by default): the lowest C of
#: each level. C = 0.75 is a Bayes factor of 3 and C = 0.95 one of 19 at the default prior.
EVIDENCE_LEVELS: tuple[tuple[float, str], ...] = (
    (0.95, "evidence of contamination"), (0.75, "weak evidence"), (0.0, "no evidence"))


def number(x: Any) -> float | None:
    """``x`` as a finite float, or ``None`` (``None``, NaN, inf, ``pd.NA``, text)."""
    if x is None or isinstance(x, bool):
        return None if x is None else float(x)
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def fmt_count(x: Any) -> str:
    """A count: ``103``, ``1,204``; ``–`` when missing."""
    v = number(x)
    return MISSING if v is None else f"{int(round(v)):,}"


def fmt_num(x: Any, digits: int = DIGITS, signed: bool = False) -> str:
    """A number to ``digits`` decimals (signed: ``+0.094``); ``–`` when missing."""
    v = number(x)
    if v is None:
        return MISSING
    return f"{v:+.{digits}f}" if signed else f"{v:.{digits}f}"


def fmt_ci(low: Any, high: Any, digits: int = DIGITS) -> str:
    """A 95% interval as ``[+0.222, +0.349]``; ``–`` when either end is missing."""
    lo, hi = number(low), number(high)
    if lo is None or hi is None:
        return MISSING
    return f"[{lo:+.{digits}f}, {hi:+.{digits}f}]"


def fmt_p(p: Any) -> str:
    """A p-value: ``0.018``, or ``1.1e-07`` below 0.001; ``–`` when missing."""
    v = number(p)
    if v is None:
        return MISSING
    return f"{v:.3f}" if v >= 0.001 else f"{v:.1e}"


def fmt_bf(bf: Any) -> str:
    """A Bayes factor (bound): ``399.5``, ``212,285.7``; ``–`` when missing."""
    v = number(bf)
    return MISSING if v is None else f"{v:,.1f}"


def fmt_share(x: Any, digits: int = 1) -> str:
    """A share of one as a percentage: ``33.8%``; ``–`` when missing."""
    v = number(x)
    return MISSING if v is None else f"{100 * v:.{digits}f}%"


def fmt_pp(x: Any, digits: int = 1) -> str:
    """A difference of two shares, already in percentage points: ``+20.8 pp``; ``–`` when missing."""
    v = number(x)
    return MISSING if v is None else f"{v:+.{digits}f} pp"


def fmt_share_ci(low: Any, high: Any, digits: int = 1) -> str:
    """A 95% interval of a share of one, as percentages: ``[12.0%, 30.5%]``; ``–`` when either end is missing."""
    lo, hi = number(low), number(high)
    if lo is None or hi is None:
        return MISSING
    return f"[{100 * lo:.{digits}f}%, {100 * hi:.{digits}f}%]"


def fmt_c(c: Any, bound: bool = False) -> str:
    """A Contamination Confidence: ``0.834``, ``≥ 0.999`` at the ceiling (or ``bound``), ``≤ 0.001``; ``–``."""
    v = number(c)
    if v is None:
        return MISSING
    if bound or v >= C_CEILING:
        return f"≥ {C_CEILING:.3f}"
    if v < C_FLOOR:
        return f"≤ {C_FLOOR:.3f}"
    return f"{v:.3f}"


def evidence_words(confidence: Any) -> str:
    """The reading of a Contamination Confidence (:data:`EVIDENCE_LEVELS`); ``no verdict`` when there is none."""
    v = number(confidence)
    if v is None:
        return "no verdict"
    return next(words for floor, words in EVIDENCE_LEVELS if v >= floor)


def metric_name(metric: Any) -> str:
    """A metric in words (:data:`METRIC_NAMES`); unknown names with spaces for underscores."""
    return METRIC_NAMES.get(str(metric), str(metric).replace("_", " "))


def statistical_test_name(test: Any) -> str:
    """A test in words (:data:`TEST_NAMES`)."""
    return TEST_NAMES.get(str(test), str(test).replace("_", " "))


def effect_name(effect: Any) -> str:
    """An effect measure in words (:data:`EFFECT_NAMES`)."""
    return EFFECT_NAMES.get(str(effect), str(effect).replace("_", " "))


def capital(text: str) -> str:
    """``text`` with its first letter capital (a name in words opening a row or sentence)."""
    return text[:1].upper() + text[1:]


def portable(command: str) -> str:
    """The reproduce command as any checkout can run it (``zcp_core.publish.portable_command``)."""
    from zcp_core.publish import portable_command

    return portable_command(command) if command else ""


@dataclass(frozen=True)
class Headline:
    """The one number a run is read by.

    Attributes:
        label: What the number is, in words ("Contamination Confidence").
        value: The number as shown (:func:`fmt_c` for C), ``–`` without one.
        subject: What it was measured on, in words ("P(all answer tokens)"); ``""`` when none.
        reading: The number in words ("evidence of contamination", "no verdict").
        reason: Why there is no number (``""`` when there is one).
        raw: The unrounded number, for figures and colour only (never shown).
    """

    label: str
    value: str
    subject: str = ""
    reading: str = ""
    reason: str = ""
    raw: float | None = None

    @property
    def text(self) -> str:
        """The headline in one line: ``Contamination Confidence 0.998 (P(all answer tokens)): evidence of …``."""
        if self.raw is None and self.value == MISSING:
            return f"No {self.label}" + (f": {self.reason}" if self.reason else "")
        subject = f" ({self.subject})" if self.subject else ""
        return f"{self.label} {self.value}{subject}" + (f": {self.reading}" if self.reading else "")


@dataclass(frozen=True)
class Report:
    """A run as every surface shows it: each number already formatted by this module's rules.

    Attributes:
        title: The run in words ("Zero-CoT probe of lab:direct").
        headline: The one number, with its reading.
        columns: The evidence table's column labels, in words.
        rows: The evidence table: one tuple of cells (as shown) per row, aligned with ``columns``.
        sentences: The evidence in words, the headline's first.
        facts: Key figures as ``(label, value)`` pairs (pairs, flagged items, model...).
        notes: How to read the table (definitions, what was not measured).
        command: The portable reproduce command (``""`` when the run recorded none).
    """

    title: str
    headline: Headline
    columns: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    sentences: tuple[str, ...] = ()
    facts: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()
    command: str = ""

    def fact(self, label: str) -> str:
        """The value of one fact by its label (``–`` when absent)."""
        return dict(self.facts).get(label, MISSING)

    def table(self) -> pd.DataFrame:
        """The evidence table as a DataFrame of text (for ``st.dataframe`` and notebooks)."""
        import pandas as pd

        return pd.DataFrame(list(self.rows), columns=list(self.columns))

    def to_text(self) -> str:
        """Plain text (the CLI): headline, facts, the aligned evidence table, sentences, notes, command."""
        lines = [self.title, self.headline.text]
        if self.facts:
            lines.append(" · ".join(f"{k} {v}" for k, v in self.facts))
        if self.rows:
            lines += ["", *text_table(self.columns, self.rows)]
        if self.sentences:
            lines += ["", *self.sentences]
        if self.notes:
            lines += ["", *self.notes]
        if self.command:
            lines += ["", f"reproduce: {self.command}"]
        return "\n".join(lines)

    def to_markdown(self, level: int = 3) -> str:
        """Markdown (notebooks, cards): the same content as :meth:`to_text`, with a table."""
        h = "#" * level
        lines = [f"{h} {self.title}", "", f"**{self.headline.text}**", ""]
        if self.facts:
            lines += [" · ".join(f"{k} **{v}**" for k, v in self.facts), ""]
        if self.rows:
            lines += markdown_table(self.columns, self.rows) + [""]
        lines += [*(f"{s}" for s in self.sentences), ""] if self.sentences else []
        lines += [*(f"- {n}" for n in self.notes), ""] if self.notes else []
        if self.command:
            lines += ["Reproduce:", "", f"`{self.command}`", ""]
        return "\n".join(lines).rstrip() + "\n"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict of what is shown (text only; machine numbers stay in each method's own json)."""
        return {"title": self.title,
                "headline": {"label": self.headline.label, "value": self.headline.value,
                             "subject": self.headline.subject, "reading": self.headline.reading,
                             "reason": self.headline.reason},
                "columns": list(self.columns), "rows": [list(r) for r in self.rows],
                "sentences": list(self.sentences), "facts": dict(self.facts), "notes": list(self.notes),
                "command": self.command}


def text_table(columns: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> list[str]:
    """Rows aligned under their column labels (first column left, the others right), as text lines."""
    widths = [max(len(str(c)), *(len(r[i]) for r in rows)) for i, c in enumerate(columns)]

    def line(cells: tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return [line(tuple(columns)).rstrip(), *(line(r).rstrip() for r in rows)]


def markdown_table(columns: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> list[str]:
    """Rows as a markdown table (``|`` in a cell escaped)."""
    def cell(x: str) -> str:
        return x.replace("|", "\\|")

    return ["| " + " | ".join(cell(c) for c in columns) + " |", "|" + "---|" * len(columns),
            *("| " + " | ".join(cell(c) for c in r) + " |" for r in rows)]


# ---- intervals of quantities that are not differences ------------------------------------------------------------

def fmt_value_ci(low: Any, high: Any, digits: int = DIGITS) -> str:
    """A 95% interval of a quantity that is not a difference (an AUROC, a score), unsigned: ``[0.568, 0.802]``.

    :func:`fmt_ci` signs both ends because it bounds an effect, a difference whose sign says which side is ahead;
    an AUROC (0.5 is chance) or a score has no side, so a sign would only suggest one. ``–`` when either end is
    missing.
    """
    lo, hi = number(low), number(high)
    if lo is None or hi is None:
        return MISSING
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"
