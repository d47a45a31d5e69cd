"""Run browser: every run in the runs directory, openable on its page, comparable side by side."""

import pandas as pd
import streamlit as st

from zcp_core.app import PAGE_FOR_KIND, flatten_summary
from zcp_core.runs import load_run, runs_dir, runs_table

st.title("zcp — contamination audits")
st.caption(
    "Browse finished runs of the four methods: Zero-CoT probe, Time-Travel, artifact scanning and "
    "answer-first rate. Each row is a run folder with its manifest and results."
)
root = runs_dir()


@st.cache_data(max_entries=8, ttl=5, show_spinner=False)
def _runs(root: str) -> pd.DataFrame:
    # Short TTL: new runs from background jobs show up within seconds.
    return runs_table(root)


table = _runs(str(root))
st.write(f"Runs directory: `{root}` · {len(table)} run(s)")
if table.empty:
    st.info("No runs yet. Start one from **New audit**, or run `make demo` / `zcp probe --limit 50 --out runs/demo`.")
    st.stop()

kinds = sorted(table["kind"].unique())
chosen = st.multiselect("Kinds", kinds, default=kinds)
view = table[table["kind"].isin(chosen)].reset_index(drop=True)
view["finished"] = view["finished"].str[:16].str.replace("T", " ")
view["headline_label"] = view["headline_label"].fillna("–").replace("", "–")
st.dataframe(
    view[["name", "kind", "model", "dataset", "finished", "headline_label", "headline_value"]],
    hide_index=True, width="stretch",
    column_config={"name": "Run", "kind": "Method", "model": "Model", "dataset": "Dataset",
                   "headline_value": st.column_config.NumberColumn("Headline", format="%.3f"),
                   "headline_label": "Headline metric", "finished": "Finished"},
)

st.subheader("Open a run")
if not view.empty:
    pick = st.selectbox("Run", range(len(view)), format_func=lambda i: f"{view.name[i]} ({view.kind[i]})", key="open")
    run = load_run(view.path[pick])
    head = run.summary.get("headline") or {}
    if head:
        value = head.get("value")
        st.metric(str(head.get("label", "headline")),
                  "n/a" if value is None else f"{value:,.3f}" if isinstance(value, float) else f"{value:,}"
                  if isinstance(value, int) else str(value), help=head.get("reason"))
    if st.button("Open on its page", type="primary"):
        st.session_state["selected_run"] = str(run.path)
        st.switch_page(PAGE_FOR_KIND.get(run.kind, "app_pages/home.py"))

st.subheader("Compare runs side by side")
st.caption("Pick two or more runs (e.g. two models on one benchmark, or original against cleaned) to line up their summaries.")
names = list(view["name"])
picked = st.multiselect("Runs to compare", range(len(view)), format_func=lambda i: names[i], key="compare")
if len(picked) >= 2:
    cols = {names[i]: flatten_summary(dict(load_run(view.path[i]).summary)) for i in picked}
    comp = pd.DataFrame(cols)
    # Missing entries (a key one run has and another lacks) read "–", never None or nan.
    comp = comp.map(lambda v: "–" if v is None or (isinstance(v, float) and v != v) else str(v))
    st.dataframe(comp, width="stretch")
