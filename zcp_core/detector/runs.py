"""Detector runs: train one detector, the closed-loop comparison, and cross-domain transfer.

Every function here writes a ``detector`` run with :func:`zcp_core.runs.write_run`.
Saved detectors go inside the run (``detector/`` for ``train``,
``detectors/original`` and ``detectors/cleaned`` for ``compare``), written
before the manifest so a run with a manifest is complete.

Tables of a ``compare`` run (all parquet):
    records: per original test text ``id, label, llm_type, data_type, has_artifact,
        p_llm_original, p_llm_cleaned, artifact_share_original, artifact_share_cleaned``.
    metrics: ``trained_on, evaluated_on, n, n_human, n_llm, roc_auc, f1, accuracy,
        tpr_at_1pct_fpr, tpr_at_001pct_fpr, notes``.
    attack: ``zcp_core.detector.attack.ATTACK_COLUMNS``.
    top_tokens: ``detector`` + ``zcp_core.detector.explain.top_tokens`` columns.
    token_attributions: ``detector`` + ``zcp_core.detector.explain.TOKEN_COLUMNS`` (the explained sample).
    text_attributions: ``detector`` + ``zcp_core.detector.explain.TEXT_COLUMNS``.
    dropped, split, duplicates, split_fixes: what cleaning dropped, the split, dedup log, collisions.
    cross_domain (optional): see :func:`cross_domain`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zcp_core.detector.base import DetectorKind
from zcp_core.detector.compare import METRIC_COLUMNS, CompareResult, attack_verdict, cleaned_views, metrics_table
from zcp_core.detector.data import load_texts_for_detector, split_texts
from zcp_core.detector.factory import score_frame, train_detector

logger = logging.getLogger(__name__)
if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.artifacts import PatternLibrary

CROSS_COLUMNS = ["train_domain", "train_form", "eval_domain", "eval_form", "in_domain", "n_excluded", *METRIC_COLUMNS[2:]]


def domain_name(path: str) -> str:
    """Domain of a DetectRL file from its name (``multi_domains_arxiv_test.json`` -> ``arxiv``)."""
    stem = Path(path).stem
    for pre in ("multi_domains_", "multi_llms_"):
        stem = stem.removeprefix(pre)
    return stem.removesuffix("_test").removesuffix("_train")


def _json_metrics(df: pd.DataFrame) -> list[dict]:
    import math

    rows = df.to_dict("records")
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in r.items()} for r in rows]


def compare_tables(res: CompareResult) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """The records table and extra tables of a compare run (see the module docstring)."""
    import pandas as pd

    from zcp_core.detector.explain import top_tokens

    records = res.scores.copy()
    for name in ("original", "cleaned"):
        share = res.attributions[name].texts.set_index("id")["artifact_share"]
        records[f"artifact_share_{name}"] = records["id"].map(share)
    tops, toks, texts = [], [], []
    for name, a in res.attributions.items():
        tops.append(top_tokens(a, 40).assign(detector=name))
        toks.append(a.tokens.assign(detector=name))
        texts.append(a.texts.assign(detector=name))
    tables = {
        "metrics": res.metrics, "attack": res.attack,
        "top_tokens": pd.concat(tops, ignore_index=True), "token_attributions": pd.concat(toks, ignore_index=True),
        "text_attributions": pd.concat(texts, ignore_index=True),
        "dropped": res.cleaning.dropped[["id", "pattern_id", "reason"]], "split": res.split.assignment_frame(),
        "duplicates": res.split.dedup.duplicates_frame(), "split_fixes": res.split_fixes,
    }
    return records, tables


def compare_summary(res: CompareResult) -> dict[str, Any]:
    """The ``--json`` summary of a compare run."""
    shares = res.artifact_shares()
    verdict = attack_verdict(res.attack)
    return {
        "headline": {"label": "artifact attribution share, original-trained", "value": shares.get("original")},
        "n_records": res.split.dedup.n_records, "n_unique": res.split.dedup.n_unique,
        "n_train": len(res.split.train), "n_test": len(res.split.test),
        "n_cleaned_train": len(res.cleaned_train), "n_cleaned_test": len(res.cleaned_test),
        "dropped_by_cleaning": len(res.cleaning.dropped),
        "edits_applied": int(res.cleaning.edits["applied"].sum()) if len(res.cleaning.edits) else 0,
        "artifact_share": shares, "attack": _json_metrics(res.attack.drop(columns=["prefix"])),
        "prefix": res.config.prefix, "metrics": _json_metrics(res.metrics), **verdict,
        "attribution_method": {k: a.method for k, a in res.attributions.items()},
    }


def write_compare_run(out: str | Path, res: CompareResult, spec_extra: dict[str, Any],
                      cross: pd.DataFrame | None = None) -> Path:
    """Save both detectors and write the compare run; returns the folder."""
    from dataclasses import asdict

    from zcp_core.runs import RunSpec, write_run

    folder = Path(out)
    for name in ("original", "cleaned"):
        res.detectors[name].save(folder / "detectors" / name)
    records, tables = compare_tables(res)
    summary = compare_summary(res)
    if cross is not None:
        tables["cross_domain"] = cross
        summary["cross_domain"] = _json_metrics(cross.drop(columns=["notes"]))
    cfg = asdict(res.config)  # nested detector_config becomes a dict too
    spec = RunSpec(kind="detector", config={"command": "compare", **cfg, **spec_extra.get("config", {})},
                   command=spec_extra.get("command", ""), model=spec_extra.get("model"),
                   dataset=tuple(spec_extra.get("dataset", ())), seed=res.config.seed)
    return write_run(folder, spec, records, summary, tables)


def train_run(records: Sequence[Any], out: str | Path, *, paths: Sequence[str] = (), kind: DetectorKind = "tfidf",
              detector_config: Any = None, library: PatternLibrary | None = None, test_size: float = 0.3,
              seed: int = 0) -> tuple[Path, dict]:
    """Train one detector (on cleaned data when ``library`` is given), evaluate it, write a run.

    Args:
        records: Labelled texts (deduplicated and split here).
        out: Run folder.
        paths: The files the records came from (recorded in the manifest).
        kind: Detector kind.
        detector_config: Its config (None: defaults).
        library: Pattern library; when given, train and test on cleaned texts.
        test_size: Held-out share per label.
        seed: Split seed.

    Returns:
        ``(run folder, summary)``. Records: test scores (``score_frame`` columns).
    """
    from dataclasses import asdict

    from zcp_core.runs import RunSpec, write_run

    split = split_texts(records, test_size, seed)
    train, test, tables = split.train, split.test, {"split": split.assignment_frame(),
                                                    "duplicates": split.dedup.duplicates_frame()}
    if library is not None:
        from zcp_core.artifacts import CleanConfig, clean

        cleaning = clean(split.dedup.records, library, config=CleanConfig(edges="auto"))  # as `zcp clean` cleans
        train, test, fixes = cleaned_views(split, cleaning)
        tables |= {"dropped": cleaning.dropped[["id", "pattern_id", "reason"]], "split_fixes": fixes}
    det = train_detector(train, kind, detector_config)
    folder = Path(out)
    det.save(folder / "detector")
    metrics = metrics_table({"cleaned" if library else "original": det}, {"test": test})
    tables["metrics"] = metrics
    m = _json_metrics(metrics)[0]
    summary = {"headline": {"label": "ROC-AUC (test)", "value": m["roc_auc"]}, "kind": kind,
               "form": "cleaned" if library else "original", "n_records": split.dedup.n_records,
               "n_unique": split.dedup.n_unique, "n_train": len(train), "n_test": len(test), "metrics": m,
               "patterns_sha256": library.sha256 if library else None}
    cfg = {"command": "train", "kind": kind, "test_size": test_size, "cleaned": library is not None,
           "detector_config": asdict(detector_config) if detector_config else None,
           "patterns": library.path if library else None}
    write_run(folder, RunSpec(kind="detector", config=cfg, dataset=tuple(paths), seed=seed,
                              model=getattr(detector_config, "checkpoint", None)),
              score_frame(det, test), summary, tables)
    return folder, summary


def cross_domain(paths: Sequence[str], library: PatternLibrary, kind: DetectorKind = "tfidf",
                 detector_config: Any = None, test_size: float = 0.3, seed: int = 0) -> pd.DataFrame:
    """Train on each domain (original or cleaned), evaluate on every domain's test split in both forms.

    The paper's Table 5 shape. Eval texts equal to a training text of the
    detector are excluded (``n_excluded``). Columns: ``CROSS_COLUMNS``.
    """
    import pandas as pd

    from zcp_core.artifacts import CleanConfig, clean

    domains: dict[str, dict[str, tuple]] = {}
    for p in paths:
        split = split_texts(load_texts_for_detector([p]), test_size, seed)
        train_c, test_c, _ = cleaned_views(split, clean(split.dedup.records, library, config=CleanConfig(edges="auto")))
        domains[domain_name(p)] = {"original": (split.train, split.test), "cleaned": (train_c, test_c)}
    rows = []
    for dname, forms in domains.items():
        for tform in ("original", "cleaned"):
            train = forms[tform][0]
            logger.info(f"cross-domain: training on {dname} ({tform}, {len(train)} texts)")
            det = train_detector(train, kind, detector_config)
            seen = {r.text for r in train}
            for ename, eforms in domains.items():
                for eform in ("original", "cleaned"):
                    test = [r for r in eforms[eform][1] if r.text not in seen]
                    m = metrics_table({tform: det}, {eform: test}).iloc[0].to_dict()
                    rows.append({"train_domain": dname, "train_form": tform, "eval_domain": ename, "eval_form": eform,
                                 "in_domain": ename == dname, "n_excluded": len(eforms[eform][1]) - len(test),
                                 **{k: m[k] for k in METRIC_COLUMNS[2:]}})
    return pd.DataFrame(rows, columns=CROSS_COLUMNS)


def format_cross_domain(df: pd.DataFrame, metric: str = "roc_auc") -> str:
    """A text pivot: rows train domain/form, columns eval domain/form."""
    if df.empty:
        return "cross-domain: no rows"
    pv = df.pivot_table(index=["train_domain", "train_form"], columns=["eval_domain", "eval_form"], values=metric)
    return f"cross-domain {metric} (rows: trained on; columns: evaluated on)\n" + pv.round(3).to_string()


def cross_domain_run(paths: Sequence[str], library: PatternLibrary, out: str | Path, kind: DetectorKind = "tfidf",
                     detector_config: Any = None, test_size: float = 0.3, seed: int = 0
                     ) -> tuple[Path, pd.DataFrame, dict]:
    """Run :func:`cross_domain` and write it as a ``detector`` run (records = the table)."""
    from zcp_core.runs import RunSpec, write_run

    df = cross_domain(paths, library, kind, detector_config, test_size, seed)
    off = df[~df["in_domain"]]
    gap = {f"{t}->{e}": float(off[(off.train_form == t) & (off.eval_form == e)]["roc_auc"].mean())
           for t in ("original", "cleaned") for e in ("original", "cleaned")}
    summary = {"headline": {"label": "mean out-of-domain ROC-AUC, cleaned->cleaned", "value": gap["cleaned->cleaned"]},
               "out_of_domain_mean_auc": gap, "domains": sorted(set(df["train_domain"])),
               "patterns_sha256": library.sha256}
    spec = RunSpec(kind="detector", config={"command": "crossdomain", "kind": kind, "patterns": library.path},
                   dataset=tuple(paths), seed=seed)
    return write_run(out, spec, df, summary, {"cross_domain": df}), df, summary
