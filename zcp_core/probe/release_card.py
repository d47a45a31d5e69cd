"""The dataset card of a probe release (``README.md``): licence, provenance, verdict, flags and the audit."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from zcp_core.probe.leftover import leftover_text
from zcp_core.probe.verdict import verdict_lines

if TYPE_CHECKING:
    from zcp_core.probe.release import ReleaseResult, Scores
    from zcp_core.publish import Card, LicenseInfo


def release_card(res: ReleaseResult, manifest: dict[str, Any], lic: LicenseInfo) -> Card:
    """The release's dataset card: licence, provenance, counts with reasons, canary, and the audit."""
    from zcp_core.probe.report import confidence_of, headline_of, report
    from zcp_core.publish import Card, citation_for, source_line
    from zcp_core.report import fmt_num, fmt_p, metric_name

    # The card's headline is the run's report headline, as the CLI, app and notebooks show it.
    head = headline_of(confidence_of(res.run))
    verdict = (f"{head.value} ({head.subject}): {head.reading}" if head.raw is not None
               else f"no verdict was possible: {head.reason}")
    datasets = _datasets(manifest)
    covered = res.mode == "covered"
    what = "items (every item with one)" if covered else "flagged items"
    title = (f"Refreshed benchmark: {len(res.replaced)} {what} replaced by verified twins"
             if res.replaced else "Audited benchmark: nothing replaced")
    v = res.verdict
    controlled = v is not None and v.controlled
    flag_rule = (f"its own one-sided p against its twins on {metric_name(v.flag_metric)} is a Benjamini-Hochberg "
                 f"discovery at false-discovery level q = {v.fdr_q:g}" if controlled and v is not None else
                 "the model answers it correctly with its chain of thought cut away (zero-CoT) but fails every "
                 "reference twin with the same logic and new numbers (no false-discovery control)")
    which = ("every item with a verified twin is replaced, flagged or not (`--replace covered`)" if covered else
             "a flagged item with a verified twin is replaced (`--replace flagged`)")
    # the probe's own report, as the CLI, the app and notebook 01 show it: headline, facts (twins per item, flags),
    # each metric's effect, CI and C, in the same words
    audit = report(res.run).to_markdown(level=3)
    body = [*verdict_lines(v),
        "## The audit", "", audit,
        "## How items were changed", "",
        f"An item is flagged when {flag_rule}. In this release {which}, by its spare twin (its last twin, which "
        "took no part in its p) when the spare is verified, else by its first verified twin. Verified means "
        "`reexecuted` (a numeric twin whose solution was re-executed from its own question values and matched its gold), "
        "`template_checked` (a program-template twin: the template renders the original exactly, its program gives "
        "the original's gold, and the twin's values meet its constraints) or `two_distinct_judges` (an LLM twin "
        "accepted by two judges that are different models from each other and from the generator). Nothing else "
        "is changed.", "",
        "Undo: every replaced original is stored in full in `replacements.jsonl`; "
        "`zcp_core.probe.undo_release(DIR)` rebuilds the original item list.", "",
        "## Replaced", "",
        "| original | flagged | replacement | twin | verified | verified by | "
        "P(all answer tokens), original minus twins | item p | q-value | evidence |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in res.replaced:
        gap = "–" if r.p_all_gap is None else f"{fmt_num(r.p_all_gap, signed=True)} (rank {r.p_all_gap_rank})"
        body.append(f"| {r.original_id} | {'yes' if r.flagged else 'no'} | {r.replacement_id} | "
                    f"{'spare' if r.spare else 'first verified'} | {r.verification} | "
                    f"{r.verified_by.replace('|', '/')} | {gap} | {fmt_p(r.item_p)} | {fmt_p(r.item_q)} | "
                    f"{r.evidence.replace('|', '/')} |")
    if not res.replaced:
        body.append("| (none) | | | | | | | | | |")
    if sc_text := scores_text(res.scores):
        body += ["", sc_text]
    body += ["", "## Contaminated items left (an estimate)", "", leftover_text(res.leftover, controlled)]
    body += ["", "## Kept though it has a twin" if covered else "## Flagged but kept", ""]
    body += [f"- {k.original_id}{' (flagged)' if covered and k.flagged else ''}: {k.reason}"
             for k in res.kept] or ["(none)"]
    body += ["", "## Untested", ""]
    body += ([f"- {i}: no reference twin, so the probe could not test it" for i in res.untested] or ["(none)"])
    return Card(
        title=title, data_file="benchmark.jsonl", split="test", license=lic,
        source=(*[source_line(d["path"], d.get("sha256")) for d in datasets],
                f"zcp probe run `{Path(res.run).name}`: `{_command(manifest)}`",
                f"model probed: `{res.model}` (revision `{manifest.get('model_revision')}`)",
                f"Contamination Confidence: {verdict}"),
        citation=citation_for([d["path"] for d in datasets]), canary=res.canary,
        counts={"items": str(res.n_items), "replaced": f"{len(res.replaced)} (--replace {res.mode})",
                **({"flagged": f"{v.flagged} (false-discovery level q = {v.fdr_q:g} on {metric_name(v.flag_metric)})",
                    "estimated contaminated items left": (
                        f"{fmt_num(res.leftover.left, 1)} (Storey, items with a p only)" if res.leftover else "–")}
                   if v is not None and v.controlled else
                   {"flags chance alone gives (twin only right, c)": str(v.c),
                    "estimated memorised items (b - c)": v.memorised_text} if v is not None and v.k_twins == 1 else
                   {"flagged": f"{v.flagged} (no false-discovery control)"} if v is not None else {}),
                ("kept though it has a twin" if covered else "flagged but kept"): f"{len(res.kept)} (reasons below)",
                "untested": f"{len(res.untested)} (no reference twin)", "dropped": "0 (a release never drops items)"},
        body="\n".join(body), tags=("benchmark-refresh",),
    )


def _datasets(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    return [d for d in manifest.get("datasets", []) if d.get("path")]


def _source_refs(manifest: dict[str, Any]) -> list[dict[str, str]]:
    from zcp_core.publish import source_ref

    return [{**source_ref(d["path"]).to_dict(), "sha256": str(d.get("sha256") or "")} for d in _datasets(manifest)]


def _command(manifest: dict[str, Any]) -> str:
    from zcp_core.publish import portable_command

    return portable_command(str(manifest.get("command", "")))


def scores_text(sc: Scores | None) -> str:
    """The model's mean before and after the release, in words (one wording for the card and the terminal)."""
    from zcp_core.report import capital, fmt_count, fmt_num, metric_name

    if sc is None or not sc.n:
        return ""
    text = (f"Mean {metric_name(sc.metric)} of the model: {fmt_num(sc.before)} before the release, over the "
            f"{fmt_count(sc.n)} probed originals; {fmt_num(sc.after)} after it, over {fmt_count(sc.n_after)} "
            "released items (kept originals as probed, each replaced item scored on its spare twin).")
    if sc.left_out:
        text += (f" {fmt_count(sc.left_out)} replaced items are left out of the score after: replaced by another "
                 "twin than their spare (the spare unverified or absent), or with no spare (fewer than 2 twins).")
    if not sc.spare_held_out:
        why = "under the acc rule," if sc.metric == "acc" else "in this run, made before the conformal p,"
        text += (f" {capital(why)} every twin, the spare too, took part in the flags, so the score after is on "
                 "twins selected with the flag and overstates the drop.")
    return text
