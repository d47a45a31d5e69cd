"""Detector shortcuts: SHAP-coloured texts, one text's waterfall, global top tokens, the prefix attack.

Reads ``detector`` runs written by ``zcp detector compare`` (and shows metrics of
``train`` / ``crossdomain`` runs).
"""

import streamlit as st

from zcp_core.app import pick_run, readable
from zcp_core.detector import viz as vd

st.title("Detector shortcuts: SHAP and the prefix attack")
st.caption("A detector trained on artifact-laden texts learns the artifacts. Compare the original-trained and "
           "cleaned-trained detectors. Runs come from `zcp detector compare`.")

run = pick_run("detector", key="detector_run")
if run is None:
    st.stop()

summary = run.summary
command = run.manifest.get("config", {}).get("command", "compare")
if run.has_table("metrics"):
    st.subheader("Metrics")
    st.dataframe(readable(run.table("metrics")), hide_index=True)
    st.caption("TPR at 1% FPR needs ≥ 100 human texts and at 0.01% FPR ≥ 10,000; a column left out or a “–” means "
               "it is not estimable on this sample (see the notes).")
if run.has_table("cross_domain"):
    st.subheader("Cross-domain transfer (ROC-AUC)")
    st.plotly_chart(vd.cross_domain_figure(run.table("cross_domain")), width="stretch", key="det_cross")
    st.caption("Rows: domain and form trained on; columns: evaluated on. Compare off-diagonal cells of "
               "original- and cleaned-trained rows.")
if not run.has_table("attack"):
    st.stop()

st.subheader("Prefix attack")
attack = run.table("attack")
c1, c2 = st.columns(2)
c1.metric("Original-trained: attacked human texts called LLM",
          f"{summary.get('original_llm_rate', 0) or 0:.0%}")
c2.metric("Cleaned-trained: attacked human texts called LLM", f"{summary.get('cleaned_llm_rate', 0) or 0:.0%}")
st.dataframe(readable(attack.drop(columns=["prefix"], errors="ignore")), hide_index=True)
st.plotly_chart(vd.attack_figure(attack), width="stretch", key="det_attack")
st.caption(f"Prefix: {attack['prefix'].iloc[0]!r}. A detector that falls for it calls most attacked human "
           "texts LLM (red bar high).")

st.subheader("Attribution mass on artifact spans")
st.plotly_chart(vd.artifact_share_figure(summary.get("artifact_share", {})), width="stretch", key="det_share")
st.caption("Share of |SHAP| on tokens inside high-precision artifact spans, over explained texts that contain one.")

top = run.table("top_tokens")
dets = list(dict.fromkeys(top["detector"]))
det = st.radio("Detector", dets, horizontal=True, key="det_pick")
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
                                       f"margin {texts.loc[k, 'margin']:+.2f}")
row = texts.loc[i]
toks = run.table("token_attributions")
toks = toks[(toks["detector"] == det) & (toks["id"] == row["id"])]
st.markdown(vd.token_html(toks, str(row["text"])), unsafe_allow_html=True)
st.caption("Red pushes toward LLM, blue toward human; underlined tokens lie in artifact spans. Hover for values.")
st.plotly_chart(vd.waterfall_figure(toks, float(row["base_value"])), width="stretch", key="det_waterfall")
st.caption("From the base value (empty text) to this text's margin: the top tokens' contributions, the rest summed.")
