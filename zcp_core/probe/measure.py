"""The Zero-CoT probe: answer with the chain of thought cut away, on original and reference twins.

A model that memorised a benchmark still answers it when its reasoning is
truncated to nothing; on an isomorphically perturbed twin that advantage
disappears. This module generates the per-item records; statistics,
item flags and curves live in :mod:`zcp_core.probe.analysis`.

Prompting (``mode``):
    ``prefill`` (open weights): the chat template is rendered with
    ``thinking="off"`` (the backend closes any thinking block empty, template
    aware) and the assistant turn is prefilled with the forcing ``suffix``;
    greedy decoding from ``suffix + "{"`` (the context the gold is scored
    in), ``max_new_tokens`` (32), stopped at the ``}`` that closes the box
    (nested braces counted: ``SamplingParams.stop_at="balanced_brace"``;
    ``answer_stop`` records whether the box closed or the budget ran out).
    Under ``answer_format="number"`` (``auto`` picks it for numeric golds;
    the default is ``free``) decoding may only write number characters and
    the closing brace, so the model cannot reason inside the box
    (``SamplingParams.constraint``).
    The answer is extracted from ``suffix + "{" + completion`` with balanced
    braces, falling back to "the answer is X" / the last number of the
    completion.
    ``prompt`` (closed APIs): the user turn asks for only ``\\boxed{}`` with no
    reasoning; items without a ``\\boxed{}`` are retried up to 3 times with a
    stricter instruction (thinking off). For r > 0 the CoT prefix is quoted in
    the user turn (APIs cannot prefill), an approximation.

Truncation: for r > 0 the full CoT is generated once (capped at
``cot_tokens``), cut after ``round(r * n)`` of its tokens (``Completion.tokens``),
and the prefix plus the suffix is prefilled. r = 0 is ZCP and generates no CoT
unless ``con`` is a metric, some r > 0 or ``full_cot`` is asked for.

Logprob metrics: context = prompt + prefill + ``"{"``, continuation = the
gold answer. The closing ``}`` is not scored (the paper's "gold answer
tokens"). ``p_first = exp(lp[0])``, ``p_all = exp(mean(lp))``. In prefill
mode the scoring and the answer generation are one batched
``generate_and_score`` call per arm, so a backend that can shares one
prefill of the prompt between them (same values as separate calls); in
prompt mode they are separate calls. Backends without logprobs give NaN with
the reason in ``logprob_reason`` (never 0).

The ``records`` columns are documented in :mod:`zcp_core.probe.config`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Sequence

from zcp_core.probe.calibrate import calibrate_rows, net_rows
from zcp_core.probe.config import (
    LOGIT_METRICS,
    MAX_RETRIES,
    PROMPT_INSTRUCTIONS,
    RECORD_COLUMNS,
    ProbeConfig,
)

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.backends import Completion
    from zcp_core.schema import Item

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
    from zcp_core.backends import GenerateRequest, SamplingParams, chat

    params = SamplingParams(max_new_tokens=config.cot_tokens, seed=config.seed)
    reqs = [GenerateRequest(messages=chat(_user_text(it, config)), params=params, thinking="off", logprobs=True)
            for it in items]
    outs = backend.generate(reqs, progress=True)
    return [_Cot(c.text, c.n_tokens, c.finish_reason == "length" and c.n_tokens >= config.cot_tokens, c.tokens)
            for c in outs]


_PLAIN_NUMBER = r"-?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?"


def resolve_answer_format(config: ProbeConfig, backend: Any, items: Sequence[Item]) -> str:
    """``free`` or ``number``: ``config.answer_format`` with ``auto`` decided (see :class:`ProbeConfig`).

    Raises:
        ValueError: ``number`` asked for in prompt mode or on a backend that cannot constrain decoding.
    """
    import re

    can = config.mode == "prefill" and bool(getattr(backend, "supports_constraints", False))
    if config.answer_format == "number" and not can:
        raise ValueError("answer_format='number' needs prefill mode on a backend that can constrain decoding "
                         "(transformers, vLLM, zcp serve); use answer_format='free' (--answer-format free)")
    if config.answer_format != "auto":
        return config.answer_format
    numeric = bool(items) and all(re.fullmatch(_PLAIN_NUMBER, it.answer.strip()) and it.answer.strip() not in
                                  ("", "-") for it in items)
    return "number" if can and numeric else "free"


def _prefill_requests(items: Sequence[Item], prefixes: Sequence[str], config: ProbeConfig) -> list[Any]:
    from zcp_core.answers import numeric_gold
    from zcp_core.backends import GenerateRequest, SamplingParams, chat

    def params(gold: str) -> SamplingParams:
        # A numeric gold's box stops once it opens with a word: no continuation could be graded (see opening).
        return SamplingParams(max_new_tokens=config.max_new_tokens, seed=config.seed,
                              stop_at="numeric_box" if numeric_gold(gold) else "balanced_brace",
                              constraint="number" if config.answer_format == "number" else "none")

    return [GenerateRequest(messages=chat(_user_text(it, config)), prefill=pre + config.suffix + "{",
                            params=params(it.answer), thinking="off") for it, pre in zip(items, prefixes)]


def _prefill_answers(backend: Any, items: Sequence[Item], prefixes: Sequence[str],
                     config: ProbeConfig) -> tuple[list[Completion], list[Any]]:
    """Prefill-mode answers and gold logprobs, from one generate-and-score call when both are wanted."""
    from zcp_core.backends import GenerateScoreRequest, generate_and_score

    gens = _prefill_requests(items, prefixes, config)
    if not _wants_logprobs(config) or not backend.supports_logprobs:
        return backend.generate(gens, progress=True), _score(backend, items, prefixes, config)
    both = generate_and_score(backend, [GenerateScoreRequest(g, s) for g, s in
                                        zip(gens, _score_requests(items, prefixes, config))], progress=True)
    return [b.completion for b in both], [b.logprobs for b in both]


def _prompt_user(item: Item, prefix: str, attempt: int) -> str:
    text = item.question
    if prefix:
        text += f"\n\nPartial reasoning so far:\n{prefix}\n"
    return f"{text}\n\n{PROMPT_INSTRUCTIONS[min(attempt, len(PROMPT_INSTRUCTIONS) - 1)]}"


def _prompt_generate(backend: Any, items: Sequence[Item], prefixes: Sequence[str],
                     config: ProbeConfig) -> tuple[list[Completion], list[int], list[int]]:
    """Closed-API zero-CoT: ask for only ``\\boxed{}``; retry items without one, stricter each time."""
    from zcp_core.answers import last_boxed
    from zcp_core.backends import GenerateRequest, SamplingParams, chat

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

    # The prefilled "\boxed{" is joined back on so the completion's "...}" parses with balanced braces.
    boxed = last_boxed(config.suffix + "{" + completion) if config.mode == "prefill" else last_boxed(completion)
    if boxed:
        return boxed, "boxed"
    # A zero-CoT completion is short and capped, so its last number is still the model's answer attempt.
    ex = extract_answer(completion, "lenient")
    return ex.answer, ex.source


def grade_zero_cot(completion: str, gold: str, config: ProbeConfig) -> tuple[str | None, str, str, bool]:
    """A zero-CoT answer read and graded: ``(pred, source, grade_status, correct)``.

    In prefill mode a box the model never closed is ``unclosed`` and not graded: what it wrote is prose, and the
    last number in it is no answer. A box that opens with a word or a derivation where a numeric gold's number
    should be (``\\text{Janet's ducks lay 16}``, ``\\begin{align*}``) is ``not_a_number``, closed or not: decoding
    stops there (:mod:`zcp_core.backends.opening`), so stopping early never changes a grade. An empty completion
    is still wrong (``no_answer``).
    """
    from zcp_core.answers import grade, numeric_gold
    from zcp_core.backends import box_opening

    pred, source = _extract(completion, config)
    if source == "boxed" and pred is not None and numeric_gold(gold) and box_opening(pred) == "word":
        return pred, source, "not_a_number", False
    g = grade(pred, gold)
    if config.mode == "prefill" and source != "boxed" and completion.strip():
        return pred, source, "unclosed", False
    return pred, source, str(g.status), g.correct


def _wants_logprobs(config: ProbeConfig) -> bool:
    return any(m in config.metrics for m in LOGIT_METRICS)


def _score_requests(items: Sequence[Item], prefixes: Sequence[str], config: ProbeConfig) -> list[Any]:
    from zcp_core.backends import ScoreRequest, chat

    return [ScoreRequest(continuation=it.answer.strip(), messages=chat(_user_text(it, config)),
                         prefill=pre + config.suffix + "{", thinking="off") for it, pre in zip(items, prefixes)]


def _p_values(tl: Any) -> tuple[float, float, str]:
    """(p_first, p_all, reason) from a row's gold logprobs (``None``: not measured)."""
    if tl is None:
        return (math.nan, math.nan, "not measured")
    if not tl.available or not tl.logprobs:
        return (math.nan, math.nan, tl.reason or "unavailable")
    return (math.exp(tl.logprobs[0]), math.exp(tl.mean), "")


def _score(backend: Any, items: Sequence[Item], prefixes: Sequence[str], config: ProbeConfig) -> list[Any]:
    """The gold's token logprobs per request, from one batched score call (``None`` when not measured)."""
    from zcp_core.backends import TokenLogprobs

    if not _wants_logprobs(config):
        return [None] * len(items)
    if not backend.supports_logprobs:
        return [TokenLogprobs((), (), available=False, reason="unavailable")] * len(items)
    return list(backend.score(_score_requests(items, prefixes, config), progress=True))


def _answer_stop(c: Completion) -> str:
    """``closed`` (the completion ends at the ``}`` closing its box), ``word`` (the box opened with a word where a
    number should be), ``budget`` or ``eos``."""
    from zcp_core.backends import balanced_close

    # The prefill ends in "\boxed{", so the box is the group open at depth 1.
    if c.text and balanced_close(c.text, 1) == len(c.text):
        return "closed"
    if c.stop_reason == "word":
        return "word"
    return "budget" if c.finish_reason == "length" else "eos"


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
    if config.answer_format == "auto":
        # run_probe decides once over every arm; a direct call decides over its own items.
        config = replace(config, answer_format=resolve_answer_format(config, backend, items))  # type: ignore[arg-type]
    cots = _generate_cots(backend, items, config) if config.needs_cot and items else [None] * len(items)
    rows_items = [(it, cot, r) for it, cot in zip(items, cots) for r in config.ratios]
    flat_items = [it for it, _, _ in rows_items]
    prefixes = [cot_prefix(cot, r) if cot is not None else "" for _, cot, r in rows_items]
    if config.mode == "prefill":
        outs, lps = _prefill_answers(backend, flat_items, prefixes, config) if flat_items else ([], [])
        attempts, spent = [1] * len(outs), [c.n_tokens for c in outs]
    else:
        outs, attempts, spent = _prompt_generate(backend, flat_items, prefixes, config)
        lps = _score(backend, flat_items, prefixes, config) if flat_items else []
    scores = [_p_values(tl) for tl in lps]
    ratios = [r for _, _, r in rows_items]
    cal = (calibrate_rows(backend, flat_items, ratios, lps, config) if config.calibrated and flat_items
           else [(math.nan, math.nan, "not measured")] * len(flat_items))
    net = (net_rows(backend, flat_items, ratios, lps) if any(m.endswith("_net") for m in config.metrics)
           and flat_items else [(math.nan, math.nan, "not measured")] * len(flat_items))
    cot_ans = {}
    for it, cot in zip(items, cots):
        if cot is not None:
            # Only a \boxed{} or an explicit final-answer phrase: a capped CoT's last number is mid-calculation.
            ans = extract_answer(cot.text, "final").answer
            cot_ans[it.id] = (ans, grade(ans, it.answer).correct)
    rows = []
    for (it, cot, r), c, att, sp, (p1, pa, why), (c1, ca_, cwhy), (n1, na, nwhy) in zip(
            rows_items, outs, attempts, spent, scores, cal, net):
        pred, source, status, correct = grade_zero_cot(c.text, it.answer, config)
        ca, cc = cot_ans.get(it.id, (None, None))
        con = None
        if "con" in config.metrics and cot is not None:
            # Inconsistent (False) when the zero-CoT answer fails to parse or the CoT states no final answer.
            con = ca is not None and grade(pred, ca).correct
        rows.append({
            "arm": arm, "id": it.id, "pair_id": it.original_id or it.id, "ratio": r, "question": it.question,
            "gold": it.answer, "completion": c.text, "pred": pred, "pred_source": source if pred else "none",
            "grade_status": status, "acc": correct, "con": con,
            "p_first": p1 if "p_first" in config.metrics else math.nan,
            "p_all": pa if "p_all" in config.metrics else math.nan, "logprob_reason": why,
            "p_first_cal": c1 if "p_first_cal" in config.metrics else math.nan,
            "p_all_cal": ca_ if "p_all_cal" in config.metrics else math.nan,
            "p_first_net": n1 if "p_first_net" in config.metrics else math.nan,
            "p_all_net": na if "p_all_net" in config.metrics else math.nan,
            # one reason column for both corrections: the calibration's, else the net form's
            "calibration_reason": cwhy or (nwhy if any(m.endswith("_net") for m in config.metrics) else ""),
            "answer_tokens": sp, "answer_stop": _answer_stop(c), "attempts": att,
            "cot_text": cot.text if cot else None, "cot_tokens": cot.n_tokens if cot else None,
            "cot_cap": config.cot_tokens if cot else None, "cot_capped": cot.capped if cot else None,
            "cot_answer": ca, "cot_correct": cc,
            # which of an item's K twins this is (``metadata["twin"]``, 1..K); none for other arms
            "twin": int(it.metadata.get("twin") or 1) if arm == "reference" else None,
        })
    df = pd.DataFrame(rows, columns=list(RECORD_COLUMNS))
    for col, dtype in (("con", "boolean"), ("cot_capped", "boolean"), ("cot_correct", "boolean"),
                       ("cot_tokens", "Int64"), ("cot_cap", "Int64"), ("twin", "Int64"), ("acc", bool),
                       ("p_first", float), ("p_all", float), ("p_first_cal", float), ("p_all_cal", float),
                       ("p_first_net", float), ("p_all_net", float),
                       ("ratio", float)):
        df[col] = df[col].astype(dtype)
    return df
