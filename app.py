"""zcp Streamlit app: a router only. Pages live in app_pages/ and call zcp_core."""

from pathlib import Path

import streamlit as st

st.set_page_config(page_title="zcp: contamination lab", page_icon=":material/search:", layout="wide")
# Narrower side padding than Streamlit's 5rem, so the wide tables fit a 1,280-pixel window beside the sidebar.
st.markdown('<style>[data-testid="stMainBlockContainer"]{padding-left:2rem;padding-right:2rem}</style>',
            unsafe_allow_html=True)

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
        st.Page(f"app_pages/{file}", title=title, icon=icon)
        for file, title, icon in entries
        if (HERE / "app_pages" / file).exists()
    ]
    for section, entries in SECTIONS.items()
}
PROBE = next(p for section in pages.values() for p in section if p.url_path == "probe")


def land() -> None:
    """The root URL opens the story: the probe page, which picks the contaminated example when it is there.

    A hidden default page that moves on, so every page keeps its own URL (``/probe``, ``/home``...)."""
    st.switch_page(PROBE)


st.navigation({"": [st.Page(land, title="Start", default=True, visibility="hidden")], **pages}).run()
