"""New audit: a form that checks its dataset, starts any method in the background and follows the job."""

import datetime as dt
from pathlib import Path

import streamlit as st

from zcp_core.app import (
    DATASET_KIND,
    MAX_UPLOAD_BYTES,
    METHODS,
    PAGE_FOR_KIND,
    AuditRequest,
    afr_folders,
    bundled_datasets,
    check_dataset,
    job_status,
    list_jobs,
    plan_audit,
    resolve_data_path,
    run_output_dir,
    save_upload,
    start_job,
    stop_job,
)
from zcp_core.app.audits import AFR_ADAPTERS, MODEL_METHODS
from zcp_core.backends import vllm_available
from zcp_core.data import data_roots
from zcp_core.errors import ZcpError
from zcp_core.report import metric_name
from zcp_core.runs import runs_dir

st.title("New audit")
st.caption("Runs start in their own process: the page stays responsive, and a reload finds the job again.")
roots = data_roots()
runs = runs_dir()

method = st.selectbox("Method", list(METHODS), format_func=lambda m: METHODS[m], key="method")
kind_of_data = DATASET_KIND[method]

model = "smollm2"
if method in MODEL_METHODS:
    model_kinds = ["Embedded default (smollm2)", "Local model folder", "OpenAI-compatible server"]
    if method == "lab-evaluate":
        model_kinds.insert(0, "The lab build itself")
    if vllm_available():
        model_kinds.append("vLLM")
    kind = st.radio("Model", model_kinds, horizontal=True, key="model_kind")
    if kind == "The lab build itself":
        model = ""
    elif kind == "Local model folder":
        model = "hf:" + st.text_input("Model folder", placeholder="/path/to/model", key="model_folder")
    elif kind == "OpenAI-compatible server":
        url = st.text_input("Base URL", "http://127.0.0.1:8000/v1", key="model_url")
        name = st.text_input("Model name", "smollm2", key="model_name")
        model = f"openai:{url}#{name}"
    elif kind == "vLLM":
        model = "vllm:" + st.text_input("Model name or path", key="model_vllm")


def _typed_path(label: str, key: str, help_text: str = "") -> Path | None:
    typed = st.text_input(label, key=key, help=help_text or "Allowed roots: " + ", ".join(map(str, roots)))
    return resolve_data_path(typed, roots) if typed else None


dataset = None
if kind_of_data != "none":
    sources = ["Bundled", "Path"] if kind_of_data == "afr-folder" else ["Bundled", "Upload", "Path"]
    source = st.radio("Dataset", sources, horizontal=True, key="data_source")
    try:
        if source == "Bundled":
            files = afr_folders(roots) if kind_of_data == "afr-folder" else bundled_datasets(roots)
            default = next((i for i, p in enumerate(files) if p.name == "test.jsonl" and p.parent.name == "gsm8k"), 0)
            dataset = st.selectbox("Folder" if kind_of_data == "afr-folder" else "File", files, index=default,
                                   format_func=str, key="data_file") if files else None
        elif source == "Upload":
            up = st.file_uploader(f"JSONL, JSON, CSV or parquet (≤ {MAX_UPLOAD_BYTES // 2**20} MB)",
                                  type=["jsonl", "json", "csv", "parquet"], key="data_upload")
            if up is not None:
                dataset = save_upload(up.name, up.getvalue(), runs)
        else:
            dataset = _typed_path("Folder (inside the data roots)" if kind_of_data == "afr-folder"
                                  else "Path (inside the data roots)", "data_path")
    except ZcpError as e:
        st.error(str(e))

options: dict[str, str] = {}
limit = 20
try:
    if method in ("probe", "guided", "afr-profile"):
        limit = int(st.number_input("Items", min_value=2, max_value=2000, value=20, step=1, key="limit"))
    if method == "probe":
        options["metrics"] = ",".join(st.multiselect(
            "Metrics", ["acc", "con", "p_first", "p_all", "p_first_cal", "p_all_cal", "p_first_net", "p_all_net"],
            default=["acc", "p_first", "p_all"], key="metrics", format_func=metric_name,
            help="Calibrated: the answer-token probabilities against each answer's own prior (the gold after the "
                 "question with its numbers masked); one more prefill per item. Use them on large samples."))
        ref = _typed_path("Reference file (twins; not needed for GSM8K)", "reference")
        options["reference"] = str(ref) if ref else ""
    elif method == "lab-build":
        options["mode"] = st.selectbox("Contamination", ["direct", "evasive", "verbatim", "solution"], key="lab_mode",
                                       help="direct: question -> answer; evasive: paraphrases of them; verbatim: "
                                            "the raw instance text (pretraining-style); solution: question -> "
                                            "the full worked solution")
        options["profile"] = st.selectbox("Profile", ["default", "smoke", "probe-format-upper-bound"],
                                          key="lab_profile", help="smoke shows the workflow; default memorises")
        st.caption("The build is named after the run name; it is then auditable as `lab:<run name>`.")
    elif method == "lab-evaluate":
        from zcp_core.lab import list_builds

        builds = [b["name"] for b in list_builds()]
        if builds:
            options["build"] = st.selectbox("Lab build", builds, key="lab_build")
        else:
            st.warning("No lab builds on this machine yet: start **Lab: build** first.")
        options["con"] = "1" if st.checkbox("Also measure Con (generates full CoTs; slow on CPU)",
                                            key="lab_con") else ""
        options["calibrate"] = "1" if st.checkbox("Also measure the calibrated answer-token probabilities "
                                                  "(one more prefill per item)", key="lab_calibrate") else ""
    elif method == "guided":
        default_name = Path(str(dataset)).parent.name if dataset else ""
        options["dataset_name"] = st.text_input("Dataset name in the guided prompt", default_name, key="g_name")
        options["split_name"] = st.text_input("Split name", Path(str(dataset)).stem if dataset else "test",
                                              key="g_split")
    elif method == "scan":
        options["mode"] = st.selectbox("Matches", ["all", "first"], key="scan_mode",
                                       help="all: every match with spans; first: one per text")
    elif method == "clean":
        options["license"] = st.text_input("Licence (SPDX id), if the dataset folder has none", key="license")
        options["allow_unlicensed"] = "1" if st.checkbox(
            "Allow an unlicensed source (the card then says so)", key="allow_unlicensed") else ""
    elif method == "detector":
        options["kind"] = st.selectbox("Detector", ["tfidf", "transformer"], key="det_kind",
                                       help="tfidf: seconds on CPU; transformer: minutes")
        options["explain_n"] = str(st.number_input("Texts explained (SHAP)", 10, 2000, 200, key="explain_n"))
    elif method in ("afr-screen", "afr-profile"):
        if method == "afr-profile":
            options["adapter"] = st.selectbox("Adapter", AFR_ADAPTERS, key="adapter")
            cmp_path = _typed_path("Compare with a second corpus (optional)", "afr_compare")
            options["compare"] = str(cmp_path) if cmp_path else ""
        else:
            options["excise"] = "1" if st.checkbox("Excision control", key="excise") else ""
        options["threshold"] = str(st.number_input("Answer-first threshold", 0.01, 0.99, 0.2, key="threshold"))
        options["n_boot"] = str(st.number_input("Bootstrap resamples", 100, 20000, 2000, step=100, key="n_boot"))
except ZcpError as e:
    st.error(str(e))

request = AuditRequest(method, model, dataset, limit, options)  # type: ignore[arg-type]


@st.cache_data(max_entries=32, ttl=600, show_spinner="Checking the dataset…")
def _check(method: str, dataset: str, mtime: float, limit: int, options: tuple) -> object:
    # Keyed by file mtime, so an edited file is checked again.
    return check_dataset(AuditRequest(method, "", Path(dataset), limit, dict(options)))  # type: ignore[arg-type]


if kind_of_data == "none" or dataset is None:
    check = check_dataset(request)
else:
    relevant = tuple(sorted((k, v) for k, v in options.items() if k in ("reference", "adapter")))
    check = _check(method, str(dataset), Path(dataset).stat().st_mtime, limit, relevant)
if check.ok:  # type: ignore[attr-defined]
    st.success(f"Dataset checked: {check.message}")  # type: ignore[attr-defined]
elif dataset is not None:
    st.error(f"Cannot start: {check.message}")  # type: ignore[attr-defined]

# The default is fixed once per session, so a rerun never replaces what the user typed.
st.session_state.setdefault("run_name", f"audit-{dt.datetime.now():%Y%m%d-%H%M%S}")
name = st.text_input("Run name", key="run_name")

if st.button("Start", type="primary", disabled=not check.ok, key="start"):  # type: ignore[attr-defined]
    try:
        folder_name = run_output_dir(runs, name).name
        plan = plan_audit(request, runs.resolve(), folder_name)
        if plan.folder.exists() and any(plan.folder.iterdir()):
            st.error(f"{plan.folder.name} already exists; choose another run name")
        else:
            start_job(plan.args, plan.folder, plan.out_option)
            st.session_state["active_job"] = str(plan.folder)
            st.success(f"Started `zcp {' '.join(plan.args)}` → {plan.folder}")
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
            st.write(f"**{job.folder.name}** — {status.headline}")
            st.caption(f"`{status.command}`")
            if status.state == "running":
                # A bar and a line in words, read from tqdm's output; the raw log is only for when it fails.
                fraction = status.last_bar.fraction if status.last_bar else 0.0
                st.progress(fraction, text=status.progress_words)
                if st.button("Stop", key=f"stop-{job.folder.name}", help="stop the job; cached work is kept"):
                    stop_job(job.folder)
            elif status.state in ("failed", "stopped"):
                with st.expander("Log (last lines)"):
                    st.code(status.log_tail or "(no output)", language=None)
            if status.state == "done" and st.button("Open", key=f"open-{job.folder.name}"):
                from zcp_core.runs import load_run

                st.session_state["selected_run"] = str(job.folder)
                st.switch_page(PAGE_FOR_KIND.get(load_run(job.folder).kind, "app_pages/home.py"))


# Poll only while a job runs: an idle page must not keep the server busy.
running = any(j.state == "running" for j in list_jobs(runs))
st.fragment(_jobs, run_every=2 if running else None)()
