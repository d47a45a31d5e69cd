"""Helpers of the Streamlit pages: run selection, navigation, the New-audit form, background jobs, path policy.

The app's pages import this package; no library package does.
"""

from __future__ import annotations

from zcp_core.app.audits import (
    DATASET_KIND,
    METHODS,
    AuditRequest,
    DatasetCheck,
    JobPlan,
    afr_folders,
    audit_args,
    bundled_datasets,
    check_dataset,
    plan_audit,
)
from zcp_core.app.jobs import job_status, list_jobs, start_job, stop_job
from zcp_core.app.kit import app_script, pick_run
from zcp_core.app.labels import COLUMN_LABELS, label, readable
from zcp_core.app.nav import PAGE_FOR_KIND, flatten_summary
from zcp_core.app.paths import MAX_UPLOAD_BYTES, PathRefused, resolve_data_path, run_output_dir, save_upload

__all__ = [
    "AuditRequest", "COLUMN_LABELS", "DATASET_KIND", "DatasetCheck", "JobPlan", "MAX_UPLOAD_BYTES", "METHODS",
    "PAGE_FOR_KIND", "PathRefused", "afr_folders", "app_script", "audit_args", "bundled_datasets", "check_dataset",
    "flatten_summary", "job_status", "label", "list_jobs", "pick_run", "plan_audit", "readable", "resolve_data_path",
    "run_output_dir", "save_upload", "start_job", "stop_job",
]
