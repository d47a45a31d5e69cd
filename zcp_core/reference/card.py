"""The twin card: do the twins look like their originals?

Compares the gold answers of originals and their twins, pair by pair: answer
digits, the median answer, leading-digit shares, and how often the twin's
answer is the larger. Matched twins keep digits and magnitude (the card of a
good reference set shows about half the twins larger, and the same leading-
digit skew); a uniform redraw shows larger answers and flat leading digits.

The balance keys (issue 23) say whether twins are as easy as their originals:
``larger_share`` near 0.5, the mean log ratio of twin to original answer near 0,
roundness rates (ends in a zero, multiple of 5) as the originals', and, with a
model, the neutral prior: the model's log-probability of each answer's digits
followed by ``}`` right after ``The answer is \\boxed{`` (no template, no
question), original minus twin, which should be near 0.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction
from typing import Any

from zcp_core.reference.draw import answer_digits, roundness
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
        log_ratio_mean: Mean of log(|twin answer| / |original answer|) over pairs with nonzero answers.
        log_ratio_ci: Its 95% CI (t interval).
        trailing_zero_rate: Share of whole answers ending in a zero (original, twin).
        multiple_of_5_rate: Share of whole answers that are multiples of 5 (original, twin).
        fallback_share: Share of twins whose answer moved to the side the coin did not draw (v4 metadata).
        neutral_prior_diff: Mean neutral prior of the original answer minus the twin's, in nats (None: no model).
        neutral_prior_ci90: Its 90% CI (t interval).
        neutral_prior_model: The model that scored it.
        failures: Items without a twin, per rule that refused them (the failure kind).
        fallbacks: Fallback twins per reason (the kind of ``side.fallback_reason``).
    """

    n_pairs: int
    digits_mean: tuple[float, float]
    same_digits_share: float
    median_answer: tuple[float, float]
    larger_share: float
    leading_digit_share: tuple[tuple[float, float], ...]
    log_ratio_mean: float = 0.0
    log_ratio_ci: tuple[float, float] = (0.0, 0.0)
    trailing_zero_rate: tuple[float, float] = (0.0, 0.0)
    multiple_of_5_rate: tuple[float, float] = (0.0, 0.0)
    fallback_share: float = 0.0
    neutral_prior_diff: float | None = None
    neutral_prior_ci90: tuple[float, float] | None = None
    neutral_prior_model: str | None = None
    failures: Mapping[str, int] = field(default_factory=dict)
    fallbacks: Mapping[str, int] = field(default_factory=dict)

    @property
    def too_few(self) -> bool:
        """Fewer than :data:`MIN_PAIRS` pairs: the card prints that, not intervals."""
        return self.n_pairs < MIN_PAIRS

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (for a run summary); intervals are null over too few pairs."""
        d = asdict(self)
        d["leading_digit_share"] = {str(k + 1): list(v) for k, v in enumerate(self.leading_digit_share)}
        for k in ("digits_mean", "median_answer", "log_ratio_ci", "trailing_zero_rate", "multiple_of_5_rate",
                  "neutral_prior_ci90"):
            d[k] = list(d[k]) if d[k] is not None else None
        d["failures"], d["fallbacks"] = dict(self.failures), dict(self.fallbacks)
        d["too_few_pairs"] = self.too_few
        if self.too_few:
            d["log_ratio_ci"] = d["neutral_prior_ci90"] = None
        return d

    def frame(self) -> Any:
        """The card as a table: columns ``metric``, ``original``, ``twin`` (shares in [0, 1])."""
        import pandas as pd

        rows = [("pairs", self.n_pairs, self.n_pairs), ("answer digits (mean)", *self.digits_mean),
                ("answer digits same as original (share)", 1.0, self.same_digits_share),
                ("median answer", *self.median_answer),
                ("twin answer larger than original (share)", float("nan"), self.larger_share),
                ("log(twin / original answer) (mean)", float("nan"), self.log_ratio_mean),
                ("log ratio 95% CI low", float("nan"), self.log_ratio_ci[0]),
                ("log ratio 95% CI high", float("nan"), self.log_ratio_ci[1]),
                ("answer ends in a zero (share)", *self.trailing_zero_rate),
                ("answer a multiple of 5 (share)", *self.multiple_of_5_rate),
                ("answer on the side the coin did not draw (share)", float("nan"), self.fallback_share)]
        if self.neutral_prior_diff is not None and self.neutral_prior_ci90 is not None:
            rows += [("neutral prior, original minus twin (nats)", float("nan"), self.neutral_prior_diff),
                     ("neutral prior 90% CI low", float("nan"), self.neutral_prior_ci90[0]),
                     ("neutral prior 90% CI high", float("nan"), self.neutral_prior_ci90[1])]
        rows += [(f"leading digit {k + 1} (share)", *v) for k, v in enumerate(self.leading_digit_share)]
        return pd.DataFrame(rows, columns=["metric", "original", "twin"])

    def markdown(self) -> str:
        """The card as a Markdown table (a sentence over too few pairs)."""
        if self.too_few:
            return f"too few pairs for a twin card: {self.n_pairs} with numeric answers (at least {MIN_PAIRS} needed)"
        lines = ["| metric | original | twin |", "|---|---|---|"]
        for _, r in self.frame().iterrows():
            o = "" if r.original != r.original else f"{r.original:.3g}"  # NaN: no original value
            lines.append(f"| {r.metric} | {o} | {r.twin:.3g} |")
        return "\n".join(lines)


MIN_PAIRS = 10
_FRAC = re.compile(r"^(-?)\\[dt]?frac\{(\d+)\}\{(\d+)\}$")
_NOISE = re.compile(r"\\\$|\\%|\^\s*\{?\\circ\}?|\\!|\{,\}|[,$\s]")


def answer_value(s: str) -> Fraction | None:
    """A plain or LaTeX number (``1,000``, ``\\$5``, ``-\\frac{3}{4}``, ``2.5``, ``30^\\circ``), else None."""
    t = _NOISE.sub("", s.strip())
    m = _FRAC.match(t)
    if m:
        return Fraction(int(m.group(2)), int(m.group(3))) * (-1 if m.group(1) else 1)
    try:
        return Fraction(t)
    except (ValueError, ZeroDivisionError):
        return None


def _leading(v: Fraction) -> int | None:
    digits = str(abs(float(v))).lstrip("0.").replace(".", "")
    return int(digits[0]) if digits and digits[0] != "0" else None


def mean_ci(xs: Sequence[float], level: float) -> tuple[float, tuple[float, float]]:
    """Mean and t-interval of ``xs`` (a point interval for fewer than 2)."""
    from scipy import stats

    m = statistics.fmean(xs) if xs else 0.0
    if len(xs) < 2:
        return m, (m, m)
    se = statistics.stdev(xs) / math.sqrt(len(xs))
    h = float(stats.t.ppf(0.5 + level / 2, len(xs) - 1)) * se
    return m, (m - h, m + h)


def _rate(xs: Sequence[bool]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def twin_card(originals: Sequence[Item], twins: Sequence[Item], failures: Sequence[str] = ()) -> TwinCard:
    """The card of ``twins`` against their ``originals`` (matched by ``original_id``).

    Pairs whose answers are not plain numbers are left out. ``failures`` are the failure kinds of the items
    that got no twin (counted per rule). The neutral prior needs a model: :func:`with_neutral_prior`.
    """
    by_id = {it.id: it for it in originals}
    pairs, meta = [], []
    for t in twins:
        o = by_id.get(t.original_id or "")
        a, b = (answer_value(o.answer), answer_value(t.answer)) if o else (None, None)
        if a is not None and b is not None:
            pairs.append((a, b))
            meta.append(t.metadata.get("side") or {})
    n = len(pairs)
    fails = dict(Counter(failures))
    if not n:
        return TwinCard(0, (0.0, 0.0), 0.0, (0.0, 0.0), 0.0, tuple((0.0, 0.0) for _ in range(9)), failures=fails)
    dig = [(answer_digits(a), answer_digits(b)) for a, b in pairs]
    lead = [(_leading(a), _leading(b)) for a, b in pairs]
    share = tuple((sum(x[0] == d for x in lead) / n, sum(x[1] == d for x in lead) / n) for d in range(1, 10))
    lr_mean, lr_ci = mean_ci([math.log(abs(b) / abs(a)) for a, b in pairs if a and b], 0.95)
    rnd = [(roundness(a), roundness(b)) for a, b in pairs]
    fb = [m for m in meta if m.get("fallback")]
    return TwinCard(
        n_pairs=n,
        digits_mean=(statistics.fmean(x for x, _ in dig), statistics.fmean(y for _, y in dig)),
        same_digits_share=sum(x == y for x, y in dig) / n,
        median_answer=(float(statistics.median(a for a, _ in pairs)), float(statistics.median(b for _, b in pairs))),
        larger_share=sum(b > a for a, b in pairs) / n,
        leading_digit_share=share,
        log_ratio_mean=lr_mean, log_ratio_ci=lr_ci,
        trailing_zero_rate=(_rate([x[0] for x, _ in rnd]), _rate([y[0] for _, y in rnd])),
        multiple_of_5_rate=(_rate([x[1] for x, _ in rnd]), _rate([y[1] for _, y in rnd])),
        fallback_share=len(fb) / n, failures=fails,
        fallbacks=dict(Counter(str(m.get("fallback_reason", "")).split(":", 1)[0] or "other" for m in fb)),
    )


NEUTRAL_CONTEXT = "The answer is \\boxed{"


def neutral_priors(backend: Any, answers: Sequence[str]) -> dict[str, float]:
    """Each answer's log-probability (digits then ``}``) right after :data:`NEUTRAL_CONTEXT`, raw (no template);
    NaN where the backend cannot score."""
    from zcp_core.backends.base import ScoreRequest

    uniq = sorted(set(answers))
    scored = backend.score([ScoreRequest(continuation=f"{a}}}", prompt=NEUTRAL_CONTEXT) for a in uniq])
    return {a: s.total if s.available else math.nan for a, s in zip(uniq, scored, strict=True)}


def with_neutral_prior(card: TwinCard, backend: Any, originals: Sequence[Item], twins: Sequence[Item]) -> TwinCard:
    """``card`` with the neutral prior of ``backend``: original minus twin, mean over the card's pairs (numeric
    answers) and its 90% CI."""
    by_id = {it.id: it for it in originals}
    # the card's pairs: both answers numbers (a tuple or a surd has no neutral prior comparable across pairs)
    pairs = [(by_id[t.original_id].answer, t.answer) for t in twins if t.original_id in by_id
             and answer_value(by_id[t.original_id].answer) is not None and answer_value(t.answer) is not None]
    if not pairs:
        return card
    lp = neutral_priors(backend, [x for p in pairs for x in p])
    m, ci = mean_ci([d for a, b in pairs if not math.isnan(d := lp[a] - lp[b])], 0.90)
    return replace(card, neutral_prior_diff=m, neutral_prior_ci90=ci, neutral_prior_model=str(backend.model_id))
