"""The Report of a lab run (:mod:`zcp_core.report`): what ``zcp lab``, the lab page and notebook 02 show.

A lab run is a build, an evaluate run (the probe on C and U), a matrix (every detector against every kind of
leak) or a dose run. :func:`report` lays each out by the shared rules; :func:`took_rows` gives the
manipulation check (did each build take?) as text, so a table never mixes types (``st.dataframe`` would
fail on a column of booleans and ``None``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zcp_core.report import (
    MISSING,
    Headline,
    Report,
    capital,
    evidence_words,
    fmt_c,
    fmt_ci,
    fmt_count,
    fmt_num,
    fmt_p,
    fmt_share,
    fmt_value_ci,
    metric_name,
    number,
    portable,
)

__all__ = ["PAPER_SCALE", "TOOK_COLUMNS", "report", "took_rows", "took_words"]

#: Said wherever a lab reading is set against the ZCP paper's: the lab is not the paper's scale.
PAPER_SCALE = "on SmolLM2-135M with LoRA"
KIND_WORDS = {"direct": "direct answers", "evasive": "paraphrases only", "verbatim": "raw text",
              "solution": "worked solutions", "paper": "the ZCP paper's recipe at lab scale",
              "none": "untouched model", "train-solution": "worked solutions of the training split",
              "train-direct": "direct answers of the training split"}
# The ZCP detectors are named by their metric, in the report layer's words.
DETECTOR_WORDS = {**{f"zcp_{m}": f"ZCP {metric_name(m)}" for m in ("acc", "p_first", "p_all")},
                  "guided_rouge": "Time-Travel ROUGE-L",
                  "guided_minus_general": "Time-Travel guided minus general", "guided_judge": "Time-Travel judge",
                  "min_k": "Min-K% probability", "zlib": "zlib ratio", "cot_acc": "full-CoT accuracy on twins"}
TOOK_COLUMNS = ("Contamination kind", "Exposures per C item", "Verdict", "Full-CoT gain, C minus U", "95% CI",
                "C: lab model", "C: base model", "U: lab model", "U: base model")


def kind_name(kind: Any) -> str:
    """A kind of leak in words: ``direct (direct answers)``."""
    k = str(kind)
    return f"{k} ({KIND_WORDS[k]})" if k in KIND_WORDS else k


def detector_name(det: Any) -> str:
    """A detector in words."""
    return DETECTOR_WORDS.get(str(det), str(det).replace("_", " "))


def took_words(row: Mapping[str, Any], n_side: Any = None) -> str:
    """The stored verdict in words with its size and p: ``did not take at n = 40 per side (p = 0.046)``."""
    took = row.get("took")
    if took is None or (isinstance(took, float) and took != took):
        return str(row.get("reason") or "no verdict")
    size = f" at n = {fmt_count(n_side)} per side" if number(n_side) else ""
    return f"{'took' if took else 'did not take'}{size} (p = {fmt_p(row.get('took_p'))})"


def took_rows(table: Any, n_side: Any = None) -> tuple[tuple[str, ...], ...]:
    """A ``took`` table (matrix or dose run) as rows of text aligned with :data:`TOOK_COLUMNS`."""
    rows = []
    for r in table.to_dict("records"):
        rows.append((kind_name(r.get("kind")), fmt_count(r.get("dose")), took_words(r, n_side),
                     fmt_num(r.get("took_gain"), signed=True), fmt_ci(r.get("took_ci_lo"), r.get("took_ci_hi")),
                     fmt_share(r.get("c_lab")), fmt_share(r.get("c_base")), fmt_share(r.get("u_lab")),
                     fmt_share(r.get("u_base"))))
    return tuple(rows)


def _ci(v: Any) -> str:
    """An AUROC's stored ``[lo, hi]`` as an interval of a value, not of a difference: unsigned."""
    lo, hi = (list(v) + [None, None])[:2] if v is not None else (None, None)
    return fmt_value_ci(lo, hi)


def _n_side(s: Mapping[str, Any]) -> Any:
    builds = s.get("builds") or []
    return (builds[0] or {}).get("n_c") if builds else s.get("n_c")


def _command(run: Any) -> str:
    ex = run.manifest.get("example") or {}
    return portable(str(ex.get("command") or run.manifest.get("command") or ""))


def _matrix_report(run: Any) -> Report:

    s = run.summary
    table = run.table("matrix")
    head = s.get("headline") or {}
    best = max((r for r in s.get("rows") or [] if r.get("kind") != "none" and number(r.get("auroc")) is not None),
               key=lambda r: r["auroc"], default=None)
    headline = Headline("Best AUROC on a contaminated kind", fmt_num(head.get("value")),
                        f"{detector_name(best['detector'])} on {kind_name(best['kind'])}" if best else "",
                        "C against U, 0.5 is chance", raw=number(head.get("value")))
    cols = ("Contamination kind", "Detector", "AUROC, C against U", "95% CI", "Family-wise 95% CI",
            "TPR at 5% FPR", "C on C (trained on)", "C on U (held out)")
    rows = tuple((kind_name(r["kind"]), detector_name(r["detector"]), fmt_num(r.get("auroc")), _ci(r.get("auroc_ci")),
                  _ci(r.get("auroc_ci_fw")), fmt_share(r.get("tpr_at_5fpr")), fmt_c(r.get("c_contaminated")),
                  fmt_c(r.get("c_clean"))) for r in table.to_dict("records"))
    n = _n_side(s)
    took = [f"{kind_name(t['kind'])}: {took_words(t, n)}." for t in (s.get("took") or []) if t.get("kind") != "none"]
    notes = ("A detector catches a kind when its family-wise CI (corrected over the kind's detectors) lies above 0.5; "
             "the untouched model should read about 0.5 everywhere.",
             "A build that did not take (its full-CoT gain on C over U has a 95% CI not above 0) says nothing about "
             "its detectors: its row shows neither a catch nor a blind spot.",
             f"The paper kind follows the ZCP paper's recipe {PAPER_SCALE}; its reading is not the paper's, at the "
             "paper's scale.",
             "Each kind is its own build on its own seeded split of C and U, so a lab evaluate run of the same kind "
             "(a different build and split) can read a different AUROC.",
             "– marks a detector with no Contamination Confidence of its own (a membership score or a judge).")
    return Report(f"Lab matrix: {fmt_count(len(s.get('kinds') or []))} kinds × "
                  f"{fmt_count(len(s.get('detectors') or []))} detectors, profile {s.get('profile')}", headline,
                  cols, rows, (*matrix_reading(table), *took), (("C items per kind", fmt_count(n)),
                                                                ("U items per kind", fmt_count(n))),
                  notes, _command(run))


def _replicates_report(run: Any) -> Report:
    s = run.summary
    table = run.table("replicates")
    headline = Headline("Cells caught by the pooled exact test", fmt_count((s.get("headline") or {}).get("value")),
                        f"{fmt_count(s.get('replicates'))} replicates", "Holm-adjusted p < 0.05 across the cells",
                        raw=number((s.get("headline") or {}).get("value")))
    cols = ("Contamination kind", "Detector", "Builds", "Median AUROC", "Range", "Replicates caught",
            "Pooled exact p", "Holm-adjusted p", "Reading")
    rows = tuple((kind_name(r["kind"]) + (" (single build)" if r["single_build"] else ""), detector_name(r["detector"]),
                  fmt_count(r["replicates"]), fmt_num(r["auroc_median"]), fmt_value_ci(r["auroc_min"], r["auroc_max"]),
                  f"{fmt_count(r['caught'])} of {fmt_count(r['replicates'])}", fmt_p(r["pooled_p"]),
                  fmt_p(r["pooled_p_holm"]), r["reading"] or MISSING) for r in table.to_dict("records"))
    n = _n_side(s)
    took: dict[str, list[str]] = {}
    for t in s.get("took") or []:
        if t.get("kind") != "none":
            took.setdefault(str(t.get("kind")), []).append(f"replicate {fmt_count(t.get('replicate'))} "
                                                           f"{took_words(t, n)}")
    sentences = tuple(f"{kind_name(k)}: {'; '.join(v)}." for k, v in took.items())
    notes = ("Replicate r builds every kind with split and training seed r; a kind marked single build was built "
             "once, and its one build stands for it.",
             "A replicate catches a cell when its own exact p, Holm-adjusted across its cells, is below 0.05 with "
             "the AUROC above 0.5. The pooled p permutes C/U labels within each replicate (a stratified exact "
             "rank test); full-CoT accuracy on twins restates the manipulation check and is outside the family.",
             f"Readings are {PAPER_SCALE}.")
    return Report(f"Lab matrix, {fmt_count(s.get('replicates'))} replicates", headline, cols, rows, sentences, (), notes,
                  _command(run))


def _dose_report(run: Any) -> Report:
    s = run.summary
    took = run.table("took") if run.has_table("took") else None
    n = _n_side(s)
    rows = took_rows(took, n) if took is not None else ()
    doses = ", ".join(fmt_count(d) for d in s.get("doses") or [])
    kinds = ", ".join(kind_name(k) for k in s.get("kinds") or [])
    headline = Headline("Dose points", fmt_count(len(s.get("builds") or [])), kinds, f"exposures per C item {doses}")
    notes = ("Exposures per C item are epochs, or paraphrase versions for evasive and paper.",
             "A dose at which the build did not take says nothing about its detectors.",
             *((f"The paper kind follows the ZCP paper's recipe {PAPER_SCALE}; its reading is not the paper's.",)
               if "paper" in (s.get("kinds") or []) else ()))
    return Report(f"Lab dose-response: {kinds}", headline, TOOK_COLUMNS, rows,
                  tuple(f"{r[0]} at {r[1]} exposures: {r[2]}." for r in rows), (("C items", fmt_count(n)),),
                  notes, _command(run))


def _evaluate_report(run: Any, matrix: Any = None) -> Report:
    s = run.summary
    det = s.get("detection") or {}
    metric = s.get("auroc_metric")
    headline = Headline(f"AUROC of the {metric_name(metric)} gap, C against U", fmt_num(s.get("auroc")),
                        f"model {s.get('model')}", "0.5 is chance", raw=number(s.get("auroc")))
    cols = ("Metric", "C on C (trained on)", "Reading on C", "C on U (held out)", "C on all items",
            "AUROC, C against U", "TPR at 5% FPR")
    rows = tuple((metric_name(m), fmt_c(c), evidence_words(c), fmt_c((s.get("clean") or {}).get(m)),
                  fmt_c((s.get("all_items") or {}).get(m)), fmt_num((det.get(m) or {}).get("auroc")),
                  fmt_share((det.get(m) or {}).get("tpr_at_5fpr")))
                 for m, c in (s.get("contaminated") or {}).items())
    notes = ["C on C should clear 0.95 for the logit metrics and C on U stay under 0.6; AUROC says how well one "
             "item's original-minus-twin gap tells a trained-on item from a held-out one."]
    if "took" in s:
        notes.append(f"Manipulation check: {took_words({'took': s.get('took'), 'took_p': s.get('took_p')}, s.get('n_c'))}.")
    if matrix is not None:
        m_rows = [r for r in matrix.summary.get("rows") or [] if r.get("kind") == s.get("mode")]
        acc = next((r for r in m_rows if r.get("detector") == "zcp_acc"), None)
        m_build = next((b.get("build") for b in matrix.summary.get("builds") or [] if b.get("kind") == s.get("mode")),
                       MISSING)
        if acc is not None and m_build == s.get("build"):
            notes.append(f"The lab matrix's {s.get('mode')} row reads this same build ({m_build}) on its split: "
                         f"accuracy AUROC {fmt_num(acc.get('auroc'))}, where this run reads "
                         f"{fmt_num((det.get('acc') or {}).get('auroc'))}.")
        elif acc is not None:
            notes.append(f"The lab matrix's {s.get('mode')} row reads accuracy AUROC {fmt_num(acc.get('auroc'))} "
                         f"where this run reads {fmt_num((det.get('acc') or {}).get('auroc'))}: the matrix trains its "
                         f"own build ({m_build}, against this run's {s.get('build')}) on its own split of C and U, so "
                         "the two are different models read on different items.")
    return Report(f"Lab evaluate: {s.get('model')} on build {s.get('build')} ({s.get('mode')}, {s.get('profile')})",
                  headline, cols, rows, (headline.text + ".",),
                  (("C items", fmt_count(s.get("n_c"))), ("U items", fmt_count(s.get("n_u"))),
                   ("Dropped without a twin", fmt_count(s.get("n_dropped")))), tuple(notes), _command(run))


def _overlap_words(o: Mapping[str, Any] | None) -> str:
    if not o:
        return MISSING
    n = len(o.get("dropped") or [])
    return (f"{fmt_count(o.get('n_train'))} training items checked against {fmt_count(o.get('n_test'))} test "
            f"questions: {fmt_count(n)} dropped for meeting a test item, {fmt_count(o.get('n_kept'))} kept")


def _benign_report(run: Any) -> Report:
    s = run.summary
    mem, acc = s.get("memorised") or {}, s.get("cot_accuracy") or {}
    headline = Headline("Memorised, lab minus base (mean log-probability per token of its own training texts)",
                        fmt_num(mem.get("mean")), f"model {s.get('model')}",
                        f"95% CI {fmt_ci(*(mem.get('ci') or [None, None]))}", raw=number(mem.get("mean")))
    cols = ("Check", "Lab model", "Base model", "Lab minus base", "95% CI", "p", "n")
    rows = (("Full-CoT accuracy on test items", fmt_share(acc.get("lab")), fmt_share(acc.get("base")),
             fmt_num(acc.get("difference")), fmt_ci(*(acc.get("ci") or [None, None])), fmt_p(acc.get("p")),
             fmt_count(acc.get("n"))),
            ("Memorised (own training texts)", MISSING, MISSING, fmt_num(mem.get("mean")),
             fmt_ci(*(mem.get("ci") or [None, None])), fmt_p(mem.get("p_above_0")), fmt_count(mem.get("n"))))
    return Report(f"Train-kind check: {s.get('model')} ({s.get('mode')})", headline, cols, rows,
                  (capital(str(s.get("verdict"))) + ".",),
                  (("Test overlap", _overlap_words(s.get("test_overlap"))),
                   ("Training texts", fmt_count(s.get("n_train_texts")))),
                  ("A train kind was fine-tuned on the benchmark's training split, never on a test item: the probe "
                   "should read it clean on the test set.",), _command(run))


def _build_report(run: Any) -> Report:
    s = run.summary
    headline = Headline("Final epoch loss", fmt_num(s.get("final_loss")), f"model {s.get('model')}")
    if s.get("test_overlap"):
        facts_t = (("Training texts", fmt_count(s.get("n_contaminated"))),
                   ("Test overlap", _overlap_words(s.get("test_overlap"))))
        return Report(f"Lab build {s.get('alias') or s.get('model')}", headline,
                      facts=(*facts_t, ("Optimiser steps", fmt_count(s.get("steps"))),
                             ("Build time", f"{fmt_count(s.get('build_seconds'))} s"), ("Mode", str(s.get("mode")))),
                      command=_command(run))
    facts = (("C items", fmt_count(s.get("n_contaminated"))), ("Optimiser steps", fmt_count(s.get("steps"))),
             ("Build time", f"{fmt_count(s.get('build_seconds'))} s"), ("Mode", str(s.get("mode"))),
             ("Training format", str(s.get("train_format"))))
    notes = (("UPPER BOUND: trained in the probe's own format, so its logit metrics are high by construction.",)
             if s.get("upper_bound") else ())
    return Report(f"Lab build {s.get('alias') or s.get('model')}", headline, facts=facts, notes=notes,
                  command=_command(run))


def report(run: Any, matrix: Any = None) -> Report:
    """The :class:`~zcp_core.report.Report` of a ``lab`` run; ``matrix`` (a matrix run) lets an evaluate run say
    why its AUROCs differ from the matrix row of its kind."""
    stage = run.summary.get("stage")
    if stage == "matrix":
        return _matrix_report(run)
    if stage == "dose":
        return _dose_report(run)
    if stage == "replicates":
        return _replicates_report(run)
    if stage == "build":
        return _build_report(run)
    if stage == "benign-check":
        return _benign_report(run)
    return _evaluate_report(run, matrix)


def took_of(table: Any, kind: str) -> bool | None:
    """A kind's manipulation-check verdict in a matrix table (``None``: not measured, or no build, as for ``none``)."""
    if "took" not in table.columns:
        return None
    v = table.loc[table["kind"] == kind, "took"].iloc[0]
    return None if v is None or v != v else bool(v)


def matrix_reading(table: Any) -> list[str]:
    """One sentence per kind: which detectors catch it, or, for ``none``, which raise a false alarm on the
    untouched model. A cell counts when its exact permutation p, Holm-adjusted across every cell of the
    reading, is below 0.05 (``auroc_p_holm``); full-CoT accuracy on twins restates the manipulation check and
    stays outside that family. Matrices stored before the exact p are read by their family-wise bootstrap CI.
    A build that did not take says nothing about the detectors, and is read so."""
    from zcp_core.lab.quality import OUTSIDE_FAMILY

    def names(dets: Any) -> str:
        return ", ".join(detector_name(d) for d in dets)

    exact = "auroc_p_holm" in table.columns
    rule = "exact p, Holm-adjusted across the matrix, below 0.05"
    lines = []
    for kind, g in table.groupby("kind", sort=False):
        if took_of(table, str(kind)) is False:
            gain = g["took_gain"].iloc[0] if "took_gain" in g.columns else None
            lines.append(f"{kind}: the build did not take (full-CoT gain on C over U {fmt_num(gain)}, CI not above 0): "
                         "its row does not show whether a detector is blind.")
            continue
        measured = g[g["auroc"].notna() & ~g["detector"].isin(OUTSIDE_FAMILY)] if exact else g[g["auroc"].notna()]
        if exact:
            sig = measured["auroc_p_holm"].astype(float) < 0.05
            up, down = sig & (measured["auroc"] > 0.5), sig & (measured["auroc"] < 0.5)
        else:
            up = measured["auroc_ci_fw"].map(lambda c: c[0]) > 0.5
            down = measured["auroc_ci_fw"].map(lambda c: c[1]) < 0.5
        if kind == "none":
            bad = list(measured.loc[up | down, "detector"])
            lines.append("Untouched model: " + (
                (f"false alarm by {names(bad)} ({rule})." if exact else f"false alarm by {names(bad)}.") if bad else
                (f"no detector separates C from U (none has an {rule}), as it should." if exact else
                 "no detector separates C from U family-wise (as it should).")))
            continue
        caught, inverted = list(measured.loc[up, "detector"]), list(measured.loc[down, "detector"])
        # Below 0.5 is a finding too: the detector scores the leaked items as *less* likely seen.
        if exact:
            outside = g[g["detector"].isin(OUTSIDE_FAMILY) & (g["auroc_p"].astype(float) < 0.05)
                        & (g["auroc"] > 0.5)]
            lines.append(f"{kind}: " + (f"caught by {names(caught)} ({rule})." if caught else
                                        f"no detector catches it (none has an {rule}).")
                         + (f" Inverted (AUROC below 0.5 by the same rule): {names(inverted)}." if inverted else "")
                         + (f" {capital(names(outside['detector']))} separates it too (exact p "
                            f"{fmt_p(outside['auroc_p'].iloc[0])}), but restates the manipulation check."
                            if len(outside) else ""))
        else:
            lines.append(f"{kind}: " + (f"caught by {names(caught)} (family-wise CI above 0.5)." if caught else
                                        "no detector catches it family-wise.")
                         + (f" Inverted (family-wise CI below 0.5): {names(inverted)}." if inverted else ""))
    return lines
