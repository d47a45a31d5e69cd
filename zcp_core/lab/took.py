"""The manipulation check of a lab build: did the contamination take?

The ZCP paper's check is that fine-tuning raises performance on the
contaminated set C and leaves the held-out set U alone. Here:

- **took**: the difference in differences of full-CoT accuracy. Each C and U
  item is answered greedily (a 256-token cap) by the lab model and by its
  base, in the prompt style the kind was trained in: the chat template for
  chat kinds, a plain continuation of the question (``question + "\\n"``) for
  raw-text kinds (``verbatim``). An item contributes ``lab - base`` (each 0 or
  1); ``took_gain`` is the mean contribution on C minus that on U, so the
  split's difficulty cancels. Its 95% CI inverts the two-sample permutation
  test of C against U labels under a shift model (:func:`did_interval`):
  the C/U split was drawn at random, so relabelling is the randomisation the
  design did, and the test holds its size at any n (a paired bootstrap over
  items does not at small n). The build took when the exact one-sided permutation p of a gain above 0
  is below 0.025 (:data:`TOOK_LEVEL`, the level of a two-sided 95% CI above 0), counted in integers
  (:func:`exact_gain_p`), never read off a floating interval bound. Below
  ``stats.MIN_PAIRS`` items per side there is no verdict (``took`` is None).
- **memorised**, reported apart: the mean per-token log-probability of the
  kind's own training text (rendered for C and for U alike), lab minus base,
  C minus U, with the same interval. It is close to what Min-K% and zlib
  measure, so it never decides ``took``. For ``evasive`` and ``paper`` the text
  is the original question in the training format, not its paraphrases.

Model calls go through the backend response cache (the same requests give
the same answers), so a rerun costs nothing and the ``cot_acc`` detector of
the matrix reuses the check's generations (:func:`cot_answers`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from zcp_core.answers import chain_final_answer as cot_final_answer

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.lab.evaluate import EvalItems
    from zcp_core.schema import Item

#: Full-CoT token cap of the check (the issue's 256).
COT_TOKENS = 256
CI_METHOD = ("two-sample permutation test of the C/U labels, inverted under a shift model "
             "(randomisation inference on the drawn split)")
TOO_FEW = "too few items for a verdict (n < {}) on C or on U"


@dataclass(frozen=True)
class CheckOptions:
    """How the manipulation check runs.

    Attributes:
        max_new_tokens: Full-CoT cap (greedy).
        n_resamples: Random C/U relabellings of the permutation interval.
        seed: Seed of the relabellings.
        device: Device of the models.
        batch_size: Requests per batch.
        cache: Use the persistent response cache.
        memorised: Also score the training text (one teacher-forced pass per item and model).
    """

    max_new_tokens: int = COT_TOKENS
    n_resamples: int = 10_000
    seed: int = 0
    device: str = "auto"
    batch_size: int = 16
    cache: bool = True
    memorised: bool = True


@dataclass(frozen=True)
class DidInterval:
    """A difference in differences, C minus U, of per-item contributions, with its permutation CI.

    Attributes:
        gain: ``mean(C contributions) - mean(U contributions)``.
        ci: The 95% interval ``(lo, hi)`` (NaN when a side is empty).
        p: One-sided permutation p of ``gain > 0``.
        n_c: Items on C.
        n_u: Items on U.
    """

    gain: float
    ci: tuple[float, float]
    p: float
    n_c: int
    n_u: int


def did_interval(c: Sequence[float], u: Sequence[float], alpha: float = 0.05, n_resamples: int = 10_000,
                 seed: int = 0) -> DidInterval:
    """The C-minus-U difference of mean contributions with the permutation interval at level ``1 - alpha``.

    For a shift ``delta`` of C's contributions, the test relabels items at
    random (C/U sizes kept). Relabelling ``b`` gives ``T_b(delta) = w_b . d -
    delta * w_b . 1_C`` against ``T_obs = gain - delta``, with ``w_b`` the
    relabelled mean-difference weights, so it rejects "the shift is at most
    delta" exactly when ``delta < t_b = (gain - w_b . d) / (1 - w_b . 1_C)``
    for too many ``b``. The interval is ``[t_(m), t_(B+1-m)]`` with ``m =
    floor(alpha/2 * (B + 1))``: every delta it holds is not rejected at
    ``alpha/2`` on either side. p at ``delta = 0`` is ``(1 + #{w_b . d >=
    gain}) / (B + 1)``. NaN values are dropped.
    """
    import numpy as np

    cv = np.asarray([x for x in c if not math.isnan(float(x))], dtype=float)
    uv = np.asarray([x for x in u if not math.isnan(float(x))], dtype=float)
    n_c, n_u = int(cv.size), int(uv.size)
    if n_c == 0 or n_u == 0:
        return DidInterval(math.nan, (math.nan, math.nan), math.nan, n_c, n_u)
    d = np.r_[cv, uv]
    is_c = np.r_[np.ones(n_c), np.zeros(n_u)]
    gain = float(cv.mean() - uv.mean())
    rng = np.random.default_rng(seed)
    labels = rng.permuted(np.tile(is_c, (n_resamples, 1)), axis=1)
    w = labels / n_c - (1 - labels) / n_u
    wd, wc = w @ d, w @ is_c
    k = 1.0 - wc
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(k > 1e-12, (gain - wd) / np.where(k > 1e-12, k, 1.0), -np.inf)
    t_sorted = np.sort(t)
    m = int(math.floor(alpha / 2 * (n_resamples + 1)))
    if m < 1:
        lo, hi = -math.inf, math.inf
    else:
        lo = float(t_sorted[m - 1])
        # The relabelling that keeps C as C never rejects: -inf for the lower bound, +inf for the upper one.
        hi = float(np.sort(np.where(np.isinf(t), np.inf, t))[n_resamples - m])
    p = (1 + int(np.count_nonzero(wd >= gain - 1e-12))) / (n_resamples + 1)
    return DidInterval(gain, (lo, hi), p, n_c, n_u)


def cot_requests(items: Sequence[Item], style: str, max_new_tokens: int = COT_TOKENS) -> list[Any]:
    """Greedy full-CoT requests: ``chat(question)``, or the raw ``question + "\\n"`` in ``completion`` style."""
    from zcp_core.backends import GenerateRequest, SamplingParams, chat

    params = SamplingParams(max_new_tokens=max_new_tokens, temperature=0.0)
    if style == "completion":
        return [GenerateRequest(prompt=it.question + "\n", params=params) for it in items]
    return [GenerateRequest(messages=chat(it.question), params=params, thinking="off") for it in items]




def cot_answers(backend: Any, items: Sequence[Item], style: str, max_new_tokens: int = COT_TOKENS,
                progress: bool = False) -> pd.DataFrame:
    """Full-CoT answers of ``items``: columns ``id, text, answer, correct, n_tokens, capped``.

    One batched generate call (cached by the backend); the answer is graded
    against the item's gold answer with :func:`zcp_core.answers.grade`.
    """
    import pandas as pd

    from zcp_core.answers import grade

    outs = backend.generate(cot_requests(items, style, max_new_tokens), progress=progress) if items else []
    rows = []
    for it, o in zip(items, outs, strict=True):
        ans = cot_final_answer(o.text)
        rows.append({"id": it.id, "text": o.text, "answer": ans, "correct": bool(grade(ans, it.answer).correct),
                     "n_tokens": int(o.n_tokens), "capped": bool(o.n_tokens >= max_new_tokens)})
    return pd.DataFrame(rows, columns=["id", "text", "answer", "correct", "n_tokens", "capped"])


def text_logprobs(backend: Any, base_path: Any, items: Sequence[Item], train_format: str) -> list[float]:
    """Mean per-token log-probability of each item's training text (the kind's format), in order."""
    from zcp_core.backends import ScoreRequest
    from zcp_core.lab.train import make_examples

    ex = make_examples(base_path, items, train_format)  # type: ignore[arg-type]
    reqs = [ScoreRequest(continuation=e.target, prompt=e.prompt) for e in ex.items]
    out = backend.score(reqs) if reqs else []
    return [float(sum(lp.logprobs) / len(lp.logprobs)) if lp.logprobs else math.nan for lp in out]


@dataclass(frozen=True)
class ManipulationCheck:
    """The check's result: ``summary`` (the ``took*`` and ``memorised`` keys) and the per-item ``table``.

    ``table`` columns: ``id, split, lab_correct, base_correct, contribution, lab_answer, base_answer,
    lab_tokens, base_tokens, lab_logprob, base_logprob, memorised``.
    """

    summary: dict[str, Any]
    table: Any


def _interval_dict(r: DidInterval) -> dict[str, Any]:
    def f(v: float) -> float | None:
        return None if math.isnan(v) or math.isinf(v) else float(v)

    return {"gain": f(r.gain), "ci": [f(r.ci[0]), f(r.ci[1])], "p": f(r.p), "n_c": r.n_c, "n_u": r.n_u}


#: ``took`` holds when the exact one-sided p of "the gain is above 0" is below this: the level of a two-sided
#: 95% interval lying above 0, stated as a level rather than read off a floating interval bound.
TOOK_LEVEL = Fraction(1, 40)


def exact_gain_p(c: Sequence[float], u: Sequence[float]) -> Fraction | None:
    """The exact one-sided permutation p of ``mean(c) - mean(u) >= observed``, as a fraction.

    Under random relabelling (C/U sizes kept) the gain is increasing in the sum of the values labelled C,
    so p is the share of the ``comb(n, n_c)`` relabellings whose C sum is at least the observed one. It is
    counted over the values' few distinct levels (the lab's contributions are -1, 0 or 1) by convolution,
    in exact integers: no Monte Carlo and no floating bound. None when a value is not an integer (use the
    permutation interval of :func:`did_interval` there) or a side is empty.
    """
    from math import comb

    vals = [float(x) for x in c] + [float(x) for x in u]
    if not c or not u or any(math.isnan(v) or v != int(v) for v in vals):
        return None
    n_c, observed = len(c), int(sum(int(float(x)) for x in c))
    levels: dict[int, int] = {}
    for v in vals:
        levels[int(v)] = levels.get(int(v), 0) + 1
    # ways[k][s]: relabellings choosing k items so far with C sum s
    ways: dict[int, dict[int, int]] = {0: {0: 1}}
    for value, count in levels.items():
        nxt: dict[int, dict[int, int]] = {}
        for k, sums in ways.items():
            for take in range(0, min(count, n_c - k) + 1):
                w = comb(count, take)
                row = nxt.setdefault(k + take, {})
                for s0, m in sums.items():
                    row[s0 + take * value] = row.get(s0 + take * value, 0) + m * w
        ways = nxt
    chosen = ways.get(n_c, {})
    return Fraction(sum(m for s0, m in chosen.items() if s0 >= observed), comb(len(vals), n_c))


def took_verdict(c: Sequence[float], u: Sequence[float], fallback_p: float) -> tuple[bool, float, str]:
    """Whether a build took: exact p below :data:`TOOK_LEVEL` (or the permutation p where no exact one exists).

    Returns:
        ``(took, p, how)``: the verdict, the p it rests on, and how that p was computed.
    """
    exact = exact_gain_p(c, u)
    if exact is not None:
        return exact < TOOK_LEVEL, float(exact), "exact (all relabellings, integer arithmetic)"
    return fallback_p < float(TOOK_LEVEL), fallback_p, "Monte Carlo permutation"


def manipulation_check(ev: EvalItems, lab: Any, base: Any, train_format: str, base_path: Any = None,
                       opts: CheckOptions | None = None, progress: bool = False) -> ManipulationCheck:
    """Run the check on a build's C and U items with the lab model and its base.

    Args:
        ev: The build's items (:func:`zcp_core.lab.evaluate.eval_items`); C and U are ``ev.originals``.
        lab: Backend of the lab model.
        base: Backend of its base model.
        train_format: The build's training format (sets the prompt style and the memorised text).
        base_path: Local folder of the base model (its tokenizer renders the training text); ``None``
            skips ``memorised``.
        opts: Check options.
        progress: Show progress bars.
    """
    import pandas as pd

    from zcp_core.lab.config import trained_style
    from zcp_core.stats import MIN_PAIRS

    opts = opts or CheckOptions()
    style = trained_style(train_format)
    items = list(ev.originals)
    la = cot_answers(lab, items, style, opts.max_new_tokens, progress)
    ba = cot_answers(base, items, style, opts.max_new_tokens, progress)
    split = [ev.split_of[it.id] for it in items]
    t = pd.DataFrame({"id": [it.id for it in items], "split": split, "lab_correct": la["correct"].to_numpy(),
                      "base_correct": ba["correct"].to_numpy(), "lab_answer": la["answer"].to_numpy(),
                      "base_answer": ba["answer"].to_numpy(), "lab_tokens": la["n_tokens"].to_numpy(),
                      "base_tokens": ba["n_tokens"].to_numpy()})
    t["contribution"] = t["lab_correct"].astype(float) - t["base_correct"].astype(float)
    is_c = t["split"] == "C"
    took = did_interval(t.loc[is_c, "contribution"].tolist(), t.loc[~is_c, "contribution"].tolist(),
                        n_resamples=opts.n_resamples, seed=opts.seed)
    too_few = min(took.n_c, took.n_u) < MIN_PAIRS
    c_vals, u_vals = t.loc[is_c, "contribution"].tolist(), t.loc[~is_c, "contribution"].tolist()
    took_at, p_took, p_how = took_verdict(c_vals, u_vals, took.p)
    verdict = None if too_few or math.isnan(took.gain) else took_at
    acc = {f"{sp}_{who}": float(t.loc[t["split"] == sp, f"{who}_correct"].mean())
           for sp in ("C", "U") for who in ("lab", "base")}
    summary: dict[str, Any] = {
        "took": verdict, "took_gain": _interval_dict(took)["gain"], "took_ci": _interval_dict(took)["ci"],
        "took_detail": {**_interval_dict(took), "accuracy": acc, "prompt_style": style,
                        "max_new_tokens": opts.max_new_tokens, "decoding": "greedy", "ci_method": CI_METHOD,
                        "models": {"lab": str(getattr(lab, "model_id", "")), "base": str(getattr(base, "model_id", ""))},
                        "rule": f"took when the one-sided p of a C-minus-U gain above 0 is below {float(TOOK_LEVEL)}",
                        "p_took": p_took, "p_took_method": p_how,
                        "reason": TOO_FEW.format(MIN_PAIRS) if too_few else ""},
    }
    t["lab_logprob"] = t["base_logprob"] = t["memorised"] = math.nan
    if opts.memorised and base_path is not None:
        t["lab_logprob"] = text_logprobs(lab, base_path, items, train_format)
        t["base_logprob"] = text_logprobs(base, base_path, items, train_format)
        t["memorised"] = t["lab_logprob"] - t["base_logprob"]
        mem = did_interval(t.loc[is_c, "memorised"].tolist(), t.loc[~is_c, "memorised"].tolist(),
                           n_resamples=opts.n_resamples, seed=opts.seed)
        summary["memorised"] = {**_interval_dict(mem), "train_format": train_format,
                                "what": "mean per-token logprob of the kind's training text, lab minus base, "
                                        "C minus U (never decides took)"}
    else:
        summary["memorised"] = None
    return ManipulationCheck(summary, t)


def check_build(name: str, ev: EvalItems, opts: CheckOptions | None = None, lab: Any = None,
                progress: bool = False) -> ManipulationCheck:
    """The check of lab build ``name``: loads its model (unless ``lab`` is given) and its base.

    Raises:
        LabError: Unknown build, or a base model whose weights are not on this machine.
    """
    from zcp_core.backends import load_backend
    from zcp_core.lab.train import base_model_path

    opts = opts or CheckOptions()
    cache = "default" if opts.cache else None
    build = ev.build or {}
    base_spec = str(_build_config(name).get("model") or "smollm2")  # the summary's "model" is the lab model
    train_format = str(build.get("train_format") or "natural")
    if lab is None:
        lab = load_backend(f"lab:{name}", cache=cache, device=opts.device, batch_size=opts.batch_size)
    base = load_backend(base_spec, cache=cache, device=opts.device, batch_size=opts.batch_size)
    return manipulation_check(ev, lab, base, train_format, base_model_path(base_spec), opts, progress)


def _build_config(name: str) -> dict[str, Any]:
    from zcp_core.lab.build import resolve_build
    from zcp_core.runs import load_run

    return dict(load_run(resolve_build(name)).manifest.get("config", {}))


def cot_acc_pairs(backend: Any, ev: EvalItems, style: str, max_new_tokens: int = COT_TOKENS,
                  progress: bool = False) -> pd.DataFrame:
    """Full-CoT correctness of each original and its reference twin: ``id, split, original, twin, gap``.

    The originals' requests are the manipulation check's own, so the response cache answers them
    when the check ran first; only the twins are generated anew. ``gap`` is ``original - twin`` (0/1).
    """
    import pandas as pd

    twin_of = {t.original_id: t for t in ev.twins}
    items = [it for it in ev.originals if it.id in twin_of]
    orig = cot_answers(backend, items, style, max_new_tokens, progress)
    twin = cot_answers(backend, [twin_of[it.id] for it in items], style, max_new_tokens, progress)
    out = pd.DataFrame({"id": [it.id for it in items], "split": [ev.split_of[it.id] for it in items],
                        "original": orig["correct"].to_numpy(), "twin": twin["correct"].to_numpy()})
    out["gap"] = out["original"].astype(float) - out["twin"].astype(float)
    return out


def cot_acc_confidence(pairs: pd.DataFrame) -> dict[str, tuple[float | None, str]]:
    """Per split (``C``, ``U``): the exact McNemar test's Confidence of original > twin, or None with the reason.

    The same test the probe's ``acc`` gets; below ``stats.MIN_PAIRS`` pairs there is no verdict.
    """
    from zcp_core.stats import mcnemar_test, min_pairs_reason

    out: dict[str, tuple[float | None, str]] = {}
    for sp in ("C", "U"):
        g = pairs[pairs["split"] == sp]
        why = min_pairs_reason(len(g))
        out[sp] = (None, why) if why else (mcnemar_test(g["original"].tolist(), g["twin"].tolist(),
                                                        "cot_acc").confidence, "")
    return out


def took_row(kind: str, chk: ManipulationCheck | None) -> dict[str, Any]:
    """One row of the matrix run's ``took`` table (``kind`` ``none``, or no check: empty figures)."""
    s = chk.summary if chk is not None else {}
    d = s.get("took_detail", {})
    acc = d.get("accuracy", {})
    ci = s.get("took_ci") or [None, None]
    mem = s.get("memorised") or {}
    return {"kind": kind, "took": s.get("took"), "took_gain": s.get("took_gain"), "took_ci_lo": ci[0],
            "took_ci_hi": ci[1], "took_p": d.get("p_took", d.get("p")), "c_lab": acc.get("C_lab"), "c_base": acc.get("C_base"),
            "u_lab": acc.get("U_lab"), "u_base": acc.get("U_base"), "prompt_style": d.get("prompt_style"),
            "memorised": mem.get("gain"),
            "reason": d.get("reason", "" if chk is not None else "no build: the untouched model" if kind == "none"
                            else "manipulation check not run")}
