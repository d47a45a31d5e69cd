"""New audit: a form that starts a run in the background and follows it."""

import datetime as dt

import streamlit as st

from zcp_core.app import (
    MAX_UPLOAD_BYTES,
    METHODS,
    PAGE_FOR_KIND,
    AuditRequest,
    audit_args,
    bundled_datasets,
    job_status,
    list_jobs,
    resolve_data_path,
    run_output_dir,
    save_upload,
    start_job,
)
from zcp_core.backends import vllm_available
from zcp_core.data import data_roots
from zcp_core.errors import ZcpError
from zcp_core.runs import runs_dir

st.title("New audit")
st.caption("Runs start in their own process: the page stays responsive, and a reload finds the job again.")
roots = data_roots()
runs = runs_dir()

method = st.selectbox("Method", list(METHODS), format_func=lambda m: METHODS[m])
model_kinds = ["Embedded default (smollm2)", "Local model folder", "OpenAI-compatible server"]
if vllm_available():
    model_kinds.append("vLLM")
kind = st.radio("Model", model_kinds, horizontal=True, disabled=method == "scan")
model = "smollm2"
if kind == "Local model folder":
    model = "hf:" + st.text_input("Model folder", placeholder="/path/to/model")
elif kind == "OpenAI-compatible server":
    url = st.text_input("Base URL", "http://127.0.0.1:8000/v1")
    name = st.text_input("Model name", "smollm2")
    model = f"openai:{url}#{name}"
elif kind == "vLLM":
    model = "vllm:" + st.text_input("Model name or path")

source = st.radio("Dataset", ["Bundled", "Upload", "Path"], horizontal=True)
dataset = None
try:
    if source == "Bundled":
        files = bundled_datasets(roots)
        default = next((i for i, p in enumerate(files) if p.name == "test.jsonl" and p.parent.name == "gsm8k"), 0)
        dataset = st.selectbox("File", files, index=default, format_func=lambda p: str(p)) if files else None
    elif source == "Upload":
        up = st.file_uploader(f"JSONL, JSON, CSV or parquet (≤ {MAX_UPLOAD_BYTES // 2**20} MB)",
                              type=["jsonl", "json", "csv", "parquet"])
        if up is not None:
            dataset = save_upload(up.name, up.getvalue(), runs)
            st.success(f"Validated and stored as {dataset.name}")
    else:
        typed = st.text_input("Path (inside the data roots)", help="Allowed roots: " + ", ".join(map(str, roots)))
        if typed:
            dataset = resolve_data_path(typed, roots)
except ZcpError as e:
    st.error(str(e))

limit = st.number_input("Items", min_value=2, max_value=2000, value=20, step=1, disabled=method == "scan")
options = {}
if method == "probe":
    options["metrics"] = ",".join(st.multiselect("Metrics", ["acc", "con", "p_first", "p_all"],
                                                 default=["acc", "p_first", "p_all"]))
# The default is fixed once per session, so a rerun never replaces what the user typed.
st.session_state.setdefault("run_name", f"audit-{dt.datetime.now():%Y%m%d-%H%M%S}")
name = st.text_input("Run name", key="run_name")

if st.button("Start", type="primary", disabled=dataset is None):
    try:
        args = audit_args(AuditRequest(method, model, dataset, int(limit), options))  # type: ignore[arg-type]
        out = run_output_dir(runs, name)
        if out.exists() and any(out.iterdir()):
            st.error(f"{out.name} already exists; choose another run name")
        else:
            start_job(args, out)
            st.session_state["active_job"] = str(out)
            st.success(f"Started `zcp {' '.join(args)}`")
    except ZcpError as e:
        st.error(str(e))


def _jobs() -> None:
    jobs = list_jobs(runs)
    if not jobs:
        return
    st.subheader("Jobs")
    for job in jobs[:5]:
        status = job_status(job.folder)
        with st.container(border=True):
            st.write(f"**{job.folder.name}** — {status.state}")
            if status.state == "running":
                st.progress(status.progress or 0.0)
            if status.state != "done":
                st.code(status.log_tail or "(no output yet)")
            elif st.button("Open", key=f"open-{job.folder.name}"):
                from zcp_core.runs import load_run

                st.session_state["selected_run"] = str(job.folder)
                st.switch_page(PAGE_FOR_KIND.get(load_run(job.folder).kind, "app_pages/home.py"))


# Poll only while a job runs: an idle page must not keep the server busy.
running = any(j.state == "running" for j in list_jobs(runs))
st.fragment(_jobs, run_every=2 if running else None)()
