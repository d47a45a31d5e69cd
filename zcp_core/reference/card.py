"""The twin card: do the twins look like their originals?

Compares the gold answers of originals and their twins, pair by pair: answer
digits, the median answer, leading-digit shares, and how often the twin's
answer is the larger. Matched twins keep digits and magnitude (the card of a
good reference set shows about half the twins larger, and the same leading-
digit skew); a uniform redraw shows larger answers and flat leading digits.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from typing import Any

from zcp_core.reference.draw import answer_digits
from zcp_core.schema import Item


@dataclass(frozen=True)
class TwinCard:
    """Originals against twins, over the pairs whose gold answers are numbers.

    Attributes:
        n_pairs: Pairs compared.
        digits_mean: Mean answer digits (original, twin).
        same_digits_share: Share of twins whose answer has as many digits as the original's.
        median_answer: Median gold answer (original, twin).
        larger_share: Share of twins whose answer is larger than the original's.
        leading_digit_share: For 1..9, the share of answers with that leading digit (original, twin).
    """

    n_pairs: int
    digits_mean: tuple[float, float]
    same_digits_share: float
    median_answer: tuple[float, float]
    larger_share: float
    leading_digit_share: tuple[tuple[float, float], ...]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (for a run summary)."""
        d = asdict(self)
        d["leading_digit_share"] = {str(k + 1): list(v) for k, v in enumerate(self.leading_digit_share)}
        return d

    def frame(self) -> Any:
        """The card as a table: columns ``metric``, ``original``, ``twin`` (shares in [0, 1])."""
        import pandas as pd

        rows = [("pairs", self.n_pairs, self.n_pairs), ("answer digits (mean)", *self.digits_mean),
                ("answer digits same as original (share)", 1.0, self.same_digits_share),
                ("median answer", *self.median_answer),
                ("twin answer larger than original (share)", float("nan"), self.larger_share)]
        rows += [(f"leading digit {k + 1} (share)", *v) for k, v in enumerate(self.leading_digit_share)]
        return pd.DataFrame(rows, columns=["metric", "original", "twin"])

    def markdown(self) -> str:
        """The card as a Markdown table."""
        lines = ["| metric | original | twin |", "|---|---|---|"]
        for _, r in self.frame().iterrows():
            o = "" if r.original != r.original else f"{r.original:.3g}"  # NaN: no original value
            lines.append(f"| {r.metric} | {o} | {r.twin:.3g} |")
        return "\n".join(lines)


def _value(s: str) -> Fraction | None:
    try:
        return Fraction(s.replace(",", "").replace("$", "").strip())
    except (ValueError, ZeroDivisionError):
        return None


def _leading(v: Fraction) -> int | None:
    digits = str(abs(float(v))).lstrip("0.").replace(".", "")
    return int(digits[0]) if digits and digits[0] != "0" else None


def twin_card(originals: Sequence[Item], twins: Sequence[Item]) -> TwinCard:
    """The card of ``twins`` against their ``originals`` (matched by ``original_id``).

    Pairs whose answers are not plain numbers are left out.
    """
    by_id = {it.id: it for it in originals}
    pairs = []
    for t in twins:
        o = by_id.get(t.original_id or "")
        a, b = (_value(o.answer), _value(t.answer)) if o else (None, None)
        if a is not None and b is not None:
            pairs.append((a, b))
    n = len(pairs)
    if not n:
        return TwinCard(0, (0.0, 0.0), 0.0, (0.0, 0.0), 0.0, tuple((0.0, 0.0) for _ in range(9)))
    dig = [(answer_digits(a), answer_digits(b)) for a, b in pairs]
    lead = [(_leading(a), _leading(b)) for a, b in pairs]
    share = tuple((sum(x[0] == d for x in lead) / n, sum(x[1] == d for x in lead) / n) for d in range(1, 10))
    return TwinCard(
        n_pairs=n,
        digits_mean=(statistics.fmean(x for x, _ in dig), statistics.fmean(y for _, y in dig)),
        same_digits_share=sum(x == y for x, y in dig) / n,
        median_answer=(float(statistics.median(a for a, _ in pairs)), float(statistics.median(b for _, b in pairs))),
        larger_share=sum(b > a for a, b in pairs) / n,
        leading_digit_share=share,
    )
