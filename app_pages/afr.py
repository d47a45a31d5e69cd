"""Answer-first rate: AFR per arm, dAFR with its CI, and a chain viewer (reads ``afr`` runs)."""

import streamlit as st

from zcp_core.afr import (
    afr_ci_figure,
    chain_table,
    chain_view,
    group_column,
    position_histogram,
    report,
    segments_html,
)
from zcp_core.afr.report import COVERED_WORDS
from zcp_core.app import pick_run

st.title("Answer-first rate (AFR) screen")
st.caption("dAFR = AFR(leaked) − AFR(blind): chains written with the gold answer in view state it early. "
           "A comparison of two corpora reads the same way: the audited corpus minus the comparison. "
           "Runs come from `zcp afr screen` or `zcp afr profile`.")

run = pick_run("afr")
if run is None:
    st.stop()

summary = run.summary
frame = run.records
threshold = float(run.manifest.get("config", {}).get("threshold", 0.2))
rep = report(run)  # every number on this page is formatted there, as the CLI and the notebook show it

# The headline names its own denominator (covered chains, the paper's, or all chains when a corpus has none).
h = rep.headline
st.metric(h.label, h.value, help=h.subject or None)
st.markdown(f"**{h.text}**")
st.dataframe(rep.table(), hide_index=True, width="stretch", key="afr_evidence")
for sentence in rep.sentences[1:]:
    st.caption(sentence)
if rep.facts:
    st.markdown(" · ".join(f"{k} **{v}**" for k, v in rep.facts))
for note in rep.notes:
    if note.startswith("WARNING: "):
        st.warning(note.removeprefix("WARNING: "))
    else:
        st.caption(note)
if rep.command:
    st.markdown(f"Reproduce: `{rep.command}`")

st.subheader("Where the answer is first stated")
st.plotly_chart(position_histogram(frame, threshold), width="stretch", key="afr_hist")
st.caption("Mass left of the dashed line is answer-first; a leaked arm shifted left of its blind arm is the signature.")

st.subheader("AFR and dAFR with bootstrap 95% CIs")
# Opens on the headline's denominator: a corpus without covered chains has nothing to draw over them.
den = st.radio("Denominator", ["covered chains (the paper's)", "all chains"], horizontal=True,
               index=0 if h.subject == COVERED_WORDS else 1,
               help="covered = chains whose think block states the answer; the paper divides by these "
                    "(chains without a think block are their own group, never in this denominator)")
key = "ci_all_chains" if den == "all chains" else "ci_covered_chains"
st.plotly_chart(afr_ci_figure(summary, key), width="stretch", key="afr_ci")
st.caption("A dAFR interval that excludes 0 means the leaked arm states its answer early more often than the blind one.")

st.subheader("Chains")
st.caption("Answer-first chains first, then by where the block first states the gold answer. "
           "Click a row to open the chain; the first is open until you pick one.")
col = group_column(frame)
groups = list(dict.fromkeys(frame[col].astype(str)))
picked_groups = st.multiselect("Arm" if col == "arm" else "Corpus", groups, default=groups, key="afr_groups")
only_first = st.checkbox("answer-first chains only", value=False)
sub = frame[frame[col].astype(str).isin(picked_groups)]
if only_first:
    sub = sub[sub["answer_first"].astype(bool)]
sub = sub.reset_index(drop=True)
if sub.empty:
    st.info("No chains to show.")
    st.stop()
table = chain_table(sub)
picked = st.dataframe(table, width="stretch", hide_index=True, on_select="rerun", selection_mode="single-row",
                      key="chain_browser",
                      column_config={"Answer position (%)": st.column_config.NumberColumn(format="%.1f%%")})
rows = picked.selection.rows if picked is not None else []
view = chain_view(sub, str(table.iloc[rows[0] if rows else 0]["Chain"]), threshold)
with st.container(border=True):
    st.markdown(f"**{view.uid}** · {view.group} · sample {view.sample} · gold answer `{view.answer}` · "
                f"{view.block_kind} block · {'answer-first' if view.answer_first else 'not answer-first'}"
                + (" · the question already states the answer" if view.answer_in_question else ""))
    st.markdown(f"Answer position: {view.position}.")
    st.markdown(segments_html(view.segments), unsafe_allow_html=True)
    st.caption("Yellow, outlined: the first statement of the gold answer inside the block; blue: every "
               "\\boxed{}; grey: text outside the block (not counted).")
