"""Answer-prior calibration of the probe's logit metrics (``p_first_cal``, ``p_all_cal``).

Why: a twin's answer can be a priori less probable than its original's
(larger, less round numbers), and a model then gives the original's gold a
higher P_all without having seen it. Over the whole GSM8K test set the
untouched embedded model reads P_all C = 0.795 that way. Calibration
subtracts each answer's own prior: the log-probability of the same gold
string, in the same context, after the question with its numbers masked.

For the pair (original, twin) the masked questions are (nearly) the same
text, so the prior term differs only in the answer string: what is left is
how much the *numbers of the question* raise the gold, which is what
memorisation raises and an answer's roundness does not.

Values are log-ratios in nats (0: the question's numbers add nothing):

* ``p_first_cal = log p(gold[0] | question) - log p(gold[0] | masked question)``;
* ``p_all_cal = mean log p(gold | question) - mean log p(gold | masked question)``.

Both contexts end in the same prefill (``...\\boxed{``), so the gold is cut
into the same tokens and the two sums run over the same tokens. Only r = 0
rows are calibrated (they carry every confidence test); r > 0 rows hold NaN
with the reason, because a chain of thought restates the masked numbers.
Costs one more prefill per item (a batched ``score`` call, cached like any other).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal, Mapping, Sequence, get_args

if TYPE_CHECKING:
    from zcp_core.probe.config import ProbeConfig
    from zcp_core.probe.prior import NeutralPrior
    from zcp_core.schema import Item

#: What every number in the question becomes in the prior's context.
MASK = "N"
#: Calibrated metric -> the raw metric it calibrates.
CALIBRATED = {"p_first_cal": "p_first", "p_all_cal": "p_all"}
#: Metric net of the neutral prior -> the raw metric it corrects (measured with calibration; see :func:`net_rows`).
NET = {"p_first_net": "p_first", "p_all_net": "p_all"}
#: Every corrected form -> its raw metric.
CORRECTED = {**CALIBRATED, **NET}
NOT_ZERO_COT = "calibrated at r = 0 only (a chain of thought restates the masked numbers)"


def mask_numbers(text: str, mask: str = MASK) -> str:
    """``text`` with every number (digits, number words, written fractions) replaced by ``mask``.

    Example: ``"Janet's ducks lay 16 eggs; she eats three"`` -> ``"Janet's ducks lay N eggs; she eats N"``.
    """
    from zcp_core.reference import find_numbers

    out, last = [], 0
    for tok in find_numbers(text):
        out += [text[last:tok.start], mask]
        last = tok.end
    return "".join(out) + text[last:]


def prior_values(gold_lps: Sequence[float], prior_lps: Sequence[float]) -> tuple[float, float]:
    """(``p_first_cal``, ``p_all_cal``) from the gold's token logprobs after the question and after the mask.

    NaN when either side is empty or their token counts differ (the two contexts cut the gold differently).
    """
    if not gold_lps or not prior_lps or len(gold_lps) != len(prior_lps):
        return (math.nan, math.nan)
    first = gold_lps[0] - prior_lps[0]
    return (first, sum(gold_lps) / len(gold_lps) - sum(prior_lps) / len(prior_lps))


def calibration_requests(items: Sequence[Item], prefill: str, config: ProbeConfig) -> list[Any]:
    """One score request per item: its gold after its masked question, in the probe's own prefill."""
    from zcp_core.backends import ScoreRequest, chat

    def user(it: Item) -> str:
        q = mask_numbers(it.question)
        return f"{q}\n{config.instruction}" if config.instruction else q

    return [ScoreRequest(continuation=it.answer.strip(), messages=chat(user(it)), prefill=prefill, thinking="off")
            for it in items]


def _zero_cot_rows(backend: Any, ratios: Sequence[float]) -> tuple[list[tuple[float, float, str]], list[int]]:
    """The rows a corrected metric is measured on (r = 0) and the default triple of every row: NaN with the reason
    (not at r = 0; ``unavailable`` for every row when r = 0 rows exist and the backend gives no logprobs, and then no
    rows)."""
    rows = [i for i, r in enumerate(ratios) if r == 0.0]
    if rows and not backend.supports_logprobs:
        return [(math.nan, math.nan, "unavailable")] * len(ratios), []
    return [(math.nan, math.nan, NOT_ZERO_COT)] * len(ratios), rows


def calibrate_rows(backend: Any, items: Sequence[Item], ratios: Sequence[float], gold_lps: Sequence[Any],
                   config: ProbeConfig) -> list[tuple[float, float, str]]:
    """(``p_first_cal``, ``p_all_cal``, reason) per row; one batched score call over the r = 0 rows.

    Args:
        backend: The probed model (it must give logprobs).
        items: Each row's item.
        ratios: Each row's truncation ratio.
        gold_lps: Each row's gold token logprobs after the real question (``TokenLogprobs`` or ``None``).
        config: The probe config (its ``suffix`` and ``instruction`` build the prior's context).

    Returns:
        One triple per row; the reason is ``""`` when calibrated.
    """
    out, rows = _zero_cot_rows(backend, ratios)
    if not rows:
        return out
    priors = backend.score(calibration_requests([items[i] for i in rows], config.suffix + "{", config), progress=True)
    for i, pr in zip(rows, priors):
        lp = gold_lps[i]
        if lp is None or not lp.available or not pr.available:
            out[i] = (math.nan, math.nan, (pr.reason if not pr.available else "") or "unavailable")
            continue
        first, mean = prior_values(list(lp.logprobs), list(pr.logprobs))
        out[i] = (first, mean, "" if not math.isnan(mean) else "the masked context cut the gold into other tokens")
    return out


def neutral_values(backend: Any, golds: Sequence[str]) -> dict[str, tuple[float, float]]:
    """Each gold's (first-token, mean per-token) log-probability right after the question-free context
    ``The answer is \\boxed{`` (:data:`~zcp_core.reference.card.NEUTRAL_CONTEXT`), raw; NaN where the backend
    cannot score. One batched call over the distinct golds."""
    from zcp_core.backends import ScoreRequest
    from zcp_core.reference.card import NEUTRAL_CONTEXT

    uniq = sorted(set(golds))
    scored = backend.score([ScoreRequest(continuation=g, prompt=NEUTRAL_CONTEXT) for g in uniq]) if uniq else []
    return {g: ((s.logprobs[0], s.mean) if s.available and s.logprobs else (math.nan, math.nan))
            for g, s in zip(uniq, scored, strict=True)}


def net_rows(backend: Any, items: Sequence[Item], ratios: Sequence[float], gold_lps: Sequence[Any]
             ) -> list[tuple[float, float, str]]:
    """(``p_first_net``, ``p_all_net``, reason) per row: the gold's log P_first and mean log P_all after the
    question, minus the same after the neutral context.

    Why: calibration's masked question keeps the question's words, so a model that memorised the answer keyed to
    them recalls it in both contexts and the difference cancels it (on MATH-500's probe-format lab build, P_all's
    AUROC fell from 0.935 to 0.572). The neutral context holds no question: what it takes out is how likely the
    answer string is a priori, which is what unbalanced twins differ in (``lab_math500.md``). Each side is a
    per-token mean over its own tokens, so the two contexts need not cut the gold alike. r = 0 rows only.
    """
    out, rows = _zero_cot_rows(backend, ratios)
    if not rows:
        return out
    neutral = neutral_values(backend, [items[i].answer.strip() for i in rows])
    for i in rows:
        lp = gold_lps[i]
        first, mean = neutral[items[i].answer.strip()]
        if lp is None or not lp.available or not lp.logprobs or math.isnan(mean):
            out[i] = (math.nan, math.nan, "unavailable")
            continue
        out[i] = (lp.logprobs[0] - first, sum(lp.logprobs) / len(lp.logprobs) - mean, "")
    return out


#: ``--calibrate``: ``auto`` (on where the twins' answers are a priori less, or more, likely), ``on`` or ``off``.
CalibrateMode = Literal["auto", "on", "off"]
CALIBRATE_MODES: tuple[str, ...] = get_args(CalibrateMode)
#: The balance band on the neutral prior (nats): beyond it, either way, the raw P metrics lean on a clean model
#: (MATH-500 template twins before they were balanced at the source: +0.105 nats, and the untouched model's raw
#: P_all null rejected at Holm 0.032).
PRIOR_BAND = 0.05
#: Why calibration is on or off, as the report words it (``basis`` of :class:`CalibrationChoice`).
CalibrationBasis = Literal["asked", "declined", "no_logit_metric", "prior_outside_band", "prior_in_band",
                           "template_twins", "numeric_twins", "unknown_balance"]
BASES: tuple[str, ...] = get_args(CalibrationBasis)


@dataclass(frozen=True)
class CalibrationChoice:
    """Whether a probe measures the calibrated metrics, and why.

    Attributes:
        mode: The ``--calibrate`` mode asked for.
        on: Whether the corrected forms (``p_*_net``, ``p_*_cal``) are measured (the headline then reads
            ``p_all_net``).
        basis: One of :data:`BASES`: the user asked (``on``, or a calibrated metric in ``--metrics``) or
            declined (``off``); under ``auto``: no P metric to calibrate; numeric twins (whose generator's balance
            is shown at scale: off); template twins (on, as measured on MATH-500); for other twins, the audited
            model's neutral prior of the run's own pairs beyond the band or within it (the same threshold both
            ways), or, with too few pairs for it, unknown balance (off; the report suggests ``--calibrate on``).
        neutral_prior_diff: The audited model's neutral prior, original minus twin (nats, pooled), when it was
            scored over enough pairs.
        prior_model: The model that scored it.
    """

    mode: CalibrateMode
    on: bool
    basis: CalibrationBasis
    neutral_prior_diff: float | None = None
    prior_model: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (the run summary's ``calibration``)."""
        return asdict(self)


def needs_prior(metrics: Sequence[str], twins: Sequence[Item]) -> bool:
    """Whether a probe scores its neutral prior: a P metric is measured and the twins are not all numeric (the one
    generator whose balance is shown at scale). :func:`choose_calibration` reads it under ``auto``; the report
    shows it under every mode."""
    return any(m in metrics for m in (*CORRECTED, *CALIBRATED.values())) and not _all_numeric(twins)


def choose_calibration(mode: CalibrateMode, metrics: Sequence[str], twins: Sequence[Item],
                       prior: NeutralPrior | None = None) -> CalibrationChoice:
    """Decide ``--calibrate``: ``on``/``off`` as asked; ``auto`` turns it on where raw P metrics are biased.

    Args:
        mode: ``auto``, ``on`` or ``off``.
        metrics: The metrics asked for (calibration needs ``p_first`` or ``p_all``).
        twins: The reference twins (their ``metadata["method"]`` says how they were made).
        prior: The audited model's neutral prior of the run's own pairs (:func:`~zcp_core.probe.prior.neutral_prior`).
    """
    if mode not in CALIBRATE_MODES:
        raise ValueError(f"--calibrate must be one of {', '.join(CALIBRATE_MODES)}, not {mode!r}")
    if mode == "on" or any(m in CORRECTED for m in metrics):  # a corrected metric named in --metrics is asked for
        return CalibrationChoice(mode, True, "asked")
    if mode == "off":
        return CalibrationChoice(mode, False, "declined")
    if not any(m in metrics for m in CALIBRATED.values()):
        return CalibrationChoice(mode, False, "no_logit_metric")
    if _all_numeric(twins):
        # the numeric generator's balance is shown over the whole GSM8K test set (its card inside the band, its
        # null passing); a demo-sized run's own prior is noisier evidence than that
        return CalibrationChoice(mode, False, "numeric_twins")
    diff = None if prior is None or not prior.decides else float(prior.pooled.diff)  # type: ignore[arg-type]
    model = None if diff is None or prior is None else prior.model
    if any(_method(t).startswith("template") for t in twins):
        # decided by measurement (docs/methods/templates.md, lab_math500.md): on MATH-500 the untouched model's raw
        # P_all null fails even with twins balanced at the source, and P_all net of the neutral prior passes it and
        # catches both lab controls at two twin seeds, so template twins are read corrected whatever one run's
        # prior says (shown beside it)
        return CalibrationChoice(mode, True, "template_twins", diff, model)
    if diff is not None:
        # one threshold read the same way on both sides: a point estimate beyond the band turns calibration on,
        # one within it turns it off
        basis: CalibrationBasis = "prior_outside_band" if abs(diff) > PRIOR_BAND else "prior_in_band"
        return CalibrationChoice(mode, basis == "prior_outside_band", basis, diff, model)
    return CalibrationChoice(mode, False, "unknown_balance")


def _all_numeric(twins: Sequence[Item]) -> bool:
    return bool(twins) and {_method(t).split("-", 1)[0] for t in twins} == {"numeric"}


def _method(twin: Item) -> str:
    """How a twin was made (``metadata["method"]``, else its verification record's), ``""`` when unknown."""
    ver = twin.metadata.get("verification")
    return str(twin.metadata.get("method") or (ver.get("method") if isinstance(ver, Mapping) else "") or "")
