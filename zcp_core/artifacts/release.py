"""Scan and clean runs: run folders, curated releases, decisions and the audit card.

A ``scan`` run holds ``records.parquet`` (matches), ``texts`` (one row per
distinct text with its flags) and the count tables. A ``clean`` run holds the
cleaned data in ``cleaned/`` (``data.parquet`` with the canary in every row, its card),
``edits.parquet``, ``dropped.parquet``, ``flags.parquet``, the original texts
(so an export can be redone), a copy of the pattern library, its hash and an
audit card ``README.md``. Decisions made in the app are saved as
``decisions.json`` in the run folder and respected by :func:`export_run`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from zcp_core.artifacts.cleaner import EMPTIED, CleanConfig, CleanResult, clean
from zcp_core.artifacts.patterns import FAMILY_ORDER, PatternLibrary, load_library
from zcp_core.artifacts.scanner import dedupe_texts, family_table, scan, summarize, text_flags
from zcp_core.artifacts.shards import Engine
from zcp_core.runs import RunSpec, atomic_write_bytes, atomic_write_json, load_run, write_run

if TYPE_CHECKING:
    from zcp_core.publish import Card, LicenseInfo
    from zcp_core.report import Report
    from zcp_core.schema import TextRecord

DECISIONS_FILE = "decisions.json"
#: The columns of a cleaned release's ``data.parquet``, in order.
RELEASE_COLUMNS = ("id", "text", "label", "llm_type", "data_type", "metadata", "canary")
LIBRARY_COPY = "patterns.yaml"


@dataclass(frozen=True)
class RunInputs:
    """What a scan or clean run was made from (for the manifest).

    Attributes:
        paths: The input files.
        command: The command line.
        config: Extra settings to record.
        license: Licence file or id of the inputs (default: found beside them); a clean release inherits it.
        allow_unlicensed: Release a cleaned copy of inputs that have no licence (the card says so).
    """

    paths: tuple[str, ...]
    command: str = ""
    config: Mapping[str, Any] | None = None
    license: str | None = None
    allow_unlicensed: bool = False


def library_copy(library: PatternLibrary, folder: Path) -> None:
    """Store the exact library file(s) in the run, so an export can be redone with them."""
    parts = [Path(p).read_text(encoding="utf-8") for p in library.path.split(" + ")]
    atomic_write_bytes(folder / LIBRARY_COPY, parts[0].encode("utf-8"))
    for i, extra in enumerate(parts[1:], start=1):
        atomic_write_bytes(folder / f"patterns.extend{i}.yaml", extra.encode("utf-8"))


def run_library(run_path: str | Path) -> PatternLibrary:
    """The pattern library a run stored."""
    folder = Path(run_path)
    extend = sorted(folder.glob("patterns.extend*.yaml"))
    return load_library(folder / LIBRARY_COPY, extend=extend)


def write_scan_run(out: str | Path, texts: Sequence[TextRecord], library: PatternLibrary, inputs: RunInputs,
                   mode: str = "all", engine: Engine = "local") -> tuple[Path, dict[str, Any]]:
    """Scan deduplicated texts and write a ``scan`` run; returns the folder and the summary."""
    from zcp_core.data import texts_frame

    uniq, dups = dedupe_texts(texts)
    matches = scan(uniq, library, mode=mode, engine=engine)  # type: ignore[arg-type]
    summary = summarize(uniq, matches)
    summary["duplicates"] = len(dups)
    summary["library"] = {"version": library.version, "sha256": library.sha256, "path": library.path}
    tables = {
        "texts": texts_frame(uniq).merge(text_flags(uniq, matches)[
            ["id", "first_family", "flagged", "domain_flagged", "families"]], on="id"),
        "by_llm_type": family_table(uniq, matches, "llm_type"),
        "by_data_type": family_table(uniq, matches, "data_type"),
        "by_label": family_table(uniq, matches, "label"),
        "duplicates": dups,
    }
    config = {"mode": mode, "engine": engine, "library_sha256": library.sha256, **dict(inputs.config or {})}
    folder = write_run(out, RunSpec("scan", config, inputs.command, dataset=inputs.paths), matches, summary, tables)
    library_copy(library, folder)
    return folder, summary


def audit_card(result: CleanResult, texts: Sequence[TextRecord], library: PatternLibrary,
               release: bool = False, scorer: str | None = None, report: Report | None = None) -> str:
    """The clean run's README.md: the run's report, edits per LLM, what was dropped and why, the flags.

    ``release=True`` gives the part the release's dataset card carries below its own Counts section: no
    summary counts again, and no files that live only in the run folder. ``scorer`` names the residual scorer;
    ``report`` is the run's report (``zcp_core.artifacts.report``), whose headline, counts and per-family
    table the card shows as every other surface does.
    """
    import pandas as pd

    from zcp_core.artifacts.report import FLAG_WORDS, words
    from zcp_core.report import fmt_count, markdown_table

    applied = result.edits[result.edits["applied"]]
    meta = pd.DataFrame([{"id": t.id, "llm_type": t.llm_type, "label": t.label} for t in texts])
    per = applied.merge(meta, on="id", how="left")
    lines = []
    if not release and report is not None:
        lines += ["# Cleaned release (zcp artifact cleaner)", "", f"**{report.headline.text}**", "",
                  *(f"- {k}: {v}" for k, v in report.facts), f"- Pattern library sha256: `{library.sha256}`",
                  f"- Edits proposed: {fmt_count(len(result.edits))}", ""]
    if report is not None and report.rows:
        lines += ["## Applied edits per family", "", *markdown_table(report.columns, report.rows)]
    lines += ["", "## Texts edited or dropped per generator (LLM-labelled texts)", "",
              "| Generator | Texts edited or dropped |", "|---|---|"]
    llm = per[per["label"] == "llm"]
    for name, g in llm.groupby("llm_type", sort=True):
        lines.append(f"| {name} | {fmt_count(g['id'].nunique())} |")
    lines += ["", "## Dropped texts and why", "", "| Reason (pattern) | Texts |", "|---|---|"]
    for pid, n in result.dropped["pattern_id"].value_counts().sort_index().items():
        lines.append(f"| {pid} | {fmt_count(n)} |")
    kinds = result.flags["kind"].str.split(":").str[0].value_counts().sort_index()
    lines += ["", "## Flags (review these)", "", "| Kind | Count |", "|---|---|",
              *(f"| {FLAG_WORDS.get(str(k), words(k))} | {fmt_count(n)} |" for k, n in kinds.items()), "",
              *under_cleaning_lines(result.under_cleaning, scorer)]
    if release:
        lines += ["Every row carries the canary in its `canary` column. Each edit (span and original text) is "
                  "recorded in the zcp clean run that made this release, so it can be reviewed and undone there.", ""]
    else:
        lines += ["Every edit is in `edits.parquet` with its span and original text, so it can be undone "
                  "(`zcp_core.artifacts.cleaner.undo`); dropped texts keep their original in `dropped.parquet`. "
                  "The publishable release is `cleaned/`.", ""]
    return "\n".join(lines)


def under_cleaning_lines(under: Mapping[str, Any], scorer: str | None = None) -> list[str]:
    """The audit card's under-cleaning section: the scorer, the rule, and how many texts it marked."""
    lines = ["## Under-cleaning flag (`residual_score`)", ""]
    rule = under.get("rule_text", "")
    if not under.get("assessed"):
        why = scorer or "no residual scorer was given"
        return lines + [f"- Not assessed: {why} (the rule would have been: {rule}).", ""]
    from zcp_core.report import fmt_count, fmt_num, fmt_share

    scored, marked = int(under.get("scored", 0)), int(under.get("marked", 0))
    share = f" ({fmt_share(marked / scored)})" if scored else ""
    lines += ([f"- Scorer: {scorer}."] if scorer else []) + [f"- Rule: {rule}.",
              f"- Marked {fmt_count(marked)} of {fmt_count(scored)} scored (edited) texts{share}."]
    if marked:
        lines.append(f"- Cut: residual score {'≥' if under.get('rule') == 'top_share' else '>'} "
                     f"{fmt_num(under.get('cut'))}.")
    return lines + ["- Only marked texts are candidates for re-cleaning (`zcp_core.artifacts.reclean`).", ""]


def write_release(folder: Path, result: CleanResult, card: Card) -> Path:
    """Write the publishable release under ``folder/cleaned``: the data once (``data.parquet``, a ``canary`` column
    in every row), its dataset card and the upstream licence, all files 0644. Returns the release folder."""
    import shutil

    import pandas as pd

    from zcp_core.publish import publish_files
    from zcp_core.runs import atomic_write_parquet

    out = folder / "cleaned"
    for stale in ("data.jsonl", "hf"):  # copies written by releases before the data was stored once
        shutil.rmtree(out / stale, ignore_errors=True) if (out / stale).is_dir() else (out / stale).unlink(missing_ok=True)
    # The data is stored once, as parquet; the card's ``configs:`` make ``datasets.load_dataset(out)`` read it.
    # Metadata is a JSON string (its keys differ between rows); every row carries the canary.
    rows = [{**t.to_dict(), "metadata": json.dumps(dict(t.metadata), sort_keys=True, default=str),
             "canary": card.canary} for t in result.texts]
    df = pd.DataFrame(rows, columns=[*RELEASE_COLUMNS])
    atomic_write_parquet(out / "data.parquet", df)
    atomic_write_bytes(out / "CANARY.txt", (card.canary + "\n").encode())
    return publish_files(out, card).parent


def release_card(result: CleanResult, texts: Sequence[TextRecord], library: PatternLibrary, inputs: RunInputs,
                 lic: LicenseInfo, report: Report | None = None, edges: str = "none") -> Card:
    """The cleaned release's dataset card: licence, provenance, counts with reasons, canary, the audit.

    ``report`` (the run's, ``zcp_core.artifacts.report``) gives the counts, named as on every other surface;
    ``edges`` is the edge detector the cleaning ran (:func:`zcp_core.artifacts.edges_apply.edges_label`).
    """
    from zcp_core.artifacts.residual import residual_lines
    from zcp_core.publish import Card, canary_string, citation_for, portable_command, source_line

    applied = result.edits[result.edits["applied"]]
    edited = int(applied["id"].nunique())
    canary = canary_string(f"{library.sha256}:{sorted(inputs.paths)}:{edited}")
    reasons = ", ".join(f"{pid}: {n}" for pid, n in result.dropped["pattern_id"].value_counts().sort_index().items())
    title = (f"Cleaned release: {edited} texts edited or dropped" if edited
             else "Cleaned release: no artifact found, nothing changed")
    return Card(
        title=title, data_file="data.parquet", split="test", license=lic,
        source=(*[source_line(p) for p in inputs.paths],
                f"command: `{portable_command(inputs.command)}`",
                f"pattern library {library.version} (sha256 `{library.sha256}`)"),
        citation=citation_for(inputs.paths), canary=canary,
        counts={**dict(report.facts if report else ()),
                **({"Dropped, by pattern": reasons} if reasons else {})},
        body="\n".join([*([f"**{report.headline.text}**", ""] if report else []), *residual_lines(library, edges),
                         audit_card(result, texts, library, release=True, scorer=_scorer_note(inputs),
                                    report=report)]),
        tags=("ai-text-detection", "artifact-cleaning"),
    )


def _edges_record(edges: str) -> dict[str, Any]:
    """What a run records of its edge detector: the file, name, version and sha256 (``none`` when off)."""
    if edges == "none":
        return {"path": "none"}
    import hashlib

    from zcp_core.artifacts.edges import DEFAULT_MODEL, load_model

    path = DEFAULT_MODEL if edges == "auto" else Path(edges)
    m = load_model(path)
    return {"path": edges, "name": m.name, "version": m.version,
            "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "cut": m.cut, "review": m.review}


def _edges_summary(result: CleanResult, edges: str) -> dict[str, Any]:
    """The edge stage's part of a run: texts the detector cut, texts it sent to review, and texts each rule of
    the stage cut (``{}`` when the stage was off)."""
    if edges == "none":
        return {}
    from zcp_core.artifacts.edges import DEFAULT_MODEL, load_model
    from zcp_core.artifacts.edges_apply import REVIEW_KIND, RULES

    m = load_model(DEFAULT_MODEL if edges == "auto" else edges)
    applied = result.edits[result.edits["applied"]]
    cuts = applied[applied["pattern_id"].str.startswith(m.pattern_id)]
    review = result.flags[result.flags["kind"].str.startswith(REVIEW_KIND)]
    rules = {r: int(applied.loc[applied["pattern_id"] == r, "id"].nunique()) for r in RULES}
    return {"name": f"{m.name}-{m.version}", "cut": int(cuts["id"].nunique()), "review": int(review["id"].nunique()),
            "rules": rules}


def held_back_ids(result: CleanResult, library: PatternLibrary) -> set[str]:
    """Texts a hold-back pattern matched, or whose edits cut every character: dropped as held back, or
    (``--held-back keep``) kept and flagged."""
    hold = {f"pattern:{p.id}" for p in library.patterns if p.action == "hold_back"} | {EMPTIED}
    dropped = result.dropped[result.dropped["kind"] == "held_back"]["id"]
    return {str(i) for i in dropped} | {str(i) for i in result.flags[result.flags["kind"].isin(hold)]["id"]}


def _llm_count(ids: Any, texts: Sequence[TextRecord]) -> int:
    """How many of ``ids`` name an LLM-written text."""
    llm = {t.id for t in texts if t.label == "llm"}
    return sum(str(i) in llm for i in ids)


def write_clean_run(
    out: str | Path,
    texts: Sequence[TextRecord],
    library: PatternLibrary,
    inputs: RunInputs,
    decisions: Mapping[str, str] | None = None,
    scorer: Callable[[list[str]], list[float]] | None = None,
    engine: Engine = "local",
    config: CleanConfig | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Clean deduplicated texts and write a ``clean`` run with the release; returns folder and summary.

    ``config`` holds the flag thresholds and the under-cleaning rule (default: top 10% of residual scores).
    """
    from zcp_core.data import texts_frame
    from zcp_core.publish import find_license, require_derivatives_allowed, require_license

    lic = find_license(inputs.paths, inputs.license)
    require_license(lic, inputs.allow_unlicensed)  # before any work: an unlicensed source is refused up front
    uniq, dups = dedupe_texts(texts)
    cfg = config or CleanConfig()
    result = clean(uniq, library, decisions=decisions, scorer=scorer, config=cfg, engine=engine)  # type: ignore[arg-type]
    applied = result.edits[result.edits["applied"]]
    held = held_back_ids(result, library)
    # a no-derivatives source may be released only unchanged: refused before anything is written
    require_derivatives_allowed(lic, int(applied["id"].nunique()) + len(result.dropped), "texts edited or dropped")
    summary: dict[str, Any] = {
        "texts": len(uniq), "kept": len(result.texts), "dropped": len(result.dropped), "duplicates": len(dups),
        "held_back": len(held), "held_back_rule": cfg.held_back, "held_back_llm": _llm_count(held, uniq),
        "llm_texts": sum(t.label == "llm" for t in uniq), "edges": _edges_summary(result, cfg.edges),
        "edits": len(result.edits), "applied": len(applied), "edited_texts": int(applied["id"].nunique()),
        "rejected": int((~result.edits["accepted"]).sum()),
        "by_family": {f: int((applied["family"] == f).sum()) for f in FAMILY_ORDER if f != "domain"},
        "flags": {str(k): int(v) for k, v in result.flags["kind"].str.split(":").str[0].value_counts().items()},
        "library": {"version": library.version, "sha256": library.sha256},
        "under_cleaning": dict(result.under_cleaning),
        "headline": {"label": "texts edited or dropped", "value": int(applied["id"].nunique())},
    }
    run_config = {"engine": engine, "library_sha256": library.sha256, "decisions": len(decisions or {}),
                  "scorer": getattr(scorer, "__name__", None) if scorer else None,
                  "under_cleaning_rule": cfg.residual_rule, "residual_top_share": cfg.residual_top_share,
                  "residual_threshold": cfg.residual_threshold, "held_back": cfg.held_back,
                  "edges": _edges_record(cfg.edges), "license": inputs.license,
                  "allow_unlicensed": inputs.allow_unlicensed, **dict(inputs.config or {})}
    tables = {"edits": result.edits, "dropped": result.dropped, "flags": result.flags,
              "originals": texts_frame(uniq), "duplicates": dups}
    folder = write_run(out, RunSpec("clean", run_config, inputs.command, dataset=inputs.paths), result.edits,
                       summary, tables)
    library_copy(library, folder)
    if decisions:
        save_decisions(folder, decisions)
    from zcp_core.artifacts.report import report as run_report

    rep = run_report(load_run(folder))  # the card says what the CLI, the app and the notebook say
    atomic_write_bytes(folder / "README.md",
                       audit_card(result, uniq, library, scorer=_scorer_note(inputs), report=rep).encode("utf-8"))
    from zcp_core.artifacts.edges_apply import edges_label

    write_release(folder, result, release_card(result, uniq, library, inputs, lic, report=rep,
                                               edges=edges_label(cfg.edges)))
    summary["license"] = lic.hub_id
    return folder, summary


def _scorer_note(inputs: RunInputs) -> str | None:
    """How the residual scorer was chosen, as the cards say it (``config["scorer_note"]`` set by the CLI)."""
    note = (inputs.config or {}).get("scorer_note")
    return str(note) if note else None


def load_decisions(path: str | Path) -> dict[str, str]:
    """Read a decisions file: JSON ``{edit_id: "accept"|"reject"}`` (or a list of such objects)."""
    from zcp_core.errors import DataError

    p = Path(path)
    try:
        obj = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise DataError(str(p), None, None, f"cannot read decisions: {e}") from e
    if isinstance(obj, list):
        obj = {str(r["edit_id"]): str(r["decision"]) for r in obj}
    bad = {k: v for k, v in obj.items() if v not in ("accept", "reject")}
    if bad:
        raise DataError(str(p), None, next(iter(bad)), "decision must be 'accept' or 'reject'")
    return {str(k): str(v) for k, v in obj.items()}


def save_decisions(run_path: str | Path, decisions: Mapping[str, str]) -> Path:
    """Store decisions as ``decisions.json`` in a run folder (the app's accept/reject controls)."""
    path = Path(run_path) / DECISIONS_FILE
    atomic_write_json(path, dict(sorted(decisions.items())))
    return path


def run_decisions(run_path: str | Path) -> dict[str, str]:
    """The decisions stored in a run folder (empty when none)."""
    path = Path(run_path) / DECISIONS_FILE
    return load_decisions(path) if path.exists() else {}


def export_run(run_path: str | Path, out: str | Path | None = None) -> Path:
    """Redo a clean run's release with its stored originals, library and ``decisions.json``.

    Args:
        run_path: A ``clean`` run folder.
        out: Where to write the new run (default: the same folder, updated in place).
    """
    from zcp_core.schema import TextRecord

    run = load_run(run_path)
    if run.kind != "clean":
        raise ValueError(f"{run_path} is a {run.kind} run, not a clean run")
    originals = run.table("originals")
    texts = [TextRecord(id=r.id, text=r.text, label=r.label, llm_type=r.llm_type, data_type=r.data_type)
             for r in originals.itertuples(index=False)]
    mc, dflt = run.manifest.get("config", {}), CleanConfig()
    inputs = RunInputs(tuple(d["path"] for d in run.manifest.get("datasets", [])),
                       command=f"export of {run_path}", config={"exported_from": str(run_path)},
                       license=mc.get("license"), allow_unlicensed=bool(mc.get("allow_unlicensed")))
    cfg = CleanConfig(residual_rule=mc.get("under_cleaning_rule", dflt.residual_rule),  # the run's own rule
                      residual_top_share=float(mc.get("residual_top_share", dflt.residual_top_share)),
                      residual_threshold=float(mc.get("residual_threshold", dflt.residual_threshold)),
                      held_back=mc.get("held_back", dflt.held_back),
                      edges=str((mc.get("edges") or {}).get("path", "none")))
    folder, _ = write_clean_run(out or run_path, texts, run_library(run_path), inputs,
                                decisions=run_decisions(run_path) or None, config=cfg)
    return folder
