"""LLM judge for exact / near-exact matches, and the partition rule.

The paper's judge (GPT-4 with in-context examples) only saw positive
examples; ours shows negative ones too (same topic but different wording, a
paraphrase, changed numbers, a completion that drifts off), so a judge that
answers "match" to everything is less likely. The judge runs on any backend
in one batched generate call. Its raw answer, the parsed label and whether
parsing succeeded are all kept.

An exact string match (after normalisation) is labelled ``exact`` whatever
the judge said, and a judge "exact" on strings that differ is downgraded to
``near_exact``: "exact" has an objective definition, so the judge is not
allowed to contradict it. Both corrections are recorded per instance.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from zcp_core.backends import Completion

JudgeLabel = Literal["exact", "near_exact", "none"]
LABELS: tuple[str, ...] = ("exact", "near_exact", "none")


@dataclass(frozen=True)
class PartitionRule:
    """When a partition counts as contaminated: at least ``min_exact`` exact or ``min_near_exact`` near-exact.

    ``None`` disables that arm of the rule. The paper's default is 1 exact or 2 near-exact.
    """

    min_exact: int | None = 1
    min_near_exact: int | None = 2

    def verdict(self, n_exact: int, n_near_exact: int) -> bool:
        """Whether the counts meet the rule."""
        by_exact = self.min_exact is not None and n_exact >= self.min_exact
        by_near = self.min_near_exact is not None and n_near_exact >= self.min_near_exact
        return bool(by_exact or by_near)

    def describe(self) -> str:
        """The rule in words, for summaries."""
        parts = [f">= {self.min_exact} exact" if self.min_exact is not None else "",
                 f">= {self.min_near_exact} near-exact" if self.min_near_exact is not None else ""]
        return " or ".join(p for p in parts if p) or "never"


@dataclass(frozen=True)
class JudgeParse:
    """A parsed judge answer: the label, and whether the answer named one clearly."""

    label: JudgeLabel
    parsed: bool


@dataclass(frozen=True)
class FewShot:
    """A labelled reference/candidate pair shown to the judge."""

    reference: str
    candidate: str
    label: JudgeLabel


# Invented texts (not from any benchmark), so the judge prompt leaks nothing.
FEW_SHOT: tuple[FewShot, ...] = (
    FewShot("How many apples did Priya pick in total over the three days?",
            "How many apples did Priya pick in total over the three days?", "exact"),
    FewShot("The river flooded the lower town twice that spring, and the mill was rebuilt in June.",
            "The river flooded the lower town twice that spring, and the mill was rebuilt in July.", "near_exact"),
    FewShot("How many apples did Priya pick in total over the three days?",
            "What is the total number of apples that Priya collected during those days?", "none"),
    FewShot("She sells each scarf for $12 and keeps a third of the money.",
            "She sells each hat for $15 and saves half of what she earns.", "none"),
    FewShot("The committee approved the budget after a long debate about road repairs.",
            "The committee approved the budget after a long debate about road repairs and then adjourned, "
            "and the mayor gave a speech about the harbour, the schools and the new library.", "near_exact"),
    FewShot("The committee approved the budget after a long debate about road repairs.",
            "Everyone went home early because it was raining.", "none"),
)

_INSTRUCTION = (
    "You compare a candidate text with a reference text. Answer with one label:\n"
    "exact - the candidate is the same text as the reference (ignoring case and spacing).\n"
    "near-exact - the candidate reproduces the reference's wording and sentence structure with only small "
    "differences (a word or number changed, a few words missing or added at the end).\n"
    "none - anything else, including paraphrases with the same meaning, texts on the same topic, or texts "
    "with different numbers or wording.\n"
    "Answer with the label only."
)


def _label_word(label: str) -> str:
    return "near-exact" if label == "near_exact" else label


def judge_prompt(reference: str, candidate: str, shots: Sequence[FewShot] = FEW_SHOT) -> str:
    """The judge's user message: instruction, labelled examples, then the pair to label."""
    blocks = [_INSTRUCTION, ""]
    for s in shots:
        blocks += [f"Reference: {s.reference}", f"Candidate: {s.candidate}", f"Label: {_label_word(s.label)}", ""]
    blocks += [f"Reference: {reference}", f"Candidate: {candidate}", "Label:"]
    return "\n".join(blocks)


_NEAR = re.compile(r"\b(near|nearly|almost)[\s_-]*(an\s+)?exact\b")
_NOT_EXACT = re.compile(r"\b(not|no|non|in)[\s_-]*(an\s+)?exact\b|\binexact\b")
_EXACT = re.compile(r"\bexact(ly)?\b")
_NONE = re.compile(r"\b(none|no match|not a match|no|different|unrelated)\b")


def parse_judge_label(text: str) -> JudgeParse:
    """Read a label from a judge's answer, tolerating markdown, case, and extra words.

    The first label word counts ("near-exact" is checked before "exact", and
    "not exact" / "inexact" read as none). An answer naming no label is
    ``none`` with ``parsed=False``, so unparsed answers are counted, never
    read as matches.
    """
    s = re.sub(r"[*`#>\"']", " ", (text or "")).casefold().strip()
    s = re.sub(r"^\s*(label|answer)\s*:\s*", "", s)
    first_line = next((ln for ln in s.splitlines() if ln.strip()), "")
    for chunk in (first_line, s):
        hits: list[tuple[int, JudgeLabel]] = []
        for rx, lab in ((_NEAR, "near_exact"), (_NOT_EXACT, "none"), (_NONE, "none")):
            m = rx.search(chunk)
            if m:
                hits.append((m.start(), lab))  # type: ignore[arg-type]
        m = _EXACT.search(chunk)
        if m and not any(start <= m.start() < start + 20 for start, _ in hits):
            hits.append((m.start(), "exact"))
        if hits:
            return JudgeParse(min(hits)[1], True)
    return JudgeParse("none", False)


@dataclass(frozen=True)
class JudgedPair:
    """One judged instance.

    Attributes:
        raw: The judge's answer text.
        judge_label: The label parsed from it.
        parsed: Whether the answer named a label.
        label: The final label after the exact-string corrections.
        reason: Why the final label differs from the judge's ("" when it does not).
    """

    raw: str
    judge_label: JudgeLabel
    parsed: bool
    label: JudgeLabel
    reason: str


def final_label(judge: JudgeLabel, is_exact: bool) -> tuple[JudgeLabel, str]:
    """Apply the exact-string corrections to a judge label; returns (label, reason)."""
    if is_exact and judge != "exact":
        return "exact", f"strings equal after normalisation (judge said {judge})"
    if judge == "exact" and not is_exact:
        return "near_exact", "judge said exact but the strings differ"
    return judge, ""


def judge_pairs(backend: Any, references: Sequence[str], candidates: Sequence[str], exact: Sequence[bool],
                max_new_tokens: int = 8, progress: bool = True) -> list[JudgedPair]:
    """Label each (reference, candidate) pair with one batched, greedy generate call.

    Args:
        backend: Any backend (``generate`` on a list of requests).
        references: True second pieces.
        candidates: Guided completions.
        exact: Whether each pair is an exact string match (see :func:`final_label`).
        max_new_tokens: Room for the label.
        progress: Show the backend's progress bar.
    """
    from zcp_core.backends import GenerateRequest, SamplingParams, chat

    params = SamplingParams(max_new_tokens=max_new_tokens, temperature=0.0)
    reqs = [GenerateRequest(messages=chat(judge_prompt(r, c)), params=params, thinking="off")
            for r, c in zip(references, candidates, strict=True)]
    outs: list[Completion] = backend.generate(reqs, progress=progress) if reqs else []
    result = []
    for out, is_exact in zip(outs, exact, strict=True):
        jp = parse_judge_label(out.text)
        lab, why = final_label(jp.label, bool(is_exact))
        result.append(JudgedPair(out.text, jp.label, jp.parsed, lab, why))
    return result


def rule_judge(exact: Sequence[bool], edit_sim: Sequence[float], near_threshold: float = 0.85) -> list[JudgedPair]:
    """A model-free judge: exact string match, or near-exact when edit similarity >= ``near_threshold``.

    Used with ``--judge rule`` (no judge model at hand, or as a cross-check of the LLM judge).
    """
    out = []
    for e, s in zip(exact, edit_sim, strict=True):
        lab: JudgeLabel = "exact" if e else ("near_exact" if s >= near_threshold else "none")
        out.append(JudgedPair(f"rule: edit_sim={s:.3f}", lab, True, lab, ""))
    return out
