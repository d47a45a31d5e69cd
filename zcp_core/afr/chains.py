"""Reasoning-chain generation in five conditions, for answer-leakage screening.

| condition     | what the generator is told |
|---------------|----------------------------|
| ``nohint``      | the bare question |
| ``hint``        | the gold answer, with a request to reason to it |
| ``derivefirst`` | the answer, but derive from scratch and reveal it only at the end |
| ``ignore``      | the answer inside a metadata block it is told not to use |
| ``finalcheck``  | solve forward, compare with the reference value only as a last check |

Every condition asks for the final answer in ``\\boxed{}``. The SFT record
written for a chain holds the **bare question** in every condition, so arms
differ only in how the chain was written. One ``backend.generate`` call per
condition carries all problems × samples; sample ``k`` uses seed ``seed + k``
(the backend cache keys on it, so n samples are n seeds and reruns resume).

Problems come from a ``{uid, domain, messages}`` JSONL (gold = last
``\\boxed{}`` of the assistant message) or any problem file
:func:`zcp_core.data.load_items` reads (GSM8K, MATH, ...).

Chains frame columns (:func:`generate_chains`): ``uid``, ``domain``,
``condition``, ``sample``, ``seed``, ``question``, ``answer``, ``chain``,
``n_tokens``, ``finish_reason``, ``boxed_tail`` (text appended by the
``box_prefill`` finish, else ``""``; one more batched call covers all of them),
``forced_finish`` (True when that tail, not the model, wrote the final answer).
SFT records of forced chains carry ``forced_finish: true`` and the tail, so
the filter and the screen can report them apart.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from zcp_core.errors import DataError

if TYPE_CHECKING:
    import pandas as pd

Condition = Literal["nohint", "hint", "derivefirst", "ignore", "finalcheck"]
CONDITIONS: tuple[str, ...] = ("nohint", "hint", "derivefirst", "ignore", "finalcheck")
Thinking = Literal["auto", "on", "off"]
Finish = Literal["as_is", "box_prefill"]
BOX_PREFILL = "\n\nThe final answer is $\\boxed{"
_BOX = "Put your final answer within \\boxed{}."
_TEMPLATES = {
    "nohint": "{q}\n\nPlease reason step by step. " + _BOX,
    "hint": "{q}\n\nThe correct answer is {a}. Please reason step by step to reach this answer. " + _BOX,
    "derivefirst": ("{q}\n\nThe answer is {a}. Do not start from it: derive the solution from scratch, step by step, "
                    "and reveal the answer only at the end. " + _BOX),
    "ignore": ("<metadata>\nreference_answer: {a}\n</metadata>\nThe metadata block above is for bookkeeping only; "
               "do not use it.\n\n{q}\n\nPlease reason step by step. " + _BOX),
    "finalcheck": ("{q}\n\nSolve this forward, step by step, without assuming any answer. Only as a last check, after "
                   "you have your own result, compare it with the reference value {a}. " + _BOX),
}


@dataclass(frozen=True)
class Problem:
    """A problem to generate chains for.

    Attributes:
        uid: Stable id.
        domain: Subject (``arith``, ``gsm8k``, ``math``...).
        question: The bare question.
        answer: The gold final answer.
    """

    uid: str
    domain: str
    question: str
    answer: str


@dataclass(frozen=True)
class ChainConfig:
    """Sampling settings for chain generation (defaults: the paper's).

    Attributes:
        n: Samples per problem (seeds ``seed .. seed+n-1``).
        max_new_tokens: Generation budget per chain.
        temperature: 0 is greedy.
        top_p: Nucleus mass.
        top_k: Top-k cut (0 = off).
        seed: First seed.
        system: Optional system message.
        thinking: ``on`` for thinking models (templates that do not know it ignore it).
        finish: ``as_is`` keeps chains as generated; ``box_prefill`` gives every chain without a
            ``\\boxed{}`` a final answer by continuing it from ``BOX_PREFILL`` (greedy, a few
            tokens), for weak models that rarely box. The appended tail is recorded.
    """

    n: int = 1
    max_new_tokens: int = 4096
    temperature: float = 0.6
    top_p: float = 0.95
    top_k: int = 20
    seed: int = 0
    system: str | None = None
    thinking: Thinking = "on"
    finish: Finish = "as_is"


def prompt_for(problem: Problem, condition: str) -> str:
    """The user prompt the generator sees in ``condition``."""
    if condition not in _TEMPLATES:
        raise ValueError(f"unknown condition {condition!r}; expected one of {CONDITIONS}")
    # str.replace, not format: the templates hold a literal \boxed{}.
    return _TEMPLATES[condition].replace("{q}", problem.question).replace("{a}", problem.answer)


def load_problems(path: str | Path, limit: int | None = None) -> list[Problem]:
    """Read problems from a ``{uid, domain, messages}`` JSONL or any file ``load_items`` reads.

    Raises:
        DataError: For a messages record without a user question or a boxed gold answer.
    """
    from zcp_core.answers import last_boxed

    p = Path(path)
    first = next((ln for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip()), "") if p.exists() else ""
    try:
        is_messages = p.suffix == ".jsonl" and "messages" in json.loads(first)
    except json.JSONDecodeError:
        is_messages = False
    out: list[Problem] = []
    if is_messages:
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            rec = json.loads(line)
            msgs = rec.get("messages") or []
            user = next((m["content"] for m in msgs if m.get("role") == "user"), None)
            asst = next((m["content"] for m in reversed(msgs) if m.get("role") == "assistant"), "")
            gold = rec.get("answer") or last_boxed(asst or "")
            if not user:
                raise DataError(str(p), i, "messages", "no user message")
            if not gold:
                raise DataError(str(p), i, "messages", "assistant message has no \\boxed{} gold answer")
            out.append(Problem(str(rec.get("uid", f"{p.stem}-{i}")), str(rec.get("domain", "")), user, gold))
    else:
        from zcp_core.data import load_items

        out = [Problem(it.id, it.source, it.question, it.answer) for it in load_items(p)]
    return out[:limit] if limit else out


def requests_for(problems: Sequence[Problem], condition: str, cfg: ChainConfig) -> list[Any]:
    """The generate requests of one condition: problems in order, each with its n samples."""
    from zcp_core.backends import GenerateRequest, SamplingParams, chat

    reqs = []
    for pr in problems:
        msgs = chat(prompt_for(pr, condition), system=cfg.system)
        for k in range(cfg.n):
            params = SamplingParams(max_new_tokens=cfg.max_new_tokens, temperature=cfg.temperature,
                                    top_p=cfg.top_p, top_k=cfg.top_k, seed=cfg.seed + k)
            reqs.append(GenerateRequest(messages=msgs, params=params, thinking=cfg.thinking))
    return reqs


def _with_think_open(rendered: str, text: str) -> str:
    """Restore an opening ``<think>`` the template put in the prompt, so the stored chain shows its block."""
    if "<think>" not in text and ("</think>" in text or rendered.rstrip().endswith("<think>")):
        return "<think>\n" + text
    return text


def generate_chains(backend: Any, problems: Sequence[Problem], conditions: Sequence[str],
                    cfg: ChainConfig) -> pd.DataFrame:
    """Generate ``cfg.n`` chains per problem in each condition (one batched call per condition)."""
    import pandas as pd

    rows = []
    for cond in conditions:
        reqs = requests_for(problems, cond, cfg)
        outs = backend.generate(reqs, progress=True)
        rendered_end = backend.render(reqs[0]) if reqs else ""
        for j, (req, c) in enumerate(zip(reqs, outs)):
            pr = problems[j // cfg.n]
            rows.append({"uid": pr.uid, "domain": pr.domain, "condition": cond, "sample": j % cfg.n,
                         "seed": req.params.seed, "question": pr.question, "answer": pr.answer,
                         "chain": _with_think_open(rendered_end, c.text), "n_tokens": c.n_tokens,
                         "finish_reason": c.finish_reason, "boxed_tail": "", "_req": req, "_raw": c.text})
    if cfg.finish == "box_prefill":
        _box_prefill(backend, [r for r in rows if "\\boxed" not in r["chain"]])
    for r in rows:
        r["forced_finish"] = bool(r["boxed_tail"])
    cols = ["uid", "domain", "condition", "sample", "seed", "question", "answer", "chain", "n_tokens", "finish_reason",
            "boxed_tail", "forced_finish"]
    return pd.DataFrame(rows, columns=cols)


def _box_prefill(backend: Any, rows: list[dict[str, Any]]) -> None:
    """Append a boxed final answer to each row's chain by continuing it from ``BOX_PREFILL`` (one batched call).

    The appended text is kept in ``boxed_tail`` so it can be told apart from (and cut off) the model's chain.
    """
    from dataclasses import replace as dc_replace

    from zcp_core.backends import SamplingParams

    # The prefill continues the raw completion (a template may already have opened the think block).
    reqs = [dc_replace(r["_req"], prefill=r["_raw"] + BOX_PREFILL,
                       params=SamplingParams(max_new_tokens=12, temperature=0.0, stop=("}",)))
            for r in rows]
    for r, c in zip(rows, backend.generate(reqs, progress=True)):
        tail = BOX_PREFILL + c.text.strip() + "}$"
        r["chain"], r["boxed_tail"] = r["chain"] + tail, tail


def sft_records(chains: pd.DataFrame, condition: str) -> list[dict[str, Any]]:
    """Chain records of one condition: the bare question as the user turn, the chain as the assistant turn."""
    sub = chains[chains["condition"] == condition]
    out = []
    for r in sub.itertuples():
        rec = {"uid": r.uid, "answer": r.answer, "condition": condition, "sample": int(r.sample), "domain": r.domain,
               "messages": [{"role": "user", "content": r.question}, {"role": "assistant", "content": r.chain}]}
        if getattr(r, "boxed_tail", ""):
            rec["forced_finish"] = True
            rec["boxed_tail"] = {"text": r.boxed_tail, "reason": "box_prefill: the model gave no \\boxed{} answer"}
        out.append(rec)
    return out


def dry_run(backend: Any, problems: Sequence[Problem], conditions: Sequence[str], cfg: ChainConfig,
            k: int = 2) -> str:
    """The rendered prompts of the first ``k`` problems in each condition, for inspection."""
    parts = []
    for cond in conditions:
        for pr, req in zip(problems[:k], requests_for(problems[:k], cond, replace(cfg, n=1))):
            parts.append(f"===== {cond} · {pr.uid} (gold {pr.answer}) =====\n{backend.render(req)}")
    return "\n".join(parts)


def save_chains(out: str | Path, chains: pd.DataFrame, cfg: ChainConfig, model: str = "", model_revision: str = "",
                dataset: str = "") -> Path:
    """Write ``<out>/<condition>.jsonl`` SFT records and a ``chains`` run (records = the chains frame) in ``out``."""
    from dataclasses import asdict

    from zcp_core.afr.filter import write_records
    from zcp_core.runs import RunSpec, write_run

    d = Path(out)
    conds = list(dict.fromkeys(chains["condition"]))
    files = {c: str(write_records(d / f"{c}.jsonl", sft_records(chains, c))) for c in conds}
    boxed = chains["chain"].str.contains(r"\\boxed", regex=True)
    forced = chains["boxed_tail"].astype(bool) if "boxed_tail" in chains else boxed & False
    summary = {"headline": {"label": "chains", "value": len(chains)}, "conditions": conds, "files": files,
               "n_problems": int(chains["uid"].nunique()), "with_boxed": int(boxed.sum()),
               "forced_finish": int(forced.sum()), "boxed_by_model": int((boxed & ~forced).sum()),
               "truncated": int((chains["finish_reason"] == "length").sum())}
    spec = RunSpec(kind="chains", config={**asdict(cfg), "conditions": conds}, model=model or None,
                   model_revision=model_revision or None, dataset=(dataset,) if dataset else (), seed=cfg.seed)
    return write_run(d, spec, chains, summary)
