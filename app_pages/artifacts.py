"""Artifacts: counts of generation artifacts, a text browser, cleaning diffs and a review saved as it is made."""

import streamlit as st

from zcp_core.app import pick_run
from zcp_core.artifacts import browse as ab
from zcp_core.artifacts import export_run
from zcp_core.artifacts import report as ar
from zcp_core.artifacts import viz as va
from zcp_core.report import fmt_count

st.title("Artifacts in generated-text benchmarks")
run = pick_run(("scan", "clean"), key="artifacts_run")
if run is None:
    st.stop()

rep = ar.report(run)
st.markdown(f"**{rep.headline.text}**")
shown = [ar.INPUT_TEXTS, ar.DISTINCT_TEXTS, *(k for k, _ in rep.facts[3:5])]
for col, label in zip(st.columns(len(shown)), shown, strict=True):
    col.metric(label, rep.fact(label))
st.caption(" · ".join(f"{k} {v}" for k, v in rep.facts if k not in shown))
if run.kind == "scan":
    by_llm = run.table("by_llm_type")
    flagged_fams, low_fams = ab.split_families(by_llm)
    st.subheader("LLM texts by generator and family")
    st.dataframe(rep.table(), hide_index=True)
    st.plotly_chart(va.family_counts_figure(flagged_fams), key="fam_llm")
    st.caption("Flagged (high-precision) families only. Each LLM text is counted once, under the first family "
               "that matches; taller bars mean more texts carry a shortcut a detector can learn.")
    if any(c in by_llm.columns for c in low_fams.columns if c not in flagged_fams.columns):
        st.markdown("**Low-precision family (domain), not flagged**")
        st.plotly_chart(va.family_counts_figure(low_fams), key="fam_llm_low")
        st.caption("Domain phrases (\"this article\", \"Abstract:\") also occur in human writing, so they are "
                   "drawn apart and never count as flagged.")
    by_label = run.table("by_label")
    st.plotly_chart(va.flag_rate_figure(by_label, by="label"), key="rate_label")
    for sentence in rep.sentences:
        st.markdown(sentence)
    with st.expander("By data type"):
        st.dataframe(ar.breakdown_frame(run.table("by_data_type"), "data_type"), hide_index=True)
else:
    st.dataframe(rep.table(), hide_index=True)
    st.plotly_chart(va.edits_figure(run.records), key="edits")
    st.caption("Edits per family: green ones are in the release; grey ones were rejected or overlapped by another.")
    for sentence in rep.sentences:
        st.markdown(sentence)
    with st.expander("Audit card"):
        st.markdown((run.path / "README.md").read_text() if (run.path / "README.md").exists() else "")
for note in rep.notes:
    st.caption(note)
if rep.command:
    st.caption("Reproduce:")
    st.code(rep.command, language="bash")

st.subheader("Texts")
spans = run.records
texts = run.table("texts") if run.kind == "scan" else run.table("originals")
table = ab.text_table(spans, texts)
if table.empty:
    st.info("No text in this run has an artifact.")
    st.stop()
st.caption("Texts with a flagged (high-precision) span first. Click a row to open the text; the first is open "
           "until you pick one.")
picked = st.dataframe(table, width="stretch", hide_index=True, on_select="rerun", selection_mode="single-row",
                      key="artifact_browser")
rows = picked.selection.rows if picked is not None else []
text_id = str(table.iloc[rows[0] if rows else 0]["Text"])
original = str(texts.loc[texts["id"].astype(str) == text_id, "text"].iloc[0])
mine = spans[spans["id"].astype(str) == text_id].reset_index(drop=True)
view = ab.text_view(text_id, original, mine)
with st.container(border=True):
    st.markdown(f"**{text_id}** · {fmt_count(len(mine))} span(s)")
    st.html(ab.segments_html(view.segments))
    st.caption("Flagged spans are filled in their family colour; low-precision (`domain`) spans are only "
               "dotted-underlined. Hover a span for its family and pattern id.")
    st.dataframe(view.spans, width="stretch", hide_index=True)

if run.kind != "clean":
    st.stop()

edits = run.records
state = ab.run_review_state(run.path, edits)
st.markdown("**Before / after**")
st.html(va.diff_html(original, mine.assign(applied=[state.get(e) == "accept" for e in mine["edit_id"]])))
st.caption("Struck-through red text is removed in the release (with the decisions below); the rest is kept "
           "verbatim.")

st.subheader("Review")
st.caption("Each decision is saved to the run folder (`review.jsonl`, `decisions.json`) the moment you make it; "
           "**Export release** rebuilds the release with them.")
reason = st.text_input("Reason for the next decision", key="review_reason",
                       placeholder="e.g. part of the original abstract, not an artifact")


def _decide(edit_id: str) -> None:
    ab.record_review(run.path, edits, [edit_id], st.session_state[f"dec-{edit_id}"],
                     st.session_state.get("review_reason") or "reviewed in the app")


for e in mine.itertuples(index=False):
    key = f"dec-{e.edit_id}"
    st.session_state[key] = state.get(e.edit_id, "accept")  # the saved decision, never a stale widget value
    st.radio(f"{e.family} · {e.pattern_id} · “{e.original[:80]}”", ["accept", "reject"], horizontal=True, key=key,
             on_change=_decide, args=(e.edit_id,))

st.markdown("**All edits of one pattern id**")
counts = ab.pattern_counts(edits, state)
pid = st.selectbox("Pattern id", list(counts["Pattern id"]), key="bulk_pattern",
                   format_func=lambda p: "{} · {} · {} edits, {} rejected".format(
                       p, *(fmt_count(x) if i else x for i, x in enumerate(
                           counts.set_index("Pattern id").loc[p, ["Family", "Edits", "Rejected"]]))))
b1, b2, b3 = st.columns(3)
for col, decision, label in ((b1, "accept", "Accept all"), (b2, "reject", "Reject all")):
    if col.button(f"{label} `{pid}`", key=f"bulk_{decision}"):
        ids = ab.pattern_edit_ids(edits, pid)
        ab.record_review(run.path, edits, ids, decision,  # type: ignore[arg-type]
                         st.session_state.get("review_reason") or f"bulk {decision} of {pid}", pattern_id=pid)
        st.rerun()
if b3.button("Undo last decision", key="undo_review"):
    ab.undo_review(run.path, edits)
    st.rerun()
log = ab.load_review(run.path)
with st.expander(f"Review log ({fmt_count(len(log))} entries)"):
    st.dataframe(ab.review_table(log), width="stretch", hide_index=True)
    st.dataframe(counts, width="stretch", hide_index=True)

col1, col2 = st.columns(2)
if col1.button("Save decisions", key="save_decisions",
               help="Decisions are already saved as you make them; this writes decisions.json again."):
    path = ab.save_decisions(run.path, ab.run_review_state(run.path, edits))
    st.success(f"Saved {fmt_count(len(state))} decisions to {path}")
if col2.button("Export release with decisions", key="export"):
    folder = export_run(run.path)
    st.success(f"Release rewritten in {folder / 'cleaned'}")
