"""Answer-first rate: AFR per arm, dAFR with its CI, and a chain viewer (reads ``afr`` runs)."""

import streamlit as st

from zcp_core.afr import afr_ci_figure, chain_table, chain_view, group_column, position_histogram, segments_html
from zcp_core.app import pick_run
from zcp_core.app.labels import afr_headline, all_chains_sentence

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

# The headline as metrics (the paper's denominator), the all-chains figures as a sentence below them.
heads = afr_headline(summary)
if heads:
    for col, h in zip(st.columns(len(heads)), heads):
        col.metric(h.label, h.value, help=h.help)
if summary.get("line_all_chains"):
    st.caption(all_chains_sentence(summary))
# Chains without a think block: their own group, never in the paper's denominator.
no_think = [summary[k] for k in ("line_no_think", "no_think")
            if summary.get(k) and not str(summary[k]).startswith("every chain has a think block")]
no_think += [summary[s]["line_no_think"] for s in ("a", "b") if isinstance(summary.get(s), dict)
             and summary[s].get("line_no_think")]
for line in no_think:
    st.caption(line)
if summary.get("denominator"):
    st.caption(f"Headline denominator: {summary['denominator']}.")
if summary.get("provenance"):  # screen runs: filter and keep mode of each arm
    st.markdown(summary["provenance"])
elif isinstance(summary.get("filter"), str):  # profile runs
    st.markdown(f"keep-correct filter: {summary['filter']}")
if summary.get("forced_finish"):
    st.markdown(f"**{summary['forced_finish']}**")
if summary.get("line_own_finish"):
    st.caption(summary["line_own_finish"])
for w in summary.get("warnings", []):
    st.warning(w)
if summary.get("note"):
    st.info(summary["note"])
cols = st.columns(2)
cols[0].metric("Chains", f"{len(frame):,}")
cols[1].metric("Answer-first threshold", f"{threshold:.0%}", help="a chain is answer-first when its block first "
               "states the gold answer within this share of its length")

st.subheader("Where the answer is first stated")
st.plotly_chart(position_histogram(frame, threshold), width="stretch", key="afr_hist")
st.caption("Mass left of the dashed line is answer-first; a leaked arm shifted left of its blind arm is the signature.")

st.subheader("AFR and dAFR with bootstrap 95% CIs")
den = st.radio("Denominator", ["covered chains (the paper's)", "all chains"], horizontal=True,
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
