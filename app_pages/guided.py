"""Time-Travel: guided vs general completions, their overlap with the true second piece, and the verdicts."""

import streamlit as st

from zcp_core.app import pick_run, readable
from zcp_core.app.labels import judge_words
from zcp_core.guided import viz as vg
from zcp_core.guided.report import MATCH_WORDS, report
from zcp_core.report import fmt_num

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
rep = report(run)  # every number on the page is formatted there, as the CLI prints it
h = rep.headline
st.subheader(rep.title)
st.metric(h.label, h.value, help=h.reason or None, delta=h.reading if h.raw is not None else None,
          delta_color="inverse" if (h.raw or 0) >= 0.75 else "off", delta_arrow="off")
if h.subject:
    st.caption(f"on {h.subject}")
st.markdown(f"**{rep.sentences[0]}**")  # the headline in words
st.markdown(" · ".join(f"{k} **{v}**" for k, v in rep.facts))
st.subheader("Partition verdicts")
st.dataframe(rep.table(), hide_index=True)
st.caption("One row per partition: mean overlap, the paired test of guided against general overlap (mean "
           "difference, 95% CI, p, Contamination Confidence) and the judge's counts; read the partitions side by "
           "side, as the paper reports them.")
for sentence in rep.sentences[1:]:
    st.markdown(sentence)
with st.expander("How to read this", expanded=False):
    st.markdown("\n".join(f"- {n}" for n in rep.notes))
if rep.command:
    st.caption("Reproduce:")
    st.code(rep.command, language="bash")
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

st.subheader("Instances")
if records.empty:
    st.info("This run has no instances.")
    st.stop()
labels = [f"{r.partition} · {r.id} · {MATCH_WORDS.get(r.match_label, r.match_label)} · ROUGE-L guided "
          f"{fmt_num(r.rouge_l_guided)}, general {fmt_num(r.rouge_l_general)}"
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
