"""Which part of a benchmark a verdict speaks for: items with a twin against items without one.

A probe tests only items that got a twin. When the generator covers some kinds of item more than others
(large answers more than small ones, items without repeated numbers more than items with them), a verdict
speaks for that part of the benchmark only. :func:`coverage_comparison` compares covered with uncovered items
on four features and says so in one sentence.

Rows (``CoverageRow.feature``):

* ``answer quartile k``: the share of items in the k-th quartile of answer size (|gold|) that are covered;
* ``solution steps``: mean calculator steps (``<<...>>``) of covered against uncovered items;
* ``question words``: mean question length in words;
* ``repeated number``: share of items whose question writes some number twice.

Each row has a two-sided p: Fisher's exact test for a share, Mann-Whitney U for a mean.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from fractions import Fraction

from zcp_core.schema import Item

_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?")


@dataclass(frozen=True)
class CoverageRow:
    """One feature, covered against uncovered.

    Attributes:
        feature: What is compared (see the module doc).
        covered: The covered items' share or mean.
        uncovered: The uncovered items' share or mean.
        p: Two-sided p of no difference (None when a side is empty).
        kind: ``share`` or ``mean``.
    """

    feature: str
    covered: float | None
    uncovered: float | None
    p: float | None
    kind: str


@dataclass(frozen=True)
class CoverageComparison:
    """Covered against uncovered items of one benchmark.

    Attributes:
        n_items: Items in the benchmark.
        n_covered: Items with a twin.
        quartile_coverage: The share covered in each answer-size quartile, smallest answers first.
        rows: The comparison rows.
        sentence: Which part of the benchmark a verdict on the covered items speaks for.
    """

    n_items: int
    n_covered: int
    quartile_coverage: tuple[float | None, ...]
    rows: tuple[CoverageRow, ...]
    sentence: str

    def to_dict(self) -> dict[str, object]:
        """JSON form (run summaries)."""
        return {"n_items": self.n_items, "n_covered": self.n_covered,
                "quartile_coverage": list(self.quartile_coverage), "sentence": self.sentence,
                "rows": [r.__dict__ for r in self.rows]}


def _size(answer: str) -> float | None:
    try:
        return abs(float(Fraction(answer.replace(",", "").replace("$", "").strip())))
    except (ValueError, ZeroDivisionError):
        return None


def repeated_number(question: str) -> bool:
    """Whether the question writes some number more than once ("3 families ... 3 other families")."""
    counts = Counter(m.group(0).replace(",", "") for m in _NUMBER.finditer(question))
    return any(c > 1 for c in counts.values())


def _steps(it: Item) -> int:
    return (it.solution or "").count("<<")


def _fisher(a: Sequence[bool], b: Sequence[bool]) -> float | None:
    from scipy.stats import fisher_exact

    if not a or not b:
        return None
    table = [[sum(a), len(a) - sum(a)], [sum(b), len(b) - sum(b)]]
    return float(fisher_exact(table).pvalue)


def _mwu(a: Sequence[float], b: Sequence[float]) -> float | None:
    from scipy.stats import mannwhitneyu

    if not a or not b:
        return None
    return float(mannwhitneyu(a, b, alternative="two-sided").pvalue)


def _mean(xs: Sequence[float]) -> float | None:
    return statistics.fmean(xs) if xs else None


def _share(xs: Sequence[bool]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def coverage_comparison(items: Sequence[Item], covered_ids: Collection[str]) -> CoverageComparison:
    """Compare the items with a twin (``covered_ids``) against the rest of ``items``.

    Args:
        items: Every item of the benchmark (or of the probed slice).
        covered_ids: Ids of the items that got a twin.
    """
    cov = [it for it in items if it.id in covered_ids]
    unc = [it for it in items if it.id not in covered_ids]
    sized = sorted((s, it.id in covered_ids) for it in items if (s := _size(it.answer)) is not None)
    quart: list[float | None] = []
    rows: list[CoverageRow] = []
    for k in range(4):
        part = sized[k * len(sized) // 4:(k + 1) * len(sized) // 4]
        quart.append(_share([c for _, c in part]))
    if sized:
        top, bottom = sized[3 * len(sized) // 4:], sized[:len(sized) // 4]
        rows.append(CoverageRow("answer size: covered share, largest against smallest quartile",
                                _share([c for _, c in top]), _share([c for _, c in bottom]),
                                _fisher([c for _, c in top], [c for _, c in bottom]), "share"))
    steps_c, steps_u = [float(_steps(it)) for it in cov], [float(_steps(it)) for it in unc]
    rows.append(CoverageRow("solution steps", _mean(steps_c), _mean(steps_u), _mwu(steps_c, steps_u), "mean"))
    words_c = [float(len(it.question.split())) for it in cov]
    words_u = [float(len(it.question.split())) for it in unc]
    rows.append(CoverageRow("question words", _mean(words_c), _mean(words_u), _mwu(words_c, words_u), "mean"))
    rep_c, rep_u = [repeated_number(it.question) for it in cov], [repeated_number(it.question) for it in unc]
    rows.append(CoverageRow("question repeats a number", _share(rep_c), _share(rep_u), _fisher(rep_c, rep_u),
                            "share"))
    return CoverageComparison(len(items), len(cov), tuple(quart), tuple(rows),
                              _sentence(len(items), len(cov), quart, rows))


def _sentence(n: int, k: int, quart: Sequence[float | None], rows: Sequence[CoverageRow]) -> str:
    """The one sentence: how much of the benchmark is covered, and how the covered part differs."""
    if not n:
        return "No items: the verdict speaks for nothing."
    from zcp_core.report import fmt_count, fmt_num, fmt_p, fmt_share

    head = f"The verdict speaks for the {fmt_count(k)} of {fmt_count(n)} items ({fmt_share(k / n)}) that have a twin"
    if k == n:
        return head + ": the whole benchmark."
    diffs = []
    if all(q is not None for q in quart) and quart:
        diffs.append(f"coverage runs from {fmt_share(quart[0], 0)} of the items with the smallest answers to "
                     f"{fmt_share(quart[-1], 0)} "
                     "of those with the largest")
    for r in rows:
        if r.feature.startswith("answer size"):
            continue  # said by the quartiles above
        if r.p is not None and r.p < 0.05 and r.covered is not None and r.uncovered is not None:
            cov, unc = ((fmt_share(r.covered, 0), fmt_share(r.uncovered, 0)) if r.kind == "share"
                        else (fmt_num(r.covered, 1), fmt_num(r.uncovered, 1)))
            diffs.append(f"{r.feature}: {cov} covered against {unc} not (p {fmt_p(r.p)})")
    if not diffs:
        return head + "; covered and uncovered items do not differ detectably on answer size, steps, length or "\
                      "repeated numbers."
    return head + ", not the rest alike: " + "; ".join(diffs) + "."
