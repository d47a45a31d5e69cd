"""Typo-tolerant pattern pieces: one-edit word variants and confusable folding.

DetectRL's character attacks misspell the very words the patterns key on
("Srue, here is", "[asisstant]:") and swap letters for look-alikes from other
scripts ("Surе" with a Cyrillic ``е``). Two small tools cover both:

* :func:`typo_regex` expands ``{{TYPO:word}}`` in a library into every string
  one edit away from ``word`` (a deletion, an adjacent swap, a substituted or
  inserted letter, or an inserted space), minus real words the library lists
  under ``typo_exclude`` (``there`` is one edit from ``here``, and "Sure,
  there is" is human prose).
* :func:`fold_confusables` maps look-alike letters to ASCII one character for
  one character, so offsets found in the folded text are offsets in the text.
"""

from __future__ import annotations

import functools
import re
import string
import unicodedata
from typing import Iterable

_LETTERS = string.ascii_lowercase
# Look-alikes seen in DetectRL's character attacks (Cyrillic, Greek, Armenian, Coptic, Latin alpha); each maps to
# one ASCII letter so the text keeps its length.
_CONFUSABLE_MAP = {
    "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "х": "x", "у": "y", "і": "i", "ј": "j", "ѕ": "s", "ԁ": "d",
    "һ": "h", "ӏ": "l", "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C",
    "Т": "T", "Х": "X", "І": "I", "Ѕ": "S", "ο": "o", "α": "a", "ν": "v", "Ο": "O", "Α": "A", "Β": "B", "Ε": "E",
    "Κ": "K", "Μ": "M", "Ν": "N", "Τ": "T", "ɑ": "a", "ɡ": "g", "ո": "n", "հ": "h", "ս": "u", "ⲅ": "r", "ⲟ": "o",
}
_CONFUSABLES = str.maketrans(_CONFUSABLE_MAP)


@functools.lru_cache(maxsize=4096)
def _fold_char(c: str) -> str:
    # Compatibility forms (fullwidth "ｍ", mathematical "𝚝", roman numeral "ⅼ") fold by NFKC when that gives one
    # character; anything that would change the length (ligatures) is kept as it is.
    n = unicodedata.normalize("NFKC", c)
    return n if len(n) == 1 else c


def fold_confusables(text: str) -> str:
    """The text with look-alike letters replaced by ASCII ones; same length, so offsets carry over."""
    if text.isascii():
        return text
    out = text.translate(_CONFUSABLES)
    return "".join(c if c.isascii() else _fold_char(c) for c in out)


def one_edit_variants(word: str) -> set[str]:
    """``word`` and every string one edit from it (lowercase letters; an inserted space only inside the word)."""
    w = word.lower()
    out = {w}
    for i in range(len(w)):
        out.add(w[:i] + w[i + 1:])
        out.update(w[:i] + c + w[i + 1:] for c in _LETTERS)
        if i + 1 < len(w):
            out.add(w[:i] + w[i + 1] + w[i] + w[i + 2:])
    for i in range(len(w) + 1):
        out.update(w[:i] + c + w[i:] for c in _LETTERS)
        if 0 < i < len(w):
            out.add(w[:i] + " " + w[i:])
    return {v for v in out if len(v) >= 2}


def typo_regex(word: str, exclude: Iterable[str] = ()) -> str:
    """A non-capturing alternation of ``word``'s one-edit variants, minus ``exclude`` (real words to keep out)."""
    keep = one_edit_variants(word) - {e.lower() for e in exclude if e.lower() != word.lower()}
    # Longest first, so an alternation inside a longer regex prefers the fuller reading.
    return "(?:" + "|".join(re.escape(v) for v in sorted(keep, key=lambda v: (-len(v), v))) + ")"


_TYPO = re.compile(r"\{\{TYPO:([A-Za-z]+)\}\}")


def expand_typos(regex: str, exclude: Iterable[str] = ()) -> str:
    """Replace every ``{{TYPO:word}}`` in a regex with :func:`typo_regex` of the word."""
    ex = tuple(exclude)
    return _TYPO.sub(lambda m: typo_regex(m.group(1), ex), regex)
