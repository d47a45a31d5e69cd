"""Zero-CoT probe: confidence per metric, the flips table, distributions and curves of a probe run."""

import streamlit as st

from zcp_core.app import pick_run
from zcp_core.probe import viz as vp

st.title("Zero-CoT probe")
st.write("Does the model still answer correctly with its chain of thought cut away, on the original items "
         "but not on their reference twins? That gap is the contamination signal.")

run = pick_run("probe")
if run is None:
    st.stop()

summary = run.summary
head = summary.get("headline", {})
c1, c2, c3, c4 = st.columns(4)
c1.metric(head.get("label", "Contamination Confidence"),
          "n/a" if head.get("value") is None else f"{head['value']:.3f}")
c2.metric("Pairs", summary.get("n_pairs", "n/a"), help="originals without a twin are left out of the tests")
c3.metric("Flagged items", summary.get("flagged", "n/a"))
c4.metric("Model", str(run.manifest.get("model") or ""))
pf = summary.get("parse_failures") or {}
if pf:
    st.caption("Parse failures (counted as incorrect): " + ", ".join(f"{a}: {n}" for a, n in pf.items())
               + f" · originals without a twin: {summary.get('unpaired_original', 0)}")

st.subheader("Contamination Confidence per metric")
tests = run.table("tests") if run.has_table("tests") else None
if tests is not None and len(tests):
    st.plotly_chart(vp.confidence_figure(tests), width="stretch")
    st.caption("Bars near 1 mean the original beats its twin far more than chance allows; 0.5 is no evidence.")
    arms = sorted(set(tests["arm"]))
    arm = st.selectbox("Suspect arm", arms, index=arms.index("original") if "original" in arms else 0)
    st.dataframe(vp.confidence_table(tests, arm), width="stretch", hide_index=True)
    st.caption("Evidence per metric: paired test, effect with 95% CI, discordant pairs (b: original only correct).")

items = run.table("items")
st.subheader("Zero-CoT flips")
f1, f2, f3 = st.columns([3, 1, 2])
kinds = f1.multiselect("Flip kind", list(vp.FLIP_KINDS), default=["orig_only", "ref_only"])
flagged_only = f2.checkbox("Flagged only", value=False)
sort_by = f3.selectbox("Sort by", ["p_all_gap", "p_all_gap_rank", "pair_id"])
st.dataframe(vp.flips_table(items, kinds, flagged_only, sort_by), width="stretch", hide_index=True)
st.caption("orig_only: correct at zero-CoT on the original but not on its twin (flagged as memorised-looking); "
           "a large positive P_all gap supports the flag.")
if items["p_all_original"].notna().any():
    st.plotly_chart(vp.gap_figure(items), width="stretch")
    st.caption("Points above the diagonal: the model puts more probability on the gold answer of the original.")

records = run.records
st.subheader("Per-metric distributions, original against reference")
for m in vp.measured_metrics(records):
    st.plotly_chart(vp.distribution_figure(records, m), width="stretch")
    st.caption(f"{vp.METRIC_LABELS[m]} at zero-CoT; a contaminated model sits higher on the original arm.")

if run.has_table("truncation"):
    trunc = run.table("truncation")
    if trunc["ratio"].nunique() > 1:
        st.subheader("Truncation curve")
        metric = st.selectbox("Metric", sorted(set(trunc["metric"])), key="trunc_metric")
        st.plotly_chart(vp.truncation_figure(trunc, metric), width="stretch")
        st.caption("Memorisation shows as an original curve that is already high at r = 0 while the twin's "
                   "needs the CoT.")

if run.has_table("sample_size"):
    ss = run.table("sample_size")
    if len(ss):
        st.subheader("Sample-size curve")
        st.plotly_chart(vp.sample_size_figure(ss), width="stretch")
        st.caption("How C grows with the number of pairs; bars span the 10th-90th percentile of subsamples.")
