"""Relations a question states in words, which no annotation computes.

A twin must keep them true, so the tracer (:mod:`zcp_core.reference.trace`)
holds the numbers they tie together. Each function returns ``(question token
index, why)`` pairs in the order the tracer records them (the first reason for
a token wins):

* a number that is the sum of its neighbours ("7 fish: 3 orange and 4 white"),
  or a pair making a cued whole ("5 days and two other days" of a week);
* a number the chain never reads that is made of two others ("for 6 hours"
  after two and four hours);
* a small count of a set the story already has ("the three months");
* a whole whose parts the words name, one of them a single remaining member
  ("3 groups such that 2 of them are equal and the last one ...", "two boys:
  one of them ... the other"): the words say 3 = 2 + 1, so changing the 3
  alone makes an incoherent story;
* the two ends of a range ("grades 4 – 7", "ages 3-5"): a solution counts its
  members (4 grades) without writing how, so a changed end breaks the count;
* a count that an ordinal of the story names, or names the member after
  ("For 11 months ... paid on the twelfth month"): 11 months and the twelfth
  make one year, and a twin of "12 months" would pay the twelfth month twice.

:func:`scale_fits` keeps ranked test scores on their 0-100 scale (a check of a
whole draw rather than a hold).
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set
from fractions import Fraction

from zcp_core.reference.numbers import NumberToken, render

Hold = tuple[int, str]

# "2 of them": a part of a set the story has, counted by a number.
_PART = re.compile(r"\s+of\s+(?:them|these|those|which|the\s+\w+)\b", re.IGNORECASE)
# A single remaining member named without a number: with "2 of them" it makes the whole 2 + 1. ("the other"
# before a plural, "the other groups", names the parts already counted, not a remaining one.)
_LAST_ONE = re.compile(r"\bthe\s+(?:last|other|remaining|final|third|fourth|fifth|sixth)\s+one\b"
                       r"|\bthe\s+odd\s+one\s+out\b|\bthe\s+other\b(?!\s+\w+s\b)", re.IGNORECASE)


def sum_holds(tokens: Sequence[NumberToken], cued: Set[Fraction]) -> list[Hold]:
    """A number that is the sum of the 2 to 4 numbers right after (or before) it ("7 fish. 3 were orange, and 4
    were white"), and those numbers; and two neighbours that make a cued whole ("5 days ... two other days" of a
    week). The question may state that whole without any step computing it, and a twin must not break it."""
    out: list[Hold] = []
    t = tokens
    ok = [x.kind != "fraction" and x.value > 1 for x in t]
    for a in range(len(t) - 1):
        if ok[a] and ok[a + 1] and t[a].value + t[a + 1].value in cued - {Fraction(0), Fraction(1)}:
            why = f"the question's {t[a].text!r} and {t[a + 1].text!r} make {render(t[a].value + t[a + 1].value)}"
            out += [(a, why), (a + 1, why)]
    for a in range(len(t)):
        for n in (2, 3, 4):
            for run in (range(a + 1, a + 1 + n), range(a - n, a)):
                if run.start < 0 or run.stop > len(t) or not ok[a] or not all(ok[i] for i in run):
                    continue
                if t[a].value == sum(t[i].value for i in run):
                    parts = " + ".join(repr(t[i].text) for i in run)
                    why = f"the question's {t[a].text!r} is the sum of its {parts}"
                    out += [(ti, why) for ti in (a, *run)]
    return out


def unread_holds(tokens: Sequence[NumberToken], used: Set[int]) -> list[Hold]:
    """A number the chain never reads that is the sum or product of two others ("For two hours ... the next four
    hours ... for 6 hours"), and those two: the story states it without a step for it."""
    out: list[Hold] = []
    vals = [(i, x.value) for i, x in enumerate(tokens) if x.kind != "fraction" and x.value > 1]
    for u, vu in vals:
        if u in used:
            continue
        for a, va in vals:
            for b, vb in vals:
                if a < b and u not in (a, b) and vu in (va + vb, va * vb):
                    why = f"the question's {tokens[u].text!r}, which no step reads, is made of its " \
                          f"{tokens[a].text!r} and {tokens[b].text!r}"
                    out += [(ti, why) for ti in (u, a, b)]
    return out


def count_holds(question: str, tokens: Sequence[NumberToken]) -> list[Hold]:
    """A number that counts a set the story already has ("the three months", "the 3 ropes", "the two trees
    combined"): changing it would not change the set."""
    out: list[Hold] = []
    for i, t in enumerate(tokens):
        before = question[max(0, t.start - 12):t.start].lower()
        small = t.kind == "word" or t.value <= 5  # "the 24 liters" is an amount, not a count of a set
        if t.kind != "fraction" and small and re.search(r"\b(?:the|these|those|all)\s+$", before):
            out.append((i, f"{before.split()[-1]} {t.text!r} counts what the story has"))
    return out


def part_holds(question: str, tokens: Sequence[NumberToken]) -> list[Hold]:
    """A whole whose parts the words name: "n of them" with a single remaining member ("the last one", "the
    other one") says the whole is n + 1 ("3 groups such that 2 of them are equal and the last one ..."). The
    solution leans on that split without writing it ("(200+10)/3" adds the 10 once, for the one smaller group),
    so the whole and its part are held: a twin of "2 groups" would still describe three."""
    last = _LAST_ONE.search(question)
    if last is None:
        return []
    out: list[Hold] = []
    for p, part in enumerate(tokens):
        if part.kind == "fraction" or not _PART.match(question, part.end):
            continue
        for w, whole in enumerate(tokens):
            if w < p and whole.kind != "fraction" and whole.value == part.value + 1:
                why = f"the question's {whole.text!r} is split in words: {part.text!r} of them and " \
                      f"{last.group(0)!r}"
                out += [(w, why), (p, why)]
    return out


# "4 – 7", "3-5", "10 through 20": the two ends of a range (a dash or "through" and nothing else between).
_RANGE = re.compile(r"\s*(?:-|\u2013|\u2014|through)\s*", re.IGNORECASE)


def range_holds(question: str, tokens: Sequence[NumberToken]) -> list[Hold]:
    """Both ends of a range of whole numbers ("grades 4 – 7"): its members are counted from its ends, and
    a solution writes that count (4) as a bare number that a changed end would leave wrong."""
    out: list[Hold] = []
    for i in range(len(tokens) - 1):
        a, b = tokens[i], tokens[i + 1]
        between = question[a.end:b.start]
        if (a.kind == b.kind == "digits" and a.value.denominator == b.value.denominator == 1
                and a.value < b.value and _RANGE.fullmatch(between)):
            why = f"the question's {a.text!r} to {b.text!r} is a range whose members a step may count"
            out += [(i, why), (i + 1, why)]
    return out


_ORDINALS = ("first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
             "fifteenth sixteenth seventeenth eighteenth nineteenth twentieth").split()
_ORDINAL = re.compile(rf"\b(?:(?P<word>{'|'.join(_ORDINALS)})|(?P<num>\d+)(?:st|nd|rd|th))\b", re.IGNORECASE)


def ordinal_holds(question: str, tokens: Sequence[NumberToken]) -> list[Hold]:
    """A whole count n when the question names the n-th or the (n+1)-th member by an ordinal ("For 11 months
    ... on the twelfth month", "5 days ... on the fifth day"): the story ties the count to that member, which a
    changed count would leave behind."""
    named = set()
    for m in _ORDINAL.finditer(question):
        named.add(_ORDINALS.index(m.group("word").lower()) + 1 if m.group("word") else int(m.group("num")))
    out: list[Hold] = []
    for i, t in enumerate(tokens):
        if t.kind != "fraction" and t.value.denominator == 1 and t.value >= 2 and named & {t.value, t.value + 1}:
            out.append((i, f"the question's {t.text!r} counts up to a member an ordinal names"))
    return out


# ---- ranked test scores (moved here from numeric.py in issue 23, which had grown past 400 lines) ----

_SCORES = re.compile(r"\b(?:tests?|exams?|quiz(?:zes)?)\b", re.IGNORECASE)
_RANKS = re.compile(r"\b(?:lowest|highest|best|worst|drop(?:s|ped)?|remove[sd]?)\b", re.IGNORECASE)


def ranked_scores(question: str, old: Sequence[Fraction], gold: Fraction) -> bool:
    """Whether a question ranks test, exam or quiz scores ("remove the lowest score") with every number
    (``old``) and its answer in [0, 100]."""
    return (bool(_SCORES.search(question)) and bool(_RANKS.search(question))
            and all(0 <= v <= 100 for v in (*old, gold)))


def scale_fits(question: str, old: Sequence[Fraction], new: Sequence[Fraction], gold: Fraction,
               answer: Fraction) -> bool:
    """Ranked scores stay on their scale (:func:`ranked_scores`): the twin's numbers (``new``, token for
    token) and answer lie in [0, 100], and its answer stays above (below) each question number the
    original's was above (below). "Remove the lowest score" must remove the same one, and a needed score
    of 143 is no score. (Unranked scores off the scale, a mean of quiz scores with one of 200, stay
    answerable and are left alone.)"""
    if not ranked_scores(question, old, gold):
        return True
    if not all(0 <= v <= 100 for v in (*new, answer)):
        return False
    return all((gold <= a or answer > b) and (gold >= a or answer < b) for a, b in zip(old, new))
