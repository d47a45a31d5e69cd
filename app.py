"""zcp Streamlit app: a router only. Pages live in app_pages/ and call zcp_core."""

import streamlit as st

st.set_page_config(page_title="zcp: contamination lab", page_icon="🔎", layout="wide")

PAGES = {
    "Runs": [
        st.Page("app_pages/home.py", title="Run browser", icon="🗂️", default=True),
        st.Page("app_pages/new_audit.py", title="New audit", icon="▶️"),
    ],
    "Methods": [
        st.Page("app_pages/probe.py", title="Zero-CoT probe", icon="🧪"),
        st.Page("app_pages/lab.py", title="Contamination lab", icon="🧬"),
        st.Page("app_pages/guided.py", title="Time-Travel", icon="⏳"),
        st.Page("app_pages/artifacts.py", title="Artifact scan", icon="🧹"),
        st.Page("app_pages/detector.py", title="Detector & SHAP", icon="🎯"),
        st.Page("app_pages/afr.py", title="Answer-first rate", icon="🔁"),
    ],
}

st.navigation(PAGES).run()
