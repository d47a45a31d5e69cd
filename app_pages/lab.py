"""Contamination lab: a model with known contamination, and how well ZCP finds it."""

import streamlit as st

from zcp_core.app import pick_run, readable
from zcp_core.lab import viz as viz_lab
from zcp_core.lab.report import TOOK_COLUMNS, report, took_rows
from zcp_core.probe.viz import format_evidence
from zcp_core.report import capital, fmt_count, fmt_share, metric_name
from zcp_core.runs import iter_runs, runs_dir
from zcp_core.stats import MIN_PAIRS, TOO_FEW_PAIRS


def words(df):
    """Column labels in words and numbers rounded (stored tables keep their short machine names)."""
    return readable(df, words=viz_lab.COLUMN_WORDS)


def took_table(took, summary):
    """The manipulation check as text (a column of booleans and None would fail in st.dataframe)."""
    import pandas as pd

    n = (summary.get("builds") or [{}])[0].get("n_c")
    df = pd.DataFrame(list(took_rows(took, n)), columns=list(TOOK_COLUMNS))
    return df.loc[:, (df != "–").any()]  # a matrix has no doses: that column would say nothing


st.title("Contamination lab")
st.caption(
    "A model fine-tuned on a known split C of a benchmark, with U held out. "
    "A good detector gives high confidence on C and about 0.5 on U. Build with `zcp lab build`, "
    "audit with `zcp lab evaluate`."
)
# Opens on the matrix (the run with most to show), then the newest.
# the pooled replicates run over its own replicate matrices, a matrix over single builds and evaluations
run = pick_run("lab", prefer=lambda r: {"replicates": 2.0, "matrix": 1.0}.get(r.summary.get("stage"), 0.0))
if run is None:
    st.stop()
s = run.summary
matrix_runs = [r for r in iter_runs(runs_dir()) if r.kind == "lab" and r.summary.get("stage") == "matrix"]
rep = report(run, matrix_runs[0] if matrix_runs else None)  # every number on the page is formatted there


def show_report(table: bool = True) -> None:
    """The run's headline, facts, evidence table, sentences and notes, as the CLI prints them."""
    h = rep.headline
    st.subheader(rep.title)
    st.metric(h.label, h.value, help=h.subject or None)
    st.markdown(f"**{h.text}**")
    if rep.facts:
        st.markdown(" · ".join(f"{k} **{v}**" for k, v in rep.facts))
    if table and rep.rows:
        st.dataframe(rep.table(), hide_index=True, key="lab_evidence")
    for sentence in rep.sentences:
        st.markdown(f"- {sentence}")
    for note in rep.notes:
        st.caption(note)
    if rep.command:
        st.markdown(f"Reproduce: `{rep.command}`")


if s.get("stage") == "matrix":
    show_report(table=False)
    st.plotly_chart(viz_lab.matrix_figure(run.table("matrix")))
    st.caption("AUROC of each detector's per-item score, C (trained on) positive, U (held out) negative; 0.5 is "
               "chance. Hover for both CIs, TPR at 5% FPR and the Contamination Confidence on C and on U.")
    with st.expander("The table"):
        st.dataframe(rep.table(), hide_index=True, key="lab_evidence")
    if run.has_table("took"):
        st.subheader("Did each build take?")
        st.dataframe(took_table(run.table("took"), s), hide_index=True)
        st.caption("Full-CoT accuracy of the lab model and its base on C and U; the gain is C's gain minus U's, "
                   "with a permutation 95% CI. A build that did not take says nothing about its detectors.")
    st.stop()

if s.get("stage") == "dose":
    show_report(table=False)
    took = run.table("took") if run.has_table("took") else None
    st.plotly_chart(viz_lab.dose_figure(run.table("dose"), took))
    st.caption("AUROC of each detector's per-item score, C against U, at each dose; hover for the bootstrap 95% CI.")
    if took is not None:
        st.dataframe(took_table(took, s), hide_index=True)
    st.stop()

if s.get("stage") == "replicates":
    show_report(table=False)
    st.plotly_chart(viz_lab.replicates_figure(run.table("replicates")))
    st.caption("Median AUROC over replicate builds, C (trained on) positive, U (held out) negative; 0.5 is chance. "
               "* marks a cell the pooled exact test catches after Holm's correction; hover for the range, the "
               "replicates that caught it and the p-values.")
    with st.expander("The table"):
        st.dataframe(rep.table(), hide_index=True, key="lab_evidence")
    st.stop()

if s.get("stage") == "benign-check":
    show_report()
    st.subheader("Full-CoT answers on the sampled test items")
    st.dataframe(words(run.records), hide_index=True)
    st.caption("Greedy full-CoT answers of the fine-tuned model and of its base on the same test items.")
    if run.has_table("test_overlap"):
        st.subheader("Training items that met the test set (dropped before training)")
        st.dataframe(words(run.table("test_overlap")), hide_index=True)
    st.stop()

if s.get("stage") == "build":
    if s.get("upper_bound"):
        st.warning("UPPER BOUND: this model was trained in the probe's own format, so its logit metrics are high "
                   "by construction.")
    show_report()
    if s.get("paraphrase"):
        p = s["paraphrase"]
        st.write(f"Trained on paraphrases only: {p['method']} × {fmt_count(p['versions'])}, "
                 f"{fmt_share(p['change_fraction'], 0)} of non-numeric words changed.")
    st.plotly_chart(viz_lab.loss_figure(run.table("loss"), run.table("epochs")))
    st.caption("Loss on the answer tokens per optimiser step; it should fall towards 0 as C is memorised.")
    if s.get("test_overlap"):  # a train kind: its texts come from the training split, and no U exists
        st.subheader("Training items")
        st.dataframe(words(run.records), hide_index=True)
        st.caption("Items of the training split trained on; none shares a question or a 13-gram with the test set.")
        if run.has_table("test_overlap"):
            st.dataframe(words(run.table("test_overlap")), hide_index=True)
            st.caption("Training items that met the test set, dropped before training.")
    else:
        st.subheader("Split")
        st.dataframe(words(run.records), hide_index=True)
        st.caption("C items were trained on, U items were held out; both are drawn from items with a reference "
                   "twin.")
    if run.has_table("training_texts"):
        with st.expander("Training texts"):
            st.dataframe(words(run.table("training_texts")), hide_index=True)
    st.stop()

if s.get("upper_bound"):
    st.warning("UPPER BOUND: the audited model was trained in the probe's own format.")
show_report()
small = [sp for sp in ("C", "U") if (s.get(f"n_{sp.lower()}") or 0) < MIN_PAIRS]
if small:
    st.warning(f"{' and '.join(small)}: {TOO_FEW_PAIRS}; no Contamination Confidence is shown for "
               f"{'them' if len(small) > 1 else 'it'}.")
conf_table = run.table("confidence")
if small and "n" in conf_table:  # runs written before the rule: withhold those confidences here too
    conf_table = conf_table.assign(confidence=conf_table["confidence"].where(conf_table["n"] >= MIN_PAIRS))
st.plotly_chart(viz_lab.confidence_figure(conf_table))
st.caption("Contamination Confidence per metric: C (trained on) should clear 0.95, U (held out) should stay under 0.6.")
with st.expander("Evidence per split and metric"):
    st.dataframe(words(format_evidence(conf_table)), hide_index=True)
others = [r for r in iter_runs(runs_dir()) if r.kind == "lab" and r.path != run.path
          and r.summary.get("stage") == "evaluate" and r.summary.get("build") == s.get("build")
          and r.summary.get("model") != s.get("model")]
if others:
    st.subheader("Against the other models on the same split")
    models = {f"{s.get('model')} (this run)": run, **{f"{r.summary.get('model')} ({r.path.name})": r for r in others}}
    table = viz_lab.compare_models({k: r.table("confidence") for k, r in models.items()},
                                   {k: dict(r.summary.get("detection") or {}) for k, r in models.items()})
    st.dataframe(words(table), hide_index=True)
    st.caption("The same C and U items probed with each model: a clean model stays near 0.5 on both splits and "
               "near 0.5 AUROC; only the model trained on C should score high on C.")
st.plotly_chart(viz_lab.roc_figure(run.table("roc"), dict(s.get("detection") or {})))
st.caption("Per-item detection: how well each metric's original-minus-reference gap separates C from U "
           "(the diagonal is chance).")
gaps = run.table("gaps")
metric = st.selectbox("Gap of metric", sorted(gaps["metric"].unique()), key="lab_gap_metric",
                      format_func=lambda m: capital(metric_name(m)))
st.plotly_chart(viz_lab.gap_figure(gaps, metric))
st.caption("Each point is one item: C items should sit above 0, U items around 0.")
flips = run.table("flips")
st.subheader("Flips")
st.dataframe(words(viz_lab.flip_counts(flips)), hide_index=True)
st.caption("Original only: right on the original, wrong on its numeric twin (the memorisation signature).")
st.dataframe(words(viz_lab.flips_view(flips)), hide_index=True)
