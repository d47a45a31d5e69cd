"""Answer-first rate: AFR per arm, dAFR with its CI, and a chain viewer (reads ``afr`` runs)."""

import streamlit as st

from zcp_core.afr import afr_ci_figure, chain_html, group_column, position_histogram
from zcp_core.app import pick_run

st.title("Answer-first rate (AFR) screen")
st.caption("dAFR = AFR(leaked) − AFR(blind): chains written with the gold answer in view state it early. "
           "Runs come from `zcp afr screen` or `zcp afr profile`.")

run = pick_run("afr")
if run is None:
    st.stop()

summary = run.summary
frame = run.records
threshold = float(run.manifest.get("config", {}).get("threshold", 0.2))

# Same order and labels as the CLI: the paper's denominator first, then the all-chains version.
lines = [summary[k] for k in ("line", "line_all_chains") if summary.get(k)]
if lines:
    st.code("\n".join(lines), language=None)
if summary.get("denominator"):
    st.caption(f"Headline denominator: {summary['denominator']}. The second line counts every chain.")
if summary.get("provenance"):  # screen runs: filter and keep mode of each arm
    st.markdown(summary["provenance"])
elif isinstance(summary.get("filter"), str):  # profile runs
    st.markdown(f"keep-correct filter: {summary['filter']}")
if summary.get("forced_finish"):
    st.markdown(f"**{summary['forced_finish']}**")
if summary.get("line_own_finish"):
    st.code(summary["line_own_finish"], language=None)
for w in summary.get("warnings", []):
    st.warning(w)
if summary.get("note"):
    st.info(summary["note"])
cols = st.columns(3)
head = summary.get("headline", {})
cols[0].metric(head.get("label", "headline"), f"{head.get('value', float('nan')):+.1f}")
cols[1].metric("chains", len(frame))
cols[2].metric("answer-first threshold", threshold)

st.subheader("Where the answer is first stated")
st.plotly_chart(position_histogram(frame, threshold), width="stretch", key="afr_hist")
st.caption("Mass left of the dashed line is answer-first; a leaked arm shifted left of its blind arm is the signature.")

st.subheader("AFR and dAFR with bootstrap 95% CIs")
den = st.radio("Denominator", ["covered chains (the paper's)", "all chains"], horizontal=True,
               help="covered = chains whose block states the answer at all; the paper divides by these")
key = "ci_all_chains" if den == "all chains" else "ci_covered_chains"
st.plotly_chart(afr_ci_figure(summary, key), width="stretch", key="afr_ci")
st.caption("A dAFR interval that excludes 0 means the leaked arm states its answer early more often than the blind one.")

st.subheader("Chain viewer")
col = group_column(frame)
groups = list(dict.fromkeys(frame[col]))
g = st.selectbox("Arm" if col == "arm" else "Corpus", groups)
sub = frame[frame[col] == g].reset_index(drop=True)
only_first = st.checkbox("answer-first chains only", value=False)
if only_first:
    sub = sub[sub["answer_first"].astype(bool)].reset_index(drop=True)
if sub.empty:
    st.info("No chains to show.")
    st.stop()
i = st.selectbox("Chain", range(len(sub)),
                 format_func=lambda k: f"{sub.loc[k, 'uid']} · sample {sub.loc[k, 'sample']} · "
                                       f"frac {sub.loc[k, 'frac']:.2f}")
row = sub.loc[i]
st.markdown(f"**gold answer:** `{row['answer']}` · block: {row['block_kind']} ({row['block_len']} chars) · "
            f"answer-first: {bool(row['answer_first'])} · answer in question: {bool(row['answer_in_question'])}")
st.markdown(chain_html(str(row["chain"]), int(row["mention_start"]), int(row["mention_end"])), unsafe_allow_html=True)
st.caption("Yellow: the first statement of the answer inside the block; blue: every \\boxed{}.")
