"""Before a fresh residual round: does a change to the edge detector's recipe catch a held-out round's residuals?

A fresh reviewed round costs four reviewers; a recipe change that would not catch the residuals a reviewed round
already found is not worth one. This script rebuilds the head detector as ``benchmarks/edge_detector.py`` does
(patterns-only cleaning, the same self-labelled and reviewed examples, out-of-fold thresholds on the development
human texts with the same margin), but with one reviewed round held out of its examples, and scores that round's
cleaned texts: how many of its residual texts the rebuilt detector would cut, and how many of its clean ones.

Variants (each a recipe change under test, nothing shipped):

* ``shipped``: the recipe as it is, with the gated cut for a glued title's shape (set, as the build sets it, on
  the out-of-fold scores of shaped candidates in the development human texts and the reviewed clean texts);
* ``no-gate``: the shipped recipe without the gated cut (the recipe before it);
* ``title-case``: the shipped recipe and a second gated cut, set the same way, for a Title Case headline before a
  space (:func:`title_case_head`), the shape most residual titles of round 13 have;
* ``domain``: every text's domain inferred by a word classifier trained on Multi_Domain (whose file names give
  the domain), for human and LLM texts alike, so the domain feature no longer tells them apart (DetectRL's
  Multi_LLM and Direct_Prompt LLM texts carry no domain, human ones do), and thresholds set per domain;
* ``domain+sentences``: also drop head candidates that read as a sentence (they end in ``.``, ``!`` or ``?``
  and hold five or more lower-case content words), the kind of human news opening that sets the document
  threshold.
* ``words-off``: no hashed words (the segment's words, first and last words, the words after the cut), only its
  shape, so the model cannot learn a title's topic instead of its form;
* ``gap``: two more facts about the cut point: how many spaces follow it (a lost line break often leaves two)
  and whether a sentence starts after it (a capitalised word, then a lower-case one);
* ``aux``: whether the segment holds an auxiliary, a reporting verb or a pronoun ("is", "was", "has", "said",
  "we", "they"...), which a sentence has and a headline or a paper title mostly lacks; ``domain+aux`` adds it to
  ``domain``;

The clean texts of rounds 1 to 5, reviewed before the written criteria existed, are left out of the negatives in
every recipe, as the build leaves them out (a variant that left them out cut 2 of rounds 12 to 9's 65 residual
texts where the recipe before it cut 1, in edge_holdout.md at commit 1cb33f3, and the build adopted it).

The held-out round's texts were cleaned by the shipped detector (the review saw them so), so a cut here is on top
of it. DetectRL has no licence: the data is read from ``../shared/data/detectrl``.

    .venv/bin/python benchmarks/edge_holdout.py --hold round9 --hold round8 --hold round7 --hold round6
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT)]
from _provenance import header  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
VARIANTS = ("shipped", "no-gate", "title-case", "domain", "domain+sentences", "words-off", "gap", "aux", "domain+aux")
DOMAINS = ("abstract", "document", "story", "content")


def sentence_like(seg: str) -> bool:
    """A head segment that reads as a sentence: it ends in sentence punctuation and has five or more lower-case
    content words."""
    from zcp_core.artifacts.edges import _TITLE_SMALL

    alpha = [w for w in seg.split() if w[:1].isalpha()]
    low = sum(1 for w in alpha if w[:1].islower() and w.lower() not in _TITLE_SMALL)
    return seg.rstrip()[-1:] in ".!?" and low >= 5


_WORD_FEATURES = ("w=", "f2=", "f3=", "l2=", "nx=", "nx2=")
_AUX = re.compile(r"\b(?:is|are|was|were|be|been|being|has|have|had|do|does|did|will|would|can|could|should|shall|"
                  r"may|might|must|said|says|i|we|you|he|she|they|it|my|our|your|his|her|their|its|this|that|these|"
                  r"those|there|here)\b", re.IGNORECASE)


def features_of(variant: str) -> Callable[..., list[str]]:
    """The shipped ``edges.features``, changed as the variant says (see the module docstring)."""
    from zcp_core.artifacts.edges import features

    def changed(text: str, c: Any, domain: str = "") -> list[str]:
        out = features(text, c, domain)
        if c.edge != "head":
            return out
        tc = next(f for f in out if f.startswith("tc="))  # the title-case share
        if variant == "words-off":
            out = [f for f in out if not f.startswith(_WORD_FEATURES)]
        if variant == "gap":
            after = text[c.at: c.at + 6]
            gap = min(2, len(after) - len(after.lstrip(" ")))
            nxt = text[c.at:].split()[:3]
            starts = bool(nxt) and nxt[0][:1].isupper() and any(w[:1].islower() for w in nxt[1:])
            out += [f"gap={gap}", f"gap_kind={c.kind}|{gap}", f"sentnext={starts}", f"gap_tc={gap}|{tc}",
                    f"sent_kind_tc={starts}|{c.kind}|{tc}"]
        if variant.endswith("aux"):
            seg = text[: c.at]
            aux = bool(_AUX.search(seg))
            low = min(6, sum(1 for w in seg.split() if w[:1].islower()))
            out += [f"aux={aux}", f"aux_kind={aux}|{c.kind}", f"aux_tc={aux}|{tc}",
                    f"aux_end={aux}|{seg.rstrip()[-1:] in '.!?'}", f"aux_dom={aux}|{domain}", f"aux_low={aux}|{low}"]
        return out

    return changed


def head_rows(examples: list[Any], keep: Callable[[str], bool], features: Callable[..., list[str]]) -> Any:
    """``edges_train.rows`` for the head edge, with the candidates ``keep`` rejects left out."""
    import numpy as np

    from zcp_core.artifacts.edges import candidates, hasher
    from zcp_core.artifacts.edges_train import TOLERANCE, Rows

    feats, y, groups, ex = [], [], [], []
    for k, e in enumerate(examples):
        for c in candidates(e.text, "head"):
            if not keep(e.text[: c.at]):
                continue
            feats.append(features(e.text, c, e.domain))
            y.append(any(abs(c.at - p) <= TOLERANCE for p in e.head))
            groups.append(e.id)
            ex.append(k)
    return Rows(hasher().transform(feats), np.asarray(y, dtype=bool), groups, ex)


def best_head(text: str, domain: str, model: tuple[Any, float, Callable[..., list[str]]],
              keep: Callable[[str], bool]) -> tuple[int, float]:
    """The best kept head candidate of one text under (weights, intercept, features): (cut point, score); (0, 0.0)
    without one."""
    import numpy as np

    from zcp_core.artifacts.edges import candidates, hasher

    w, b, features = model
    cs = [c for c in candidates(text, "head") if keep(text[: c.at])]
    if not cs:
        return 0, 0.0
    z = hasher().transform([features(text, c, domain) for c in cs]) @ w + b
    p = 1.0 / (1.0 + np.exp(-z))
    i = int(np.argmax(p))
    return cs[i].at, float(p[i])


def gated_head(text: str, domain: str, model: tuple[Any, float, Callable[..., list[str]]], at_least: float,
               shape: Callable[[str, Any], bool]) -> tuple[int, float]:
    """The best head candidate of one text that has ``shape`` and reaches ``at_least``: (cut point, score); (0, 0.0)
    without one."""
    import numpy as np

    from zcp_core.artifacts.edges import candidates, hasher

    w, b, features = model
    cs = [c for c in candidates(text, "head") if shape(text, c)]
    if not cs:
        return 0, 0.0
    p = 1.0 / (1.0 + np.exp(-(hasher().transform([features(text, c, domain) for c in cs]) @ w + b)))
    i = int(np.argmax(p))
    return (cs[i].at, float(p[i])) if p[i] >= at_least else (0, 0.0)


def title_case_head(text: str, c: Any) -> bool:
    """Under test (variant ``title-case``), not shipped: a head candidate before a space whose segment reads as a
    Title Case headline: 3 to 20 words, no sentence end, comma, auxiliary or pronoun, at least three content words
    of four letters or more and every one of them capitalised ("Durrant Dominates Debut as Number One Seeded Darts
    Player | Glen Durrant has…")."""
    from zcp_core.artifacts.edges import _TITLE_SMALL
    from zcp_core.artifacts.titles import _AUX, MAX_AT, _title_like

    if c.edge != "head" or c.kind != "space" or c.at > MAX_AT:
        return False
    seg = text[: c.at].rstrip()
    if not _title_like(seg, allow_end=False) or "," in seg or _AUX.search(seg):
        return False
    big = [w for w in re.findall(r"[^\W\d_][\w'’-]*", seg) if len(w) >= 4 and w.lower() not in _TITLE_SMALL]
    return len(big) >= 3 and all(w[0].isupper() for w in big)


def domain_classifier(texts: list[Any], source: dict[str, str]) -> Callable[[list[str]], list[str]]:
    """A word classifier of the four DetectRL domains, trained on Multi_Domain (the domain is in its file names)."""
    from sklearn.feature_extraction.text import HashingVectorizer
    from sklearn.linear_model import LogisticRegression

    from zcp_core.artifacts.cleaner import domain_of

    train = [t for t in texts if source[t.id].startswith("Multi_Domain") and domain_of(t)]
    hv = HashingVectorizer(n_features=2 ** 16, alternate_sign=False, norm="l2")
    clf = LogisticRegression(C=10, max_iter=2000).fit(hv.transform([t.text for t in train]),
                                                      [domain_of(t) for t in train])
    return lambda xs: [str(d) for d in clf.predict(hv.transform(xs))]


def sample_rows(name: str) -> list[dict[str, Any]]:
    """The rows of ``clean_residual_<name>sample.jsonl`` (its header line left out)."""
    lines = (RESULTS / f"clean_residual_{name}sample.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if "sample_id" in r]


def variant_lines(variant: str, hold: str, base: list[Any], predict: Callable[[list[str]], list[str]],
                  domains: dict[str, str]) -> tuple[list[str], tuple[int, int, int, int]]:
    """Rebuild the head detector without round ``hold`` under one variant and score that round: its section, and
    (residual texts cut, residual texts, clean texts cut, clean texts). ``domains`` is each text's domain as the
    cleaner gives it (:func:`zcp_core.artifacts.cleaner.domain_of`), which the recipes without an inferred domain
    score with, as a release does."""
    from edge_detector import MARGIN, gated

    from zcp_core.artifacts.edges_train import fit, oof_scores, per_example_max

    sample = sample_rows(f"{hold}_")
    review = {r["sample_id"]: r for r in
              map(json.loads, (RESULTS / f"clean_residual_{hold}_review.jsonl").read_text().splitlines())}
    held = {s["id"] for s in sample}
    examples = [e for e in base if e.id not in held]
    by_domain = variant.startswith("domain")
    if by_domain:
        examples = [replace(e, domain=d) for e, d in zip(examples, predict([e.text for e in examples]))]
    keep = (lambda seg: not sentence_like(seg)) if variant == "domain+sentences" else (lambda seg: True)
    features = features_of(variant)
    r = head_rows(examples, keep, features)
    oof = oof_scores(r)
    best = per_example_max(r, oof, len(examples))
    from zcp_core.artifacts.titles import glued_title

    shapes: list[Callable[[str, Any], bool]] = ([glued_title] if variant in ("shipped", "title-case") else []) + (
        [title_case_head] if variant == "title-case" else [])
    # the build's own gated threshold (every candidate is kept in the recipes that have a gate)
    gates = [(shape, at) for shape in shapes if (at := gated(examples, r, oof, [], 1.01, shape)[0]) is not None]
    human = [i for i, e in enumerate(examples) if e.source == "human"]
    groups = {d: [i for i in human if examples[i].domain == d] for d in DOMAINS} if by_domain else {"": human}
    cut = {d: min(0.999, max(best[i] for i in idx) + MARGIN) for d, idx in groups.items()}
    w, b = fit(r)
    texts = [s["cleaned_text"] for s in sample]
    doms = predict(texts) if by_domain else [domains.get(s["id"], "") for s in sample]
    artifacts = sum(1 for s in sample if review.get(s["sample_id"], {}).get("artifact"))
    rows, caught, clean_cut = [], 0, 0
    for s, d in zip(sample, doms):
        at, score = best_head(s["cleaned_text"], d, (w, b, features), keep)
        if score < cut[d if by_domain else ""]:
            at, score = max((gated_head(s["cleaned_text"], d, (w, b, features), g, shape) for shape, g in gates),
                            key=lambda hit: hit[1], default=(0, 0.0))
            if not score:
                continue
        art = bool(review.get(s["sample_id"], {}).get("artifact"))
        caught, clean_cut = caught + art, clean_cut + (not art)
        rows.append(f"| {s['sample_id']} | {d or '-'} | {score:.3f} | {'artifact' if art else 'clean'} | "
                    f"{json.dumps(s['cleaned_text'][:at].strip()[:90], ensure_ascii=False)} |")
    thresholds = ", ".join(f"{d or 'all'} {c:.3f}" for d, c in cut.items())
    counts = (caught, artifacts, clean_cut, len(sample) - artifacts)
    return [f"### {variant}, {hold} held out", "",
            f"- Cut thresholds (highest out-of-fold development human score + {MARGIN}): {thresholds}"
            + "".join(f"; gated cut ({shape.__name__}) {g:.3f}" for shape, g in gates) + ".",
            f"- The held-out round's texts with an artifact cut: **{caught} of {artifacts}**; clean texts cut: "
            f"{clean_cut} of {len(sample) - artifacts}.", "",
            *(["| sample | domain | score | review | cut |", "|---|---|---|---|---|", *rows, ""] if rows else [])], counts


def main() -> int:
    """Rebuild per held-out round and variant, write the results file."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "detectrl"))
    ap.add_argument("--hold", action="append", required=True, help="a reviewed round to hold out (e.g. round7)")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--out", default=str(RESULTS / "edge_holdout.md"))
    args = ap.parse_args()
    data = Path(args.data)
    if not data.exists():
        print(f"{data} is absent: the detector is built from DetectRL's test splits", file=sys.stderr)
        return 1
    variants = args.variants.split(",")
    if bad := [v for v in variants if v not in VARIANTS]:
        ap.error(f"--variants: unknown {bad[0]!r} (known: {', '.join(VARIANTS)})")
    from clean_residual_sample import load_all
    from edge_detector import examples_from, reviewed

    from zcp_core.artifacts import clean, load_library
    from zcp_core.artifacts.cleaner import domain_of

    lib = load_library()
    texts, source = load_all(data)
    result = clean(texts, lib)  # patterns only, as the detector's build sees the texts
    base, _ = examples_from(result, texts, source, reviewed(RESULTS))
    predict = domain_classifier(texts, source)
    doms = {t.id: domain_of(t) for t in texts}
    lines = [header("edge_holdout: recipe changes of the edge detector against a held-out reviewed round",
                    f"pattern library {lib.version} (sha256 {lib.sha256[:12]}); DetectRL test splits "
                    "(github.com/NLP2CT/DetectRL 3472f0ae3cc8)"), ""]
    totals = {v: [0, 0, 0, 0] for v in variants}
    sections: list[str] = []
    for hold in args.hold:
        sections += [f"## {hold} held out", ""]
        for v in variants:
            section, counts = variant_lines(v, hold, base, predict, doms)
            sections += section
            totals[v] = [a + b for a, b in zip(totals[v], counts)]
            print(f"{hold} {v} done", flush=True)
    lines += [f"## Summary: {', '.join(args.hold)} held out in turn", "",
              "| recipe | residual texts cut | clean texts cut |", "|---|---|---|",
              *(f"| {v} | {t[0]} of {t[1]} | {t[2]} of {t[3]} |" for v, t in totals.items()), "", *sections]
    Path(args.out).write_text("\n".join(lines))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
