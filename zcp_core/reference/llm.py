"""The paper's LLM reference pipeline: one generator, two judges, up to 3 attempts.

The generator writes an isomorphic perturbation of each item (new story and
numbers, same magnitude, logic and difficulty, recomputed solution) under the
headers ``New Problem:`` / ``New Solution:`` / ``New Answer:``. Two judges each
end with ``Result: CORRECT`` or ``Result: INCORRECT``; a twin is accepted only
when every judge says CORRECT. Rejected items are retried with the judges'
reasons fed back. Each round sends one batched ``generate`` call per role, so
batching and the response cache work (a rerun resumes from the cache).

The parser is line-anchored: the published code's ``find("Answer:")`` also
matches inside ``New Answer:``; here a header only counts at the start of a
line, with optional markdown (``**New Answer:**``, ``### New Problem``).

Independent judges: decoding is greedy and responses are cached, so a judge
that is the generator, or two judges that are one model, are one vote.
:func:`judge_conflicts` names such clashes; ``judge_policy="distinct"`` (the
default) refuses them and ``"allow_self"`` lets them through (recorded in
each twin's metadata, and ``zcp release`` will not publish such twins).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from zcp_core.reference.numeric import ReferenceFailure, ReferenceSet
from zcp_core.schema import Item

if TYPE_CHECKING:
    from zcp_core.backends import Backend, GenerateRequest

METHOD_LLM = "llm-isomorphic-v1"
#: ``distinct``: judges must be different models from the generator and from each other; ``allow_self``: not.
JudgePolicy = Literal["distinct", "allow_self"]
GENERATOR_PROMPT = """You are given a math word problem with its solution and final answer.
Write a NEW problem that is isomorphic to it:
- change the story (names, objects, setting) and change every number;
- keep each number's magnitude and type (whole numbers stay whole, money keeps cents, percentages stay percentages);
- keep exactly the same reasoning steps, logic and difficulty;
- recompute the solution step by step for the new numbers; the new final answer must be a single number.

Reply with exactly these three sections and nothing else:
New Problem: <the new problem>
New Solution: <the step-by-step solution>
New Answer: <the final number only>

Original Problem: {question}
Original Solution: {solution}
Original Answer: {answer}
"""
FEEDBACK = """
A previous attempt was rejected. Fix these problems:
{reasons}
"""
JUDGE_PROMPT = """You are reviewing a math word problem that was made from an original by changing its story and numbers.
Check all of the following:
1. The new problem is complete, solvable and unambiguous.
2. It has the same logical structure and difficulty as the original.
3. Every step of the new solution is arithmetically correct.
4. The new answer is the correct final answer to the new problem.

Original Problem: {question}

New Problem: {new_problem}
New Solution: {new_solution}
New Answer: {new_answer}

Give brief reasons, then end with one line that is exactly "Result: CORRECT" or "Result: INCORRECT".
"""
_HEADER = re.compile(
    r"^[ \t]*(?:[#>*_-][ \t#>*_-]*)?(?:new[ \t]+)?(problem|solution|answer)[ \t]*(?:\*\*|__)?[ \t]*:[ \t]*(?:\*\*|__)?",
    re.IGNORECASE | re.MULTILINE,
)
_VERDICT = re.compile(r"result\s*[:\-]\s*[*_`\s]*(CORRECT|INCORRECT)\b", re.IGNORECASE)
_NUM = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


@dataclass(frozen=True)
class ParsedReference:
    """A generator reply split into its three sections.

    Attributes:
        problem: Text after ``New Problem:``.
        solution: Text after ``New Solution:``.
        answer: The final number from ``New Answer:`` (commas, ``$``, ``\\boxed{}`` removed).
        error: Why the reply could not be used ("" when it parsed).
    """

    problem: str
    solution: str
    answer: str
    error: str = ""


@dataclass(frozen=True)
class Verdict:
    """One judge's decision on one candidate."""

    judge: str
    verdict: Literal["CORRECT", "INCORRECT", "UNPARSED"]
    reasons: str


def _clean(s: str) -> str:
    return s.strip().strip("*_").strip()


def parse_generation(text: str) -> ParsedReference:
    """Split a generator reply by line-anchored headers; the last header of each kind wins."""
    parts: dict[str, str] = {}
    marks = list(_HEADER.finditer(text))
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        parts[m.group(1).lower()] = _clean(text[m.end():end])
    missing = [k for k in ("problem", "solution", "answer") if not parts.get(k)]
    if missing:
        return ParsedReference("", "", "", f"missing section(s): {', '.join('New ' + k.title() for k in missing)}")
    ans = parts["answer"]
    boxed = re.search(r"\\boxed\{([^{}]*)\}", ans)
    nums = _NUM.findall(boxed.group(1) if boxed else ans.splitlines()[0])
    if not nums:
        return ParsedReference(parts["problem"], parts["solution"], "", f"New Answer has no number: {ans[:60]!r}")
    return ParsedReference(parts["problem"], parts["solution"], nums[-1].replace(",", "").rstrip("."))


def parse_verdict(text: str, judge: str = "") -> Verdict:
    """A judge reply's verdict (the last ``Result:`` line) and the reasons before it."""
    found = list(_VERDICT.finditer(text))
    if not found:
        return Verdict(judge, "UNPARSED", _clean(text)[:500] or "empty reply")
    last = found[-1]
    reasons = _clean(text[: last.start()])[:500]
    return Verdict(judge, "CORRECT" if last.group(1).upper() == "CORRECT" else "INCORRECT", reasons)


def _seed(seed: int, item_id: str, attempt: int) -> int:
    return int.from_bytes(hashlib.sha256(f"{seed}:{item_id}:{attempt}".encode()).digest()[:4], "big")


def _gen_request(item: Item, feedback: str, attempt: int, seed: int, max_new_tokens: int) -> GenerateRequest:
    from zcp_core.backends import GenerateRequest, SamplingParams, chat

    prompt = GENERATOR_PROMPT.format(question=item.question, solution=item.solution or "(not given)",
                                     answer=item.answer)
    if feedback:
        prompt += FEEDBACK.format(reasons=feedback)
    # Sampled, so a retry is a new draw; seeded per (seed, item, attempt), so reruns hit the cache.
    params = SamplingParams(max_new_tokens=max_new_tokens, temperature=0.7, top_p=0.95,
                            seed=_seed(seed, item.id, attempt))
    return GenerateRequest(messages=chat(prompt), params=params)


def _judge_request(item: Item, cand: ParsedReference, max_new_tokens: int) -> GenerateRequest:
    from zcp_core.backends import GenerateRequest, SamplingParams, chat

    prompt = JUDGE_PROMPT.format(question=item.question, new_problem=cand.problem, new_solution=cand.solution,
                                 new_answer=cand.answer)
    return GenerateRequest(messages=chat(prompt), params=SamplingParams(max_new_tokens=max_new_tokens))


def judge_conflicts(generator: str, judges: Sequence[str]) -> list[str]:
    """Why these judges are not independent votes ([] when they are): a judge is the generator, or two are one model.

    Args:
        generator: The generator's model (spec or id).
        judges: Each judge's model, in order.
    """
    out = [f"judge {k} is the generator ({j})" for k, j in enumerate(judges, 1) if j == generator]
    seen: dict[str, int] = {}
    for k, j in enumerate(judges, 1):
        if j in seen:
            out.append(f"judges {seen[j]} and {k} are the same model ({j})")
        seen.setdefault(j, k)
    return out


def _models(generator: Backend, judges: Sequence[Backend]) -> dict[str, Any]:
    """Which models generated and judged (id and revision), for each twin's record."""
    def one(b: Backend) -> dict[str, Any]:
        return {"model": b.model_id, "revision": getattr(b, "revision", None)}

    ids = [j.model_id for j in judges]
    return {"generator": one(generator), "judges": [one(j) for j in judges],
            "independent_judges": not judge_conflicts(generator.model_id, ids) and len(ids) >= 2}


def build_reference_llm(generator: Backend, judges: Sequence[Backend], items: Sequence[Item], attempts: int = 3,
                        seed: int = 0, max_new_tokens: int = 768, judge_tokens: int = 384,
                        judge_policy: JudgePolicy = "distinct") -> ReferenceSet:
    """Isomorphic reference twins by an LLM generator, accepted only when every judge agrees.

    Args:
        generator: Backend that writes the perturbed problems.
        judges: Backends that review them (the paper uses two independent ones).
        items: Originals.
        attempts: Rounds per item; later rounds get the judges' reasons.
        seed: Seed of the generator's sampling (per item and attempt).
        max_new_tokens: Generator token cap.
        judge_tokens: Judge token cap.
        judge_policy: ``distinct`` refuses a judge that is the generator's model or another judge's;
            ``allow_self`` accepts them (such twins are recorded as not independently judged).

    Returns:
        A :class:`ReferenceSet`; each twin's metadata holds the generator and judge models
        (``generator``, ``judges``: model ids; ``models``: ids, revisions and ``independent_judges``)
        and every attempt with its parse result and verdicts; each failure carries its attempts too.

    Raises:
        ValueError: No judge, or (``distinct``) judges that are not independent of the generator or each other.
    """
    if not judges:
        raise ValueError("build_reference_llm needs at least one judge")
    clash = judge_conflicts(generator.model_id, [j.model_id for j in judges])
    if clash and judge_policy == "distinct":
        raise ValueError("judges must be independent of the generator and of each other: " + "; ".join(clash)
                         + " (pass judge_policy='allow_self' to accept this)")
    models = _models(generator, judges)
    logs: dict[str, list[dict[str, Any]]] = {it.id: [] for it in items}
    feedback: dict[str, str] = {it.id: "" for it in items}
    accepted: dict[str, Item] = {}
    pending = list(items)
    for attempt in range(1, attempts + 1):
        if not pending:
            break
        replies = generator.generate([_gen_request(it, feedback[it.id], attempt, seed, max_new_tokens)
                                      for it in pending], progress=True)
        parsed = [parse_generation(r.text) for r in replies]
        ok = [(it, p) for it, p in zip(pending, parsed, strict=True) if not p.error]
        verdicts: dict[str, list[Verdict]] = {it.id: [] for it, _ in ok}
        for j, judge in enumerate(judges):
            outs = judge.generate([_judge_request(it, p, judge_tokens) for it, p in ok], progress=True) if ok else []
            for (it, _), out in zip(ok, outs, strict=True):
                verdicts[it.id].append(parse_verdict(out.text, judge=f"judge{j + 1}:{judge.model_id}"))
        still = []
        for it, p, r in zip(pending, parsed, replies, strict=True):
            vs = verdicts.get(it.id, [])
            logs[it.id].append({
                "attempt": attempt, "parse_error": p.error, "problem": p.problem, "answer": p.answer,
                "n_tokens": r.n_tokens, "finish_reason": r.finish_reason,
                "verdicts": [{"judge": v.judge, "verdict": v.verdict, "reasons": v.reasons} for v in vs],
            })
            if not p.error and vs and all(v.verdict == "CORRECT" for v in vs):
                accepted[it.id] = Item(
                    id=f"{it.id}-ref", question=p.problem, answer=p.answer, solution=p.solution,
                    source=f"{it.source}-llm-ref", original_id=it.id,
                    metadata={"method": METHOD_LLM, "generator": generator.model_id,
                              "judges": [jb.model_id for jb in judges], "models": models,
                              "judge_policy": judge_policy, "seed": seed, "attempts": logs[it.id]},
                )
                continue
            if p.error:
                feedback[it.id] = f"- Your reply could not be parsed ({p.error}). Use the three headers exactly."
            else:
                feedback[it.id] = "\n".join(f"- {v.judge}: {v.reasons[:300] or v.verdict}"
                                            for v in vs if v.verdict != "CORRECT")
            still.append(it)
        pending = still
    twins = tuple(accepted[it.id] for it in items if it.id in accepted)
    failures = tuple(_failure(it.id, logs[it.id]) for it in items if it.id not in accepted)
    return ReferenceSet(twins, failures, METHOD_LLM)


def _failure(item_id: str, log: list[dict[str, Any]]) -> ReferenceFailure:
    last = log[-1] if log else {}
    if last.get("parse_error"):
        why = f"parse: {last['parse_error']}"
    else:
        bad = [f"{v['judge']} {v['verdict']}" for v in last.get("verdicts", []) if v["verdict"] != "CORRECT"]
        why = "judges: " + ", ".join(bad)
    return ReferenceFailure(item_id, f"{why} (after {len(log)} attempt(s))", attempts=tuple(log))
