"""Refreshed benchmark releases from a probe run (``zcp release RUN --out DIR``).

Flagged items (zero-CoT correct on the original, wrong on its twin) are
replaced by their reference twin, but only when the twin is trustworthy:
deterministically recomputed (numeric perturbation, ``metadata["method"] ==
"numeric-perturbation-v1"``) or judge-verified (LLM pipeline twins, accepted
only when every judge said CORRECT, ``metadata["judges"]`` set). Other flagged
items are kept and listed with the reason.

A release folder holds:

* ``benchmark.jsonl``: the probed originals in order, replaced ones swapped
  for their twins (items format; every item carries the canary in metadata);
* ``replacements.jsonl``: one row per replacement with the evidence and the
  full original item, so :func:`undo_release` restores the original set;
* ``README.md``: the audit card (what, on what evidence, by which model);
* ``CANARY.txt`` and ``release.json`` (machine-readable summary).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from zcp_core.schema import Item

Verification = Literal["deterministic", "judge_verified"]
DETERMINISTIC_METHODS = ("numeric-perturbation-v1",)
JUDGED_METHODS = ("llm-isomorphic-v1",)


@dataclass(frozen=True)
class Replacement:
    """One flagged original swapped for its twin."""

    original_id: str
    replacement_id: str
    verification: str
    flip: str
    p_all_gap: float | None
    p_all_gap_rank: int | None
    evidence: str


@dataclass(frozen=True)
class KeptFlagged:
    """A flagged original that stays, and why (no trustworthy twin)."""

    original_id: str
    reason: str


@dataclass(frozen=True)
class ReleaseResult:
    """What :func:`release` wrote."""

    path: Path
    n_items: int
    replaced: tuple[Replacement, ...]
    kept: tuple[KeptFlagged, ...]
    canary: str
    run: str
    model: str

    def to_dict(self) -> dict[str, Any]:
        """JSON form (``release.json`` and ``--json``)."""
        return {"path": str(self.path), "n_items": self.n_items, "canary": self.canary, "run": self.run,
                "model": self.model, "replaced": [asdict(r) for r in self.replaced],
                "kept": [asdict(k) for k in self.kept],
                "headline": {"label": "items replaced", "value": len(self.replaced)}}


def twin_verification(item: Item) -> Verification | None:
    """How a reference twin was checked, or None when it is not trustworthy enough to release."""
    method = str(item.metadata.get("method") or "")
    if method in DETERMINISTIC_METHODS:
        return "deterministic"
    if method in JUDGED_METHODS and item.metadata.get("judges"):
        return "judge_verified"
    return None


def canary_for(manifest: dict[str, Any]) -> str:
    """A canary string derived from the run (stable for the same run)."""
    key = "|".join(str(manifest.get(k, "")) for k in ("model", "model_revision", "started", "finished", "command"))
    return f"ZCP-CANARY {uuid.uuid5(uuid.NAMESPACE_URL, 'zcp-release:' + key)}"


def _num(x: Any) -> Any:
    import pandas as pd

    return None if pd.isna(x) else x.item() if hasattr(x, "item") else x


def release(run_path: str | Path, out: str | Path) -> ReleaseResult:
    """Write a refreshed benchmark for a probe run.

    Args:
        run_path: A probe run folder (with ``items.parquet`` and ``items_<arm>.jsonl``).
        out: Release folder to write.

    Returns:
        A :class:`ReleaseResult`.
    """
    from zcp_core.data import write_items_jsonl
    from zcp_core.errors import DataError
    from zcp_core.probe.run import load_item_set
    from zcp_core.runs import atomic_write_bytes, atomic_write_json, load_run
    from zcp_core.schema import Item

    run = load_run(run_path)
    if run.kind != "probe":
        raise DataError(str(run.path), None, "kind", f"not a probe run (kind {run.kind})")
    flags = run.table("items")
    originals = load_item_set(run.path, "original")
    twins = {t.original_id: t for t in load_item_set(run.path, "reference")}
    canary = canary_for(dict(run.manifest))
    model = str(run.manifest.get("model") or "")
    replaced, kept, swap = [], [], {}
    for row in flags[flags["flagged"]].to_dict("records"):
        oid = row["pair_id"]
        twin = twins.get(oid)
        how = twin_verification(twin) if twin else None
        if twin is None or how is None:
            kept.append(KeptFlagged(oid, "no reference twin" if twin is None else
                                    f"twin {twin.id} is neither deterministically recomputed nor judge-verified"))
            continue
        swap[oid] = twin
        replaced.append(Replacement(oid, twin.id, how, row["flip"], _num(row["p_all_gap"]),
                                    _num(row["p_all_gap_rank"]), row["evidence"]))
    out_items = []
    for it in originals:
        new = swap.get(it.id, it)
        meta = {**dict(new.metadata), "canary": canary}
        if it.id in swap:
            meta["replaces"] = it.id
        out_items.append(Item(id=new.id, question=new.question, answer=new.answer, solution=new.solution,
                              source=new.source, original_id=new.original_id, metadata=meta))
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    write_items_jsonl(folder / "benchmark.jsonl", out_items)
    by_id = {it.id: it for it in originals}
    lines = [json.dumps({**asdict(r), "original": by_id[r.original_id].to_dict(),
                         "replacement": swap[r.original_id].to_dict()}, ensure_ascii=False, default=str)
             for r in replaced]
    atomic_write_bytes(folder / "replacements.jsonl", ("\n".join(lines) + ("\n" if lines else "")).encode())
    atomic_write_bytes(folder / "CANARY.txt", (canary + "\n").encode())
    res = ReleaseResult(folder, len(out_items), tuple(replaced), tuple(kept), canary, str(run.path), model)
    atomic_write_bytes(folder / "README.md", audit_card(res, dict(run.manifest)).encode())
    atomic_write_json(folder / "release.json", res.to_dict())
    return res


def audit_card(res: ReleaseResult, manifest: dict[str, Any]) -> str:
    """The release's README: what was replaced, on what evidence, by which model."""
    s = manifest.get("summary", {})
    head = s.get("headline", {})
    conf = head.get("confidence")
    lines = [
        "# Refreshed benchmark (zcp release)", "",
        f"Canary: `{res.canary}`. Do not train on this data; the canary lets crawlers and audits find leaks.", "",
        f"- Source probe run: `{res.run}`",
        f"- Model probed: `{res.model}` (revision `{manifest.get('model_revision')}`)",
        f"- Datasets: {', '.join(d.get('path', '') for d in manifest.get('datasets', [])) or 'n/a'}",
        f"- Contamination Confidence: {conf if conf is None else round(conf, 3)} ({head.get('metric')})",
        f"- Items: {res.n_items}; replaced: {len(res.replaced)}; flagged but kept: {len(res.kept)}", "",
        "An item is flagged when the model answers it correctly with its chain of thought cut away (zero-CoT) "
        "but fails the reference twin with the same logic and new numbers. Flagged items are replaced only by "
        "twins that were deterministically recomputed or judge-verified.", "",
        "Undo: every replaced original is stored in full in `replacements.jsonl`; "
        "`zcp_core.probe.release.undo_release(DIR)` rebuilds the original item list.", "",
        "## Replaced", "", "| original | replacement | verified | P_all gap | evidence |", "|---|---|---|---|---|",
    ]
    for r in res.replaced:
        gap = "n/a" if r.p_all_gap is None else f"{r.p_all_gap:+.3f} (rank {r.p_all_gap_rank})"
        lines.append(f"| {r.original_id} | {r.replacement_id} | {r.verification} | {gap} | "
                     f"{r.evidence.replace('|', '/')} |")
    if not res.replaced:
        lines.append("| (none) | | | | |")
    lines += ["", "## Flagged but kept", ""]
    lines += [f"- {k.original_id}: {k.reason}" for k in res.kept] or ["(none)"]
    return "\n".join(lines) + "\n"


def undo_release(release_dir: str | Path) -> list[Item]:
    """The original item list of a release: replaced twins swapped back, canary metadata removed."""
    from zcp_core.data import load_items
    from zcp_core.schema import Item

    folder = Path(release_dir)
    back = {}
    rp = folder / "replacements.jsonl"
    for line in rp.read_text().splitlines() if rp.exists() else []:
        rec = json.loads(line)
        back[rec["replacement_id"]] = rec["original"]
    out = []
    for it in load_items(folder / "benchmark.jsonl", fmt="items"):
        if it.id in back:
            o = back[it.id]
            out.append(Item(id=o["id"], question=o["question"], answer=o["answer"], solution=o.get("solution"),
                            source=o.get("source") or "", original_id=o.get("original_id"),
                            metadata=o.get("metadata") or {}))
        else:
            meta = {k: v for k, v in it.metadata.items() if k != "canary"}
            out.append(Item(id=it.id, question=it.question, answer=it.answer, solution=it.solution,
                            source=it.source, original_id=it.original_id, metadata=meta))
    return out
