"""Evasive paraphrases: the same numbers and answer in new words.

Used to build evasively contaminated training sets (the lab's ``evasive``
mode) and the probe's paraphrased arm. Two generators:

* :func:`reword_deterministic` (no model): moves the question to the front,
  moves an ``If ...,`` condition behind it, renames people, and applies the
  phrase/synonym tables of :mod:`zcp_core.reference.rules`. It must change at
  least half of the original's non-numeric words (measured by
  :func:`nonnumeric_change_fraction`); an item below that, or one that lost a
  number, is recorded as a failure rather than returned.
* :func:`paraphrase_llm`: asks a backend, verifies every number survived,
  retries with another seed, and records failures.
"""

from __future__ import annotations

import difflib
import hashlib
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zcp_core.reference.numbers import WORDS, number_values
from zcp_core.reference.numeric import ReferenceFailure
from zcp_core.reference.rules import (
    CLAUSE_OPENERS,
    DEPENDENT_START,
    FACT_INTROS,
    FEMALE,
    MALE,
    OTHER_FEMALE,
    OTHER_MALE,
    PHRASES,
    STOP_CAPS,
)
from zcp_core.schema import Item

if TYPE_CHECKING:
    from zcp_core.backends import Backend

MIN_CHANGE = 0.5
METHOD_DETERMINISTIC = "reword-deterministic-v1"
_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_SENT = re.compile(r"(?<=[.?!])\s+(?=[A-Z\"'])")
_QLEAD = re.compile(r"^(how|what|which|who|calculate|find|determine|by how|in total|if)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ParaphraseSet:
    """Paraphrases and the items that could not be given one.

    Attributes:
        items: Paraphrases (id ``<orig>-para<k>``, ``original_id`` set).
        change_fraction: Measured non-numeric change of each item, same order.
        method: How they were made.
        failures: Versions left out, with a reason (id ``<orig>-para<k>``).
    """

    items: tuple[Item, ...]
    change_fraction: tuple[float, ...]
    method: str
    failures: tuple[ReferenceFailure, ...]


def _nonnumeric_words(text: str) -> list[str]:
    return [w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in WORDS]


def nonnumeric_change_fraction(original: str, paraphrase: str) -> float:
    """Share of the original's non-numeric words not kept in place in the paraphrase.

    Words are compared case-insensitively after dropping digits and number
    words; "kept in place" means matched by a token-level alignment
    (``difflib.SequenceMatcher`` matching blocks), so a moved clause counts as
    changed. 0.0 for an original without words.
    """
    a, b = _nonnumeric_words(original), _nonnumeric_words(paraphrase)
    if not a:
        return 0.0
    kept = sum(m.size for m in difflib.SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks())
    return 1.0 - kept / len(a)


def numbers_kept(original: str, paraphrase: str) -> bool:
    """Whether every number of ``original`` (with multiplicity) appears in ``paraphrase``."""
    need, have = Counter(number_values(original)), Counter(number_values(paraphrase))
    return all(have[v] >= n for v, n in need.items())


def _rng(seed: int, item_id: str, k: int) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256(f"{seed}:{item_id}:{k}".encode()).digest()[:8], "big"))


def _people(text: str) -> dict[str, str | None]:
    """Named people in ``text`` and their likely gender (``f``/``m``, None when unclear).

    A known first name counts; so does another capitalised word that never appears in lower case, is not
    a common capitalised word, and reads like a subject ("Sasha notices"), whose gender comes from the
    pronouns when they point one way only.
    """
    lower = text.lower()
    she = len(re.findall(r"\b(?:she|her|hers)\b", lower))
    he = len(re.findall(r"\b(?:he|his|him)\b", lower))
    guess = "f" if she and not he else "m" if he and not she else None
    out: dict[str, str | None] = {}
    for m in re.finditer(r"\b([A-Z][a-z]{2,})\b(?=['\u2019]s\b| [a-z]|[,.?!;:])", text):
        w = m.group(1)
        if w in FEMALE:
            out[w] = "f"
        elif w in MALE:
            out[w] = "m"
        elif w.lower() not in STOP_CAPS and not w.endswith("s") and w not in out:
            if not re.search(rf"(?<![A-Za-z]){w.lower()}(?![A-Za-z])", text):  # never written in lower case
                out[w] = guess
    return out


def _name_map(text: str, rng: random.Random) -> dict[str, str]:
    """Rename people to other names of the same gender, never to a name already in the text."""
    people = _people(text)
    present = set(re.findall(r"\b[A-Z][a-z]+\b", text))
    out: dict[str, str] = {}
    for gender, pool in (("f", FEMALE), ("m", MALE)):
        free = [n for n in pool if n not in present]
        rng.shuffle(free)
        for name in sorted(n for n, g in people.items() if g == gender):
            if free:
                out[name] = free.pop()
    return out


def _apply_names(text: str, names: dict[str, str]) -> str:
    if not names:
        return text
    return re.sub(r"\b(" + "|".join(map(re.escape, names)) + r")\b", lambda m: names[m.group(1)], text)


def _apply_phrases(text: str, rng: random.Random) -> str:
    """Apply the phrase table; a replacement is protected from later rules by a placeholder."""
    done: list[str] = []

    def sub(alts: tuple[str, ...]) -> Any:
        choice = alts[rng.randrange(len(alts))]

        def repl(m: re.Match[str]) -> str:
            rep = choice[:1].upper() + choice[1:] if m.group(0)[:1].isupper() else choice
            done.append(rep)
            return f"\ue000{chr(0xE100 + len(done) - 1)}\ue001"

        return repl

    for pat, alts in PHRASES:
        text = re.sub(pat, sub(alts), text, flags=re.IGNORECASE)
    return re.sub("\ue000(.)\ue001", lambda m: done[ord(m.group(1)) - 0xE100], text)


def _swap_clause(sentence: str) -> str:
    """ "After X, Y." -> "Y after X." when the sentence opens with a subordinate clause."""
    m = re.match(r"^((?:" + "|".join(CLAUSE_OPENERS) + r")\b[^,]{3,80}), ([a-zA-Z][^,]*?)([.!])$", sentence,
                 re.IGNORECASE)
    if not m:
        return sentence
    clause, main, end = m.groups()
    first = clause.split()[0]
    if not (first in FEMALE or first in MALE):
        clause = clause[:1].lower() + clause[1:]
    return f"{main[:1].upper()}{main[1:]} {clause}{end}"


def _name_pronouns(text: str) -> str:
    """With exactly one named person and no other person of that gender, 'she'/'he' become the name."""
    people = _people(text)
    if len(people) != 1:
        return text
    name, gender = next(iter(people.items()))
    if gender == "f" and not re.search(OTHER_FEMALE, text, re.IGNORECASE):
        return re.sub(r"\b[Ss]he\b", name, text)
    if gender == "m" and not re.search(OTHER_MALE, text, re.IGNORECASE):
        text = re.sub(r"\b[Hh]e\b", name, text)
        return re.sub(r"\b[Hh]is\b", f"{name}'s", text)
    return text


Level = int  # 0: question first and clause swaps; 1: + setup sentence last; 2: + facts reversed


def _restructure(question: str, level: Level, rng: random.Random) -> tuple[str, str, list[str]]:
    """(question sentence, intro, fact sentences): question first, an ``If`` condition behind it.

    Higher levels also reorder the facts, but only when every moved sentence stands on its own
    (it does not open with a pronoun or a connective such as "Then").
    """
    sents = [s for s in _SENT.split(question.strip()) if s]
    q = sents[-1] if sents else question
    if len(sents) < 2 or not (q.endswith("?") or _QLEAD.match(q)):
        return question, "", []
    facts = [_swap_clause(f) for f in sents[:-1]]
    standalone = [not re.match(DEPENDENT_START, f, re.IGNORECASE) for f in facts]
    if level >= 2 and len(facts) >= 2 and all(standalone):
        facts = facts[::-1]
    elif level >= 1 and len(facts) >= 2 and standalone[1]:
        facts = [*facts[1:], facts[0]]
    m = re.match(r"^If (.+?), ((?:how|what|which|who|calculate|find|determine)\b.*)$", q, re.IGNORECASE)
    if m:
        body = m.group(2)
        end = body[-1] if body[-1] in "?." else ""
        q = f"{body[:1].upper()}{body[1:len(body) - len(end)]}, if {m.group(1)}{end or '?'}"
    return q, FACT_INTROS[rng.randrange(len(FACT_INTROS))], facts


def reword_one(item: Item, k: int = 0, seed: int = 0) -> tuple[Item, float]:
    """Version ``k`` of one item's deterministic rewording and its measured change fraction.

    The least reordering that reaches :data:`MIN_CHANGE` is used (levels 0, 1, 2); the
    choices of names, phrases and intro are the same at every level.
    """
    best: tuple[str, float, int] = ("", -1.0, 0)
    names: dict[str, str] = {}
    for level in (0, 1, 2):
        rng = _rng(seed, item.id, k)
        names = _name_map(item.question, rng)
        renamed = _name_pronouns(_apply_names(item.question, names))
        q, intro, facts = _restructure(renamed, level, rng)
        text = " ".join(x for x in (_apply_phrases(q, rng), intro, _apply_phrases(" ".join(facts), rng)) if x)
        text = re.sub(r"\s+", " ", text).strip()
        frac = nonnumeric_change_fraction(item.question, text)
        if frac > best[1]:
            best = (text, frac, level)
        if frac >= MIN_CHANGE:
            break
    text, frac, level = best
    meta = {"method": METHOD_DETERMINISTIC, "version": k, "seed": seed, "names": names, "reorder_level": level,
            "change_fraction": round(frac, 4)}
    para = Item(id=f"{item.id}-para{k}", question=text, answer=item.answer,
                solution=_apply_names(item.solution, names) if item.solution else item.solution,
                source=f"{item.source}-para", original_id=item.id, metadata=meta)
    return para, frac


def reword_deterministic(items: Sequence[Item], versions: int = 1, seed: int = 0) -> ParaphraseSet:
    """Rule-based evasive paraphrases keeping every number and the answer.

    Args:
        items: Items to reword.
        versions: Versions per item (``-para0``, ``-para1``...), each with its own choices.
        seed: Seed; each version is seeded by (seed, item id, version).

    Returns:
        A :class:`ParaphraseSet`. A version changing fewer than half of the
        non-numeric words, or losing a number, is a failure, not an item.
    """
    out, fracs, fails = [], [], []
    for it in items:
        for k in range(versions):
            para, frac = reword_one(it, k, seed)
            if not numbers_kept(it.question, para.question):
                fails.append(ReferenceFailure(para.id, "numbers: a number of the original is missing"))
            elif frac < MIN_CHANGE:
                fails.append(ReferenceFailure(para.id, f"low_change: only {frac:.2f} of the non-numeric words "
                                                       f"changed (needs {MIN_CHANGE})"))
            else:
                out.append(para)
                fracs.append(frac)
    return ParaphraseSet(tuple(out), tuple(fracs), METHOD_DETERMINISTIC, tuple(fails))


PARAPHRASE_PROMPT = """Rewrite the following math word problem in completely different words.
- Keep every number exactly as written (same values, none added, none removed) and keep the same question, so the answer stays the same.
- Change the sentence structure and the wording; you may rename people.
- Do not solve the problem and do not state the answer.
Reply with the rewritten problem only.

Problem: {question}
"""


def _clean_reply(text: str) -> str:
    text = text.strip().strip('"').strip()
    text = re.sub(r"^\s*(?:\*\*)?(?:rewritten|paraphrased|new)?\s*(?:problem|question|version)\s*(?:\*\*)?\s*:\s*"
                  r"(?:\*\*)?", "", text, flags=re.IGNORECASE)
    return re.sub(r"\s+", " ", text).strip().strip('"').strip()


def _llm_problem(original: Item, text: str) -> str:
    """Why a model paraphrase is unusable ("" when it is fine)."""
    if not text:
        return "empty reply"
    if text.strip().lower() == original.question.strip().lower():
        return "identical to the original"
    if not numbers_kept(original.question, text):
        return "a number of the original is missing"
    from fractions import Fraction

    try:
        gold = Fraction(original.answer.replace(",", ""))
    except (ValueError, ZeroDivisionError):
        return ""
    if number_values(text).count(gold) > number_values(original.question).count(gold):
        return "the answer appears in the paraphrase"
    return ""


def paraphrase_llm(backend: Backend, items: Sequence[Item], versions: int = 1, seed: int = 0,
                   attempts: int = 3, max_new_tokens: int = 384) -> ParaphraseSet:
    """Model-written evasive paraphrases, verified to keep every number and not to leak the answer.

    Each round sends every pending (item, version) in one batched ``generate``
    call; a rejected one is redrawn with another seed, up to ``attempts`` times.

    Args:
        backend: Any backend (chat template applied).
        items: Items to paraphrase.
        versions: Versions per item (``-para0``, ``-para1``...).
        seed: Seed of the sampling (per item, version and attempt).
        attempts: Draws per version before it is a failure.
        max_new_tokens: Token cap of a paraphrase.
    """
    from zcp_core.backends import GenerateRequest, SamplingParams, chat

    pending = [(it, k) for it in items for k in range(versions)]
    done: dict[tuple[str, int], tuple[Item, float]] = {}
    why: dict[tuple[str, int], str] = {}
    for attempt in range(attempts):
        if not pending:
            break
        reqs = [GenerateRequest(messages=chat(PARAPHRASE_PROMPT.format(question=it.question)),
                                params=SamplingParams(max_new_tokens=max_new_tokens, temperature=0.8, top_p=0.95,
                                                      seed=_rng(seed, it.id, k * 1000 + attempt).randrange(2**31)))
                for it, k in pending]
        outs = backend.generate(reqs, progress=True)
        still = []
        for (it, k), out in zip(pending, outs, strict=True):
            text = _clean_reply(out.text)
            problem = _llm_problem(it, text)
            if problem:
                why[(it.id, k)] = problem
                still.append((it, k))
                continue
            frac = nonnumeric_change_fraction(it.question, text)
            meta = {"method": f"llm:{backend.model_id}", "version": k, "seed": seed, "attempts": attempt + 1,
                    "change_fraction": round(frac, 4)}
            done[(it.id, k)] = (Item(id=f"{it.id}-para{k}", question=text, answer=it.answer, solution=None,
                                     source=f"{it.source}-para", original_id=it.id, metadata=meta), frac)
        pending = still
    order = [(it.id, k) for it in items for k in range(versions)]
    kept = [done[key] for key in order if key in done]
    fails = tuple(ReferenceFailure(f"{i}-para{k}", f"llm: {why.get((i, k), 'not produced')} "
                                                   f"(after {attempts} attempt(s))")
                  for i, k in order if (i, k) not in done)
    return ParaphraseSet(tuple(p for p, _ in kept), tuple(f for _, f in kept), f"llm:{backend.model_id}", fails)
