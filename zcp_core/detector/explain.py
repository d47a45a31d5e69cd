"""SHAP token attributions for detectors, and how much of them falls on artifacts.

Linear model (exact). ``shap.LinearExplainer`` with an all-zero background
(the empty document) gives ``phi_j = w_j * x_j`` for each TF-IDF feature, and
``sum_j phi_j + b`` equals the detector's margin (log-odds of ``llm``). A
zero background keeps every attribution on a feature that occurs in the
text, so all of it can be put back on the text.

Mapping features to tokens. Display tokens are ``\\w+`` runs and single
punctuation characters of the original text. Each feature's ``phi_j`` is split
equally over its occurrences in the text; each occurrence is split over the
display tokens it covers, in proportion to the characters it covers:

* word n-gram ``"here is"``: the characters of its sklearn tokens (lowercased
  ``\\w\\w+`` runs), so a bigram gives each word its length's share;
* char n-gram ``"e is "``: its characters after sklearn's preprocessing
  (lowercase, whitespace runs collapsed to one space), mapped back to original
  offsets; whitespace characters belong to no token and carry no weight.

Occurrences are found with sklearn's own rules, so their counts equal the
vectoriser's term counts (tested). Token attributions therefore sum to the
margin minus the intercept, up to ``unassigned`` (features with no token
characters, e.g. a char unigram of a space).

Artifacts. A token is ``in_artifact`` when it overlaps a span the artifact
scanner finds with a high-precision family (not ``domain``, which also occurs
in human text); ``artifact_family`` names the family (domain included).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zcp_core.detector.base import WORD_PATTERN

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.detector.tfidf import TfidfDetector
    from zcp_core.detector.transformer import TransformerDetector
    from zcp_core.schema import TextRecord

DISPLAY_TOKEN = re.compile(r"\w+|[^\w\s]")
_WORD = re.compile(WORD_PATTERN)
_WHITE_RUNS = re.compile(r"\s\s+")
TOKEN_COLUMNS = ["id", "label", "position", "token", "start", "end", "attribution", "in_artifact", "artifact_family"]
TEXT_COLUMNS = ["id", "label", "text", "margin", "base_value", "phi_sum", "unassigned", "total_mass", "artifact_mass",
                "artifact_share", "has_artifact"]
SpanFn = Callable[[str], Sequence[Any]]


@dataclass(frozen=True)
class Attributions:
    """Token attributions of one detector on a set of texts.

    Attributes:
        tokens: One row per display token (columns ``TOKEN_COLUMNS``).
        texts: One row per text (columns ``TEXT_COLUMNS``): the text as explained,
            margin, base value, the attribution mass on artifacts and its share.
        method: ``linear-exact`` or ``partition-text-masker``.
    """

    tokens: pd.DataFrame
    texts: pd.DataFrame
    method: str

    def artifact_share(self) -> float | None:
        """Share of |attribution| on artifact tokens, over texts that contain an artifact span."""
        t = self.texts[self.texts["has_artifact"]]
        total = float(t["total_mass"].sum())
        return float(t["artifact_mass"].sum()) / total if total > 0 else None


def _lower_map(text: str) -> tuple[str, list[int]]:
    """Lowercase ``text`` and map each lowercased character to its original offset."""
    out: list[str] = []
    omap: list[int] = []
    for i, c in enumerate(text):
        lc = c.lower()  # may be longer than one character (e.g. 'İ')
        out.append(lc)
        omap.extend([i] * len(lc))
    return "".join(out), omap


def word_occurrences(text: str, ngrams: tuple[int, int]) -> list[tuple[str, list[int]]]:
    """Word n-grams as sklearn builds them, each with the original offsets of its token characters."""
    low, omap = _lower_map(text)
    toks = [(m.group(0), [omap[k] for k in range(m.start(), m.end())]) for m in _WORD.finditer(low)]
    out = []
    for n in range(ngrams[0], ngrams[1] + 1):
        for i in range(len(toks) - n + 1):
            grams = toks[i:i + n]
            out.append((" ".join(g[0] for g in grams), [k for g in grams for k in g[1]]))
    return out


def char_occurrences(text: str, ngrams: tuple[int, int]) -> list[tuple[str, list[int]]]:
    """Char n-grams as sklearn builds them (lowercase, whitespace runs -> one space), with original offsets."""
    low, omap = _lower_map(text)
    norm: list[str] = []
    nmap: list[int] = []
    pos = 0
    for m in _WHITE_RUNS.finditer(low):
        norm.append(low[pos:m.start()])
        nmap.extend(omap[pos:m.start()])
        norm.append(" ")
        nmap.append(omap[m.start()])
        pos = m.end()
    norm.append(low[pos:])
    nmap.extend(omap[pos:])
    s = "".join(norm)
    out = []
    for n in range(ngrams[0], min(ngrams[1], len(s)) + 1):
        for i in range(len(s) - n + 1):
            out.append((s[i:i + n], [nmap[k] for k in range(i, i + n) if not s[k].isspace()]))
    return out


def linear_shap(detector: TfidfDetector, texts: Sequence[str]) -> tuple[Any, float]:
    """Exact SHAP values of a TF-IDF detector via ``shap.LinearExplainer`` (zero background).

    Returns:
        ``(phi, base_value)``: phi as a dense array (texts x features), and the
        expected value (the intercept); ``phi.sum(1) + base_value`` is the margin.
    """
    import numpy as np
    import shap
    from scipy.sparse import csr_matrix

    x = detector.transform(texts)
    background = csr_matrix((1, x.shape[1]))
    explainer = shap.LinearExplainer((detector.coef, detector.intercept), background)
    phi = np.asarray(explainer.shap_values(x))
    return phi, float(np.ravel(explainer.expected_value)[0])


def _spans_for(text: str, span_fn: SpanFn | None) -> tuple[list[tuple[int, int, str]], list[tuple[int, int, str]]]:
    """(high-precision artifact spans, all spans) as (start, end, family)."""
    if span_fn is None:
        return [], []
    spans = [(int(s.start), int(s.end), str(s.family)) for s in span_fn(text)]
    return [s for s in spans if s[2] != "domain"], spans


def token_rows(rec: TextRecord, attr: list[float], toks: list[tuple[int, int]], span_fn: SpanFn | None) -> list[dict]:
    hp, all_spans = _spans_for(rec.text, span_fn)
    rows = []
    for k, (s, e) in enumerate(toks):
        fam = next((f for a, b, f in hp if a < e and s < b), "") or next((f for a, b, f in all_spans if a < e and s < b), "")
        rows.append({"id": rec.id, "label": rec.label, "position": k, "token": rec.text[s:e], "start": s, "end": e,
                     "attribution": attr[k], "in_artifact": any(a < e and s < b for a, b, _ in hp),
                     "artifact_family": fam})
    return rows


def text_row(rec: TextRecord, rows: list[dict], margin: float, base: float, phi_sum: float, spans: bool) -> dict:
    total = sum(abs(r["attribution"]) for r in rows)
    art = sum(abs(r["attribution"]) for r in rows if r["in_artifact"])
    assigned = sum(r["attribution"] for r in rows)
    return {"id": rec.id, "label": rec.label, "text": rec.text, "margin": margin, "base_value": base, "phi_sum": phi_sum,
            "unassigned": phi_sum - assigned, "total_mass": total, "artifact_mass": art,
            "artifact_share": art / total if total > 0 else 0.0, "has_artifact": spans}


def linear_token_attributions(detector: TfidfDetector, records: Sequence[TextRecord], span_fn: SpanFn | None = None,
                              batch: int = 64) -> Attributions:
    """Exact per-token SHAP attributions of a TF-IDF detector.

    Args:
        detector: A trained :class:`~zcp_core.detector.TfidfDetector`.
        records: Texts to explain.
        span_fn: ``text -> spans`` (objects with ``start``, ``end``, ``family``), e.g.
            ``lambda t: artifact_spans(t, library)``; None marks no artifacts.
        batch: Texts per SHAP call (bounds memory: the dense phi is batch x features).
    """
    import pandas as pd

    wvocab = detector.word_vec.vocabulary_
    cvocab = detector.char_vec.vocabulary_
    nw = detector.n_word
    cfg = detector.config
    all_tokens: list[dict] = []
    text_rows: list[dict] = []
    for b in range(0, len(records), batch):
        chunk = records[b:b + batch]
        phi, base = linear_shap(detector, [r.text for r in chunk])
        for rec, row in zip(chunk, phi, strict=True):
            toks = [(m.start(), m.end()) for m in DISPLAY_TOKEN.finditer(rec.text)]
            owner = [-1] * (len(rec.text) + 1)
            for k, (s, e) in enumerate(toks):
                owner[s:e] = [k] * (e - s)
            occ = [(wvocab.get(g), offs) for g, offs in word_occurrences(rec.text, cfg.word_ngrams)]
            occ += [(None if (j := cvocab.get(g)) is None else nw + j, offs)
                    for g, offs in char_occurrences(rec.text, cfg.char_ngrams)]
            counts: dict[int, int] = {}
            for j, _ in occ:
                if j is not None:
                    counts[j] = counts.get(j, 0) + 1
            attr = [0.0] * len(toks)
            for j, offs in occ:
                if j is None:
                    continue
                owned = [owner[o] for o in offs if owner[o] >= 0]
                if not owned:
                    continue
                share = float(row[j]) / counts[j] / len(owned)
                for k in owned:
                    attr[k] += share
            rows = token_rows(rec, attr, toks, span_fn)
            phi_sum = float(row.sum())
            all_tokens += rows
            text_rows.append(text_row(rec, rows, phi_sum + base, base, phi_sum, any(r["in_artifact"] for r in rows)))
    return Attributions(pd.DataFrame(all_tokens, columns=TOKEN_COLUMNS), pd.DataFrame(text_rows, columns=TEXT_COLUMNS),
                        "linear-exact")


def top_tokens(attr: Attributions, k: int = 30) -> pd.DataFrame:
    """Global importance: tokens (lowercased) by mean |attribution| over the explained texts.

    ``mean_abs`` is the summed |attribution| divided by the number of texts
    (absent = 0, as in SHAP's bar plot). Columns: ``token``, ``mean_abs``,
    ``mean_attribution`` (signed, per occurrence), ``count``, ``n_texts``,
    ``artifact_rate`` (occurrences inside artifact spans), ``is_artifact``
    (artifact_rate >= 0.5), ``rank``.
    """
    import pandas as pd

    t = attr.tokens
    n_texts = max(1, len(attr.texts))
    if t.empty:
        return pd.DataFrame(columns=["token", "mean_abs", "mean_attribution", "count", "n_texts", "artifact_rate",
                                     "is_artifact", "rank"])
    t = t.assign(key=t["token"].str.lower(), abs_attr=t["attribution"].abs())
    g = t.groupby("key").agg(sum_abs=("abs_attr", "sum"), mean_attribution=("attribution", "mean"),
                             count=("attribution", "size"), n_texts=("id", "nunique"),
                             artifact_rate=("in_artifact", "mean"))
    g["mean_abs"] = g["sum_abs"] / n_texts
    g = g.sort_values(["mean_abs", "count"], ascending=[False, False]).head(k).reset_index()
    g = g.rename(columns={"key": "token"})
    g["is_artifact"] = g["artifact_rate"] >= 0.5
    g["rank"] = range(1, len(g) + 1)
    return g[["token", "mean_abs", "mean_attribution", "count", "n_texts", "artifact_rate", "is_artifact", "rank"]]


def _token_spans(text: str, pieces: Sequence[str]) -> list[tuple[int, int]]:
    """Char spans of shap's token strings, found left to right in the text."""
    spans, cur = [], 0
    for piece in pieces:
        p = piece.strip()
        pos = text.find(p, cur) if p else -1
        if pos < 0:
            spans.append((cur, cur))
            continue
        spans.append((pos, pos + len(p)))
        cur = pos + len(p)
    return spans


def text_masker_attributions(detector: TransformerDetector, records: Sequence[TextRecord],
                             span_fn: SpanFn | None = None, max_evals: int = 200) -> Attributions:
    """SHAP attributions via ``shap.maskers.Text`` + Partition explainer (approximate; keep n small).

    Texts are cut to the detector's ``max_length`` tokens first so the masker
    and the model see the same tokens.
    """
    import numpy as np
    import pandas as pd
    import shap

    from zcp_core.schema import TextRecord as TR

    tok = detector.tokenizer
    cut = []
    for r in records:
        ids = tok(r.text, truncation=True, max_length=detector.config.max_length, add_special_tokens=False)["input_ids"]
        cut.append(TR(r.id, tok.decode(ids), r.label, r.llm_type, r.data_type))

    def f(batch: Any) -> np.ndarray:
        return detector.margin([str(s) for s in batch])

    explainer = shap.Explainer(f, shap.maskers.Text(tok), seed=detector.config.seed)
    exp = explainer([r.text for r in cut], max_evals=max_evals, batch_size=detector.config.batch_size, silent=True)
    tokens: list[dict] = []
    texts: list[dict] = []
    for i, rec in enumerate(cut):
        values = [float(v) for v in np.ravel(exp.values[i])]
        spans = _token_spans(rec.text, list(exp.data[i]))
        keep = [k for k, (s, e) in enumerate(spans) if e > s]
        rows = token_rows(rec, [values[k] for k in keep], [spans[k] for k in keep], span_fn)
        base = float(np.ravel(exp.base_values[i])[0])
        phi_sum = float(sum(values))
        tokens += rows
        texts.append(text_row(rec, rows, phi_sum + base, base, phi_sum, any(r["in_artifact"] for r in rows)))
    return Attributions(pd.DataFrame(tokens, columns=TOKEN_COLUMNS), pd.DataFrame(texts, columns=TEXT_COLUMNS),
                        "partition-text-masker")


def explain(detector: Any, records: Sequence[TextRecord], span_fn: SpanFn | None = None, max_evals: int = 200
            ) -> Attributions:
    """Token attributions for any detector: exact for TF-IDF, shap's text masker for transformers."""
    if getattr(detector, "kind", "") == "tfidf":
        return linear_token_attributions(detector, records, span_fn)
    return text_masker_attributions(detector, records, span_fn, max_evals=max_evals)
