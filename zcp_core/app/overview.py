"""The run browser's rows and its comparison of runs, in words (every number through :mod:`zcp_core.report`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from zcp_core.report import MISSING, Headline, fmt_c, fmt_count, fmt_num

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.runs import Run

#: Each method by its name in words.
METHOD_WORDS = {"probe": "Zero-CoT probe", "guided": "Time-Travel", "artifacts": "Artifact scan",
                "scan": "Artifact scan", "clean": "Artifact cleaning", "afr": "Answer-first rate",
                "chains": "Answer-first chains", "lab": "Lab model", "detector": "Detector", "lab-build": "Lab model",
                "reference": "Twins", "baselines": "Membership baselines"}


def _value(x: Any, label: str = "") -> str:
    """A stored headline value as shown: C by the C rule, counts as integers, yes/no, ``–`` when missing."""
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, (int, float)):
        if "confidence" in label.lower():
            return fmt_c(x)
        return fmt_count(x) if float(x).is_integer() else fmt_num(x)
    return MISSING if x is None or x == "" else str(x)


def run_headline(run: Run) -> Headline:
    """A run's headline: a probe or guided run's from its report, others from the stored ``headline`` as shown."""
    if run.kind == "probe":
        from zcp_core.probe.report import confidence_of, headline_of

        try:
            return headline_of(confidence_of(run))
        except Exception:  # noqa: BLE001 - a partial run still gets a row in the browser
            pass
    if run.kind == "guided":
        from zcp_core.guided.report import report

        try:
            return report(run).headline
        except Exception:  # noqa: BLE001 - a partial run still gets a row in the browser
            pass
    head = run.summary.get("headline") or {}
    label = str(head.get("label") or "Headline")
    return Headline(label, _value(head.get("value"), label), reason=str(head.get("reason") or ""))


def headline_text(h: Headline) -> str:
    """The headline's label with what it was measured on: ``Contamination Confidence (P(all answer tokens))``."""
    return f"{h.label} ({h.subject})" if h.subject else h.label


def _dataset(run: Run) -> str:
    from pathlib import Path

    return ", ".join(Path(d["path"]).name for d in run.manifest.get("datasets") or [] if d.get("path")) or MISSING


def browser_row(run: Run) -> dict[str, str]:
    """One row of the run browser, every cell as text."""
    h = run_headline(run)
    return {"Run": run.path.name, "Method": METHOD_WORDS.get(run.kind, run.kind),
            "Model": str(run.manifest.get("model") or MISSING), "Dataset": _dataset(run),
            "Finished": str(run.manifest.get("finished") or "")[:16].replace("T", " ") or MISSING,
            "Example": "example" if run.manifest.get("example") else "",
            "Headline metric": headline_text(h), "Headline": h.value}


def compare_table(runs: Sequence[Run]) -> pd.DataFrame:
    """Runs side by side: one column per run, rows in words (method, model, headline and, for probe runs, the
    report's facts and each metric's C); a row one run lacks reads ``–``."""
    import pandas as pd

    cols: dict[str, dict[str, str]] = {}
    for run in runs:
        row = {k: v for k, v in browser_row(run).items() if k != "Run"}
        row["Example"] = "yes" if row["Example"] else "no"
        if run.kind == "probe":
            from zcp_core.probe.report import report

            rep = report(run)
            row.update({k: v for k, v in rep.facts if k != "Model"})
            ci = rep.columns.index("Confidence C")
            row.update({f"Confidence C, {r[0]}": r[ci] for r in rep.rows})
        cols[run.path.name] = row
    order: list[str] = []
    for c in cols.values():
        order += [k for k in c if k not in order]
    return pd.DataFrame({name: [c.get(k, MISSING) for k in order] for name, c in cols.items()}, index=order)
