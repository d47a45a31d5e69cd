"""The neutral prior of a probe's own answers, scored by the model it audits.

Why: a twin whose answer is a priori less likely than its original's (a less round number, another form) gives
the original a higher raw P_all on a model that never saw either. ``--calibrate auto`` reads this prior to decide
whether the raw P metrics can be read. It is scored here, on the run's own originals and twins and with the
audited model, because a reference card's prior was scored by whatever model built the twins, on its own pairs.

Each answer is scored once, raw (no chat template), right after :data:`~zcp_core.reference.card.NEUTRAL_CONTEXT`
(``The answer is \\boxed{``): its log-probability, closing brace included. A pair contributes the original's minus
its twin's (nats): above 0, the twin's answer is a priori less likely. Every twin given counts, the spare too.
Numeric answers and other forms (fractions written in LaTeX, surds, tuples, expressions) are reported apart and
pooled for the decision.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from zcp_core.schema import Item

#: Pairs a prior needs before it decides anything (below it the estimate is left out, not read).
MIN_PRIOR_PAIRS = 10


@dataclass(frozen=True)
class PriorPart:
    """The neutral prior over a set of pairs.

    Attributes:
        n_pairs: Original-twin pairs.
        diff: Mean log-probability, original minus twin (nats); None without pairs.
        ci90: Its 90% t-interval; None without two pairs.
    """

    n_pairs: int
    diff: float | None
    ci90: tuple[float, float] | None


@dataclass(frozen=True)
class NeutralPrior:
    """A probe's neutral prior: every pair, numeric answers and other forms.

    Attributes:
        model: The scoring model's id (the audited model).
        pooled: Over every pair.
        numeric: Pairs whose two answers are plain numbers (``12``, ``-\\frac{3}{4}``, ``2.5``).
        other: The rest (surds, tuples, expressions, intervals).
    """

    model: str
    pooled: PriorPart
    numeric: PriorPart
    other: PriorPart

    @property
    def decides(self) -> bool:
        """Whether the pooled estimate has the pairs (:data:`MIN_PRIOR_PAIRS`) to decide on."""
        return self.pooled.diff is not None and self.pooled.n_pairs >= MIN_PRIOR_PAIRS

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (the run summary's ``neutral_prior``)."""
        return asdict(self)


def _part(diffs: Sequence[float]) -> PriorPart:
    from zcp_core.reference.card import mean_ci

    if not diffs:
        return PriorPart(0, None, None)
    m, ci = mean_ci(list(diffs), 0.90)
    return PriorPart(len(diffs), float(m), (float(ci[0]), float(ci[1])) if len(diffs) > 1 else None)


def neutral_prior(backend: Any, originals: Sequence[Item], twins: Sequence[Item]) -> NeutralPrior:
    """Score the neutral prior of every (original, twin) pair with ``backend`` (one batched ``score`` call).

    Args:
        backend: The audited model's backend.
        originals: The probe's originals.
        twins: Their twins (``original_id`` names the original).
    """
    from zcp_core.reference.card import answer_value, neutral_priors

    by_id = {it.id: it for it in originals}
    pairs = [(by_id[t.original_id].answer, t.answer) for t in twins if t.original_id in by_id]
    lp = neutral_priors(backend, [a for p in pairs for a in p]) if pairs else {}
    # a backend that cannot score (a prompt-mode API) gives NaN: such pairs are left out, never read as 0
    diffs = [(d, answer_value(a) is not None and answer_value(b) is not None) for a, b in pairs
             if not math.isnan(d := lp[a] - lp[b])]
    return NeutralPrior(str(getattr(backend, "model_id", "")), _part([d for d, _ in diffs]),
                        _part([d for d, num in diffs if num]), _part([d for d, num in diffs if not num]))
