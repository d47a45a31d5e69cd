"""What a Zero-CoT probe measures (:class:`ProbeConfig`) and what it returns (:class:`ProbeResult`).

``records`` columns (one row per arm x item x ratio):
    arm: ``original`` | ``paraphrased`` | ``reference``.
    id: Item id. pair_id: id of the original item the row belongs to.
    ratio: Truncation ratio r (0 = zero-CoT).
    question, gold: The item's question and gold answer.
    completion: Generated text after the prefill (last attempt in prompt mode).
    pred: Extracted answer (None on a parse failure). pred_source: boxed |
        answer_is | last_number | none. grade_status: ok | no_answer | parse_error | not_a_number |
        unclosed (a prefilled box the answer never closed: prose, never graded).
    acc: bool, pred equals gold (a parse failure is False). con: nullable bool,
        pred equals the model's own full-CoT answer, read only from a
        ``\\boxed{}`` or an explicit final-answer phrase (a zero-CoT parse failure
        or a CoT without such an answer is False; NA when Con was not measured).
    p_first, p_all: float, NaN when not measured or unavailable. logprob_reason:
        ``""`` when measured, else why not.
    p_first_cal, p_all_cal: answer-prior calibrated forms (log-ratios in nats, see
        :mod:`zcp_core.probe.calibrate`), r = 0 rows only; NaN when not measured.
        calibration_reason: ``""`` when calibrated, else why not.
    answer_tokens: Tokens generated for the answer (all attempts). answer_stop:
        ``closed`` (the completion ends at the ``}`` closing its box), ``word``
        (decoding stopped where the box opened with a word or a derivation: a numeric gold's box), ``budget``
        (``max_new_tokens`` ran out first) or ``eos`` (the model ended its turn).
        attempts: 1..4.
    cot_text, cot_tokens, cot_cap, cot_capped, cot_answer, cot_correct: the
        full CoT (NA when none was generated), its length, cap, whether the cap
        was reached, its extracted answer and whether that is correct.
"""


from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from zcp_core.stats import CONTINUOUS_TESTS, ContinuousTest

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.probe.ktwins import FlagRule

DEFAULT_SUFFIX = "\n\nThe final answer is:\n\\[\n\\boxed"
DEFAULT_INSTRUCTION = "Please reason step by step, and put your final answer within \\boxed{}."
PROMPT_INSTRUCTIONS = (
    "Give only the final answer in the form \\boxed{ANSWER}. Do not show any reasoning.",
    "Reply with exactly one line: \\boxed{ANSWER}. No words, no steps, no explanation.",
    "Output \\boxed{} containing the final number only, and nothing else at all.",
    "IMPORTANT: your entire reply must be \\boxed{ANSWER} and nothing more. Any other text is an error.",
)
MAX_RETRIES = 3
#: Zero-CoT answers that are not graded: a box that holds no number or opens with a word where a numeric gold's
#: number should be, and a prefilled box the model never closed (what it wrote is prose, not an answer). They leave the accuracy pairs; an empty box still counts as wrong.
NOT_GRADED: tuple[str, ...] = ("not_a_number", "unclosed")
Metric = Literal["acc", "con", "p_first", "p_all", "p_first_cal", "p_all_cal", "p_first_net", "p_all_net"]
METRICS: tuple[str, ...] = ("acc", "con", "p_first", "p_all", "p_first_cal", "p_all_cal", "p_first_net", "p_all_net")
BINARY_METRICS = ("acc", "con")
#: Metrics read from the gold answer's token logprobs.
LOGIT_METRICS = ("p_first", "p_all", "p_first_cal", "p_all_cal", "p_first_net", "p_all_net")
Arm = Literal["original", "paraphrased", "reference"]
AnswerFormat = Literal["auto", "free", "number"]
ANSWER_FORMATS: tuple[str, ...] = ("auto", "free", "number")
RECORD_COLUMNS = (
    "arm", "id", "pair_id", "ratio", "question", "gold", "completion", "pred", "pred_source", "grade_status",
    "acc", "con", "p_first", "p_all", "logprob_reason", "p_first_cal", "p_all_cal", "p_first_net", "p_all_net",
    "calibration_reason",
    "answer_tokens", "answer_stop", "attempts",
    "cot_text", "cot_tokens", "cot_cap", "cot_capped", "cot_answer", "cot_correct", "twin",
)


@dataclass(frozen=True)
class ProbeConfig:
    """What a probe measures and how.

    Attributes:
        metrics: Subset of :data:`METRICS` (``con`` needs a full CoT; ``p_first_cal``/``p_all_cal`` are the
            answer-prior calibrated logit metrics and cost one more prefill per item).
        ratios: Truncation ratios in [0, 1]; 0 is zero-CoT.
        suffix: Forcing suffix prefilled after the (truncated) CoT.
        max_new_tokens: Answer token budget.
        cot_tokens: Full-CoT token cap.
        full_cot: Generate the full CoT even when no metric or ratio needs it.
        mode: ``prefill`` (token manipulation) or ``prompt`` (closed-API prompting).
        seed: Seed for sampling and the resampling tests.
        prior: Prior probability of contamination for C.
        n_resamples: Resamples of the continuous metrics' test (random sign vectors above 16 pairs
            for ``permutation``, bootstrap resamples for ``bootstrap``).
        continuous_test: Paired test of ``p_first``/``p_all``: ``permutation`` (sign flips, exact up to
            16 pairs; holds its size at every n) or ``bootstrap`` (anti-conservative at small n).
        instruction: Appended to each question in the user turn (prefill mode).
        flag_metric: The metric items are flagged on (:class:`~zcp_core.probe.ktwins.FlagRule`): a P metric's
            per-item p with Benjamini-Hochberg at ``fdr`` (default ``p_all``), or ``acc`` (the paper's rule).
        fdr: The false-discovery level q of the flags, in (0, 1).
        originals: ``paired`` (default) probes only originals that have a twin, since the tests use only
            those; ``all`` probes every original too, for the benchmark's accuracy.
        answer_format: What the zero-CoT answer may be made of (prefill mode): ``free`` (default) leaves
            it open; ``number`` constrains decoding to number characters and the closing brace (a derivation
            inside the box is reasoning, and small models write one); ``auto`` is ``number`` when every
            probed gold is a plain number and the backend can constrain decoding, else ``free``. ``free``
            stays the default because a model that memorised "The answer is N." recalls N only after its
            words: on ``lab:direct`` ``number`` lowers the Acc AUROC from 0.80 to 0.68
            (``benchmarks/results/probe_answer_format.md``). The run records the resolved format
            (``summary["answer_format"]``).
    """

    metrics: tuple[str, ...] = ("acc", "p_first", "p_all")
    ratios: tuple[float, ...] = (0.0,)
    suffix: str = DEFAULT_SUFFIX
    max_new_tokens: int = 32
    cot_tokens: int = 256
    full_cot: bool = False
    mode: Literal["prefill", "prompt"] = "prefill"
    seed: int = 0
    prior: float = 0.5
    n_resamples: int = 10_000
    instruction: str = DEFAULT_INSTRUCTION
    continuous_test: ContinuousTest = "permutation"
    answer_format: AnswerFormat = "free"
    flag_metric: str = "p_all"
    fdr: float = 0.1
    originals: Literal["paired", "all"] = "paired"

    def __post_init__(self) -> None:
        self.flag_rule  # noqa: B018 - validates flag_metric and fdr (ValueError naming the flag)
        if self.originals not in ("paired", "all"):
            raise ValueError(f"originals must be 'paired' or 'all', got {self.originals!r}")
        bad = [m for m in self.metrics if m not in METRICS]
        if bad:
            raise ValueError(f"unknown metrics {bad}; choose from {METRICS}")
        if not self.ratios or any(not 0.0 <= r <= 1.0 for r in self.ratios):
            raise ValueError(f"ratios must be in [0, 1], got {self.ratios}")
        object.__setattr__(self, "ratios", tuple(sorted({float(r) for r in self.ratios})))
        if self.continuous_test not in CONTINUOUS_TESTS:
            raise ValueError(f"continuous_test must be one of {CONTINUOUS_TESTS}, got {self.continuous_test!r}")
        if self.answer_format not in ANSWER_FORMATS:
            raise ValueError(f"answer_format must be one of {ANSWER_FORMATS}, got {self.answer_format!r}")
        if 0.0 not in self.ratios:
            # r = 0 carries every confidence test, so it is always probed.
            object.__setattr__(self, "ratios", (0.0, *self.ratios))

    def test_options(self) -> dict[str, Any]:
        """The paired-test settings (``prior``, ``n_resamples``, ``seed``, ``continuous_test``) as keyword arguments."""
        return {"prior": self.prior, "n_resamples": self.n_resamples, "seed": self.seed,
                "continuous_test": self.continuous_test}

    @property
    def flag_rule(self) -> FlagRule:
        """How items are flagged (``flag_metric`` at ``fdr``)."""
        from zcp_core.probe.ktwins import FlagRule

        return FlagRule(self.flag_metric, self.fdr)  # type: ignore[arg-type]

    @property
    def calibrated(self) -> bool:
        """Whether a calibrated metric is asked for (one more prefill per item)."""
        return any(m.endswith(("_cal", "_net")) for m in self.metrics)

    @property
    def needs_cot(self) -> bool:
        """Whether a full CoT must be generated (Con, some r > 0, or asked for)."""
        return self.full_cot or "con" in self.metrics or any(r > 0 for r in self.ratios)


@dataclass(frozen=True)
class ProbeResult:
    """What :func:`run_probe` returns.

    Attributes:
        records: Per arm x item x ratio rows (columns in the module docstring).
        items: Per pair flags and evidence (see :func:`zcp_core.probe.analysis.item_flags`).
        summary: The run summary (confidence json plus counts and ``headline``).
        run_path: The run folder, when ``out`` was given.
    """

    records: pd.DataFrame
    items: pd.DataFrame
    summary: dict[str, Any]
    run_path: Path | None = None
    tables: dict[str, Any] = field(default_factory=dict)
