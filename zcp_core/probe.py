"""The Zero-CoT probe: answer with the chain of thought cut away, on original and reference twins.

A model that memorised a benchmark still answers it when its reasoning is
truncated to nothing; on an isomorphically perturbed twin that advantage
disappears. This module generates the per-item records; statistics,
item flags and curves live in :mod:`zcp_core.probe_analysis`.

Prompting (``mode``):
    ``prefill`` (open weights): the chat template is rendered with
    ``thinking="off"`` (the backend closes any thinking block empty, template
    aware) and the assistant turn is prefilled with the forcing ``suffix``;
    greedy decoding, ``max_new_tokens`` (32). The completion continues after
    ``\\boxed``, so the answer is extracted from ``suffix + completion`` with
    balanced braces, falling back to "the answer is X" / the last number of
    the completion.
    ``prompt`` (closed APIs): the user turn asks for only ``\\boxed{}`` with no
    reasoning; items without a ``\\boxed{}`` are retried up to 3 times with a
    stricter instruction (thinking off). For r > 0 the CoT prefix is quoted in
    the user turn (APIs cannot prefill), an approximation.

Truncation: for r > 0 the full CoT is generated once (capped at
``cot_tokens``), cut after ``round(r * n)`` of its tokens (``Completion.tokens``),
and the prefix plus the suffix is prefilled. r = 0 is ZCP and generates no CoT
unless ``con`` is a metric, some r > 0 or ``full_cot`` is asked for.

Logprob metrics: one batched ``score`` call per arm, context = prompt +
prefill + ``"{"``, continuation = the gold answer. The closing ``}`` is not
scored (the paper's "gold answer tokens"). ``p_first = exp(lp[0])``,
``p_all = exp(mean(lp))``. Backends without logprobs give NaN with the
reason in ``logprob_reason`` (never 0).

``records`` columns (one row per arm x item x ratio):
    arm: ``original`` | ``paraphrased`` | ``reference``.
    id: Item id. pair_id: id of the original item the row belongs to.
    ratio: Truncation ratio r (0 = zero-CoT).
    question, gold: The item's question and gold answer.
    completion: Generated text after the prefill (last attempt in prompt mode).
    pred: Extracted answer (None on a parse failure). pred_source: boxed |
        answer_is | last_number | none. grade_status: ok | no_answer | parse_error.
    acc: bool, pred equals gold (a parse failure is False). con: nullable bool,
        pred equals the model's own full-CoT answer (a parse failure is False;
        NA when Con was not measured or the CoT has no extractable answer).
    p_first, p_all: float, NaN when not measured or unavailable. logprob_reason:
        ``""`` when measured, else why not.
    answer_tokens: Tokens generated for the answer (all attempts). attempts: 1..4.
    cot_text, cot_tokens, cot_cap, cot_capped, cot_answer, cot_correct: the
        full CoT (NA when none was generated), its length, cap, whether the cap
        was reached, its extracted answer and whether that is correct.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Sequence

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.backends.base import Completion
    from zcp_core.schema import Item

DEFAULT_SUFFIX = "\n\nThe final answer is:\n\\[\n\\boxed"
DEFAULT_INSTRUCTION = "Please reason step by step, and put your final answer within \\boxed{}."
PROMPT_INSTRUCTIONS = (
    "Give only the final answer in the form \\boxed{ANSWER}. Do not show any reasoning.",
    "Reply with exactly one line: \\boxed{ANSWER}. No words, no steps, no explanation.",
    "Output \\boxed{} containing the final number only, and nothing else at all.",
    "IMPORTANT: your entire reply must be \\boxed{ANSWER} and nothing more. Any other text is an error.",
)
MAX_RETRIES = 3
Metric = Literal["acc", "con", "p_first", "p_all"]
METRICS: tuple[str, ...] = ("acc", "con", "p_first", "p_all")
BINARY_METRICS = ("acc", "con")
Arm = Literal["original", "paraphrased", "reference"]
RECORD_COLUMNS = (
    "arm", "id", "pair_id", "ratio", "question", "gold", "completion", "pred", "pred_source", "grade_status",
    "acc", "con", "p_first", "p_all", "logprob_reason", "answer_tokens", "attempts",
    "cot_text", "cot_tokens", "cot_cap", "cot_capped", "cot_answer", "cot_correct",
)


@dataclass(frozen=True)
class ProbeConfig:
    """What a probe measures and how.

    Attributes:
        metrics: Subset of ``acc``, ``con``, ``p_first``, ``p_all`` (``con`` needs a full CoT).
        ratios: Truncation ratios in [0, 1]; 0 is zero-CoT.
        suffix: Forcing suffix prefilled after the (truncated) CoT.
        max_new_tokens: Answer token budget.
        cot_tokens: Full-CoT token cap.
        full_cot: Generate the full CoT even when no metric or ratio needs it.
        mode: ``prefill`` (token manipulation) or ``prompt`` (closed-API prompting).
        seed: Seed for sampling and the bootstrap.
        prior: Prior probability of contamination for C.
        n_resamples: Bootstrap resamples for continuous metrics.
        instruction: Appended to each question in the user turn (prefill mode).
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

    def __post_init__(self) -> None:
        bad = [m for m in self.metrics if m not in METRICS]
        if bad:
            raise ValueError(f"unknown metrics {bad}; choose from {METRICS}")
        if not self.ratios or any(not 0.0 <= r <= 1.0 for r in self.ratios):
            raise ValueError(f"ratios must be in [0, 1], got {self.ratios}")
        object.__setattr__(self, "ratios", tuple(sorted({float(r) for r in self.ratios})))
        if 0.0 not in self.ratios:
            # r = 0 carries every confidence test, so it is always probed.
            object.__setattr__(self, "ratios", (0.0, *self.ratios))

    @property
    def needs_cot(self) -> bool:
        """Whether a full CoT must be generated (Con, some r > 0, or asked for)."""
        return self.full_cot or "con" in self.metrics or any(r > 0 for r in self.ratios)


@dataclass(frozen=True)
class ProbeResult:
    """What :func:`run_probe` returns.

    Attributes:
        records: Per arm x item x ratio rows (columns in the module docstring).
        items: Per pair flags and evidence (see :func:`zcp_core.probe_analysis.item_flags`).
        summary: The run summary (confidence json plus counts and ``headline``).
        run_path: The run folder, when ``out`` was given.
    """

    records: pd.DataFrame
    items: pd.DataFrame
    summary: dict[str, Any]
    run_path: Path | None = None
    tables: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class _Cot:
    text: str
    n_tokens: int
    capped: bool
    tokens: tuple[str, ...] | None


def _user_text(item: Item, config: ProbeConfig) -> str:
    return f"{item.question}\n{config.instruction}" if config.instruction else item.question


def cot_prefix(cot: _Cot, ratio: float) -> str:
    """The first ``round(ratio * n)`` tokens of a CoT (characters when the backend gave no tokens)."""
    if ratio <= 0:
        return ""
    if ratio >= 1:
        return cot.text
    if cot.tokens:
        return "".join(cot.tokens[: int(round(ratio * len(cot.tokens)))])
    return cot.text[: int(round(ratio * len(cot.text)))]


def _generate_cots(backend: Any, items: Sequence[Item], config: ProbeConfig) -> list[_Cot]:
    from zcp_core.backends.base import GenerateRequest, SamplingParams, chat

    params = SamplingParams(max_new_tokens=config.cot_tokens, seed=config.seed)
    reqs = [GenerateRequest(messages=chat(_user_text(it, config)), params=params, thinking="off", logprobs=True)
            for it in items]
    outs = backend.generate(reqs, progress=True)
    return [_Cot(c.text, c.n_tokens, c.finish_reason == "length" and c.n_tokens >= config.cot_tokens, c.tokens)
            for c in outs]


def _prefill_requests(items: Sequence[Item], prefixes: Sequence[str], config: ProbeConfig) -> list[Any]:
    from zcp_core.backends.base import GenerateRequest, SamplingParams, chat

    params = SamplingParams(max_new_tokens=config.max_new_tokens, seed=config.seed)
    return [GenerateRequest(messages=chat(_user_text(it, config)), prefill=pre + config.suffix, params=params,
                            thinking="off") for it, pre in zip(items, prefixes)]


def _prompt_user(item: Item, prefix: str, attempt: int) -> str:
    text = item.question
    if prefix:
        text += f"\n\nPartial reasoning so far:\n{prefix}\n"
    return f"{text}\n\n{PROMPT_INSTRUCTIONS[min(attempt, len(PROMPT_INSTRUCTIONS) - 1)]}"


def _prompt_generate(backend: Any, items: Sequence[Item], prefixes: Sequence[str],
                     config: ProbeConfig) -> tuple[list[Completion], list[int], list[int]]:
    """Closed-API zero-CoT: ask for only ``\\boxed{}``; retry items without one, stricter each time."""
    from zcp_core.answers import last_boxed
    from zcp_core.backends.base import GenerateRequest, SamplingParams, chat

    params = SamplingParams(max_new_tokens=config.max_new_tokens, seed=config.seed)
    outs: list[Any] = [None] * len(items)
    attempts = [0] * len(items)
    spent = [0] * len(items)
    todo = list(range(len(items)))
    for attempt in range(MAX_RETRIES + 1):
        if not todo:
            break
        reqs = [GenerateRequest(messages=chat(_prompt_user(items[i], prefixes[i], attempt)), params=params,
                                thinking="off") for i in todo]
        got = backend.generate(reqs, progress=True)
        for i, c in zip(todo, got):
            outs[i], attempts[i] = c, attempt + 1
            spent[i] += c.n_tokens
        todo = [i for i in todo if last_boxed(outs[i].text) is None]
    return outs, attempts, spent


def _extract(completion: str, config: ProbeConfig) -> tuple[str | None, str]:
    from zcp_core.answers import extract_answer, last_boxed

    # The prefilled "\boxed" is joined back on so the completion's "{...}" parses with balanced braces.
    boxed = last_boxed(config.suffix + completion) if config.mode == "prefill" else last_boxed(completion)
    if boxed:
        return boxed, "boxed"
    ex = extract_answer(completion)
    return ex.answer, ex.source


def _score(backend: Any, items: Sequence[Item], prefixes: Sequence[str],
           config: ProbeConfig) -> list[tuple[float, float, str]]:
    """(p_first, p_all, reason) per request, from one batched score call."""
    from zcp_core.backends.base import ScoreRequest, chat

    if not any(m in config.metrics for m in ("p_first", "p_all")):
        return [(math.nan, math.nan, "not measured")] * len(items)
    if not backend.supports_logprobs:
        return [(math.nan, math.nan, "unavailable")] * len(items)
    reqs = [ScoreRequest(continuation=it.answer.strip(), messages=chat(_user_text(it, config)),
                         prefill=pre + config.suffix + "{", thinking="off") for it, pre in zip(items, prefixes)]
    out = []
    for tl in backend.score(reqs, progress=True):
        if not tl.available or not tl.logprobs:
            out.append((math.nan, math.nan, tl.reason or "unavailable"))
        else:
            out.append((math.exp(tl.logprobs[0]), math.exp(tl.mean), ""))
    return out


def probe_items(backend: Any, items: Sequence[Item], config: ProbeConfig, arm: str = "original") -> pd.DataFrame:
    """Probe one arm: every item at every ratio, in batched backend calls.

    Args:
        backend: Any backend (see :mod:`zcp_core.backends.base`).
        items: The arm's items; ``pair_id`` is ``original_id`` when set, else ``id``.
        config: What to measure.
        arm: ``original``, ``paraphrased`` or ``reference``.

    Returns:
        The records DataFrame (columns in the module docstring).
    """
    import pandas as pd

    from zcp_core.answers import extract_answer, grade

    items = list(items)
    cots = _generate_cots(backend, items, config) if config.needs_cot and items else [None] * len(items)
    rows_items = [(it, cot, r) for it, cot in zip(items, cots) for r in config.ratios]
    flat_items = [it for it, _, _ in rows_items]
    prefixes = [cot_prefix(cot, r) if cot is not None else "" for _, cot, r in rows_items]
    if config.mode == "prefill":
        outs = backend.generate(_prefill_requests(flat_items, prefixes, config), progress=True) if flat_items else []
        attempts, spent = [1] * len(outs), [c.n_tokens for c in outs]
    else:
        outs, attempts, spent = _prompt_generate(backend, flat_items, prefixes, config)
    scores = _score(backend, flat_items, prefixes, config) if flat_items else []
    cot_ans = {}
    for it, cot in zip(items, cots):
        if cot is not None:
            ans = extract_answer(cot.text).answer
            cot_ans[it.id] = (ans, grade(ans, it.answer).correct)
    rows = []
    for (it, cot, r), c, att, sp, (p1, pa, why) in zip(rows_items, outs, attempts, spent, scores):
        pred, source = _extract(c.text, config)
        g = grade(pred, it.answer)
        ca, cc = cot_ans.get(it.id, (None, None))
        con = None
        if "con" in config.metrics and ca is not None:
            # A zero-CoT parse failure is inconsistent (False); only a CoT without an answer leaves Con NA.
            con = grade(pred, ca).correct
        rows.append({
            "arm": arm, "id": it.id, "pair_id": it.original_id or it.id, "ratio": r, "question": it.question,
            "gold": it.answer, "completion": c.text, "pred": pred, "pred_source": source if pred else "none",
            "grade_status": g.status, "acc": g.correct, "con": con,
            "p_first": p1 if "p_first" in config.metrics else math.nan,
            "p_all": pa if "p_all" in config.metrics else math.nan, "logprob_reason": why,
            "answer_tokens": sp, "attempts": att,
            "cot_text": cot.text if cot else None, "cot_tokens": cot.n_tokens if cot else None,
            "cot_cap": config.cot_tokens if cot else None, "cot_capped": cot.capped if cot else None,
            "cot_answer": ca, "cot_correct": cc,
        })
    df = pd.DataFrame(rows, columns=list(RECORD_COLUMNS))
    for col, dtype in (("con", "boolean"), ("cot_capped", "boolean"), ("cot_correct", "boolean"),
                       ("cot_tokens", "Int64"), ("cot_cap", "Int64"), ("acc", bool),
                       ("p_first", float), ("p_all", float), ("ratio", float)):
        df[col] = df[col].astype(dtype)
    return df


def run_probe(backend: Any, original: Sequence[Item], reference: Sequence[Item], config: ProbeConfig,
              paraphrased: Sequence[Item] | None = None, out: str | Path | None = None, model_spec: str = "",
              dataset_paths: tuple[str, ...] = ()) -> ProbeResult:
    """Probe every arm, test each suspect arm against the reference, and write a run.

    Args:
        backend: The model.
        original: The benchmark items.
        reference: Twins whose ``original_id`` names an original (see ``stats.pair_items``).
        config: What to measure.
        paraphrased: Optional evasive paraphrases (``original_id`` set likewise).
        out: Run folder to write (``None`` writes nothing).
        model_spec: Model spec string for the manifest.
        dataset_paths: Input files for the manifest.

    Returns:
        A :class:`ProbeResult`.
    """
    from zcp_core.probe_run import execute

    return execute(backend, original, reference, config, paraphrased, out, model_spec, dataset_paths)


def confidence_summary(records: pd.DataFrame, config: ProbeConfig, suspect_arm: str = "original") -> dict[str, Any]:
    """The ``zcp confidence --json`` object for one suspect arm against the reference (at r = 0).

    Shape: ``{"metrics": {m: {"n", "effect", "p", "bf10", "confidence", "direction"}}, "headline":
    {"metric", "confidence", "label", "value"}}``. Unmeasured metrics carry ``None`` values and a
    ``"reason"``. The headline metric is ``p_all`` when measured and available, else ``acc``.
    """
    from zcp_core.probe_analysis import confidence_summary as _cs

    return _cs(records, config.metrics, suspect_arm=suspect_arm, prior=config.prior,
               n_resamples=config.n_resamples, seed=config.seed)


def item_gaps(records: pd.DataFrame, metric: str, suspect_arm: str = "original") -> pd.DataFrame:
    """Per-pair values at r = 0: columns ``pair_id``, ``suspect``, ``reference``, ``gap`` (suspect - reference)."""
    from zcp_core.probe_analysis import item_gaps as _ig

    return _ig(records, metric, suspect_arm=suspect_arm)
