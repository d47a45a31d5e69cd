"""Artifacts: counts of generation artifacts, a per-item browser, cleaning diffs and accept/reject decisions."""

import streamlit as st

from zcp_core.app import pick_run
from zcp_core.artifacts import export_run, run_decisions, save_decisions
from zcp_core.artifacts import viz as va

st.title("Artifacts in generated-text benchmarks")
run = pick_run(("scan", "clean"), key="artifacts_run")
if run is None:
    st.stop()

summary = run.summary
if run.kind == "scan":
    hp = summary.get("human_false_positives", {})
    c1, c2, c3 = st.columns(3)
    c1.metric("Distinct texts", summary.get("texts", 0))
    c2.metric("Flagged (high-precision)", summary.get("flagged", 0))
    c3.metric("Human flagged (false positives)", f"{hp.get('rate', 0):.2%}")
    by_llm = run.table("by_llm_type")
    st.subheader("LLM texts by generator and family")
    st.dataframe(by_llm, hide_index=True)
    st.plotly_chart(va.family_counts_figure(by_llm), key="fam_llm")
    st.caption("Each LLM text is counted once, under the first family that matches; taller bars mean more "
               "texts carry a shortcut a detector can learn.")
    by_label = run.table("by_label")
    st.plotly_chart(va.flag_rate_figure(by_label, by="label"), key="rate_label")
    st.caption("Share of texts flagged by the high-precision families; the human bar is the false-positive rate.")
    with st.expander("By data_type"):
        st.dataframe(run.table("by_data_type"), hide_index=True)
else:
    c1, c2, c3 = st.columns(3)
    c1.metric("Distinct texts", summary.get("texts", 0))
    c2.metric("Edited or dropped", summary.get("edited_texts", 0))
    c3.metric("Dropped", summary.get("dropped", 0))
    st.plotly_chart(va.edits_figure(run.records), key="edits")
    st.caption("Edits per family: green ones are in the release; grey ones were rejected or overlapped by another.")
    st.markdown((run.path / "README.md").read_text() if (run.path / "README.md").exists() else "")

st.subheader("Browse items")
ids = va.browsable_ids(run)
if not ids:
    st.info("No text in this run has an artifact.")
    st.stop()
text_id = st.selectbox("Text", ids, key="artifact_item")
view = va.item_view(run, text_id)
st.markdown("**Original with artifact spans**")
st.html(va.highlight_html(view.original, view.spans))
st.caption("Marked spans are matches, coloured by family; hover for the pattern id.")

if run.kind == "clean":
    st.markdown("**Before / after**")
    st.html(va.diff_html(view.original, view.edits))
    st.caption("Struck-through red text is removed in the release; the rest is kept verbatim."
               if view.cleaned is not None else "This text is dropped from the release.")
    decisions = run_decisions(run.path)
    st.markdown("**Accept or reject each edit**")
    new = dict(decisions)
    for e in view.edits.itertuples(index=False):
        current = decisions.get(e.edit_id, "accept" if e.accepted else "reject")
        choice = st.radio(f"{e.family} · {e.pattern_id} · {e.original[:80]!r}", ["accept", "reject"],
                          index=0 if current == "accept" else 1, horizontal=True, key=f"dec-{e.edit_id}")
        new[e.edit_id] = choice
    col1, col2 = st.columns(2)
    if col1.button("Save decisions", key="save_decisions"):
        path = save_decisions(run.path, new)
        st.success(f"Saved {len(new)} decisions to {path}")
    if col2.button("Export release with decisions", key="export"):
        folder = export_run(run.path)
        st.success(f"Release rewritten in {folder / 'cleaned'}")
