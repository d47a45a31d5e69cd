"""Implicit constants: numbers a GSM8K solution may use without the question writing them.

A literal such as the 7 in ``3*7`` is a unit constant only when the question's
wording implies it (weeks meeting days). Each value maps to groups of patterns;
a group whose patterns all occur in the question is a cue for the value. Only
0 and 1 need no cue. A constant is never perturbed, so a number the question
writes that equals a cued constant cannot be told from the constant: the
tracer holds both fixed (see :mod:`zcp_core.reference.trace`).
"""

from __future__ import annotations

import re
from fractions import Fraction

from zcp_core.reference.rules import FEMALE, MALE, STOP_CAPS

F = Fraction

_HALF = r"\bhalf\b|\bhalves\b|\bhalf-|\bhalfway\b|\bhalved\b"
_DAY = r"\bdays?\b|\bdaily\b|\bnights?\b|\bmonday|\bsunday|\bsaturday"
_HOUR = r"\bhours?\b|\bhourly\b|\bhrs?\b|mph\b|\d:\d\d|\b\d+ ?[ap]\.?m\b"
_MIN = r"\bminutes?\b|\bmins?\b"
_YEAR = r"\byears?\b|\byearly\b|\bannual|\bbirthday"
_MONTH = r"\bmonths?\b|\bmonthly\b"
_WEEK = r"\bweeks?\b|\bweekly\b|\bweekdays?\b|\bweekends?\b"
_DOLLAR = r"\$|\bdollars?\b"

# value -> groups of patterns; every pattern of one group must occur (case-insensitive).
CUES: dict[Fraction, tuple[tuple[str, ...], ...]] = {
    F(2): ((_HALF + r"|\btwice\b|\bdoubl|\bpairs?\b|\btwo times\b|\bboth\b|\btwins?\b|\bcouple\b|\beach other\b"
            r"|\bround[- ]trip|\bback\b|\breturn|\bevery other\b|\bbiweekly\b|\bbi-weekly\b|\bsemi|\bhis wife\b"
            r"|\bher husband\b|\bparents\b|\brectang|\bsquare|\bperimeter\b|\bsides\b|\banother\b"
            r"|\bone of each\b",),),
    F(3): ((r"\btripl|\bthirds?\b|\bthrice\b|\btrio\b|\btriangle",), (r"\bfeet\b|\bfoot\b", r"\byards?\b")),
    F(4): ((r"\bquarters?\b|\bfourths?\b|\bquadrupl|\bsquare|\brectang|\bperimeter\b|\bfour times\b",),
           (_MONTH, _WEEK)),
    F(5): ((r"\bnickels?\b|\bfifths?\b",), (r"\bweekdays?\b|\bwork ?week|\bschool ?week",)),
    F(6): ((r"\bsix-pack|\bhalf a dozen\b|\bhalf-dozen\b",),),
    F(7): ((_WEEK, _DAY),),
    F(8): ((r"\bgallons?\b", r"\bpints?\b"), (r"\bcups?\b", r"\bpints?\b|\bounces?\b")),
    F(10): ((r"\btenths?\b|\bdimes?\b|\bdecades?\b",),),
    F(12): ((r"\bdozens?\b",), (_MONTH, _YEAR), (r"\binch", r"\bf(?:oo|ee)t\b"), (r"\bdozen",)),
    F(16): ((r"\bounces?\b|\boz\b", r"\bpounds?\b|\blbs?\b"),),
    F(24): ((_DAY, _HOUR),),
    F(26): ((r"\balphabet",),),
    F(25): ((r"\bquarters?\b", r"\bcents?\b|" + _DOLLAR),),
    F(30): ((_MONTH, _DAY),),
    F(31): ((_MONTH, _DAY),),
    F(52): ((_WEEK, _YEAR),),
    F(60): ((_HOUR, _MIN), (_MIN, r"\bseconds?\b"), (_HOUR, r"\bseconds?\b")),
    F(3600): ((_HOUR, r"\bseconds?\b"),),
    F(100): ((r"%|\bpercent",), (r"\bcents?\b", _DOLLAR), (r"\bcentury\b|\bcenturies\b",),
             (r"\bmeters?\b|\bmetres?\b", r"\bcentimet|\bcm\b")),
    F(365): ((_YEAR, _DAY),),
    F(1000): ((r"\bthousands?\b|\bkilo|\bmilli|\bkg\b|\bkm\b|\bml\b",),),
    F(1, 2): ((_HALF,),),
    F(1, 4): ((r"\bquarters?\b|\bfourths?\b",),),
    F(3, 4): ((r"\bthree[- ]quarters?\b|\bthree[- ]fourths?\b|\b3/4\b",),),
    F(1, 10): ((r"\btenths?\b|\bdimes?\b",),),
    F(1, 20): ((r"\bnickels?\b",),),
    F(1, 100): ((r"%|\bpercent|\bcents?\b|\bpenn(?:y|ies)\b",),),
    F(3, 2): ((r"\band a half\b",),),
    F(1, 3): ((r"\bthirds?\b",),),
    F(1, 60): ((_HOUR, _MIN),),
}
UNIVERSAL = frozenset({F(0), F(1)})
# Constants a question number may be multiplied by without a step writing it ("two weeks" is 14 days).
UNIT_CONSTANTS = (F(7), F(12), F(24), F(30), F(52), F(60), F(100), F(365))
# A list such as "oatmeal, chocolate chip, and sugar cookies" makes its length a quantity the
# solution may use ("one of each flavor" is 3 cookies) without writing it.
_LIST = re.compile(r"\b[\w'-]+(?: [\w'-]+){0,5}(?:, [\w'-]+(?: [\w'-]+){0,5})+,? and [\w'-]+", re.IGNORECASE)


# A time constant counts one unit in another (7 days in a week): a number added to it or taken from it
# ("7-2" open days) is in its inner unit, so the question's "2 weeks" cannot be that number.
INNER_UNIT: dict[Fraction, frozenset[str]] = {
    F(7): frozenset({"day"}), F(12): frozenset({"month"}), F(24): frozenset({"hour"}), F(30): frozenset({"day"}),
    F(31): frozenset({"day"}), F(52): frozenset({"week"}), F(60): frozenset({"minute", "second"}),
    F(365): frozenset({"day"}), F(3600): frozenset({"second"}),
}
# The time unit right after a number, one word between allowed ("2 weeks", "2-week", "two more weeks").
_TIME_AFTER = re.compile(r"\s*-?\s*(?:[a-z]+\s+)?(second|minute|hour|day|week|month|year)s?\b", re.IGNORECASE)


def foreign_unit(const: Fraction, text_after: str) -> str | None:
    """The time unit written right after a number (``text_after`` follows it) when the time constant ``const``
    does not count that unit ("2 weeks" against the 7 days of a week gives "week"); None otherwise."""
    m = _TIME_AFTER.match(text_after)
    if const not in INNER_UNIT or m is None:
        return None
    unit = m.group(1).lower()
    return None if unit in INNER_UNIT[const] else unit


def cued_constants(question: str) -> frozenset[Fraction]:
    """Every constant the wording of ``question`` implies (0 and 1 always)."""
    out = set(UNIVERSAL)
    for value, groups in CUES.items():
        if any(all(re.search(p, question, re.IGNORECASE) for p in group) for group in groups):
            out.add(value)
    out |= {Fraction(n) for n in list_lengths(question) | part_counts(question)}
    people = len(named_people(question))
    if people >= 2:  # "Robert, Cindy and Aaron share equally" divides by 3 without writing it
        out.add(Fraction(people))
    return frozenset(out)


def named_people(question: str) -> set[str]:
    """Capitalised words that name people: a known first name, or a word never written in lower case that is
    not a common capitalised word (the heuristic of the paraphraser's renaming)."""
    out = set()
    for m in re.finditer(r"\b([A-Z][a-z]{2,})\b(?=['\u2019]s\b| [a-z]|[,.?!;:])", question):
        w = m.group(1)
        if w in FEMALE or w in MALE:
            out.add(w)
        elif w.lower() not in STOP_CAPS and not w.endswith("s") and \
                not re.search(rf"(?<![A-Za-z]){w.lower()}(?![A-Za-z])", question):
            out.add(w)
    return out


def has_cue(value: Fraction, question: str) -> bool:
    """Whether the wording of ``question`` implies the constant ``value`` (see :func:`cued_constants`)."""
    return value in cued_constants(question)


_MULT = {"twice": 2, "double": 2, "doubles": 2, "triple": 3, "triples": 3, "thrice": 3}
_MULT_WORD = re.compile(r"\b(twice|doubles?|triples?|thrice)\b", re.IGNORECASE)


def part_counts(question: str) -> set[int]:
    """Counts that "twice as many" implies: a whole of n + 1 parts (2x + x = 3x), or n - 1 more. ("4 times as
    many" ties 5 to the question's 4, so the tracer weighs that one: :mod:`zcp_core.reference.trace`.)"""
    out = set()
    for m in _MULT_WORD.finditer(question):
        n = _MULT[m.group(1).lower()]
        out |= {n + 1, n - 1}
    return out


def list_lengths(question: str) -> set[int]:
    """Lengths (3 or more) of the comma lists in ``question`` ("A, B, and C" has 3)."""
    out = set()
    for m in _LIST.finditer(question):
        commas = m.group(0).count(",")
        out.add(commas + 1 if re.search(r", and \S+$", m.group(0)) else commas + 2)
    return out


_LEGS = r"\blegs?\b|\blegged\b"
_FOUR_LEGGED = (r"\b(?:cows?|calf|calves|bulls?|oxen|ox|horses?|ponies|pony|donkeys?|mules?|dogs?|puppy|puppies|cats?"
                r"|kittens?|pigs?|piglets?|sheep|lambs?|goats?|rabbits?|bunny|bunnies|hamsters?|mice|mouse|rats?"
                r"|foxe?s?|wolf|wolves|lions?|tigers?|bears?|elephants?|zebras?|giraffes?|camels?|deer|llamas?"
                r"|alpacas?|frogs?|turtles?|tortoises?|lizards?|chairs?|tables?|stools?)\b")
_TWO_LEGGED = (r"\b(?:chickens?|hens?|roosters?|chicks?|ducks?|ducklings?|geese|goose|birds?|turkeys?|ostrich(?:es)?"
               r"|emus?|penguins?|parrots?|owls?|pigeons?|people|persons?|humans?|men|women|man|woman|kids?"
               r"|children|child|boys?|girls?|students?|farmers?|workers?)\b")
# Counts the story's things have without the question writing them (v7): the legs of the animals it names, the
# wheels of its vehicles, a deck's cards. A solution may use one unwritten ("4*4 + 4*2" legs of 4 cows and 4
# chickens), so a written number of the same value cannot be told from it.
WORLD: dict[Fraction, tuple[tuple[str, ...], ...]] = {
    F(2): ((_LEGS, _TWO_LEGGED), (r"\bwheels?\b|\btires?\b|\btyres?\b",
                                  r"\bbikes?\b|\bbicycles?\b|\bmotorcycles?\b|\bmotorbikes?\b|\bscooters?\b")),
    F(3): ((r"\bwheels?\b|\btires?\b|\btyres?\b", r"\btricycles?\b|\btrikes?\b"),),
    F(4): ((_LEGS, _FOUR_LEGGED), (r"\bwheels?\b|\btires?\b|\btyres?\b",
                                   r"\bcars?\b|\btrucks?\b|\bvans?\b|\bwagons?\b|\bskateboards?\b|\bjeeps?\b")),
    F(6): ((_LEGS, r"\binsects?\b|\bants?\b|\bbees?\b|\bbeetles?\b|\bflies\b|\bladybugs?\b|\bcrickets?\b"),),
    F(8): ((_LEGS + r"|\barms\b|\btentacles?\b", r"\bspiders?\b|\boctop(?:us|i|uses)\b"),),
    F(52): ((r"\bdecks?\b", r"\bcards?\b"),),
}


def world_constants(question: str) -> frozenset[Fraction]:
    """Counts the question's things have that it does not write (:data:`WORLD`): generator v7 reads them as
    constants, so a written number of the same value is held rather than tied or moved."""
    return frozenset(value for value, groups in WORLD.items()
                     if any(all(re.search(p, question, re.IGNORECASE) for p in group) for group in groups))
