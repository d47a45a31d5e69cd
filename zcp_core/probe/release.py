"""Refreshed benchmark releases from a probe run (``zcp release RUN --out DIR``).

Under ``--replace flagged`` (the default) the release replaces exactly the run's flagged items
(``items.parquet`` ``flagged``; see :mod:`zcp_core.probe.flags`) that have a verified twin; under
``--replace covered`` every item that has one, flagged or not (a clean release whatever the per-item
power). A replaced item's twin is its spare (its last twin with a score, which took no part in its p) when
the spare is verified, else its first verified twin (:func:`twin_verification`):

* ``reexecuted``: a numeric twin (``metadata["method"]`` starts with
  ``numeric-perturbation-``) whose solution was re-executed from the twin's
  own question values and matched its gold: ``metadata["verification"]
  ["reexecuted"] is True``, written by :mod:`zcp_core.reference.numeric`.
  A numeric twin without that record (e.g. one made before the check) is not
  released;
* ``template_checked``: a template twin (``template-v1``) whose template renders the original exactly, whose
  program gives the original's gold, and whose drawn values meet its constraints (:mod:`zcp_core.reference.
  template_build`); one whose first twin an independent solver disagreed with is not released;
* ``two_distinct_judges``: an LLM twin (``llm-isomorphic-v1``) accepted by at
  least two judges that are different models from each other and from the
  generator (``metadata["generator"]`` and ``metadata["judges"]``, every judge
  CORRECT on the accepted attempt).

Other flagged items (and, under ``covered``, other items with twins) are kept and listed with the reason.

Under ``flagged`` the flags are the gate (:mod:`zcp_core.probe.verdict`). On a P metric they are
Benjamini-Hochberg discoveries at level q, itself a level-q test of "no item is contaminated": with no
discovery nothing is replaced, and the card says so in one sentence. Across audits the expected share of
false flags is at most about q; a given list can hold more, so the card gives no count of false flags.
``--min-confidence`` (default 0.95) gates both modes on the paper's Contamination Confidence of the same
metric (which needs ``n >= stats.MIN_PAIRS`` pairs). Under the paper's ``acc`` rule (original right, twin
wrong; also every run made before the flags carried a false-discovery rate) chance alone flags some: the
card then gives the twin-only count ``c`` and ``b - c`` with its exact 95% CI as the estimated number of
memorised items.

The card and ``release.json`` carry the mode, the flag metric, q, the flags, each replaced item's p and
q-value, and the model's mean on the flag metric (:class:`Scores`): before the release over the probed
originals, after it over the released items, a replaced item scored on its spare twin. The spare took no
part in the item's p, so its score is not selected low with the flag, as the twins that made the p small
are; items replaced by another twin, or with no spare, are left out of the score after and counted. They
also carry an estimate of the contaminated items the release leaves in (:mod:`zcp_core.probe.leftover`).

When none of the dataset files the run's manifest names exists any more (a run
copied elsewhere, e.g. the bundled examples), the licence is looked for beside
the run folder instead. Twins from a reference run (``--reference runs/ref``)
inherit the licence its source had when they were built. A no-derivatives
licence allows only a release that replaces nothing.

The card and ``release.json`` name no path of the machine that made them: the
source is cited by dataset name, version and URL, the run by its folder's name,
the command in a form any checkout runs, and twins by the ids they have in
``benchmark.jsonl`` (``<original id>-ref``).

A release folder holds:

* ``benchmark.jsonl``: the probed originals in order, replaced ones swapped
  for their twins, one schema whatever the source (:data:`RELEASE_COLUMNS`, every
  value a string, ``""`` for none): ``id`` (the upstream id of a kept item, the
  twin's own id of a replacement), ``question``, ``answer``, ``solution``,
  ``source``, ``original_id`` (the upstream id a replacement stands for),
  ``status`` (``kept`` or ``replaced``), ``twin_method``, ``twin_verification``,
  ``metadata`` (the item's own metadata as a JSON string: its keys differ
  between sources) and ``canary``;
* ``replacements.jsonl``: one row per replacement with the evidence and the
  full original item, so :func:`undo_release` restores the original set;
* ``README.md``: the dataset card (YAML front matter with licence and a ``configs:`` block, so
  ``datasets.load_dataset(DIR)`` loads ``benchmark.jsonl`` alone) and the audit: what was replaced,
  on what evidence, by which model, what was kept or untested and why;
* the upstream licence file, ``CANARY.txt`` and ``release.json`` (machine-readable summary).

Files are written 0644. Data whose source has no licence is refused unless ``allow_unlicensed``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from zcp_core.probe.leftover import Leftover, storey_leftover
from zcp_core.probe.verdict import (
    BH_GUARANTEE,
    DEFAULT_MIN_CONFIDENCE,
    DEFAULT_REPLACE,
    ReplaceMode,
    Verdict,
    run_verdict,
)

if TYPE_CHECKING:
    from zcp_core.schema import Item

#: The columns of a release's ``benchmark.jsonl``, the same in every release (every value a string).
RELEASE_COLUMNS = ("id", "question", "answer", "solution", "source", "original_id", "status", "twin_method",
                   "twin_verification", "metadata", "canary")
#: Metadata the contamination lab adds to its items (which split an item was in); never published.
LAB_FIELDS = frozenset({"split", "lab", "lab_split"})

Verification = Literal["reexecuted", "two_distinct_judges", "template_checked"]
#: Method prefix of numeric twins (any version; the re-execution record is what is checked).
NUMERIC_PREFIX = "numeric-perturbation-"
JUDGED_METHODS = ("llm-isomorphic-v1",)
TEMPLATE_PREFIX = "template-"


@dataclass(frozen=True)
class TwinCheck:
    """Whether a twin may be released, how it was verified, or why not.

    Attributes:
        verification: ``reexecuted`` or ``two_distinct_judges``; None when the twin is not verified.
        detail: What the check rests on (models, re-execution record), or why it failed.
    """

    verification: Verification | None
    detail: str


@dataclass(frozen=True)
class Replacement:
    """One original swapped for its twin.

    Attributes:
        verification: ``reexecuted``, ``template_checked`` or ``two_distinct_judges`` (see
            :func:`twin_verification`).
        verified_by: What the verification rests on (the judges and generator, or the re-execution).
        flagged: Whether the original was flagged (``--replace covered`` also replaces unflagged ones).
        spare: Whether the twin is the item's spare, which took no part in its p (else its first verified twin).
    """

    original_id: str
    replacement_id: str
    verification: str
    verified_by: str
    flip: str
    p_all_gap: float | None
    p_all_gap_rank: int | None
    evidence: str
    item_p: float | None = None
    item_q: float | None = None
    flagged: bool = True
    spare: bool = False


@dataclass(frozen=True)
class KeptFlagged:
    """An original the release would replace that stays, and why (no trustworthy twin, or the gate).

    Attributes:
        flagged: Whether it was flagged (``--replace covered`` also lists unflagged items with unverified twins).
    """

    original_id: str
    reason: str
    flagged: bool = True


@dataclass(frozen=True)
class ReleaseResult:
    """What :func:`release` wrote."""

    path: Path
    n_items: int
    replaced: tuple[Replacement, ...]
    kept: tuple[KeptFlagged, ...]
    canary: str
    run: str
    model: str
    untested: tuple[str, ...] = ()
    verdict: Verdict | None = None
    scores: Scores | None = None
    mode: ReplaceMode = DEFAULT_REPLACE
    leftover: Leftover | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``release.json`` and ``--json``)."""
        return {"path": str(self.path), "n_items": self.n_items, "canary": self.canary, "run": self.run,
                "model": self.model, "replace": self.mode, "replaced": [asdict(r) for r in self.replaced],
                "kept": [asdict(k) for k in self.kept], "untested": list(self.untested),
                "verdict": _verdict_fields(self.verdict) if self.verdict else None,
                **_flag_fields(self.verdict, self.scores, self.leftover),
                "headline": {"label": "items replaced", "value": len(self.replaced)}}


@dataclass(frozen=True)
class Scores:
    """The model's mean on the flag metric, before the release and after it.

    Attributes:
        metric: The flag metric.
        before: Mean over the probed originals with a score.
        after: Mean over the released items with a score: kept originals as probed, each item replaced by its
            spare twin scored on that twin; items replaced otherwise are left out.
        n: Items in ``before``.
        n_after: Items in ``after``.
        left_out: Replaced items left out of ``after``: replaced by another twin than their spare (an unverified
            or absent spare), or with no spare (fewer than 2 twins with a score).
        spare_held_out: Whether the spare took no part in the flags. False under the ``acc`` rule (every twin
            wrong) and in runs made before the conformal p (every twin in the p): there the score after is on
            a twin selected with the flag and overstates the drop.
    """

    metric: str
    before: float | None
    after: float | None
    n: int
    n_after: int = 0
    left_out: int = 0
    spare_held_out: bool = True


def _verdict_fields(v: Verdict) -> dict[str, Any]:
    """The verdict as JSON. ``b``, ``c`` and ``memorised`` (b - c) are the one-twin accuracy rule's chance
    comparison, which the card explains only there; under a P metric's flags or K twins they mean nothing and
    are left out."""
    d = asdict(v)
    if v.controlled or v.k_twins > 1:
        for k in ("b", "c", "memorised", "memorised_ci"):
            d.pop(k)
    return d


def _flag_fields(v: Verdict | None, sc: Scores | None, est: Leftover | None) -> dict[str, Any]:
    """``release.json``'s flag fields: metric, q and what it guarantees, flagged, scores, the leftover estimate."""
    if v is None:
        return {}
    return {"flag_metric": v.flag_metric, "fdr_q": v.fdr_q, "flagged": v.flagged,
            "fdr_guarantee": BH_GUARANTEE if v.controlled else None,
            "score_before": sc.before if sc else None, "score_after": sc.after if sc else None,
            "score_before_items": sc.n if sc else 0, "score_after_items": sc.n_after if sc else 0,
            "score_after_left_out": sc.left_out if sc else 0,
            "score_after_spare_held_out": sc.spare_held_out if sc else None,
            "leftover": asdict(est) if est else None}


def _accepting_judges(meta: Any) -> list[str]:
    """Judge models that said CORRECT on the accepted (last) attempt; all of ``metadata["judges"]`` if unlogged."""
    attempts = meta.get("attempts") or []
    if not attempts:
        return [str(j) for j in meta.get("judges") or []]
    verdicts = attempts[-1].get("verdicts") or []
    # Verdicts name judges "judge<k>:<model id>".
    return [str(v.get("judge", "")).split(":", 1)[-1] for v in verdicts if v.get("verdict") == "CORRECT"]


def twin_verification(item: Item) -> TwinCheck:
    """How a reference twin was verified, or why it may not be released.

    A numeric twin needs ``metadata["verification"]["reexecuted"] is True`` (its
    solution re-executed from its own question values and the gold matched). An
    LLM twin needs at least two distinct judge models, none of them the
    generator, that all said CORRECT. Anything else is not released.
    """
    meta = item.metadata
    method = str(meta.get("method") or "")
    if method.startswith(NUMERIC_PREFIX):
        ver = meta.get("verification")
        if isinstance(ver, dict) and ver.get("reexecuted") is True:
            return TwinCheck("reexecuted", f"numeric twin ({method}); solution re-executed from the twin's own "
                                           f"question values, gold matched ({ver.get('check') or 're-execution'})")
        return TwinCheck(None, "numeric twin without a passed re-execution check "
                               "(metadata.verification.reexecuted is not true)")
    if method.startswith(TEMPLATE_PREFIX):
        ver = meta.get("verification")
        need = ("render_exact", "program_matches_gold", "nontrivial", "constraints_hold")
        if isinstance(ver, dict) and all(ver.get(k) is True for k in need) and ver.get("solver_agreed") is not False:
            solved = {True: "its first twin solved alike by an independent solver", None: "not solver-checked"}
            return TwinCheck("template_checked", f"template twin ({method}); the template renders the original "
                                                 "exactly and its program gives the original's gold; drawn values "
                                                 f"meet its constraints; {solved[ver.get('solver_agreed')]}")
        return TwinCheck(None, "template twin without passed template checks, or one an independent solver "
                               "disagreed with")
    if method in JUDGED_METHODS:
        gen = str(meta.get("generator") or "")
        judges = [str(j) for j in meta.get("judges") or []]
        distinct = len(judges) >= 2 and len(set(judges)) == len(judges) and gen not in judges and all(judges)
        if distinct and set(judges) <= set(_accepting_judges(meta)):
            return TwinCheck("two_distinct_judges", f"judges {', '.join(judges)} all CORRECT; generator {gen}")
        return TwinCheck(None, f"LLM twin not confirmed by two distinct judges other than the generator "
                               f"(generator {gen or '?'}, judges {', '.join(judges) or 'none'})")
    return TwinCheck(None, f"twin made by {method or 'an unknown method'}, which zcp cannot verify")


def canary_for(manifest: dict[str, Any]) -> str:
    """A canary string derived from the run (stable for the same run)."""
    from zcp_core.publish import canary_string

    return canary_string("|".join(str(manifest.get(k, "")) for k in ("model", "model_revision", "started", "finished",
                                                                      "command")))


def _num(x: Any) -> Any:
    import pandas as pd

    return None if pd.isna(x) else x.item() if hasattr(x, "item") else x


def release(run_path: str | Path, out: str | Path, license: str | None = None, allow_unlicensed: bool = False,
            min_confidence: float = DEFAULT_MIN_CONFIDENCE, replace: ReplaceMode = DEFAULT_REPLACE,
            overwrite: bool = False) -> ReleaseResult:
    """Write a refreshed benchmark for a probe run, ready to publish.

    Items are replaced only when the run has a verdict (``n >= stats.MIN_PAIRS``) and its headline C is at
    least ``min_confidence`` (and, under ``flagged``, some item is flagged); otherwise the benchmark is
    written unchanged and the card says why.

    Args:
        run_path: A probe run folder (with ``items.parquet`` and ``items_<arm>.jsonl``).
        out: Release folder to write.
        license: A licence file or id for the source data; default: found beside the dataset (or beside the
            run folder when none of the run's dataset files exists any more).
        allow_unlicensed: Release data whose source has no licence (the card says so).
        min_confidence: Headline Contamination Confidence needed to replace items (``--min-confidence``).
        replace: ``flagged``: the flagged items with a verified twin; ``covered``: every item with one.
        overwrite: Replace a release (or other zcp output) already in ``out``; a folder of other files is always
            refused, so a release folder holds only what the release wrote.

    Returns:
        A :class:`ReleaseResult`.

    Raises:
        UnlicensedSource: The source has no licence and ``allow_unlicensed`` is False.
        OutputRefused: ``out`` is not empty and ``overwrite`` is not given, or it holds files zcp did not write.
    """
    from zcp_core.errors import DataError
    from zcp_core.outdir import claim_output
    from zcp_core.probe.release_card import _command, _source_refs, release_card
    from zcp_core.probe.run import load_item_set
    from zcp_core.publish import find_license, publish_files, require_derivatives_allowed, require_license
    from zcp_core.runs import atomic_write_bytes, atomic_write_json, load_run

    run = load_run(run_path)
    if run.kind != "probe":
        raise DataError(str(run.path), None, "kind", f"not a probe run (kind {run.kind})")
    sources = [d.get("path", "") for d in run.manifest.get("datasets", []) if d.get("path")]
    if not any(Path(p).exists() for p in sources):
        sources = [str(run.path)]  # a run copied elsewhere: its licence is looked for beside its folder
    lic = find_license(sources, license)
    require_license(lic, allow_unlicensed)
    flags = run.table("items")
    originals = load_item_set(run.path, "original")
    twins: dict[str, list[Item]] = {}
    for t in load_item_set(run.path, "reference"):
        twins.setdefault(str(t.original_id), []).append(t)
    for ts in twins.values():
        ts.sort(key=lambda t: int(t.metadata.get("twin") or 1))
    canary = canary_for(dict(run.manifest))
    model = str(run.manifest.get("model") or "")
    verdict = run_verdict(dict(run.summary), flags, min_confidence, replace)
    replaced, kept, swap, spares = [], [], {}, set()
    for row in flags.to_dict("records"):
        oid, flagged = row["pair_id"], bool(row["flagged"])
        if not flagged and replace == "flagged":
            continue
        if verdict.not_replaced:
            if flagged:  # under covered the gate keeps every item: the card's sentence says so once
                kept.append(KeptFlagged(oid, verdict.not_replaced))
            continue
        if not twins.get(oid):
            kept.append(KeptFlagged(oid, "no reference twin", flagged))
            continue
        spare = spare_twin(row, twins[oid])
        checks = [(t, twin_verification(t)) for t in twins[oid]]
        # the spare first: it took no part in the item's p, so it can score the item after the release
        ok = [(t, c) for t, c in checks if c.verification is not None]
        pick = next(((t, c) for t, c in ok if t is spare), ok[0] if ok else None)
        if pick is None:  # its twin is not in the release, so the reason names no twin id
            kept.append(KeptFlagged(oid, f"its twin is not verified: {checks[0][1].detail}", flagged))
            continue
        twin, check = pick
        swap[oid] = twin
        if twin is spare:
            spares.add(oid)
        replaced.append(Replacement(oid, twin_id(twin), check.verification or "", check.detail, row["flip"],
                                    _num(row["p_all_gap"]), _num(row["p_all_gap_rank"]),
                                    cite_twin(str(row["evidence"]), twin), _num(row.get("item_p")),
                                    _num(row.get("item_q")), flagged, twin is spare))
    require_derivatives_allowed(lic, len(replaced), "items replaced by twins")
    verified = {r.original_id: r.verification for r in replaced}
    rows = [release_row(it, swap.get(it.id), verified.get(it.id, ""), canary) for it in originals]
    # claimed only now, once every check above has passed, so a refused input never costs the old release
    folder = claim_output(out, "release", None, overwrite).path
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(folder / "benchmark.jsonl",
                       "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode())
    by_id = {it.id: it for it in originals}
    lines = [json.dumps({**asdict(r), "original": by_id[r.original_id].to_dict(),
                         "replacement": swap[r.original_id].to_dict()}, ensure_ascii=False, default=str)
             for r in replaced]
    atomic_write_bytes(folder / "replacements.jsonl", ("\n".join(lines) + ("\n" if lines else "")).encode())
    atomic_write_bytes(folder / "CANARY.txt", (canary + "\n").encode())
    untested = tuple(it.id for it in originals if it.id not in twins)
    # the spare stayed out of the flags only when they are the conformal p's (a run that stored their
    # calibration sizes); under the acc rule every twin is wrong by the flag's own definition
    held_out = verdict.controlled and "calibration_size" in flags
    scores = release_scores(flags, swap, spares, verdict.flag_metric, held_out)
    leftover = (storey_leftover(flags["item_p"].to_numpy(dtype=float), flags["pair_id"].isin(list(swap)).to_numpy())
                if verdict.controlled and "item_p" in flags else None)
    res = ReleaseResult(folder, len(rows), tuple(replaced), tuple(kept), canary, str(run.path), model,
                        untested, verdict, scores, replace, leftover)
    # The published summary names no local path: the folder is "." and the run is its folder's name.
    # The published summary names no local path (not even its own folder: the run is its folder's name), and
    # holds no empty field: a value that does not apply is left out rather than written as null.
    published = {**res.to_dict(), "run": run.path.name, "command": _command(dict(run.manifest)),
                 "sources": _source_refs(dict(run.manifest)),
                 "license": {k: v for k, v in {"spdx": lic.spdx, "hub_id": lic.hub_id,
                                               "basis": lic.basis or lic.found_in}.items() if v not in (None, "")}}
    published.pop("path")
    atomic_write_json(folder / "release.json", {k: v for k, v in published.items() if v not in (None, "")})
    publish_files(folder, release_card(res, dict(run.manifest), lic))
    return res


def release_scores(flags: Any, swap: dict[str, Item], spares: set[str], metric: str,
                   spare_held_out: bool = True) -> Scores:
    """The flag metric's mean over the probed originals, and over the released items after ``swap``.

    Args:
        flags: The run's ``items`` table (``score_original``, ``twin_ids``, ``score_twins``).
        swap: Original id -> the twin that replaces it.
        spares: The replaced originals whose twin is their spare: scored on it after the release; the other
            replaced items are left out of the score after.
        metric: The flag metric.
        spare_held_out: Whether the spare took no part in the flags (see :class:`Scores`).
    """
    before, after, left_out = [], [], 0
    for row in flags.to_dict("records"):
        s0 = _finite(row.get("score_original"))
        if s0 is None:
            continue
        before.append(s0)
        oid = row["pair_id"]
        if oid not in swap:
            after.append(s0)
            continue
        s1 = _twin_score(row, swap[oid].id) if oid in spares else None
        if s1 is None:
            left_out += 1
        else:
            after.append(s1)
    n, n1 = len(before), len(after)
    return Scores(metric, sum(before) / n if n else None, sum(after) / n1 if n1 else None, n, n1, left_out,
                  spare_held_out)


def spare_twin(row: dict[str, Any], twins: list[Item]) -> Item | None:
    """An item's spare: its last distinct twin with a score on the flag metric, which took no part in its p.

    The twins are read as :func:`zcp_core.probe.ktwins.twin_scores` reads them for the p: in twin order, a twin
    repeating an earlier one's question left out, then those without a score. ``None`` when fewer than 2 remain
    (no comparator beside a spare, so no spare). Runs made before the per-twin lists: the last of at least 2 twins.
    """
    ids, scores = [str(i) for i in _seq(row.get("twin_ids"))], _seq(row.get("score_twins"))
    if ids and len(ids) == len(scores):
        questions = _seq(row.get("twin_questions"))
        keys = questions if len(questions) == len(ids) else ids
        first = {k: i for i, k in reversed(list(enumerate(keys)))}  # each question's first twin
        scored = [ids[i] for i in sorted(first.values()) if _finite(scores[i]) is not None]
        by_id = {t.id: t for t in twins}
        return by_id.get(scored[-1]) if len(scored) >= 2 else None
    return twins[-1] if len(twins) >= 2 else None


def _twin_score(row: dict[str, Any], tid: str) -> float | None:
    """The flag metric's score of twin ``tid`` in an item row (``None`` when it has none)."""
    ids, scores = [str(i) for i in _seq(row.get("twin_ids"))], _seq(row.get("score_twins"))
    return _finite(scores[ids.index(tid)]) if tid in ids and ids.index(tid) < len(scores) else None


def _finite(x: Any) -> float | None:
    """A stored score as a float; ``None`` when missing or not finite."""
    import math

    v = _num(x)
    return float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None


def _seq(x: Any) -> list[Any]:
    """A stored list cell (a numpy array after parquet) as a list; ``[]`` for none."""
    return [] if x is None or (isinstance(x, float)) else list(x)


def cite_twin(text: str, twin: Item) -> str:
    """``text`` with the twin's internal id (``twins-12`` in runs made before ids were read) replaced by the id
    the release gives it, so evidence cites only ids that are in the data: with K twins, the list of their ids
    becomes the released one's (the others stay the audit's, unpublished)."""
    import re

    rid = twin_id(twin)
    if rid != twin.id:
        text = re.sub(rf"(?<![\w-]){re.escape(twin.id)}(?![\w-])", rid, text)
    from zcp_core.probe.flags import TWINS_CORRECT

    return TWINS_CORRECT.sub(lambda m: f"{m.group(1)} (the released twin {rid} among them)", text)


def twin_id(twin: Item) -> str:
    """The id a twin's own file gave it (kept in ``metadata["id"]`` by runs made before ids were read)."""
    return str(twin.metadata.get("id") or twin.id)


def release_row(original: Item, twin: Item | None, verification: str, canary: str) -> dict[str, str]:
    """One ``benchmark.jsonl`` row (:data:`RELEASE_COLUMNS`): ``original`` kept, or replaced by ``twin``
    (under :func:`twin_id`)."""
    it = twin or original
    # the lab's own bookkeeping (which split an item was in) is no part of a published benchmark
    meta = {k: v for k, v in it.metadata.items() if not (twin is not None and k == "id") and k not in LAB_FIELDS}
    rid = twin_id(twin) if twin is not None else it.id
    return {"id": rid, "question": it.question, "answer": it.answer, "solution": it.solution or "",
            # a twin's source is the dataset its original came from (its own file's name says nothing)
            "source": original.source or "", "original_id": original.id if twin is not None else "",
            "status": "replaced" if twin is not None else "kept",
            "twin_method": str(meta.get("method") or "") if twin is not None else "",
            "twin_verification": verification,
            "metadata": json.dumps(meta, ensure_ascii=False, sort_keys=True, default=str), "canary": canary}


def undo_release(release_dir: str | Path) -> list[Item]:
    """The original item list of a release: replaced twins swapped back, canary metadata removed."""
    from zcp_core.schema import Item

    folder = Path(release_dir)
    back = {}
    rp = folder / "replacements.jsonl"
    for line in rp.read_text().splitlines() if rp.exists() else []:
        rec = json.loads(line)
        back[rec["original_id"]] = rec["original"]
    out = []
    for line in (folder / "benchmark.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        o = back.get(row["original_id"]) if row.get("status") == "replaced" else None
        if o is not None:
            out.append(Item(id=o["id"], question=o["question"], answer=o["answer"], solution=o.get("solution"),
                            source=o.get("source") or "", original_id=o.get("original_id"),
                            metadata=o.get("metadata") or {}))
        else:
            out.append(Item(id=row["id"], question=row["question"], answer=row["answer"],
                            solution=row["solution"] or None, source=row["source"], original_id=None,
                            metadata=json.loads(row["metadata"])))
    return out
