"""Run browser: every run in the runs directory, openable on its page, comparable side by side."""

import pandas as pd
import streamlit as st

from zcp_core.app import PAGE_FOR_KIND
from zcp_core.app.overview import METHOD_WORDS, browser_row, compare_table, headline_text, run_headline
from zcp_core.report import fmt_count
from zcp_core.runs import load_run, runs_dir, runs_table

st.title("zcp — contamination audits")
root = runs_dir()


@st.cache_data(max_entries=8, ttl=5, show_spinner=False)
def _runs(root: str) -> pd.DataFrame:
    # Short TTL: new runs from background jobs show up within seconds.
    return runs_table(root)


table = _runs(str(root))
st.write(f"Runs directory: `{root}` · {fmt_count(len(table))} run(s)")
if table.empty:
    st.info("No runs yet. Start one from **New audit**, or run `make demo` / `zcp probe --limit 50 --out runs/demo`.")
    st.stop()

kinds = sorted(table["kind"].unique())
# the caption counts what the filter below lists, so the two never disagree
st.caption(f"Finished runs of {fmt_count(len(kinds))} kind{'' if len(kinds) == 1 else 's'}: "
           + ", ".join(METHOD_WORDS.get(k, k) for k in kinds)
           + ". Each row is a run folder with its manifest and results.")
chosen = st.multiselect("Methods", kinds, default=kinds, format_func=lambda k: METHOD_WORDS.get(k, k))
view = table[table["kind"].isin(chosen)].reset_index(drop=True)
runs = [load_run(p) for p in view["path"]]
# Every cell as text, through the report layer: no None, no 103.000, twin and example runs in words.
st.dataframe(pd.DataFrame([browser_row(r) for r in runs]), hide_index=True, width="stretch")
st.caption("Example runs are bundled with zcp (made by `scripts/make_examples.py`); the others are yours.")

st.subheader("Open a run")
if not view.empty:
    def _name(i: int) -> str:
        return f"{view.name[i]} ({METHOD_WORDS.get(view.kind[i], view.kind[i])}"\
               + (", example)" if runs[i].manifest.get("example") else ")")

    pick = st.selectbox("Run", range(len(view)), format_func=_name, key="open")
    run = runs[pick]
    head = run_headline(run)
    if run.summary.get("headline"):
        st.metric(headline_text(head), head.value, help=head.reason or None)
    if st.button("Open on its page", type="primary"):
        st.session_state["selected_run"] = str(run.path)
        st.switch_page(PAGE_FOR_KIND.get(run.kind, "app_pages/home.py"))

st.subheader("Compare runs side by side")
st.caption("Pick two or more runs (e.g. two models on one benchmark, or original against cleaned) to line up "
           "their headlines and evidence.")
names = list(view["name"])
picked = st.multiselect("Runs to compare", range(len(view)), format_func=lambda i: names[i], key="compare")
if len(picked) >= 2:
    st.dataframe(compare_table([runs[i] for i in picked]), width="stretch")
