"""Detector shortcuts: SHAP-coloured texts, one text's waterfall, global top tokens, the prefix attack.

Reads ``detector`` runs written by ``zcp detector compare`` (and shows metrics of
``train`` / ``crossdomain`` runs).
"""

import streamlit as st

from zcp_core.app import pick_run
from zcp_core.detector import report as dr
from zcp_core.detector import viz as vd
from zcp_core.report import fmt_num

st.title("Detector shortcuts: SHAP and the prefix attack")
st.caption("A detector trained on artifact-laden texts learns the artifacts. Compare the original-trained and "
           "cleaned-trained detectors. Runs come from `zcp detector compare`.")

run = pick_run("detector", key="detector_run")
if run is None:
    st.stop()

summary = run.summary
rep = dr.report(run)
st.markdown(f"**{rep.headline.text}**")
st.caption(" · ".join(f"{k} {v}" for k, v in rep.facts))
if rep.rows:
    st.subheader("Metrics")
    st.dataframe(rep.table(), hide_index=True)
for note in rep.notes:
    st.caption(note)
if run.has_table("cross_domain"):
    st.subheader("Cross-domain transfer (ROC-AUC)")
    st.plotly_chart(vd.cross_domain_figure(run.table("cross_domain")), width="stretch", key="det_cross")
    st.caption("Rows: domain and form trained on; columns: evaluated on. Compare off-diagonal cells of "
               "original- and cleaned-trained rows.")
if rep.command:
    st.caption("Reproduce:")
    st.code(rep.command, language="bash")
if not run.has_table("attack"):
    st.stop()

st.subheader("Prefix attack")
attack = run.table("attack")
rates = {r[0]: r[4] for r in dr.attack_rows(attack)}
cols = st.columns(len(rates) or 1)
for col, (name, rate) in zip(cols, rates.items(), strict=False):
    col.metric(f"{name.capitalize()}: attacked human texts called LLM", rate)
st.dataframe(dr.frame(dr.ATTACK_COLUMNS, dr.attack_rows(attack)), hide_index=True)
st.plotly_chart(vd.attack_figure(attack), width="stretch", key="det_attack")
st.caption(f"Prefix: “{attack['prefix'].iloc[0]}”. A detector that falls for it calls most attacked human "
           "texts LLM (red bar high).")
for sentence in rep.sentences:
    st.markdown(sentence)

st.subheader("Attribution mass on artifact spans")
st.plotly_chart(vd.artifact_share_figure(summary.get("artifact_share", {})), width="stretch", key="det_share")
st.caption("Share of |SHAP| on tokens inside high-precision artifact spans, over explained texts that contain one.")

top = run.table("top_tokens")
dets = list(dict.fromkeys(top["detector"]))
det = st.radio("Detector", dets, horizontal=True, key="det_pick", format_func=dr.detector_words)
st.subheader("Global top tokens")
st.plotly_chart(vd.top_tokens_figure(top[top["detector"] == det]), width="stretch", key="det_top")
st.caption("Mean |SHAP| per text; red ★ tokens lie mostly inside artifact spans, i.e. shortcuts, not writing.")

st.subheader("One text")
texts = run.table("text_attributions")
texts = texts[texts["detector"] == det].reset_index(drop=True)
if texts.empty:
    st.info("No explained texts for this detector.")
    st.stop()
only_art = st.checkbox("texts with an artifact only", value=False, key="det_only_art")
if only_art and texts["has_artifact"].any():
    texts = texts[texts["has_artifact"]].reset_index(drop=True)
i = st.selectbox("Text", range(len(texts)), key="det_text",
                 format_func=lambda k: f"{texts.loc[k, 'id']} · {texts.loc[k, 'label']} · "
                                       f"margin {fmt_num(texts.loc[k, 'margin'], signed=True)}")
row = texts.loc[i]
toks = run.table("token_attributions")
toks = toks[(toks["detector"] == det) & (toks["id"] == row["id"])]
st.markdown(vd.token_html(toks, str(row["text"])), unsafe_allow_html=True)
st.caption("Red pushes toward LLM, blue toward human; underlined tokens lie in artifact spans. Hover for values.")
st.plotly_chart(vd.waterfall_figure(toks, float(row["base_value"])), width="stretch", key="det_waterfall")
st.caption("From the base value (empty text) to this text's margin: the top tokens' contributions, the rest summed.")
