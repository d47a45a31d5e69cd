"""The artifact pattern library: versioned YAML data, compiled with RE2.

A library file holds ``version``, optional ``macros`` (named regex fragments
used as ``{{NAME}}``), optional ``typo_exclude`` (real words that ``{{TYPO:word}}``
must not match, see :mod:`zcp_core.artifacts.fuzzy`), optional ``names`` (names
written in camel case that no match may split, see :func:`splits_a_name`) and ``patterns``. Each pattern has ``id``,
``description``, ``source``, ``family``, ``regex``, ``flags``, ``scope`` and
``action`` (see :class:`Pattern`). Patterns are compiled with google-re2 so a
scan runs in linear time whatever a user writes; a pattern RE2 rejects raises
:class:`PatternError` naming it, unless the caller opts into ``engine="re"``
(Python's backtracking engine, with a per-text time limit).
"""

from __future__ import annotations

import hashlib
import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Sequence

from zcp_core.artifacts.fuzzy import expand_typos
from zcp_core.errors import ZcpError

Family = Literal["rejection", "prompt", "beginning", "ending", "domain", "assistant"]
Scope = Literal["start", "end", "anywhere"]
Action = Literal["drop_text", "hold_back", "strip_sentence", "strip_match", "flag"]
Engine = Literal["re2", "re"]

# First-match-wins order of the paper's "without replacement" count: a text is
# charged to the most severe family it shows; domain (unsharp) comes last.
FAMILY_ORDER: tuple[str, ...] = ("rejection", "substitute", "prompt", "transcript", "assistant", "beginning", "ending",
                                  "domain")
HIGH_PRECISION: tuple[str, ...] = tuple(f for f in FAMILY_ORDER if f != "domain")
SCOPES: tuple[str, ...] = ("start", "end", "anywhere")
ACTIONS: tuple[str, ...] = ("drop_text", "hold_back", "strip_sentence", "strip_match", "flag")
FLAGS: dict[str, str] = {"IGNORECASE": "i", "MULTILINE": "m", "DOTALL": "s"}
DEFAULT_LIBRARY = Path(__file__).resolve().parent / "library" / "detectrl.yaml"
DEFAULT_RE_TIMEOUT_S = 1.0
#: A regex group of this name narrows a match to the span the cleaner removes (the rest is context).
CUT_GROUP = "cut"


class PatternError(ZcpError):
    """A pattern that cannot be loaded or compiled; names the pattern and file."""


class PatternTimeout(ZcpError):
    """A ``re``-engine pattern ran past its per-text time limit."""


@dataclass(frozen=True)
class Pattern:
    """One artifact pattern.

    Attributes:
        id: Unique id (``beg-here-is``).
        description: What it catches, for humans.
        source: Where it comes from (paper table, issue, dev-set inspection).
        family: Artifact family.
        regex: The expanded regex (macros substituted).
        flags: Any of ``IGNORECASE``, ``MULTILINE``, ``DOTALL``.
        scope: ``start`` anchors at the text's beginning, ``end`` at its end,
            ``anywhere`` searches the whole text.
        action: What the cleaner does with a match.
    """

    id: str
    description: str
    source: str
    family: str
    regex: str
    flags: tuple[str, ...]
    scope: str
    action: str

    def compiled_source(self, engine: Engine = "re2") -> str:
        """The regex with flags inlined and the scope anchor applied (RE2 spells end-of-text ``\\z``, re ``\\Z``)."""
        inline = "".join(FLAGS[f] for f in self.flags)
        body = f"(?:{self.regex})"
        if self.scope == "start":
            body = r"\A" + body
        elif self.scope == "end":
            body = body + (r"\s*\z" if engine == "re2" else r"\s*\Z")
        return (f"(?{inline})" if inline else "") + body


@dataclass(frozen=True)
class PatternLibrary:
    """A loaded, validated library.

    Attributes:
        version: The library's ``version`` string (joined with ``+`` when extended).
        patterns: Patterns in file order (extensions appended).
        sha256: Hash of the files' bytes, recorded in every run.
        path: The file(s) read, joined with ``+``.
        engine: ``re2`` (linear time) or ``re`` (opt-in, with a time limit).
        re_timeout_s: Per-text time limit for the ``re`` engine.
        names: Names written in camel case ("HuffPost") that no match may split.
    """

    version: str
    patterns: tuple[Pattern, ...]
    sha256: str
    path: str
    engine: str = "re2"
    re_timeout_s: float = DEFAULT_RE_TIMEOUT_S
    names: frozenset[str] = frozenset()

    def by_id(self) -> dict[str, Pattern]:
        """Patterns keyed by id."""
        return {p.id: p for p in self.patterns}

    def ordered(self) -> tuple[Pattern, ...]:
        """Patterns in first-match-wins order: by family order, then file order."""
        rank = {f: i for i, f in enumerate(FAMILY_ORDER)}
        return tuple(sorted(self.patterns, key=lambda p: rank[p.family]))


def _expand(regex: str, macros: dict[str, str], where: str, typo_exclude: Sequence[str] = ()) -> str:
    out = regex
    for _ in range(5):  # macros may use macros, a few levels deep
        out = expand_typos(out, typo_exclude)
        if "{{" not in out:
            return out
        for name, frag in macros.items():
            out = out.replace("{{" + name + "}}", frag)
    if "{{" in out:
        raise PatternError(f"{where}: unknown macro in {regex!r} (macros: {sorted(macros)})")
    return out


def _parse(path: Path, macros: dict[str, str]) -> tuple[str, list[Pattern], bytes, dict[str, str], list[str]]:
    import yaml

    raw = path.read_bytes()
    try:
        doc = yaml.safe_load(raw)
    except yaml.YAMLError as e:
        raise PatternError(f"{path}: not valid YAML: {e}") from e
    if not isinstance(doc, dict) or "patterns" not in doc or "version" not in doc:
        raise PatternError(f"{path}: a pattern library needs 'version' and 'patterns'")
    macros = {**macros, **{str(k): str(v) for k, v in (doc.get("macros") or {}).items()}}
    typo_exclude = tuple(str(w) for w in (doc.get("typo_exclude") or ()))
    out = []
    for i, p in enumerate(doc["patterns"] or []):
        where = f"{path}: pattern {p.get('id', f'#{i}') if isinstance(p, dict) else f'#{i}'}"
        if not isinstance(p, dict):
            raise PatternError(f"{where}: not a mapping")
        missing = [k for k in ("id", "family", "regex", "scope", "action") if not p.get(k)]
        if missing:
            raise PatternError(f"{where}: missing {', '.join(missing)}")
        flags = tuple(str(f).upper() for f in (p.get("flags") or []))
        checks = [("family", p["family"], FAMILY_ORDER), ("scope", p["scope"], SCOPES),
                  ("action", p["action"], ACTIONS), *(("flag", f, tuple(FLAGS)) for f in flags)]
        for key, val, allowed in checks:
            if val not in allowed:
                raise PatternError(f"{where}: {key} {val!r} is not one of {allowed}")
        if p["family"] == "domain" and p["action"] != "flag":
            # Domain words also occur in human text, so they never edit data.
            raise PatternError(f"{where}: domain patterns may only 'flag' (got {p['action']!r})")
        out.append(Pattern(
            id=str(p["id"]), description=str(p.get("description", "")), source=str(p.get("source", "")),
            family=p["family"], regex=_expand(str(p["regex"]), macros, where, typo_exclude), flags=flags,
            scope=p["scope"], action=p["action"],
        ))
    return str(doc["version"]), out, raw, macros, [str(n) for n in (doc.get("names") or ())]


def load_library(
    path: str | Path | None = None,
    extend: Sequence[str | Path] = (),
    engine: Engine = "re2",
    re_timeout_s: float = DEFAULT_RE_TIMEOUT_S,
) -> PatternLibrary:
    """Load and validate a pattern library, and check that every pattern compiles.

    Args:
        path: Library file; default the bundled ``detectrl.yaml``.
        extend: Extra library files whose patterns are appended (they may use
            the base file's macros; ids must stay unique).
        engine: ``re2`` (default, linear time) or ``re`` (explicit opt-in for
            patterns RE2 rejects, with a per-text time limit).
        re_timeout_s: The ``re`` engine's per-text time limit in seconds.

    Returns:
        The library, with a sha256 over all files read.

    Raises:
        PatternError: Bad file, duplicate id, or a pattern the engine rejects.
    """
    files = [Path(path) if path else DEFAULT_LIBRARY, *(Path(e) for e in extend)]
    h = hashlib.sha256()
    versions, patterns, names = [], [], []
    macros: dict[str, str] = {}
    for f in files:
        if not f.exists():
            raise PatternError(f"{f}: pattern library not found")
        version, pats, raw, macros, more = _parse(f, macros)
        h.update(raw)
        versions.append(version)
        patterns.extend(pats)
        names.extend(more)
    seen: set[str] = set()
    for p in patterns:
        if p.id in seen:
            raise PatternError(f"duplicate pattern id {p.id!r} in {' + '.join(map(str, files))}")
        seen.add(p.id)
    lib = PatternLibrary(version="+".join(versions), patterns=tuple(patterns), sha256=h.hexdigest(),
                         path=" + ".join(str(f) for f in files), engine=engine, re_timeout_s=re_timeout_s,
                         names=frozenset(names))
    compile_library(lib)  # fail at load time, naming the pattern, not mid-scan
    return lib


@dataclass(frozen=True)
class CompiledLibrary:
    """Compiled patterns in first-match-wins order, plus an RE2 set for pre-filtering.

    Attributes:
        library: The source library.
        patterns: Patterns in first-match-wins order.
        regexes: One compiled regex per pattern, same order.
        prefilter: An ``re2.Set`` over all patterns (None for the ``re`` engine).
    """

    library: PatternLibrary
    patterns: tuple[Pattern, ...]
    regexes: tuple[Any, ...]
    prefilter: Any

    def candidates(self, text: str) -> list[int]:
        """Indices of patterns that match ``text`` (all of them for the ``re`` engine)."""
        if self.prefilter is None:
            return list(range(len(self.patterns)))
        hit = self.prefilter.Match(text)
        return sorted(hit) if hit else []

    def finditer(self, index: int, text: str) -> list[tuple[int, int, str]]:
        """All (start, end, matched text) of pattern ``index`` in ``text``, non-empty only."""
        rx = self.regexes[index]
        if self.library.engine == "re":
            spans = _timed_finditer(rx, text, self.library.re_timeout_s, self.patterns[index].id)
        else:
            spans = _cut_spans(rx, rx.finditer(text))
        return [m for m in spans if not (splits_a_name(text, m[0], self.library.names)
                                         or splits_a_name(text, m[1], self.library.names))]


def splits_a_name(text: str, at: int, names: frozenset[str]) -> bool:
    """Whether a match boundary at ``at`` falls inside a name written in camel case: between a lower case letter
    and a capital of one word ("The Washington Post and Huff|Post"), where the whole word is one of ``names`` or
    the text writes it again ("…the Play|Station Studios…", later "PlayStation"). A generated headline glued to
    its story ("…Fundraising MilestoneGordon Aikman…") forms a word no text writes twice."""
    if not 0 < at < len(text) or not (text[at - 1].islower() and text[at].isupper()):
        return False
    start, end = at, at
    while start > 0 and text[start - 1].isalpha():
        start -= 1
    while end < len(text) and text[end].isalpha():
        end += 1
    word = text[start:end]
    return word in names or text.count(word) > 1


def _cut_spans(rx: Any, matches: Any) -> list[tuple[int, int, str]]:
    """(start, end, text) of each non-empty match, or of its ``cut`` group when the regex names one.

    A ``(?P<cut>...)`` group lets a pattern read context it must not remove (RE2 has no lookaround):
    ``\\A\\s*(?P<cut>")[A-Z][^"]*"\\s*\\z`` removes only the opening quote of a wholly quoted text.
    A match whose ``cut`` group did not take part is skipped.
    """
    g = rx.groupindex.get(CUT_GROUP)
    out = []
    for m in matches:
        s, e = (m.start(), m.end()) if g is None else (m.start(g), m.end(g))
        if s >= 0 and e > s:
            out.append((s, e, m.group(0) if g is None else m.group(g)))
    return out


def _re2_options() -> Any:
    import re2

    opts = re2.Options()
    opts.log_errors = False  # errors are raised with the pattern id instead of logged to stderr
    # The prefilter set compiles every pattern into one automaton; RE2's default 8 MiB budget no longer holds the
    # detectrl-2026.12.6 library (typo alternations are large), so the budget is 64 MiB (still linear-time matching).
    opts.max_mem = 64 << 20
    return opts


def compile_library(library: PatternLibrary) -> CompiledLibrary:
    """Compile a library for scanning (call once per process or shard).

    Raises:
        PatternError: A pattern the engine rejects, named by id.
    """
    ordered = library.ordered()
    regexes = []
    if library.engine == "re":
        import re

        for p in ordered:
            try:
                regexes.append(re.compile(p.compiled_source("re")))
            except re.error as e:
                raise PatternError(f"pattern {p.id!r} ({library.path}): not a valid regex: {e}") from e
        return CompiledLibrary(library, ordered, tuple(regexes), None)
    import re2

    opts = _re2_options()
    prefilter = re2.Set.SearchSet(opts)
    for p in ordered:
        try:
            regexes.append(re2.compile(p.compiled_source(), opts))
            prefilter.Add(p.compiled_source())
        except Exception as e:  # re2 raises its own error type from the C++ binding
            raise PatternError(
                f"pattern {p.id!r} ({library.path}) is rejected by RE2: {e}. RE2 has no lookaround or "
                "backreferences; rewrite it, or opt into engine='re' (backtracking, per-text time limit)"
            ) from e
    prefilter.Compile()
    return CompiledLibrary(library, ordered, tuple(regexes), prefilter)


def _timed_finditer(rx: Any, text: str, limit_s: float, pid: str) -> list[tuple[int, int, str]]:
    """stdlib ``re`` finditer under a SIGALRM time limit (the regex loop checks signals)."""
    if threading.current_thread() is not threading.main_thread():
        raise PatternTimeout(f"pattern {pid!r}: the re engine's time limit needs the main thread")

    def _alarm(signum: int, frame: Any) -> None:
        raise PatternTimeout(f"pattern {pid!r} ran past its {limit_s:g} s per-text limit (catastrophic backtracking?)")

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        return _cut_spans(rx, rx.finditer(text))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
