"""Contamination lab: a model with known contamination, and how well ZCP finds it."""

import streamlit as st

from zcp_core.app import pick_run, readable
from zcp_core.lab import viz as viz_lab
from zcp_core.probe.viz import format_evidence
from zcp_core.runs import iter_runs, runs_dir
from zcp_core.stats import MIN_PAIRS, TOO_FEW_PAIRS


def words(df):
    """Column labels in words and numbers rounded (stored tables keep their short machine names)."""
    return readable(df, words=viz_lab.COLUMN_WORDS)


st.title("Contamination lab")
st.caption(
    "A model fine-tuned on a known split C of a benchmark, with U held out. "
    "A good detector gives high confidence on C and about 0.5 on U. Build with `zcp lab build`, "
    "audit with `zcp lab evaluate`."
)
run = pick_run("lab")
if run is None:
    st.stop()
s = run.summary

if s.get("stage") == "matrix":
    table = run.table("matrix")
    kinds, dets = s.get("kinds") or [], s.get("detectors") or []
    st.write(f"{len(kinds)} kinds × {len(dets)} detectors, profile **{s.get('profile')}**; "
             "`none` is the untouched base model on the same C and U items.")
    st.plotly_chart(viz_lab.matrix_figure(table))
    st.caption("AUROC of each detector's per-item score, C (trained on) positive, U (held out) negative. "
               "Hover for the bootstrap 95% CI, the family-wise (Bonferroni over the kind's detectors) CI, "
               "TPR at 5% FPR and the Contamination Confidence on C and on U.")
    st.subheader("Reading")
    for line in viz_lab.matrix_reading(table):
        st.markdown(f"- {line}")
    with st.expander("The table"):
        st.dataframe(words(viz_lab.matrix_display(table)), hide_index=True)
    if run.has_table("took"):
        st.subheader("Did each build take?")
        st.dataframe(words(run.table("took")), hide_index=True)
        st.caption("Full-CoT accuracy of the lab model and its base on C and U; took_gain is C's gain minus U's, "
                   "with a permutation 95% CI. A build that did not take says nothing about its detectors.")
    st.stop()

if s.get("stage") == "dose":
    st.write(f"Dose-response of {', '.join(s.get('kinds') or [])} at {', '.join(map(str, s.get('doses') or []))} "
             "exposures per C item (epochs; paraphrase versions for evasive and paper).")
    took = run.table("took") if run.has_table("took") else None
    st.plotly_chart(viz_lab.dose_figure(run.table("dose"), took))
    st.caption("AUROC of each detector's per-item score, C vs U, at each dose; hover for the bootstrap 95% CI. "
               "A dose at which the build did not take says nothing about its detectors.")
    if took is not None:
        st.dataframe(words(took), hide_index=True)
    st.stop()

if s.get("stage") == "build":
    if s.get("upper_bound"):
        st.warning("UPPER BOUND: this model was trained in the probe's own format, so its logit metrics are high "
                   "by construction.")
    c1, c2, c3, c4 = st.columns(4)
    c1.metric("final epoch loss", f"{s.get('final_loss', float('nan')):.3f}")
    c2.metric("|C| = |U|", s.get("n_contaminated"))
    c3.metric("optimiser steps", s.get("steps"))
    c4.metric("build time", f"{s.get('build_seconds', 0):.0f} s")
    st.write(f"Model `{s.get('model')}` (alias `lab:{s.get('alias')}`), mode **{s.get('mode')}**, "
             f"profile **{s.get('profile')}**, training format **{s.get('train_format')}**.")
    if s.get("paraphrase"):
        p = s["paraphrase"]
        st.write(f"Trained on paraphrases only: {p['method']} × {p['versions']}, "
                 f"{p['change_fraction']:.0%} of non-numeric words changed.")
    st.plotly_chart(viz_lab.loss_figure(run.table("loss"), run.table("epochs")))
    st.caption("Loss on the answer tokens per optimiser step; it should fall towards 0 as C is memorised.")
    st.subheader("Split")
    st.dataframe(words(run.records), hide_index=True)
    st.caption("C items were trained on, U items were held out; both are drawn from items with a reference twin.")
    if run.has_table("training_texts"):
        with st.expander("Training texts"):
            st.dataframe(words(run.table("training_texts")), hide_index=True)
    st.stop()

if s.get("upper_bound"):
    st.warning("UPPER BOUND: the audited model was trained in the probe's own format.")
c1, c2, c3 = st.columns(3)
c1.metric(f"AUROC ({s.get('auroc_metric')} gap, C vs U)", f"{s.get('auroc', float('nan')):.3f}")
c2.metric("TPR at 5% FPR", f"{s.get('tpr_at_5fpr', float('nan')):.1%}")
c3.metric("C / U items", f"{s.get('n_c')} / {s.get('n_u')}")
st.write(f"Model `{s.get('model')}`, lab build `{s.get('build')}` ({s.get('mode')}, {s.get('profile')}).")
if "took" in s:
    from zcp_core.lab.took import format_took

    st.info(format_took(s).replace("\n", "  \n"))
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
metric = st.selectbox("Gap of metric", sorted(gaps["metric"].unique()), key="lab_gap_metric")
st.plotly_chart(viz_lab.gap_figure(gaps, metric))
st.caption("Each point is one item: C items should sit above 0, U items around 0.")
flips = run.table("flips")
st.subheader("Flips")
st.dataframe(words(viz_lab.flip_counts(flips)), hide_index=True)
st.caption("Original only: right on the original, wrong on its numeric twin (the memorisation signature).")
st.dataframe(words(viz_lab.flips_view(flips)), hide_index=True)
