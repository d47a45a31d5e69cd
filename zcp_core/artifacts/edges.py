"""A learned detector for the artifacts patterns miss at a text's edges.

Patterns see a text's surface; a headline glued to its body ("A New Spinfoam
Vertex for Quantum Gravity We propose…"), a task echo or a label at the start,
a closer or a meta note at the end need its structure: a title-cased clause
with no verb, followed by a sentence that starts the story. This model reads
that structure from a few shape features and hashed words, so it stores no
vocabulary: the model file is a weight vector, its thresholds and its version.

Candidates. At the start, every point in the first :data:`HEAD_CHARS`
characters where a segment can end (a line break, a sentence end, a glue such
as "BroadcastsMIn", a space before a capitalised word): the candidate is the
text before that point. At the end, every point in the last
:data:`TAIL_CHARS` characters where a segment can start (after a line break
or a sentence end): the candidate is the text after it. Each candidate is
scored by a logistic model; the best candidate of each edge decides:

* score >= ``cut``: the segment is cut (an edit, recorded like a pattern's, with the model's name, version and
  score, and undone like one);
* ``review`` <= score < ``cut``: the text is flagged for review (``edges_review``), nothing is cut;
* below ``review``: nothing;
* a head candidate shaped like a glued title (:func:`zcp_core.artifacts.titles.glued_title`, passed in as
  ``gate``) is cut at a lower threshold of its own, ``gate_cut``, when the best candidate does not reach
  ``cut``: a human text rarely has that shape, so its threshold is set on far fewer, and far lower, scores.

Thresholds are set when the model is built, on out-of-fold scores of the
development human texts, with a margin (``benchmarks/edge_detector.py``); the
gated one also on the reviewed texts marked clean, whose glued-title-shaped
candidates are LLM content that a cut there would remove.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

Edge = Literal["head", "tail"]
EDGES: tuple[str, ...] = ("head", "tail")
HEAD_CHARS = 300
TAIL_CHARS = 300
MAX_HEAD_WORDS = 40
MIN_WORDS = 2  # words with a letter in a candidate segment
HASH_FEATURES = 2 ** 18
DEFAULT_MODEL = Path(__file__).resolve().parent / "library" / "detectrl.edges.npz"
_WORD = re.compile(r"\S+")
_SENT_END = re.compile(r"[.!?]+[\"')\]]*(?=\s)")
_GLUE = re.compile(r"(?<=[a-z0-9.!?)\"'’*])(?=[A-Z])")
_SPACE_CAP = re.compile(r" (?=[A-Z])")
_TITLE_SMALL = frozenset("a an and as at but by for from in into of on or over the to vs via with".split())


@dataclass(frozen=True)
class Candidate:
    """One place an edge artifact could end (head) or start (tail).

    Attributes:
        edge: ``head`` or ``tail``.
        at: The cut point: a head segment is ``text[:at]``, a tail segment ``text[at:]``.
        kind: What makes it a candidate: ``newline``, ``sentence``, ``glue`` or ``space``.
    """

    edge: str
    at: int
    kind: str


@dataclass(frozen=True)
class EdgeDecision:
    """A text's best candidate at one edge and what the model decided.

    Attributes:
        edge: ``head`` or ``tail``.
        start: First character of the span the decision covers (0 for a head).
        end: One past its last character (the text's length for a tail).
        score: The model's probability that the span is an artifact.
        action: ``cut``, ``review`` or ``keep``.
    """

    edge: str
    start: int
    end: int
    score: float
    action: str


def candidates(text: str, edge: Edge) -> list[Candidate]:
    """The candidate cut points of one edge, in text order (see the module docstring)."""
    found: dict[int, str] = {}
    if edge == "head":
        head = text[:HEAD_CHARS]
        words = [m.end() for m in _WORD.finditer(head)][:MAX_HEAD_WORDS]
        limit = words[-1] if words else 0
        for kind, points in (("space", [m.start() for m in _SPACE_CAP.finditer(head)]),
                             ("glue", [m.start() for m in _GLUE.finditer(head)]),
                             ("sentence", [m.end() for m in _SENT_END.finditer(head)]),
                             ("newline", [i for i, c in enumerate(head) if c == "\n"])):
            for p in points:
                if 0 < p <= limit and text[:p].strip() and text[p:].strip():
                    found[p] = kind  # a later kind in this order names the point (newline wins)
        return _distinct(text, "head", found)
    lo = max(0, len(text) - TAIL_CHARS)
    for kind, points in (("sentence", [m.end() for m in _SENT_END.finditer(text, lo)]),
                         ("newline", [i + 1 for i in range(lo, len(text)) if text[i] == "\n"])):
        for p in points:
            if 0 < p < len(text) and text[p:].strip() and text[:p].strip():
                found[p] = kind
    return _distinct(text, "tail", found)


def _distinct(text: str, edge: str, found: dict[int, str]) -> list[Candidate]:
    """One candidate per distinct segment (points that differ only by whitespace give one): the first point of a
    head segment, the last of a tail one; ``newline`` names it when any of its points is a line break."""
    groups: dict[str, list[int]] = {}
    for p in sorted(found):
        seg = (text[:p] if edge == "head" else text[p:]).strip()
        if sum(1 for w in seg.split() if any(ch.isalpha() for ch in w)) < MIN_WORDS:
            continue  # an opening quote mark or a lone word is no headline, closer or label
        groups.setdefault(seg, []).append(p)
    out = []
    for points in groups.values():
        at = points[0] if edge == "head" else points[-1]
        kind = "newline" if any(found[p] == "newline" for p in points) else found[at]
        out.append(Candidate(edge, at, kind))
    return sorted(out, key=lambda c: c.at)


def _bucket(n: float, edges: Sequence[float]) -> str:
    for e in edges:
        if n <= e:
            return f"<={e:g}"
    return f">{edges[-1]:g}"


def _shape(word: str) -> str:
    return "".join("X" if c.isupper() else "x" if c.isalpha() else "9" if c.isdigit() else c for c in word[:6])


def features(text: str, c: Candidate, domain: str = "") -> list[str]:
    """The hashed-feature strings of one candidate: its kind, the segment's shape and words, and its context.

    ``domain`` (``abstract``, ``document``, ``story``, ``content``; ``""`` when unknown) lets the model learn
    that a title opens no human abstract or news document, while human stories and reviews open with many
    title-like lines.
    """
    seg = (text[: c.at] if c.edge == "head" else text[c.at:]).strip()
    ctx = (text[c.at: c.at + 40] if c.edge == "head" else text[max(0, c.at - 40): c.at]).strip()
    words = seg.split()
    lower = [w.lower().strip("*_#:\"'()[],.!?") for w in words]
    alpha = [w for w in words if w[:1].isalpha()]
    title = sum(w[:1].isupper() for w in alpha) / max(1, len(alpha))
    ctx_words = ctx.split()
    near = ctx_words[:2] if c.edge == "head" else ctx_words[-2:]
    out = [f"kind={c.kind}", f"nw={_bucket(len(words), (1, 2, 3, 5, 8, 12, 18, 25, 40))}",
           f"nc={_bucket(len(seg), (10, 25, 50, 80, 120, 180, 250))}", f"tc={round(title, 1)}",
           f"end={_shape(seg[-1:]) if seg else ''}", f"start={_shape(seg[:1]) if seg else ''}",
           f"lines={_bucket(seg.count(chr(10)), (0, 1, 3))}", f"share={_bucket(len(seg) / max(1, len(text)), (0.05, 0.1, 0.2, 0.4))}",
           f"bold={'**' in seg}", f"colon={':' in seg}", f"q={'?' in seg}", f"paren={seg[:1] == '(' and seg[-1:] == ')'}"]
    # a title capitalises every word but a few short ones; a sentence leaves its content words in lower case
    content_lower = sum(1 for w in alpha if w[:1].islower() and w.lower() not in _TITLE_SMALL)
    out += [f"lowc={_bucket(content_lower, (0, 1, 2, 4, 8))}", f"kind_end={c.kind}|{_shape(seg[-1:])}",
            f"kind_tc={c.kind}|{round(title, 1)}", f"kind_lowc={c.kind}|{_bucket(content_lower, (0, 1, 2, 4))}",
            f"end_lowc={_shape(seg[-1:])}|{_bucket(content_lower, (0, 1, 2, 4))}",
            f"kind_end_lowc={c.kind}|{_shape(seg[-1:])}|{_bucket(content_lower, (0, 1, 2, 4))}",
            f"tc_lowc={round(title, 1)}|{_bucket(content_lower, (0, 1, 2, 4))}",
            f"dom={domain}", f"dom_kind_end={domain}|{c.kind}|{_shape(seg[-1:])}",
            f"dom_tc_lowc={domain}|{round(title, 1)}|{_bucket(content_lower, (0, 1, 2, 4))}",
            f"dom_nw={domain}|{_bucket(len(words), (2, 5, 12, 25))}"]
    out += [f"w={w}" for w in lower[:30]]
    out += [f"f2={' '.join(lower[:2])}", f"f3={' '.join(lower[:3])}", f"l2={' '.join(lower[-2:])}"]
    out += [f"sh={_shape(w)}" for w in words[:12]]
    out += [f"nx={w.lower()}" for w in near] + [f"nxs={_shape(w)}" for w in near]
    if c.edge == "head":
        out += [f"nx2={' '.join(w.lower() for w in near)}", f"cap_next={ctx[:1].isupper()}"]
    return out


@dataclass(frozen=True)
class EdgeModel:
    """A built edge detector: per edge a hashed logistic model and its two thresholds.

    Attributes:
        name: The model's name (``detectrl-edges``).
        version: Its version string; a cut records ``learned:<name>-<version>:<edge>``.
        weights: Per edge, the weight vector (``HASH_FEATURES`` floats).
        intercept: Per edge, the intercept.
        cut: Per edge, the score at or above which a segment is cut.
        review: Per edge, the score at or above which (below ``cut``) a text goes to review.
        meta: What the model was built from and how (training data hashes, counts, out-of-fold figures; ``gate``
            names the predicate ``gate_cut`` was set for).
        gate_cut: Per edge, the score at or above which a candidate the gate admits is cut (none: no gate).
    """

    name: str
    version: str
    weights: dict[str, Any]
    intercept: dict[str, float]
    cut: dict[str, float]
    review: dict[str, float]
    meta: dict[str, Any]
    gate_cut: dict[str, float] = field(default_factory=dict)

    @property
    def pattern_id(self) -> str:
        """The id its cuts carry in ``edits.parquet`` (the edge is appended)."""
        return f"learned:{self.name}-{self.version}"

    def score(self, texts: Sequence[str], edge: Edge, domains: Sequence[str] | None = None
              ) -> list[list[tuple[Candidate, float]]]:
        """Every candidate of every text at one edge, with its score (in text order); ``domains`` as in
        :func:`features`, one per text."""
        import numpy as np

        doms = list(domains) if domains is not None else [""] * len(texts)
        cands = [candidates(t, edge) for t in texts]
        rows = [features(t, c, d) for t, d, cs in zip(texts, doms, cands) for c in cs]
        if not rows:
            return [[] for _ in texts]
        x = hasher().transform(rows)
        z = x @ np.asarray(self.weights[edge]) + self.intercept[edge]
        p = 1.0 / (1.0 + np.exp(-z))
        out, k = [], 0
        for cs in cands:
            out.append([(c, float(p[k + i])) for i, c in enumerate(cs)])
            k += len(cs)
        return out

    def decide(self, texts: Sequence[str], domains: Sequence[str] | None = None,
               gate: Callable[[str, Candidate], bool] | None = None) -> list[list[EdgeDecision]]:
        """Per text, the decision at each edge whose best candidate reaches ``review``, or whose best candidate
        the ``gate`` admits reaches ``gate_cut`` (head first)."""
        out: list[list[EdgeDecision]] = [[] for _ in texts]
        for edge in EDGES:
            key = (lambda cs: (cs[1], -cs[0].at)) if edge == "head" else (lambda cs: (cs[1], cs[0].at))
            for i, (text, scored) in enumerate(zip(texts, self.score(texts, edge, domains))):  # type: ignore[arg-type]
                if not scored:
                    continue
                c, s = max(scored, key=key)
                action = "cut" if s >= self.cut[edge] else "review" if s >= self.review[edge] else "keep"
                if action != "cut" and gate is not None and edge in self.gate_cut:
                    gated = [cs for cs in scored if cs[1] >= self.gate_cut[edge] and gate(text, cs[0])]
                    if gated:
                        (c, s), action = max(gated, key=key), "cut"
                if action == "keep":
                    continue
                start, end = (0, c.at) if edge == "head" else (c.at, len(text))
                out[i].append(EdgeDecision(edge, start, end, s, action))
        return out


def hasher() -> Any:
    """The feature hasher every model uses (murmurhash3: the same buckets in every process and version)."""
    from sklearn.feature_extraction import FeatureHasher

    return FeatureHasher(n_features=HASH_FEATURES, input_type="string", alternate_sign=False)


def save_model(model: EdgeModel, path: str | Path) -> Path:
    """Write a model as one ``.npz`` file: weights as float32 arrays, everything else as JSON."""
    import json

    import numpy as np

    head = {"name": model.name, "version": model.version, "intercept": model.intercept, "cut": model.cut,
            "review": model.review, "meta": model.meta}
    if model.gate_cut:
        head["gate_cut"] = model.gate_cut  # absent when there is none: an older file stays byte-identical
    arrays = {f"w_{e}": np.asarray(model.weights[e], dtype=np.float32) for e in EDGES}
    p = Path(path)
    with p.open("wb") as f:
        np.savez_compressed(f, header=np.array(json.dumps(head, sort_keys=True)), **arrays)  # type: ignore[arg-type]
    return p


def load_model(path: str | Path | None = None) -> EdgeModel:
    """Load a model file (default: the bundled DetectRL model)."""
    import json

    import numpy as np

    with np.load(Path(path or DEFAULT_MODEL), allow_pickle=False) as z:
        head = json.loads(str(z["header"]))
        weights = {e: z[f"w_{e}"].astype(np.float64) for e in EDGES}
    return EdgeModel(name=head["name"], version=head["version"], weights=weights, intercept=head["intercept"],
                     cut=head["cut"], review=head["review"], meta=head["meta"], gate_cut=head.get("gate_cut", {}))
