"""Zero-CoT probe: confidence per metric, the flips table, distributions and curves of a probe run."""

import streamlit as st

from zcp_core.app import pick_run, readable
from zcp_core.probe import enforce_min_pairs, enforce_min_pairs_table
from zcp_core.probe import viz as vp
from zcp_core.probe.browse import browse_table, item_view, render_answer, segments_markdown, untested_items
from zcp_core.stats import MIN_PAIRS, TOO_FEW_PAIRS


def words(df):
    """Column labels in words and numbers rounded (stored tables keep their short machine names)."""
    return readable(df, words=vp.COLUMN_WORDS)


st.title("Zero-CoT probe")
st.write("Does the model still answer correctly with its chain of thought cut away, on the original items "
         "but not on their reference twins? That gap is the contamination signal.")

run = pick_run("probe")
if run is None:
    st.stop()

summary = run.summary
# Runs written before the minimum-sample rule may hold a confidence for too few pairs: withhold it here too.
head = enforce_min_pairs(summary)["headline"] if "metrics" in summary else summary.get("headline", {})
c1, c2, c3, c4 = st.columns(4)
c1.metric(head.get("label", "Contamination Confidence"),
          "n/a" if head.get("value") is None else f"{head['value']:.3f}", help=head.get("reason"))
c2.metric("Pairs", summary.get("n_pairs", "n/a"), help="originals without a twin are left out of the tests")
c3.metric("Flagged items", summary.get("flagged", "n/a"))
c4.metric("Model", str(run.manifest.get("model") or ""))
pf = summary.get("parse_failures") or {}
if pf:
    st.caption("Parse failures (counted as incorrect): " + ", ".join(f"{a}: {n}" for a, n in pf.items())
               + f" · originals without a twin: {summary.get('unpaired_original', 0)}")
if head.get("value") is None and head.get("reason"):
    st.warning(f"No Contamination Confidence: {head['reason']}.")

st.subheader("Contamination Confidence per metric")
tests = enforce_min_pairs_table(run.table("tests")) if run.has_table("tests") else None
if tests is not None and len(tests):
    st.plotly_chart(vp.confidence_figure(tests), width="stretch")
    st.caption("Bars near 1 mean the original beats its twin far more than chance allows; 0.5 is no evidence.")
    arms = sorted(set(tests["arm"]))
    arm = st.selectbox("Suspect arm", arms, index=arms.index("original") if "original" in arms else 0)
    table = vp.confidence_table(tests, arm)
    st.dataframe(words(vp.format_evidence(vp.measured_rows(table))), width="stretch", hide_index=True)
    notes = vp.unmeasured_notes(table)
    if notes:
        st.caption("Not measured in this run: " + "; ".join(notes) + ".")
    st.caption("Evidence per metric: paired test (exact McNemar for Acc/Con; sign-flip permutation or bootstrap "
               f"for P_first/P_all: {summary.get('continuous_test', 'bootstrap')}), effect with 95% CI, discordant "
               f"pairs (b: original only correct). A metric with fewer than {MIN_PAIRS} pairs gets no confidence.")

if summary.get("did"):
    import pandas as pd

    did, ctl = summary["did"], summary.get("control") or {}
    st.subheader(f"Relative to the control ({ctl.get('model')})")
    st.dataframe(words(vp.format_evidence(pd.DataFrame(
        [{"metric": m, "n": v.get("n"), "audited_gap": v.get("audited_gap"), "control_gap": v.get("control_gap"),
          "effect": v.get("effect"), "ci_low": (v.get("effect_ci") or [None, None])[0],
          "ci_high": (v.get("effect_ci") or [None, None])[1], "p": v.get("p"), "confidence": v.get("confidence"),
          "reading": v.get("reading")} for m, v in did.get("metrics", {}).items()]))), hide_index=True)
    st.caption("Each item's gap (original - twin) minus the control's gap on the same item, tested with sign flips "
               "(P metrics as logs), relative to the control. A control that is itself contaminated hides "
               "contamination." + (f" Warning: {ctl['strength']['warning']}." if (ctl.get("strength") or {}).get(
                   "warning") else ""))

items = run.table("items")
records = run.records
st.subheader("Items")
st.caption("Flagged items first (zero-CoT correct on the original, wrong on its twin), then by P_all gap. "
           "Click a row to open the item.")
table = browse_table(items)
picked = st.dataframe(table, width="stretch", hide_index=True, on_select="rerun", selection_mode="single-row",
                      key="item_browser")
rows = picked.selection.rows if picked is not None else []
if rows:
    view = item_view(records, items, str(table.iloc[rows[0]]["Item"]))
    with st.container(border=True):
        st.markdown(f"**{view.pair_id}** · {'flagged' if view.flagged else 'not flagged'} · flip `{view.flip}` · "
                    f"P_all gap {view.p_all_gap:+.4f}")
        for col, arm in zip(st.columns(len(view.arms)), view.arms):
            col.markdown(f"**{arm.arm}** `{arm.id}`")
            col.markdown(segments_markdown(arm.segments))
            col.markdown(f"Gold: {render_answer(arm.gold)} · Prediction: {render_answer(arm.pred)} "
                         f"({'correct' if arm.correct else 'wrong'})")
            col.caption(f"P_first {arm.p_first:.4f} · P_all {arm.p_all:.4f}")
            col.code(arm.completion or "(empty completion)", language=None, wrap_lines=True)
        st.caption(f"Evidence: {view.evidence}. Numbers that differ between original and twin are highlighted; "
                   "the code block is the model's raw zero-CoT completion after the forced `\\boxed{`.")
untested = untested_items(run.path, items)
if len(untested):
    with st.expander(f"Untested items ({len(untested)}): no reference twin, so no paired evidence"):
        st.dataframe(untested, width="stretch", hide_index=True)
with st.expander("Zero-CoT flips table"):
    f1, f2, f3 = st.columns([3, 1, 2])
    kinds = f1.multiselect("Flip kind", list(vp.FLIP_KINDS), default=list(vp.FLIP_KINDS))
    flagged_only = f2.checkbox("Flagged only", value=False)
    sort_by = f3.selectbox("Sort by", ["p_all_gap", "p_all_gap_rank", "pair_id"],
                           format_func=lambda c: vp.COLUMN_WORDS.get(c, c))
    st.dataframe(words(vp.flips_table(items, kinds, flagged_only, sort_by)), width="stretch", hide_index=True)
    st.caption("orig_only: correct at zero-CoT on the original but not on its twin (flagged as memorised-looking); "
               "a large positive P_all gap supports the flag.")
if items["p_all_original"].notna().any():
    st.plotly_chart(vp.gap_figure(items), width="stretch")
    st.caption("Points above the diagonal: the model puts more probability on the gold answer of the original.")

st.subheader("Per-metric distributions, original against reference")
st.caption("Paired items only: originals without a reference twin have no paired evidence and are left out.")
for m in vp.measured_metrics(vp.paired_records(records)):
    st.plotly_chart(vp.distribution_figure(records, m), width="stretch")
    st.caption(f"{vp.METRIC_LABELS[m]} at zero-CoT; a contaminated model sits higher on the original arm.")

if run.has_table("truncation"):
    trunc = run.table("truncation")
    if trunc["ratio"].nunique() > 1:
        st.subheader("Truncation curve")
        metric = st.selectbox("Metric", sorted(set(trunc["metric"])), key="trunc_metric")
        st.plotly_chart(vp.truncation_figure(trunc, metric), width="stretch")
        st.caption("Memorisation shows as an original curve that is already high at r = 0 while the twin's "
                   "needs the CoT.")

if run.has_table("sample_size"):
    ss = run.table("sample_size")
    st.subheader("Sample-size curve")
    points = vp.curve_points(ss)
    if points >= vp.MIN_CURVE_POINTS:
        st.plotly_chart(vp.sample_size_figure(ss), width="stretch")
        st.caption("How C grows with the number of pairs; bars span the 10th-90th percentile of subsamples.")
    elif not len(ss):
        st.info(f"No curve: {summary.get('n_pairs', 0)} pairs; {TOO_FEW_PAIRS}.")
    else:
        st.info(f"No curve: {points} sample size{'s' if points != 1 else ''} measured "
                f"({', '.join(str(int(n)) for n in sorted(set(ss['n'])))} pairs); a curve needs at least "
                f"{vp.MIN_CURVE_POINTS}. A run with more pairs fills it (N in 50, 100, 200, 500, 1000).")
