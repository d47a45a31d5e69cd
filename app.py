"""zcp Streamlit app: a router only. Pages live in app_pages/ and call zcp_core."""

from pathlib import Path

import streamlit as st

st.set_page_config(page_title="zcp: contamination lab", page_icon=":material/search:", layout="wide")

HERE = Path(__file__).resolve().parent
SECTIONS = {
    "Runs": [
        ("home.py", "Run browser", ":material/folder_open:"),
        ("new_audit.py", "New audit", ":material/play_arrow:"),
    ],
    "Methods": [
        ("probe.py", "Zero-CoT probe", ":material/science:"),
        ("lab.py", "Contamination lab", ":material/biotech:"),
        ("guided.py", "Time-Travel", ":material/history:"),
        ("artifacts.py", "Artifact scan", ":material/cleaning_services:"),
        ("detector.py", "Detector & SHAP", ":material/target:"),
        ("afr.py", "Answer-first rate", ":material/repeat:"),
    ],
}

pages = {
    section: [
        st.Page(f"app_pages/{file}", title=title, icon=icon, default=file == "home.py")
        for file, title, icon in entries
        if (HERE / "app_pages" / file).exists()
    ]
    for section, entries in SECTIONS.items()
}
st.navigation(pages).run()
