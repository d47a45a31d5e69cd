"""Run orchestration for the Zero-CoT probe: pair, probe every arm, analyse, write the run folder.

A probe run folder holds ``manifest.json`` and these tables:

* ``records.parquet``: per arm x item x ratio rows (see :mod:`zcp_core.probe`);
* ``items.parquet``: per pair flags and evidence (:func:`zcp_core.probe.analysis.item_flags`);
* ``tests.parquet``: every paired test in full (:func:`zcp_core.probe.analysis.tests_table`);
* ``truncation.parquet`` and ``sample_size.parquet``: the two curves;
* with a control model (:mod:`zcp_core.probe.control`): ``control_records.parquet`` and
  ``did_gaps.parquet``, and the summary's ``control`` and ``did`` blocks;

plus the probed item sets as ``items_<arm>.jsonl`` (items format), so a release
or a rerun never depends on the input files still being there.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from zcp_core.probe.config import ProbeConfig, ProbeResult

if TYPE_CHECKING:
    import pandas as pd

    from zcp_core.probe.control import Control
    from zcp_core.schema import Item

ITEM_SET_FILE = "items_{arm}.jsonl"


def _counts(records: pd.DataFrame, arms: Sequence[str]) -> dict[str, Any]:
    z = records[records["ratio"] == 0.0]
    out: dict[str, Any] = {"parse_failures": {}, "grade_status": {}, "generated_tokens": {}, "accuracy": {}}
    for arm in arms:
        a = z[z["arm"] == arm]
        every = records[records["arm"] == arm]
        # A CoT is generated once per item; it repeats across that item's ratio rows.
        cots = every.drop_duplicates("id")["cot_tokens"].dropna()
        out["parse_failures"][arm] = int((a["grade_status"] != "ok").sum())
        out["grade_status"][arm] = {str(k): int(v) for k, v in a["grade_status"].value_counts().items()}
        out["generated_tokens"][arm] = {"answer": int(every["answer_tokens"].sum()), "cot": int(cots.sum()),
                                        "items": int(a["id"].nunique())}
        out["accuracy"][arm] = float(a["acc"].mean()) if len(a) else None
    return out


def run_probe(backend: Any, original: Sequence[Item], reference: Sequence[Item], config: ProbeConfig,
              paraphrased: Sequence[Item] | None = None, out: str | Path | None = None, model_spec: str = "",
              dataset_paths: tuple[str, ...] = (), control: Control | None = None) -> ProbeResult:
    """Probe every arm, test each suspect arm against the reference, and write a run.

    Args:
        backend: The model.
        original: The benchmark items.
        reference: Twins whose ``original_id`` names an original (see ``stats.pair_items``).
        config: What to measure.
        paraphrased: Optional evasive paraphrases (``original_id`` set likewise).
        out: Run folder to write (``None`` writes nothing).
        model_spec: Model spec string for the manifest.
        dataset_paths: Input files for the manifest.
        control: A control model probed on the same originals and twins; the audited gap is then also
            tested against the control's (``summary["did"]``, relative to the control).

    Returns:
        A :class:`ProbeResult`.
    """
    import pandas as pd

    from zcp_core.data import write_items_jsonl
    from zcp_core.probe.analysis import (
        confidence_from_tests,
        confidence_summary,
        sample_size_curve,
        tests_table,
        truncation_curve,
    )
    from zcp_core.probe.config import ProbeResult
    from zcp_core.probe.flags import flags_summary, item_flags
    from zcp_core.probe.measure import probe_items
    from zcp_core.reference.coverage import coverage_comparison
    from zcp_core.runs import RunSpec, write_run
    from zcp_core.stats import MIN_PAIRS, pair_items

    started = _dt.datetime.now(_dt.timezone.utc)
    ids = [o.id for o in original]
    pairing = pair_items(ids, reference)
    unpaired = set(pairing.unpaired_original)
    # Tests use only originals with a twin: by default the rest are not answered (no number reads them), but
    # the run keeps every original as its item set, since a release is the whole benchmark.
    probed = [o for o in original if config.originals == "all" or o.id not in unpaired]
    para_pairing = pair_items(ids, paraphrased) if paraphrased else None
    sets = {"original": probed, "paraphrased": list(paraphrased or []), "reference": list(reference)}
    arms = [a for a, s in sets.items() if s]
    from dataclasses import replace

    from tqdm.auto import tqdm

    from zcp_core.probe.measure import resolve_answer_format

    # One answer format for every arm, so original and twin are answered under the same rule.
    config = replace(config, answer_format=resolve_answer_format(  # type: ignore[arg-type]
        config, backend, [it for a in arms for it in sets[a]]))

    # The backend shows batch progress for long arms; this bar shows which arm is being probed.
    frames = [probe_items(backend, sets[a], config, a) for a in tqdm(arms, desc="probe arms", unit="arm")]
    records = pd.concat(frames, ignore_index=True)
    suspects = [a for a in ("original", "paraphrased") if a in arms]
    kw = config.test_options()
    # Each arm's tests run once (the intervals invert the test, so they cost a few more test runs each).
    tests = tests_table(records, config.metrics, suspects, **kw)
    summary = confidence_from_tests(tests, "original") or confidence_summary(records, config.metrics, **kw)
    summary["arms"] = {a: confidence_from_tests(tests, a) for a in suspects}
    items = item_flags(records, "original", config.flag_rule)
    tables = {
        "items": items,
        "tests": tests,
        "truncation": truncation_curve(records, config.metrics),
        "sample_size": sample_size_curve(records, [m for m in config.metrics], "original", seed=config.seed,
                                         prior=config.prior, continuous_test=config.continuous_test),
    }
    if control is not None:
        from zcp_core.probe.control import control_summary, probe_control

        control_records = probe_control(control, sets, config)
        summary["control"], summary["did"], tables["did_gaps"] = control_summary(
            records, control_records, config.metrics, control.spec, kw)
        tables["control_records"] = control_records
    summary.update(_counts(records, arms))
    summary.update({
        "n_items": {a: len(sets[a]) for a in arms},  # probed; ``originals`` gives the benchmark's size
        "n_pairs": len({p.original_id for p in pairing.pairs}),
        "twins": twins_summary(reference, pairing),
        "flags": flags_summary(items, config.flag_rule),
        "originals": {"given": len(original), "probed": len(probed), "mode": config.originals},
        # which part of the benchmark the verdict speaks for: covered (with a twin) against the rest
        "coverage": coverage_comparison(original, {p.original_id for p in pairing.pairs}).to_dict(),
        "unpaired_original": len(pairing.unpaired_original),
        "unpaired_original_ids": list(pairing.unpaired_original[:50]),
        "unpaired_paraphrased": len(para_pairing.unpaired_original) if para_pairing else None,
        "cot_generated": config.needs_cot,
        "flagged": int(items["flagged"].sum()),  # the flags block says how (metric, q)
        "flips": {str(k): int(v) for k, v in items["flip"].value_counts().items()},
        "model": model_spec or getattr(backend, "model_id", ""),
        "mode": config.mode,
        "ratios": list(config.ratios),
        "continuous_test": config.continuous_test,
        "answer_format": config.answer_format,
        "min_pairs": MIN_PAIRS,
    })
    path = None
    if out is not None:
        spec = RunSpec(kind="probe", config=asdict(config), model=model_spec or getattr(backend, "model_id", None),
                       model_revision=getattr(backend, "revision", None), dataset=tuple(dataset_paths),
                       seed=config.seed)
        path = write_run(out, spec, records, summary, tables=tables, started=started)
        for a in arms:
            write_items_jsonl(path / ITEM_SET_FILE.format(arm=a), list(original) if a == "original" else sets[a])
    return ProbeResult(records=records, items=items, summary=summary, run_path=path, tables=tables)


def twins_summary(reference: Sequence[Item], pairing: Any) -> dict[str, Any]:
    """How many twins the paired originals have: ``k`` (the most), ``per_item`` (count of originals by their
    number of twins) and ``fewer`` (originals with fewer than ``k``)."""
    from collections import Counter

    per = Counter(Counter(p.original_id for p in pairing.pairs).values())
    k = max(per, default=0)
    return {"k": k, "per_item": {str(n): c for n, c in sorted(per.items())},
            "fewer": sum(c for n, c in per.items() if n < k)}


def load_item_set(run_path: str | Path, arm: str) -> list[Item]:
    """The items an arm of a probe run was probed on (``items_<arm>.jsonl`` in the run folder)."""
    from zcp_core.data import load_items
    from zcp_core.errors import DataError

    p = Path(run_path) / ITEM_SET_FILE.format(arm=arm)
    if not p.exists():
        raise DataError(str(p), None, None, f"this probe run has no {arm} item set")
    return load_items(p, fmt="items")
