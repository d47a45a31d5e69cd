"""What the app's New-audit form can start, as ``zcp`` command lines.

Keeping this out of the page means the page only collects inputs, and the
mapping from a form to a command is tested like any other function.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Mapping

from zcp_core.backends import parse_model_spec

AuditMethod = Literal["probe", "guided", "scan"]
METHODS: dict[str, str] = {
    "probe": "Zero-CoT probe (GSM8K-style problems, numeric reference built on the fly)",
    "guided": "Time-Travel guided instruction (completion overlap)",
    "scan": "Artifact scan (generated-text corpus)",
}


@dataclass(frozen=True)
class AuditRequest:
    """A form's content.

    Attributes:
        method: Which method to run.
        model: Model spec (validated by the one spec parser).
        dataset: Resolved dataset path.
        limit: Items to use (probe, guided).
        options: Extra method options, e.g. ``{"metrics": "acc,p_first,p_all"}``.
    """

    method: AuditMethod
    model: str
    dataset: Path
    limit: int = 20
    options: Mapping[str, str] = field(default_factory=dict)


def audit_args(req: AuditRequest) -> list[str]:
    """The ``zcp`` arguments (without ``--out``) that run ``req``."""
    if req.method == "scan":
        return ["scan", str(req.dataset), *(["--mode", req.options["mode"]] if "mode" in req.options else [])]
    parse_model_spec(req.model)  # raises a clear ModelSpecError before anything starts
    if req.method == "probe":
        args = ["probe", "--model", req.model, "--dataset", str(req.dataset), "--limit", str(req.limit)]
        if req.options.get("metrics"):
            args += ["--metrics", req.options["metrics"]]
        if req.options.get("reference"):
            args += ["--reference", req.options["reference"]]
        return args
    if req.method == "guided":
        return ["guided", "--model", req.model, "--dataset", str(req.dataset), "--limit", str(req.limit),
                "--dataset-name", req.options.get("dataset_name", Path(req.dataset).parent.name),
                "--split-name", req.options.get("split_name", Path(req.dataset).stem)]
    raise ValueError(f"unknown audit method {req.method!r}")


def bundled_datasets(roots: list[Path]) -> list[Path]:
    """Dataset files found under the data roots (shallow: two levels)."""
    found: list[Path] = []
    for r in roots:
        for pattern in ("*.jsonl", "*/*.jsonl", "*/*.json", "*/*.csv", "*/*/*.json"):
            found += [p for p in sorted(r.glob(pattern)) if p.is_file() and p.stat().st_size < 200 * 1024 * 1024]
    return found
