"""A probe run as every surface shows it: :func:`report` turns a run folder into a :class:`zcp_core.report.Report`.

The CLI (``zcp probe``, ``zcp confidence``), the app's probe page and run browser, notebooks 00-02 and the
release card render this value; none formats a probe number itself. The numbers come from
:func:`confidence_of`, the one reading of a run's confidence json (runs made before the evidence fields are
rebuilt from their stored ``tests`` table, runs made before the minimum-sample rule have it applied).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from zcp_core.report import (
    C_DEFINED,
    MISSING,
    Headline,
    Report,
    capital,
    effect_name,
    evidence_words,
    fmt_bf,
    fmt_c,
    fmt_ci,
    fmt_count,
    fmt_num,
    fmt_p,
    fmt_share,
    metric_name,
    portable,
    statistical_test_name,
)

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.runs import Run

#: The evidence table's columns, in words.
COLUMNS = ("Metric", "Pairs", "Test", "Difference", "95% CI", "Lower bound", "Cohen's d_z", "p-value",
           "Bayes factor bound", "Confidence C", "Reading")
#: Metrics in the order every surface lists them.
ORDER = ("acc", "con", "p_first", "p_all", "p_first_cal", "p_all_cal", "p_first_net", "p_all_net")
#: Which arm is tested against the twins, in words (the CLI's ``--arm``).
ARM_WORDS = {"original": "originals against their twins", "paraphrased": "paraphrases against the twins"}
#: The flips of the items table in words (``orig_only``...), as counts are labelled.
FLIP_COUNT_WORDS = {"orig_only": "Original right, every twin wrong", "ref_only": "A twin right, original wrong",
                    "both": "Original and a twin right", "neither": "All wrong"}
NOTES = (
    "Difference: original minus twin (with several twins per item, minus the mean of its twins); for accuracy the difference in accuracy, for the probabilities the mean "
    "difference. Cohen's d_z is that difference over its standard deviation.",
    "95% CI: two-sided. Lower bound: one-sided 95%, matching the one-sided test (above 0 exactly when p < 0.05).",
    "Null hypothesis: the model treats the original like its twins. A small p says the originals score above "
    "their twins more than chance allows; memorisation is one cause, twins harder than their originals another.",
)
#: Tests that compare an original with the mean of several twins.
MULTI_TWIN_TESTS = ("exact_sign_flip", "exact_role_permutation", "role_permutation")


def _load(run: Run | str | Path) -> Run:
    from zcp_core.runs import load_run

    return load_run(run) if isinstance(run, (str, Path)) else run


def _has_evidence(conf: Mapping[str, Any]) -> bool:
    return all("effect_ci" in v for v in conf.get("metrics", {}).values())


def _table(run: Run, name: str) -> Any:
    try:
        return run.table(name)
    except Exception:  # a run without that table (older, or partial): nothing to rebuild from
        return None


def confidence_of(run: Run | str | Path, arm: str = "original", prior: float | None = None) -> dict[str, Any]:
    """The confidence json of one arm (``zcp confidence --json``): ``metrics`` and ``headline``.

    Args:
        run: A probe run (folder or loaded).
        arm: The arm tested against the twins (``original`` or ``paraphrased``).
        prior: Recompute with this prior (default: as stored).
    """
    from zcp_core.probe import confidence_from_tests, confidence_summary, enforce_min_pairs

    run = _load(run)
    stored = (run.summary.get("arms") or {}).get(arm)
    if stored is None and arm == "original":
        stored = {k: run.summary[k] for k in ("metrics", "headline") if k in run.summary}
    if stored and not _has_evidence(stored) and prior is None:
        # Runs made before the evidence fields: rebuild them from the stored tests table.
        stored = confidence_from_tests(_table(run, "tests"), arm) or stored
    if prior is not None or not stored:
        cfg = run.manifest.get("config", {})
        # Runs written before the permutation test existed used the bootstrap: recompute them with it.
        stored = confidence_summary(run.records, cfg.get("metrics", ()), suspect_arm=arm,
                                    prior=prior if prior is not None else cfg.get("prior", 0.5),
                                    n_resamples=cfg.get("n_resamples", 10_000), seed=cfg.get("seed", 0),
                                    continuous_test=cfg.get("continuous_test", "bootstrap"))
    # Runs written before the minimum-sample rule may hold a confidence for too few pairs.
    return enforce_min_pairs({"metrics": stored["metrics"], "headline": stored["headline"]})


def twin_ids(run: Run | str | Path) -> dict[str, str]:
    """Each twin's id in the run -> its release id (``<original id>-ref``: what the release card shows)."""
    from zcp_core.probe.run import load_item_set

    run = _load(run)
    try:
        # The rule of ``release.twin_id`` (not imported: the release card renders this module's report).
        return {t.id: str(t.metadata.get("id") or t.id) for t in load_item_set(run.path, "reference")}
    except (OSError, ValueError):  # a run without its twins file: ids as stored
        return {}


def _tests_of(run: Run, arm: str) -> dict[str, Mapping[str, Any]]:
    tests = _table(run, "tests")
    if tests is None or "arm" not in tests:
        return {}
    return {str(r["metric"]): r for r in tests[tests["arm"] == arm].to_dict("records")}


def _measured(v: Mapping[str, Any]) -> bool:
    return v.get("n") is not None


def _row(m: str, v: Mapping[str, Any], test: str) -> tuple[str, ...]:
    ci = v.get("effect_ci") or [None, None]
    has_c = v.get("confidence") is not None
    return (capital(metric_name(m)), fmt_count(v.get("n")), statistical_test_name(test) if test else MISSING,
            fmt_num(v.get("effect"), signed=True), fmt_ci(*ci), fmt_num(v.get("effect_lower"), signed=True),
            fmt_num(v.get("effect_size"), signed=True), fmt_p(v.get("p")), fmt_bf(v.get("bf10")),
            fmt_c(v.get("confidence"), bool(v.get("bound"))),
            evidence_words(v.get("confidence")) if has_c else str(v.get("reason") or "no verdict"))


def _sentence(m: str, v: Mapping[str, Any], test: str, k: int = 1) -> str:
    """One metric's evidence in words (``k``: twins per item)."""
    ci = v.get("effect_ci") or [None, None]
    kind = effect_name("risk_difference" if m in ("acc", "con") else "mean_diff")
    parts = [f"{capital(metric_name(m))}: "
             f"{statistical_test_name(test) if test else 'paired test'} over {fmt_count(v.get('n'))} pairs",
             f"{kind}, original minus {'twin' if test not in MULTI_TWIN_TESTS and k == 1 else 'the mean of its twins'}, "
             f"{fmt_num(v.get('effect'), signed=True)} (95% CI {fmt_ci(*ci)})",
             f"{effect_name('cohens_dz').split(' (')[0]} {fmt_num(v.get('effect_size'), signed=True)}"]
    disc = v.get("discordant")
    if disc and None not in disc:
        parts.append(f"{fmt_count(disc[0])} pairs with only the original right, {fmt_count(disc[1])} with only "
                     "the twin right")
    if v.get("confidence") is None:
        parts.append(f"no Contamination Confidence: {v.get('reason') or 'not tested'}")
    else:
        reading = str(v.get("reading") or "")
        parts.append(f"p = {fmt_p(v.get('p'))}, Bayes factor bound {fmt_bf(v.get('bf10'))}, "
                     f"Contamination Confidence {fmt_c(v.get('confidence'), bool(v.get('bound')))} "
                     f"({evidence_words(v.get('confidence'))}" + (f"; {reading}" if reading else "") + ")")
    return "; ".join(parts) + "."


def headline_of(conf: Mapping[str, Any]) -> Headline:
    """The headline of a confidence json: C of the headline metric, in words."""
    h = conf.get("headline") or {}
    c = h.get("confidence", h.get("value"))
    metric = h.get("metric")
    bound = bool((conf.get("metrics", {}).get(metric) or {}).get("bound")) or bool(h.get("bound"))
    if c is None:
        return Headline("Contamination Confidence", MISSING, reading="no verdict",
                        reason=str(h.get("reason") or "no metric could be tested"))
    return Headline("Contamination Confidence", fmt_c(c, bound), metric_name(metric), evidence_words(c),
                    raw=float(c))


#: What an item's evidence means, one sentence a term: the app's item list, notebook 01 and the docs show these.
ITEM_TERMS: tuple[tuple[str, str], ...] = (
    ("Item p", "how unusual the original looks against its own twins, compared with how other items' twins look "
               "against theirs; a small p means the original stands out."),
    ("Rank p", "where the original ranks among its own twins alone (1 / (K + 1) at best with K twins): a cruder "
               "check that needs no other item."),
    ("q-value", "the smallest false-discovery level at which the item would be flagged (Benjamini-Hochberg)."),
    ("Flag", "an item whose q-value is at most the run's level q: evidence that the model treats this original "
             "unlike its twins, not proof that it saw it; across audits about a share q of flags are false."),
)


def item_terms_text() -> str:
    """:data:`ITEM_TERMS` as one paragraph (``Item p: ... Rank p: ...``)."""
    return " ".join(f"{term}: {words}" for term, words in ITEM_TERMS)


def twins_text(per_item: Mapping[str, Any]) -> str:
    """The histogram of distinct twins per item in words: ``4 on 76 items, 3 on 1, 1 on 2``."""
    if not per_item:
        return MISSING
    rows = sorted(((int(k), int(v)) for k, v in per_item.items()), reverse=True)
    return ", ".join(f"{k} on {fmt_count(v)}{' items' if i == 0 else ''}" for i, (k, v) in enumerate(rows))


def _facts(run: Run, arm: str) -> tuple[tuple[str, str], ...]:
    from zcp_core.probe.flags import flag_block

    s = run.summary
    acc = s.get("accuracy") or {}
    block = flag_block(s, _table(run, "items"))
    per_item = block.get("twins_per_item") or (s.get("twins") or {}).get("per_item") or {}
    facts = [("Model", str(run.manifest.get("model") or MISSING)), ("Pairs", fmt_count(s.get("n_pairs"))),
             ("Twins per item", twins_text(per_item)),
             ("Flagged items", fmt_count(block.get("flagged", s.get("flagged")))),
             ("How items are flagged", flags_text(s)),
             ("Originals without a twin", fmt_count(s.get("unpaired_original", 0)))]
    acc_tested = bool(((s.get("metrics") or {}).get("acc") or {}).get("n"))
    # beside "Acc: not measured" (boxes that hold no number) an accuracy would contradict the table: left out
    if "original" in acc and (acc_tested or "acc" not in (s.get("metrics") or {})):
        facts += [("Zero-CoT accuracy, originals", fmt_share(acc.get("original"))),
                  ("Zero-CoT accuracy, twins", fmt_share(acc.get("reference")))]
    flips = s.get("flips") or {}
    if flips:  # a kind no pair had is 0, not missing
        facts += [(words, fmt_count(flips.get(k, 0))) for k, words in FLIP_COUNT_WORDS.items()]
    if arm != "original":
        facts.append(("Tested", ARM_WORDS.get(arm, arm)))
    return tuple(facts)


def _notes(run: Run, conf: Mapping[str, Any], test: Mapping[str, str]) -> tuple[str, ...]:
    from zcp_core.stats import MIN_PAIRS

    s = run.summary
    notes = [C_DEFINED, *NOTES]
    cov = (s.get("coverage") or {}).get("sentence")
    if cov:  # runs made before it carry no coverage
        notes.insert(1, str(cov))
    ct = s.get("continuous_test") or run.manifest.get("config", {}).get("continuous_test")
    k = int((s.get("twins") or {}).get("k") or 1)
    # the tests the run stored (a run made before the role-permutation test names its own)
    binary_test = next((test[m] for m in ("acc", "con") if test.get(m)),
                       "mcnemar" if k == 1 else "exact_role_permutation")
    ct = next((test[m] for m in test if m not in ("acc", "con") and test[m]), ct)
    notes.append(f"Tests: {statistical_test_name(binary_test)} for accuracy and consistency"
                 + (f", {statistical_test_name(ct)} for the probabilities" if ct else "")
                 + f"; no Contamination Confidence below {MIN_PAIRS} pairs.")
    if cal := calibration_sentence({**s, "headline": conf.get("headline") or s.get("headline")}):
        notes.append(cal)
    missing = [f"{metric_name(m)}" + (f": {why}" if (why := _why_unmeasured(v)) else "")
               for m, v in conf["metrics"].items() if not _measured(v)]
    if missing:
        notes.append("Not measured in this run: " + "; ".join(missing) + ".")
    pf = s.get("parse_failures") or {}
    if pf:
        notes.append("Answers that could not be read (an empty or unparseable box counts as wrong; a box with no "
                     "number, opens with a word where the number should be, or never closed is not graded and leaves the "
                     "accuracy pairs): "
                     + ", ".join(f"{'twins' if a == 'reference' else a + 's'} {fmt_count(n)}" for a, n in pf.items())
                     + ".")
    gt = s.get("generated_tokens") or {}
    if gt:
        notes.append("Generated tokens: " + ", ".join(
            f"{'twins' if a == 'reference' else a + 's'} {fmt_count(v.get('answer'))} answer + "
            f"{fmt_count(v.get('cot'))} chain of thought" for a, v in gt.items()) + ".")
    return tuple(notes)


def calibration_sentence(summary: Mapping[str, Any]) -> str:
    """Why ``--calibrate auto`` switched the calibrated metrics on, or why it suggests them; ``""`` otherwise.

    Args:
        summary: A probe run's summary (its ``calibration``, ``headline`` and, for a twin-against-twins null,
            ``original_arm``).
    """
    from zcp_core.probe.calibrate import PRIOR_BAND

    cal = summary.get("calibration") or {}
    basis, diff = cal.get("basis"), cal.get("neutral_prior_diff")
    lead = (summary.get("headline") or {}).get("metric")
    reads = ("so the verdict reads P_all net of the neutral prior" if lead == "p_all_net" else
             "so the verdict reads calibrated P_all" if lead == "p_all_cal" else
             f"but calibrated P_all has no verdict in this run, so the verdict reads {metric_name(lead)}: read it "
             "with that lean in mind" if lead else "but no metric has a verdict in this run")
    if summary.get("original_arm") and basis in ("prior_outside_band", "template_twins"):
        return ("Calibrated metrics are on (--calibrate auto), as for any probe of these twins; here a twin stands "
                "as the original, so both arms share the twins' a-priori balance and calibration changes little.")
    est = ""
    if diff is not None:
        pooled = (summary.get("neutral_prior") or {}).get("pooled") or {}
        ci, n = pooled.get("ci90"), pooled.get("n_pairs")
        est = (f"{fmt_num(abs(diff))} nats a priori {'less' if diff > 0 else 'more'} likely than the originals' "
               f"under {cal.get('prior_model') or 'the audited model'}"
               + (f" (90% CI {fmt_num(ci[0])} to {fmt_num(ci[1])}, {n} pairs)" if ci and n else ""))
    if basis == "prior_in_band" and est:
        return (f"Raw metrics lead (--calibrate auto): the twins' answers are {est}, inside the "
                f"{fmt_num(PRIOR_BAND)}-nat band, so raw P_first and P_all are read as they are.")
    if basis == "prior_outside_band" and est and diff is not None:
        lean = "'contaminated'" if diff > 0 else "'clean'"
        return (f"Corrected metrics are on (--calibrate auto): the twins' answers are {est}, beyond the "
                f"{fmt_num(PRIOR_BAND)}-nat band; raw P_first and P_all lean toward {lean} on a clean model, "
                f"{reads}. Raw, net and calibrated are shown side by side.")
    if basis == "template_twins":
        here = f" Here the twins' answers are {est}." if est else ""
        return ("Corrected metrics are on (--calibrate auto), as for every probe of template twins: on MATH-500 "
                "the untouched model's raw P_all reads its originals as contaminated even with twins balanced at "
                "the source, while P_all net of the neutral prior passes that null and still catches the lab's "
                f"memorised builds, {reads}.{here} Raw, net and calibrated are shown side by side.")
    if basis == "unknown_balance":
        return ("No twin card shows whether these twins' answers are a priori as likely as the originals': "
                "`--calibrate on` reads P_first and P_all net of each answer's own prior.")
    return ""


def flags_text(summary: Mapping[str, Any]) -> str:
    """How the run flags items, in words: the rule, its metric and false-discovery level (or that it has none)."""
    f = summary.get("flags") or {}
    if not f:  # runs made before the flags block: the paper's rule
        return "original right, twin wrong; no false-discovery control"
    if not f.get("controlled"):
        return "original right, every twin wrong; no false-discovery control"
    if not f.get("items"):
        return str(f.get("note") or "no item has a p")
    n, share = int(f.get("items") or 0), f.get("share_p_below_05")
    low = f"{fmt_count(round(share * n))} of the {fmt_count(n)} ({fmt_share(share)})" if share is not None else MISSING
    return (f"Benjamini-Hochberg discoveries at q = {fmt_num(f.get('q'), 2)} among the {fmt_count(n)} items with "
            f"their own p on {metric_name(f.get('metric'))} (an item needs 2 distinct twins for one); {low} have "
            "p < 0.05")


def _why_unmeasured(v: Mapping[str, Any]) -> str:
    """A stored reason without its "not measured" prefix ("add con to --metrics")."""
    why = str(v.get("reason") or "")
    return why.removeprefix("not measured").strip(" ():")


def _did_sentences(run: Run) -> tuple[str, ...]:
    """The control comparison (``--control``) in words: each metric relative to the control model."""
    from zcp_core.probe.control import RELATIVE

    did, ctl = run.summary.get("did") or {}, run.summary.get("control") or {}
    if not did:
        return ()
    out = [f"Control model {ctl.get('model') or MISSING}: each item's gap (original − twin) minus the control's gap "
           f"on the same item, {RELATIVE} (the probabilities compared as logs)."]
    for m, v in (did.get("metrics") or {}).items():
        ci = v.get("effect_ci") or [None, None]
        c = (f"Contamination Confidence {fmt_c(v.get('confidence'), bool(v.get('bound')))}"
             if v.get("confidence") is not None else f"no Contamination Confidence: {v.get('reason') or 'not tested'}")
        out.append(f"{capital(metric_name(m))} {RELATIVE}: audited gap {fmt_num(v.get('audited_gap'), signed=True)}, "
                   f"control gap {fmt_num(v.get('control_gap'), signed=True)}, difference "
                   f"{fmt_num(v.get('effect'), signed=True)} (95% CI {fmt_ci(*ci)}), {c}.")
    warn = (ctl.get("strength") or {}).get("warning")
    return (*out, f"Warning: {warn}.") if warn else tuple(out)


def report(run: Run | str | Path, arm: str = "original", prior: float | None = None) -> Report:
    """A probe run as every surface shows it.

    Args:
        run: A probe run folder (or a loaded run).
        arm: The arm tested against the twins (``original``; ``paraphrased`` when the run has one).
        prior: Recompute C with this prior (default: as stored).

    Raises:
        DataError: When ``run`` is not a probe run.
    """
    from zcp_core.errors import DataError

    run = _load(run)
    if run.kind != "probe":
        raise DataError(str(run.path), None, "kind", f"not a probe run (kind {run.kind})")
    conf = confidence_of(run, arm, prior)
    tests = _tests_of(run, arm)
    measured = sorted(((m, v) for m, v in conf["metrics"].items() if _measured(v)),
                      key=lambda kv: ORDER.index(kv[0]) if kv[0] in ORDER else len(ORDER))
    test = {m: str(tests.get(m, {}).get("test") or ("mcnemar" if m in ("acc", "con") else
                                                    run.summary.get("continuous_test") or "")) for m, _ in measured}
    head = headline_of(conf)
    # The headline metric's sentence first: it is the evidence behind the one number.
    first = (conf.get("headline") or {}).get("metric")
    k = int((run.summary.get("twins") or {}).get("k") or 1)
    sentences = [_sentence(m, v, test[m], k) for m, v in sorted(measured, key=lambda kv: kv[0] != first)]
    return Report(
        title=f"Zero-CoT probe of {run.manifest.get('model') or 'a model'}", headline=head, columns=COLUMNS,
        rows=tuple(_row(m, v, test[m]) for m, v in measured), sentences=(*sentences, *_did_sentences(run)),
        facts=_facts(run, arm), notes=_notes(run, conf, test), command=portable(str(run.manifest.get("command") or "")))


def sample_size_table(run: Run | str | Path) -> pd.DataFrame:
    """The run's ``sample_size`` table with its full-sample rows showing the run's own C.

    The curve is computed with fewer resamples (2,000) than the run's test (10,000), so at the full n, where the
    one "subsample" is the run itself, it would read differently from the headline (0.990 against 0.998); there
    the run's own C is shown instead.
    """
    run = _load(run)
    table = run.table("sample_size").copy()
    metrics = confidence_of(run)["metrics"]
    for m, v in metrics.items():
        if v.get("confidence") is None or v.get("n") is None:
            continue
        at = (table["metric"] == m) & (table["n"] == v["n"])
        for col in ("confidence_mean", "confidence_median", "confidence_q10", "confidence_q90"):
            if col in table:
                table.loc[at, col] = float(v["confidence"])
    return table
