"""What the app's New-audit form can start, as ``zcp`` command lines, and the dataset check before Start.

Keeping this out of the page means the page only collects inputs, and the
mapping from a form to a command is tested like any other function.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Mapping

from zcp_core.backends import parse_model_spec
from zcp_core.errors import ZcpError

AuditMethod = Literal["probe", "lab-build", "lab-evaluate", "guided", "scan", "clean", "detector", "afr-screen",
                      "afr-profile"]
METHODS: dict[str, str] = {
    "probe": "Zero-CoT probe (a problem set against its reference twins)",
    "lab-build": "Lab: build a model with known contamination (fine-tune on a seeded split)",
    "lab-evaluate": "Lab: evaluate a lab build (probe its contaminated and clean halves)",
    "guided": "Time-Travel guided instruction (completion overlap)",
    "scan": "Artifact scan (generated-text corpus)",
    "clean": "Artifact clean (a curated release with edits to review)",
    "detector": "Detector compare (original- vs cleaned-trained, prefix attack, SHAP)",
    "afr-screen": "AFR screen (a folder with blind and leaked chain arms)",
    "afr-profile": "AFR profile (one chain corpus, or two compared)",
}
#: What each method reads: a problem set, a text corpus, labelled texts, an AFR arms folder, chains, or nothing.
DatasetKind = Literal["items", "texts", "labelled", "afr-folder", "chains", "none"]
DATASET_KIND: dict[str, DatasetKind] = {
    "probe": "items", "lab-build": "items", "lab-evaluate": "none", "guided": "items", "scan": "texts",
    "clean": "texts", "detector": "labelled", "afr-screen": "afr-folder", "afr-profile": "chains",
}
#: Methods that run a model chosen in the form.
MODEL_METHODS = frozenset({"probe", "guided", "lab-evaluate"})
AFR_ADAPTERS = ("messages", "skythought", "qwen25math", "gpt3-gsm8k")


@dataclass(frozen=True)
class AuditRequest:
    """A form's content.

    Attributes:
        method: Which method to run.
        model: Model spec (validated by the one spec parser); for ``lab-evaluate`` empty means the lab build itself.
        dataset: Resolved dataset path (a folder for ``afr-screen``; unused by ``lab-evaluate``).
        limit: Items to use (probe, guided, afr-profile).
        options: Extra method options, e.g. ``{"metrics": "acc,p_first,p_all", "reference": PATH}``.
    """

    method: AuditMethod
    model: str
    dataset: Path | None
    limit: int = 20
    options: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class JobPlan:
    """How to start an audit as a background job.

    Attributes:
        args: ``zcp`` arguments, without the job folder.
        folder: The run folder the job writes (and where ``job.json`` and ``log.txt`` live).
        out_option: The option that receives ``folder`` (``--out``); None when ``args`` already place the run.
    """

    args: tuple[str, ...]
    folder: Path
    out_option: str | None = "--out"


def _opt(req: AuditRequest, key: str, flag: str) -> list[str]:
    v = req.options.get(key)
    return [flag, str(v)] if v not in (None, "") else []


def _switch(req: AuditRequest, key: str, flag: str) -> list[str]:
    return [flag] if req.options.get(key) in ("1", "true", "yes") else []


def audit_args(req: AuditRequest) -> list[str]:
    """The ``zcp`` arguments (without ``--out``) that run ``req``.

    Raises:
        ZcpError: On a bad model spec or a missing required option, before anything starts.
    """
    m, data = req.method, str(req.dataset)
    if m in MODEL_METHODS and req.model:
        parse_model_spec(req.model)  # raises a clear ModelSpecError before anything starts
    if m == "probe":
        return ["probe", "--model", req.model, "--dataset", data, "--limit", str(req.limit),
                *_opt(req, "metrics", "--metrics"), *_opt(req, "reference", "--reference")]
    if m == "guided":
        return ["guided", "--model", req.model, "--dataset", data, "--limit", str(req.limit),
                "--dataset-name", req.options.get("dataset_name") or Path(data).parent.name,
                "--split-name", req.options.get("split_name") or Path(data).stem]
    if m == "lab-build":
        if not req.options.get("name"):
            raise ZcpError("lab build needs a build name (the run name)")
        return ["lab", "build", "--dataset", data, *_opt(req, "mode", "--mode"), *_opt(req, "profile", "--profile"),
                "--name", req.options["name"], *_opt(req, "runs", "--runs")]
    if m == "lab-evaluate":
        if not req.options.get("build"):
            raise ZcpError("lab evaluate needs a lab build: build one first (Lab: build)")
        return ["lab", "evaluate", "--name", req.options["build"], *(["--model", req.model] if req.model else []),
                *_switch(req, "con", "--con"), *_switch(req, "calibrate", "--calibrate")]
    if m == "scan":
        return ["scan", data, *_opt(req, "mode", "--mode")]
    if m == "clean":
        return ["clean", data, *_opt(req, "license", "--license"), *_switch(req, "allow_unlicensed",
                                                                            "--allow-unlicensed")]
    if m == "detector":
        return ["detector", "compare", "--data", data, *_opt(req, "kind", "--kind"),
                *_opt(req, "explain_n", "--explain-n")]
    if m == "afr-screen":
        return ["afr", "screen", data, *_opt(req, "threshold", "--threshold"), *_opt(req, "n_boot", "--n-boot"),
                *_switch(req, "excise", "--excise")]
    if m == "afr-profile":
        return ["afr", "profile", data, "--adapter", req.options.get("adapter") or "messages",
                *_opt(req, "compare", "--compare"), *_opt(req, "threshold", "--threshold"),
                *_opt(req, "n_boot", "--n-boot"), "--limit", str(req.limit)]
    raise ZcpError(f"unknown audit method {m!r}")


def plan_audit(req: AuditRequest, runs: Path, name: str) -> JobPlan:
    """The job that runs ``req`` under ``runs`` as the run ``name`` (already made safe by the caller).

    ``lab build`` places its own run (``<runs>/lab-build-<name>``), so it is given ``--name`` and ``--runs``
    instead of ``--out``; every other method writes ``<runs>/<name>``.
    """
    if req.method == "lab-build":
        opts = {**req.options, "name": name, "runs": str(runs)}
        req = AuditRequest(req.method, req.model, req.dataset, req.limit, opts)
        return JobPlan(tuple(audit_args(req)), runs / f"lab-build-{name}", None)
    return JobPlan(tuple(audit_args(req)), runs / name)


def bundled_datasets(roots: list[Path]) -> list[Path]:
    """Dataset files found under the data roots (shallow: up to three levels)."""
    found: list[Path] = []
    for r in roots:
        for pattern in ("*.jsonl", "*/*.jsonl", "*/*.json", "*/*.csv", "*/*/*.json", "*/*/*.jsonl"):
            found += [p for p in sorted(r.glob(pattern)) if p.is_file() and p.stat().st_size < 200 * 1024 * 1024]
    return list(dict.fromkeys(found))


def afr_folders(roots: list[Path]) -> list[Path]:
    """Folders under the data roots that hold an AFR screen's two arms (``nohint`` and ``hint`` chains)."""
    found: list[Path] = []
    for r in roots:
        for pattern in ("*/nohint*.jsonl", "*/*/nohint*.jsonl", "*/*/*/nohint*.jsonl"):
            found += [p.parent for p in sorted(r.glob(pattern)) if any(p.parent.glob("hint*.jsonl"))]
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class DatasetCheck:
    """The verdict of the check before Start.

    Attributes:
        ok: Whether Start may be pressed.
        message: What was found, or what is wrong (naming the file and what to change).
        count: Records found (0 when not readable).
    """

    ok: bool
    message: str
    count: int = 0


def check_dataset(req: AuditRequest) -> DatasetCheck:
    """Check that ``req``'s dataset is non-empty and has the fields its method needs, before anything starts."""
    kind = DATASET_KIND[req.method]
    if kind == "none":
        return DatasetCheck(True, "no dataset needed: the lab build carries its own split")
    if req.dataset is None:
        return DatasetCheck(False, "choose a dataset")
    try:
        return _check(kind, req)
    except ZcpError as e:
        return DatasetCheck(False, str(e))


def _check(kind: DatasetKind, req: AuditRequest) -> DatasetCheck:
    from zcp_core.data import load_dataset

    path = Path(str(req.dataset))
    if kind == "afr-folder":
        from zcp_core.afr import read_records, resolve_arms

        arms = resolve_arms(path)
        counts = {a: len(read_records(p)) for a, p in (("blind", arms.blind), ("leaked", arms.leaked))}
        empty = [a for a, n in counts.items() if n == 0]
        if empty:
            return DatasetCheck(False, f"{path}: the {' and '.join(empty)} arm has no chains")
        return DatasetCheck(True, f"{counts['blind']:,} blind and {counts['leaked']:,} leaked chains in {path.name}",
                            min(counts.values()))
    if kind == "chains":
        from zcp_core.afr import load_chains

        adapter = req.options.get("adapter") or "messages"
        chains = load_chains(path, adapter, limit=req.limit)
        if chains.empty:
            return DatasetCheck(False, f"{path}: no chains read with the {adapter!r} adapter")
        return DatasetCheck(True, f"{len(chains):,} chains ({adapter} adapter) in {path.name}", len(chains))
    if path.is_dir():
        return DatasetCheck(False, f"{path} is a folder; choose a file")
    ds = load_dataset(path, corpus="items" if kind == "items" else "texts")
    if kind == "items":
        if not ds.items:
            return DatasetCheck(False, f"{path}: no problems (question and answer fields) found")
        gsm8k = all(i.source == "gsm8k" and i.metadata.get("calculations") is not None for i in ds.items)
        if req.method == "probe" and not gsm8k and not req.options.get("reference"):
            return DatasetCheck(False, f"{path.name} is not GSM8K, so the probe needs a reference file of twins "
                                       "(numeric twins are built only for GSM8K)", len(ds.items))
        return DatasetCheck(True, f"{len(ds.items):,} problems in {path.name}", len(ds.items))
    if not ds.texts:
        return DatasetCheck(False, f"{path}: no texts (a text field) found")
    if kind == "labelled":
        labels = {t.label for t in ds.texts}
        if not {"human", "llm"} <= labels:
            return DatasetCheck(False, f"{path.name}: a detector needs human and LLM texts; labels found: "
                                       f"{', '.join(sorted(map(str, labels))) or 'none'}", len(ds.texts))
    return DatasetCheck(True, f"{len(ds.texts):,} texts in {path.name}", len(ds.texts))
