"""Time-Travel: guided vs general completions, their overlap with the true second piece, and the verdicts."""

import streamlit as st

from zcp_core.app import pick_run, readable
from zcp_core.app.labels import MATCH_WORDS, bleurt_words, evidence_words, judge_words
from zcp_core.guided import viz as vg

st.title("Time-Travel guided-instruction probe")
st.caption(
    "The model sees the first piece of each instance twice: with a guided instruction that names the dataset "
    "and split, and with a general one that does not. Guided completions that reproduce the true second piece "
    "much better than general ones point to memorisation (Golchin & Surdeanu, arXiv 2308.08493)."
)
run = pick_run("guided", key="guided_run")
if run is None:
    st.stop()

parts = run.table("partitions")
records = run.records
st.subheader("Partition verdicts")
cols = st.columns(len(parts))
for col, row in zip(cols, parts.to_dict("records")):
    no_verdict = row.get("confidence") is None or row["confidence"] != row["confidence"]
    # The number and the words under it say the same thing: the reading of C (labels.EVIDENCE_LEVELS).
    # The judge rule's verdict is a second, separate algorithm, stated in the sentence below.
    col.metric(f"{row['partition']}: Contamination Confidence", "n/a" if no_verdict else f"{row['confidence']:.2f}",
               help=row.get("reason") or None, delta=evidence_words(None if no_verdict else row["confidence"]),
               delta_color="inverse" if not no_verdict and row["confidence"] >= 0.75 else "off", delta_arrow="off")
    col.markdown(vg.verdict_line(row))
st.dataframe(readable(parts), hide_index=True)
st.caption("One row per partition: mean overlap, the paired sign-flip permutation test (mean difference, 95% t CI, p) and the judge "
           "counts; read the partitions side by side, as the paper reports them.")
if len(parts) > 1:
    st.plotly_chart(vg.partitions_figure(parts), key="guided_parts")
    st.caption("Mean ROUGE-L of guided and general completions per partition; a red bar clearly above its blue "
               "twin, with a small p, is the contamination signal.")

st.subheader("Score distributions")
metric = st.radio("Overlap score", ["rouge_l", "edit_sim"], horizontal=True,
                  format_func=lambda m: vg.METRIC_NAMES[m], key="guided_metric")
st.plotly_chart(vg.score_distribution_figure(records, metric), key="guided_dist")
st.caption("Each point is one instance's overlap with the true second piece; a guided box sitting above the "
           "general box means naming the dataset helps the model recall it.")
st.plotly_chart(vg.paired_scatter_figure(records, metric), key="guided_scatter")
st.caption("Points above the dotted diagonal had more overlap under the guided instruction; colour is the judge's "
           "label (exact / near-exact matches are the instance-level contamination flags).")
st.caption(bleurt_words(vg.bleurt_note(run.summary)))

st.subheader("Instances")
if records.empty:
    st.info("This run has no instances.")
    st.stop()
labels = [f"{r.partition} · {r.id} · {MATCH_WORDS.get(r.match_label, r.match_label)} · ROUGE-L guided "
          f"{r.rouge_l_guided:.2f}, general {r.rouge_l_general:.2f}"
          for r in records.itertuples(index=False)]
pick = st.selectbox("Instance", range(len(records)), format_func=lambda i: labels[i], key="guided_instance")
row = records.iloc[pick].to_dict()
blocks = vg.instance_html(row)
c1, c2, c3, c4 = st.columns(4)
for col, title, key in ((c1, "First piece", "first_piece"), (c2, "True second piece", "second_piece"),
                        (c3, "Guided completion", "guided"), (c4, "General completion", "general")):
    col.markdown(f"**{title}**")
    col.html(f"<div style='font-size:0.9em'>{blocks[key]}</div>")
st.caption("Highlighted words are the longest common subsequence with the true second piece (what ROUGE-L "
           "counts); the true second piece is highlighted against the guided completion.")
st.markdown(judge_words(row["judge_raw"], row["match_label"], row.get("match_reason") or ""))
with st.expander("Prompts and raw outputs"):
    st.text(row["guided_prompt"])
    st.text(row["general_prompt"])
    st.json({"guided_raw": row["guided_raw"], "general_raw": row["general_raw"]})
if run.has_table("skipped") and not run.table("skipped").empty:
    with st.expander("Skipped instances"):
        st.dataframe(readable(run.table("skipped")), hide_index=True)
