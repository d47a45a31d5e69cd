"""Helpers of the Streamlit pages: run selection, navigation, the New-audit form, background jobs, path policy.

The app's pages import this package; no library package does.
"""

from __future__ import annotations

from zcp_core.app.audits import METHODS, AuditRequest, audit_args, bundled_datasets
from zcp_core.app.jobs import job_status, list_jobs, start_job
from zcp_core.app.kit import app_script, pick_run
from zcp_core.app.nav import PAGE_FOR_KIND, flatten_summary
from zcp_core.app.paths import MAX_UPLOAD_BYTES, PathRefused, resolve_data_path, run_output_dir, save_upload

__all__ = [
    "AuditRequest", "MAX_UPLOAD_BYTES", "METHODS", "PAGE_FOR_KIND", "PathRefused", "app_script", "audit_args",
    "bundled_datasets", "flatten_summary", "job_status", "list_jobs", "pick_run", "resolve_data_path",
    "run_output_dir", "save_upload", "start_job",
]
