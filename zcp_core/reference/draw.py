"""Matched-difficulty draws: new values that look like the ones they replace.

GSM8K's numbers skew small and round, so a uniform draw within the digit count
makes twins harder than their originals (larger answers, flatter leading
digits). A new value here keeps, of the original:

* its sign, its decimals and its number of digits;
* its roundness: the same count of trailing zeros, and a multiple of 5 stays a
  multiple of 5 (25 -> 15, 35, 45), a non-multiple stays one (16 -> 17, not 20);
  one significant digit is round enough on its own (50 -> 30 ... 90);
* its size within a factor of 2, drawn below or above with equal chance, and
  within a side uniformly on a log scale (so a move up and a move down are of
  one size: 50 -> 100 is as likely as 50 -> 25);
* a percentage at most 100, and a count of units per larger unit no more than
  fit in it ("6 days a week" stays at most 7, "50 weeks a year" at most 52).

1 is never drawn: "1 apples" would not read, and a factor 1 hides an operation.
"""

from __future__ import annotations

import math
import random
import re
from fractions import Fraction

from zcp_core.reference.numbers import decimals_of


def _shape(m: int) -> tuple[int, int, int]:
    """(digits, trailing zeros, significant part) of a positive integer."""
    tz = 0
    while m % 10 == 0:
        m //= 10
        tz += 1
    return len(str(m)) + tz, tz, m


_PER = r"\s*(?:-\s*)?{unit}s?\s+(?:(?:a|an|per|each|every|in an?|of the|of a)\s+)?{whole}\b"
_CAPS = tuple((re.compile(_PER.format(unit=u, whole=w), re.IGNORECASE), Fraction(c)) for u, w, c in (
    ("day", "week", 7), ("hour", "day", 24), ("week", "year", 52), ("month", "year", 12), ("day", "month", 31),
    ("day", "year", 366), ("minute", "hour", 60), ("second", "minute", 60), ("hour", "week", 168),
))


def unit_cap(text_after: str) -> Fraction | None:
    """The most a number can be, given the words after it ("days a week": 7), or None."""
    for pat, cap in _CAPS:
        if pat.match(text_after):
            return cap
    return None


def candidates(v: Fraction, percent: bool = False, cap: Fraction | None = None) -> list[Fraction]:
    """Every value :func:`draw_value` may return for ``v``, ascending (empty when none fits)."""
    if v == 0:
        return []
    k = decimals_of(v) or 0
    m = abs(int(v * 10**k))
    digits, tz, sig = _shape(m)
    lo, hi = max((m + 1) // 2, 10 ** (digits - 1), 2), min(2 * m, 10**digits - 1)
    if percent and k == 0 and m <= 100:
        hi = min(hi, 100)
    step = 10**tz
    out = []
    for c in range(-(-lo // step) * step, hi + 1, step):
        d, ctz, csig = _shape(c)
        if c == m or d != digits or ctz != tz:
            continue
        if sig >= 10 and (csig % 5 == 0) != (sig % 5 == 0):
            continue
        new = Fraction(c if v > 0 else -c, 10**k)
        if cap is None or v > cap or new <= cap:
            out.append(new)
    return sorted(out)


def _across(v: Fraction, percent: bool, cap: Fraction | None, above: bool) -> list[Fraction]:
    """Values within a factor of 2 on one side of ``v`` that may cross a power of ten (10 -> 5, 90 -> 100),
    keeping its decimals, its sign, whether it is a multiple of 5 and, where any value can, whether it ends in
    a zero (100 -> 50 ... 90, but 10 -> 5); 1 is never drawn."""
    k = decimals_of(v) or 0
    m = abs(int(v * 10**k))
    span = range(m + 1, 2 * m + 1) if above else range(max((m + 1) // 2, 2), m)
    fits = []
    for c in span:
        if (c % 5 == 0) != (m % 5 == 0) or (percent and k == 0 and m <= 100 < c):
            continue
        new = Fraction(c if v > 0 else -c, 10**k)
        if cap is None or v > cap or new <= cap:
            fits.append((c, new))
    zero = [new for c, new in fits if (c % 10 == 0) == (m % 10 == 0)]
    return sorted(zero or [new for _, new in fits], key=abs)


def sides(v: Fraction, percent: bool = False, cap: Fraction | None = None) -> tuple[list[Fraction], list[Fraction]]:
    """:func:`candidates` of ``v`` split into those below and those above it (in size).

    A side the shape rules leave empty (10 has no two-digit value below it within a factor of 2, 90 none above)
    takes the values that cross a power of ten instead (:func:`_across`: 10 -> 5, 90 -> 100 ... 180), so that
    numbers at the edge of their number of digits can still move both ways and twins are not pushed to one side.
    """
    cands = candidates(v, percent, cap)
    below, above = [c for c in cands if abs(c) < abs(v)], [c for c in cands if abs(c) > abs(v)]
    if v != 0 and not below:
        below = _across(v, percent, cap, above=False)
    if v != 0 and not above:
        above = _across(v, percent, cap, above=True)
    return below, above


def log_uniform(side: list[Fraction], v: Fraction, rng: random.Random) -> Fraction:
    """A value of ``side`` (all below or all above ``v``) drawn uniformly on a log scale of the move.

    A distance ``r`` is drawn uniformly in ``[0, max |log(c / v)|]`` and the candidate whose log distance is
    nearest ``r`` is taken (ties to the nearer). A uniform draw on the integers would favour large moves up
    (``[v, 2v]`` holds as many integers as ``[v/2, v]`` but twice the room in log space above).
    """
    dist = [abs(math.log(abs(c) / abs(v))) for c in side]
    r = rng.uniform(0.0, max(dist))
    return min(zip(dist, side), key=lambda dc: (abs(dc[0] - r), dc[0]))[1]


def pick(below: list[Fraction], above: list[Fraction], rng: random.Random, v: Fraction | None = None
         ) -> Fraction | None:
    """A side with equal chance (the only one when the other is empty), then a value in it; None if both empty.

    With ``v`` (the value replaced) the value is drawn on a log scale (:func:`log_uniform`), else uniformly.
    """
    if not below and not above:
        return None
    side = below if not above else above if not below else (below if rng.random() < 0.5 else above)
    return log_uniform(side, v, rng) if v is not None else rng.choice(side)


def draw_value(v: Fraction, rng: random.Random, percent: bool = False, cap: Fraction | None = None) -> Fraction:
    """A new value like ``v`` (see the module doc); ``v`` itself when nothing fits.

    The side (below or above ``v``) is drawn first with equal chance, so twins are
    as often smaller as larger; then a value within that side, uniformly on a log scale.
    """
    new = pick(*sides(v, percent, cap), rng, v)
    return v if new is None else new


def roundness(v: Fraction) -> tuple[bool, bool]:
    """(ends in a zero, is a multiple of 5) of a whole number; (False, False) for others and for 0."""
    if v.denominator != 1 or v == 0:
        return False, False
    return v.numerator % 10 == 0, v.numerator % 5 == 0


def trailing_zeros(v: Fraction) -> int:
    """How many zeros a whole number ends in (0 for others and for 0)."""
    if v.denominator != 1 or v == 0:
        return 0
    return _shape(abs(v.numerator))[1]


def answer_digits(v: Fraction) -> int:
    """Digits of a value as written (sign and point not counted): 12.5 has 3, 0.5 has 2."""
    k = decimals_of(v) or 0
    return len(str(abs(int(v)))) + k
