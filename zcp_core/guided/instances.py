"""Time-Travel guided instruction: split instances and build guided / general prompts.

Implements the data side of Golchin & Surdeanu, "Time Travel in LLMs: Tracing
Data Contamination in Large Language Models" (arXiv 2308.08493). Each
instance is cut into a first and a second piece at a random point between 40%
and 70% of its sentences (of its words when it has one sentence). The cut is
drawn from a generator seeded by ``(seed, instance id)``: the reference code
reseeds one global generator on every call, so every instance is cut at the
same fraction; here each instance gets its own fraction, reproducibly.

Prompts come in two kinds: the *guided* one names the dataset and split and
asks for the instance exactly as it appeared; the *general* one does not.
And in two styles: ``chat`` (the paper's instructions, sent through the
model's chat template) and ``completion`` (plain text the model continues,
no template: ``"GSM8K, test split:\n<first piece>"`` against the first piece
alone), for base models and for models that saw the data as plain text.
Overlap scoring lives in :mod:`zcp_core.guided.overlap`, the judge in
:mod:`zcp_core.guided.judge`, running and the partition test in
:mod:`zcp_core.guided.run`.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from zcp_core.schema import Item, TextRecord

Task = Literal["classification", "nli", "summarization", "math", "open"]
MathMode = Literal["question", "question-solution"]
PromptKind = Literal["guided", "general"]
#: ``chat``: the instruction through the chat template; ``completion``: plain text to continue, no template.
PromptStyle = Literal["chat", "completion"]
PROMPT_STYLES: tuple[str, ...] = ("chat", "completion")
Unit = Literal["sentence", "word", "question-solution", "pair"]
TASKS: tuple[str, ...] = ("classification", "nli", "summarization", "math", "open")
LOW, HIGH = 0.4, 0.7

# A sentence ends at . ! or ? (optionally followed by closing quotes/brackets) and whitespace;
# the next sentence starts with a capital, a digit, a currency sign or an opening quote.
_SENT_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[A-Z0-9$£€])")
_ABBREV = re.compile(r"(?:^|\s)(?:Mr|Mrs|Ms|Dr|Prof|St|Jr|Sr|vs|e\.g|i\.e|etc|No|U\.S)\.$")


@dataclass(frozen=True)
class GuidedInstance:
    """One instance cut into two pieces.

    Attributes:
        id: The item or text id.
        first_piece: Text shown to the model.
        second_piece: Text the model should reproduce if it memorised the instance.
        label: Dataset label shown in the prompt ("" when the dataset has none).
        task: Prompt variant.
        unit: What was counted to place the cut.
        n_units: Sentences or words in the split text (2 for question-solution / pair).
        cut: Units in the first piece.
        fraction: The fraction drawn for this instance, in [0.4, 0.7].
    """

    id: str
    first_piece: str
    second_piece: str
    label: str
    task: Task
    unit: Unit
    n_units: int
    cut: int
    fraction: float


@dataclass(frozen=True)
class Skipped:
    """An instance that could not be split, and why (kept in the run's ``skipped`` table)."""

    id: str
    reason: str


@dataclass(frozen=True)
class SplitResult:
    """Instances ready for prompting, and those left out with their reasons."""

    instances: tuple[GuidedInstance, ...]
    skipped: tuple[Skipped, ...]


def instance_seed(seed: int, instance_id: str) -> int:
    """A 64-bit seed derived from the run seed and the instance id (stable across runs and machines)."""
    return int.from_bytes(hashlib.sha256(f"{seed}\x1f{instance_id}".encode()).digest()[:8], "big")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text`` (a light rule-based splitter, no NLTK)."""
    spans, start = [], 0
    for m in _SENT_END.finditer(text):
        before = text[start:m.start()]
        if _ABBREV.search(before):
            continue  # "Dr. Smith" is one sentence
        spans.append((start, m.start() + len(m.group(0).rstrip())))
        start = m.end()
    if text[start:].strip():
        spans.append((start, len(text.rstrip())))
    return [(a, b) for a, b in spans if text[a:b].strip()]


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of whitespace-separated words."""
    return [m.span() for m in re.finditer(r"\S+", text)]


def cut_bounds(n_units: int, low: float = LOW, high: float = HIGH) -> tuple[int, int]:
    """Smallest and largest cut (units in the first piece) with ``low <= cut/n <= high``; (0, 0) if none."""
    lo = max(1, math.ceil(low * n_units - 1e-9))
    hi = min(n_units - 1, math.floor(high * n_units + 1e-9))
    return (lo, hi) if lo <= hi else (0, 0)


def choose_cut(n_units: int, rng: random.Random, low: float = LOW, high: float = HIGH) -> tuple[int, float]:
    """Draw a fraction in [low, high] and round it to a cut inside the bounds; (0, f) when none fits."""
    fraction = rng.uniform(low, high)
    lo, hi = cut_bounds(n_units, low, high)
    if lo == 0:
        return 0, fraction
    return min(hi, max(lo, round(fraction * n_units))), fraction


def split_text(text: str, instance_id: str, seed: int = 0) -> tuple[str, str, Unit, int, int, float]:
    """Cut one text at a per-instance random point between 40% and 70% of its sentences.

    One-sentence texts are cut by words instead. Returns ``(first, second,
    unit, n_units, cut, fraction)``; ``cut == 0`` means the text is too short
    to split (one word) and both pieces are then ``("", "")``.
    """
    rng = random.Random(instance_seed(seed, instance_id))
    spans = sentence_spans(text)
    unit: Unit = "sentence"
    if len(spans) < 2:
        spans, unit = word_spans(text), "word"
    cut, fraction = choose_cut(len(spans), rng)
    if cut == 0:
        return "", "", unit, len(spans), 0, fraction
    at = spans[cut][0]
    return text[:at].rstrip(), text[at:].strip(), unit, len(spans), cut, fraction


def _from_text(iid: str, text: str, label: str, task: Task, seed: int) -> GuidedInstance | Skipped:
    first, second, unit, n, cut, frac = split_text(text, iid, seed)
    if cut == 0:
        return Skipped(iid, f"too short to split ({n} {unit}s)")
    return GuidedInstance(iid, first, second, label, task, unit, n, cut, frac)


def split_items(items: Sequence[Item], seed: int = 0, math_mode: MathMode = "question") -> SplitResult:
    """Split problems (GSM8K, MATH...): the question is cut, or it is the first piece and the solution the second.

    Args:
        items: Problems.
        seed: Run seed; each item's cut is seeded by ``(seed, item.id)``.
        math_mode: ``question`` cuts the question; ``question-solution`` pairs question and solution.
    """
    out: list[GuidedInstance] = []
    skipped: list[Skipped] = []
    for it in items:
        label = str(it.metadata.get("label") or "")
        if math_mode == "question-solution":
            if not (it.solution or "").strip():
                skipped.append(Skipped(it.id, "no solution for question-solution mode"))
                continue
            out.append(GuidedInstance(it.id, it.question.strip(), str(it.solution).strip(), label, "math",
                                      "question-solution", 2, 1, 0.5))
            continue
        r = _from_text(it.id, it.question, label, "math", seed)
        (out if isinstance(r, GuidedInstance) else skipped).append(r)  # type: ignore[arg-type]
    return SplitResult(tuple(out), tuple(skipped))


def split_texts(texts: Sequence[TextRecord], task: Task = "classification", seed: int = 0,
                pair_field: str | None = None) -> SplitResult:
    """Split corpus texts; labels are kept for the prompt's label slot.

    Args:
        texts: Text records.
        task: Prompt variant (``classification``, ``nli``, ``summarization``, ``open``).
        seed: Run seed; each text's cut is seeded by ``(seed, text.id)``.
        pair_field: For NLI, the metadata field holding sentence 2 (e.g. ``hypothesis``);
            the text is then sentence 1 and is not cut.
    """
    out: list[GuidedInstance] = []
    skipped: list[Skipped] = []
    for t in texts:
        label = t.label if task in ("classification", "nli") else ""
        if task == "nli" and pair_field:
            second = str(t.metadata.get(pair_field) or "").strip()
            if not second:
                skipped.append(Skipped(t.id, f"no {pair_field!r} field for the NLI pair"))
                continue
            out.append(GuidedInstance(t.id, t.text.strip(), second, label, "nli", "pair", 2, 1, 0.5))
            continue
        r = _from_text(t.id, t.text, label, task, seed)
        (out if isinstance(r, GuidedInstance) else skipped).append(r)  # type: ignore[arg-type]
    return SplitResult(tuple(out), tuple(skipped))


# ---- prompts ---------------------------------------------------------------------------------
# Wording follows the paper's Table 1 templates; math and open text are our additions.
_GUIDED = {
    "classification": ("You are provided with the first piece of an instance from the {split} split of the "
                       "{dataset} dataset. Finish the second piece of the instance as exactly appeared in the "
                       "dataset. Only rely on the original form of the instance in the dataset to finish the "
                       "second piece."),
    "nli": ("You are provided with Sentence 1 from the {split} split of the {dataset} dataset. Finish Sentence 2 "
            "as appeared in the dataset. Sentence 2 must exactly match the instance in the dataset."),
    "summarization": ("You are provided with the first piece of a summary from the {split} split of the {dataset} "
                      "dataset. Finish the second piece of the summary as exactly appeared in the dataset. Only "
                      "rely on the original form of the summary in the dataset to finish the second piece."),
    "math": ("You are provided with the first piece of a problem from the {split} split of the {dataset} dataset. "
             "Finish the second piece of the problem as exactly appeared in the dataset. Only rely on the "
             "original form of the problem in the dataset to finish the second piece."),
    "math-solution": ("You are provided with a problem from the {split} split of the {dataset} dataset. Write its "
                      "solution exactly as it appeared in the dataset. Only rely on the original form of the "
                      "solution in the dataset."),
    "open": ("You are provided with the first piece of a text from the {split} split of the {dataset} dataset. "
             "Finish the second piece of the text as exactly appeared in the dataset. Only rely on the original "
             "form of the text in the dataset to finish the second piece."),
}
_GENERAL = {
    "classification": ("Finish the second piece based on the first piece, such that these two pieces become a "
                       "single instance with the following label."),
    "nli": ("Finish Sentence 2 based on Sentence 1, such that the following label shows the logical relationship "
            "between Sentence 1 and Sentence 2."),
    "summarization": ("Finish the second piece based on the first piece, such that these two pieces become a "
                      "single summary."),
    "math": "Finish the second piece based on the first piece, such that these two pieces become a single problem.",
    "math-solution": "Write a solution to the following problem.",
    "open": "Finish the second piece based on the first piece, such that these two pieces become a single text.",
}


def template_key(inst: GuidedInstance) -> str:
    """Which template variant an instance uses."""
    return "math-solution" if inst.unit == "question-solution" else inst.task


def build_prompt(inst: GuidedInstance, kind: PromptKind, dataset_name: str, split_name: str) -> str:
    """The guided or general instruction for one instance.

    The label line appears only when the instance has a label (and, for the
    general classification instruction, only then is "with the following
    label" kept, so the sentence never points at a missing line).
    """
    key = template_key(inst)
    if kind == "guided":
        head = _GUIDED[key].format(split=split_name, dataset=dataset_name)
    else:
        head = _GENERAL[key]
        if key == "classification" and not inst.label:
            head = head.replace(" with the following label", "")
    label = f"Label: {inst.label}\n" if inst.label else ""
    if key == "nli":
        return f"Instruction: {head}\n\nSentence 1: {inst.first_piece}\n{label}Sentence 2:"
    if key == "math-solution":
        return f"Instruction: {head}\n\nProblem: {inst.first_piece}\n{label}Solution:"
    return f"Instruction: {head}\n\n{label}First Piece: {inst.first_piece}\nSecond Piece:"


def completion_prompt(inst: GuidedInstance, kind: PromptKind, dataset_name: str, split_name: str) -> str:
    """The ``completion``-style prompt: plain text that the model continues (no instruction, no template).

    Guided: ``"<dataset>, <split> split:\n<first piece>"``; general: the first
    piece alone. A question-solution or NLI pair's first piece is a field of
    its own, so a line break follows it; a cut text ends where the cut is and
    the model continues the sentence stream (its first token carries the space).
    """
    text = inst.first_piece + ("\n" if inst.unit in ("question-solution", "pair") else "")
    return f"{dataset_name}, {split_name} split:\n{text}" if kind == "guided" else text


def default_prompt_style(has_chat_template: bool, raw_text_training: bool = False) -> PromptStyle:
    """The style a model is probed in by default.

    ``chat`` where the model has a chat template (it was tuned for it), ``completion`` otherwise, and always
    ``completion`` for a model known to have seen the data as raw text (a lab build of a raw-text kind).
    """
    return "chat" if has_chat_template and not raw_text_training else "completion"


def answer_header(inst: GuidedInstance) -> str:
    """The slot name the completion fills (``Second Piece``, ``Sentence 2`` or ``Solution``)."""
    key = template_key(inst)
    return {"nli": "Sentence 2", "math-solution": "Solution"}.get(key, "Second Piece")


def clean_completion(text: str, inst: GuidedInstance, style: PromptStyle = "chat") -> str:
    """Strip an echoed first piece, an echoed slot name (``Second Piece:``) and wrapping quotes.

    Small models often restate the prompt before continuing; what follows the
    echo is the continuation. In ``completion`` style a one-line instance ends
    at its line end, so the continuation is cut at its first line break after
    some text (a plain-text model runs on into whatever followed the instance,
    e.g. a solution); the general completion is cut the same way. The raw
    text is kept separately in the run.
    """
    s = text.strip()
    if style == "completion":
        if "\n" not in inst.first_piece and inst.unit not in ("question-solution", "pair"):
            s = s.split("\n", 1)[0].strip()
        return s
    s = re.sub(r"^(first piece|sentence 1|problem)\s*:\s*", "", s, flags=re.IGNORECASE)
    words = inst.first_piece.split()
    if words:
        echo = re.match(r"\s*".join(re.escape(w) for w in words), s)
        if echo:
            s = s[echo.end():].strip()
    for head in (answer_header(inst), "Second Piece", "Answer"):
        if s.lower().startswith(head.lower() + ":"):
            s = s[len(head) + 1:].strip()
            break
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "\"'":
        s = s[1:-1].strip()
    return s
