"""Dose-response: how much contamination each detector needs (``zcp lab dose``).

The dose of a build is its exposures per C item: epochs for kinds trained on
C itself (``direct`` 6, ``solution`` 6, ``verbatim`` 6), paraphrase versions
for the kinds trained on paraphrases, one epoch each (``evasive`` 6, ``paper``
6). A dose run builds one kind at several doses, each with the full matrix
machinery (:func:`~zcp_core.lab.matrix.run_matrix`: every detector's AUROC with
its CIs, and the manipulation check ``took`` on the same axis), and keeps one
table, ``dose``, with a ``dose`` column.

Builds at a dose other than the profile's own get their own alias
(``solution-dose2``), so ``lab:solution`` keeps naming the default build.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zcp_core.lab.config import PARAPHRASE_KINDS, LabError

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.lab.matrix import MatrixOptions


def dose_overrides(kind: str, dose: int) -> tuple[tuple[str, Any], ...]:
    """The ``LabConfig`` overrides that give ``kind`` ``dose`` exposures per C item.

    Raises:
        LabError: A dose below 1, or the untouched model (``none``), which has no dose.
    """
    if kind == "none":
        raise LabError("the untouched model has no dose; a dose run takes built kinds")
    if dose < 1:
        raise LabError(f"a dose is a number of exposures per C item (>= 1), not {dose}")
    if kind in PARAPHRASE_KINDS:
        return (("paraphrase_versions", dose), ("epochs", 1))
    return (("epochs", dose),)


@dataclass(frozen=True)
class DoseResult:
    """What :func:`run_dose` returns: the ``dose`` table (matrix rows with ``dose``), its summary, the folder."""

    table: pd.DataFrame
    summary: dict[str, Any]
    run_path: Path | None


def run_dose(kinds: tuple[str, ...], doses: tuple[int, ...], opts: MatrixOptions,
             out: str | Path | None = None, progress: bool = True) -> DoseResult:
    """Build each kind at each dose and measure every detector on it.

    Args:
        kinds: Built kinds (``direct``, ``evasive``, ``solution``, ``verbatim``, ``paper``).
        doses: Exposures per C item, e.g. ``(2, 6, 12)``.
        opts: Matrix options shared by every point (``kinds`` and the dose overrides are set here).
        out: Run folder (``None`` writes nothing).
        progress: Progress bars on stderr.

    Raises:
        LabError: An unknown kind or a bad dose (before anything is built), or a missing build when
            ``opts.missing == "fail"``.
    """
    import pandas as pd

    from zcp_core.lab.config import LAB_RUN_KIND
    from zcp_core.lab.matrix import run_matrix
    from zcp_core.lab.quality import json_rows
    from zcp_core.runs import RunSpec, write_run

    if not kinds or not doses:
        raise LabError("a dose run needs at least one kind and one dose")
    points = [(k, d, dose_overrides(k, d)) for k in kinds for d in sorted(set(doses))]  # checks all first
    t0 = time.time()
    frames, took, builds = [], [], []
    for kind, dose, over in points:
        res = run_matrix(replace(opts, kinds=(kind,), build=tuple(opts.build) + over), progress=progress)
        frames.append(res.tables["matrix"].assign(dose=dose))
        took.append(res.tables["took"].assign(dose=dose))
        builds.append(res.tables["builds"].assign(dose=dose))
    table = pd.concat(frames, ignore_index=True)
    tables = {"dose": table, "took": pd.concat(took, ignore_index=True),
              "builds": pd.concat(builds, ignore_index=True)}
    summary = {"stage": "dose", "kinds": list(kinds), "doses": sorted(set(doses)), "rows": json_rows(table),
               "took": json_rows(tables["took"]), "builds": json_rows(tables["builds"]), "detectors": list(opts.detectors), "profile": opts.profile,
               "seconds": time.time() - t0,
               "headline": {"label": "dose points", "value": len(points)}}
    run_path = None
    if out is not None:
        spec = RunSpec(kind=LAB_RUN_KIND, config={"stage": "dose", "kinds": list(kinds), "doses": sorted(set(doses)),
                                                  "detectors": list(opts.detectors), "profile": opts.profile,
                                                  "build": [list(b) for b in opts.build], "seed": opts.seed},
                       command=(f"zcp lab dose --kinds {','.join(kinds)} --doses {','.join(map(str, sorted(set(doses))))}"
                                f" --profile {opts.profile}"),
                       seed=opts.seed)
        run_path = write_run(out, spec, table, summary, tables=tables)
    return DoseResult(table, summary, run_path)
