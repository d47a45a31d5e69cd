"""Zero-CoT probe: confidence per metric, the flips table, distributions and curves of a probe run."""

import streamlit as st

from zcp_core.app import pick_run, readable
from zcp_core.app.kit import (
    ITEM_TABLE_WIDTHS,
    METRIC_TABLE_WIDTHS,
    column_widths,
    constant_column,
    lab_split_of,
    same_items_runs,
    switch_run_button,
)
from zcp_core.app.labels import CONFIDENCE_EXPLAINED
from zcp_core.probe import enforce_min_pairs_table
from zcp_core.probe import viz as vp
from zcp_core.probe.browse import (
    FLIP_WORDS,
    GAP_WORDS,
    browse_table,
    item_view,
    render_answer,
    segments_markdown,
    show_completion,
    untested_items,
)
from zcp_core.probe.report import ARM_WORDS, flags_text, item_terms_text, report, sample_size_table, twin_ids
from zcp_core.report import capital, fmt_num, metric_name
from zcp_core.stats import MIN_PAIRS


def words(df):
    """Column labels in words and numbers rounded (stored tables keep their short machine names)."""
    return readable(df, words=vp.COLUMN_WORDS)


st.title("Zero-CoT probe")
st.write("Does the model still answer correctly with its chain of thought cut away, on the original items "
         "but not on their reference twins? That gap is the contamination signal.")



def _story_first(r) -> float:
    """The run with the most flagged items opens first (the contaminated example in the demo)."""
    return float(r.summary.get("flagged") or 0) + (0.5 if r.manifest.get("example") else 0.0)


run = pick_run("probe", prefer=_story_first)
if run is None:
    st.stop()

summary = run.summary
items = run.table("items")
split = lab_split_of(run)
# The same items and twins probed on another model (the clean one beside the contaminated one): one click away.
for other in same_items_runs(run):
    switch_run_button(f"Open {other.manifest.get('model')} on the same items ({other.path.name})", other.path,
                      help="the same originals and twins probed on another model")
# Every number of this page's text comes from the run's report: the CLI, notebook 01 and the release card show
# the same strings (the figures read the run).
tests = enforce_min_pairs_table(run.table("tests")) if run.has_table("tests") else None
arms = sorted(set(tests["arm"])) if tests is not None and len(tests) else ["original"]
arm = "original"
if len(arms) > 1:
    arm = st.selectbox("Tested against the twins", arms, index=arms.index("original") if "original" in arms else 0,
                       format_func=lambda a: ARM_WORDS.get(a, a))
rep = report(run, arm)
head = rep.headline
c1, c2, c3, c4 = st.columns(4)
c1.metric(head.label, head.value, help=f"Measured on {head.subject}" if head.subject else head.reason or None,
          delta=head.reading if head.raw is not None else None,
          delta_color="inverse" if (head.raw or 0) >= 0.75 else "off", delta_arrow="off")
if head.subject:
    c1.caption(f"on {head.subject}")
c2.metric("Pairs", rep.fact("Pairs"), help="originals without a twin are left out of the tests")
flag_split = items.loc[items["flagged"].astype(bool), "pair_id"].map(split).value_counts().to_dict() if split else {}
c3.metric("Flagged items", rep.fact("Flagged items"),
          delta=f"{flag_split.get('C', 0)} trained on (C), {flag_split.get('U', 0)} held out (U)" if split else None,
          delta_color="off", delta_arrow="off")
c4.metric("Model", rep.fact("Model"))
st.caption(f"Twins per item {rep.fact('Twins per item')}: distinct twins, a repeated question counted once.")
with st.expander("What is Contamination Confidence?", expanded=bool(run.manifest.get("example"))):
    st.markdown(CONFIDENCE_EXPLAINED.format(prior=run.manifest.get("config", {}).get("prior", 0.5)))
    if rep.sentences:
        st.markdown(rep.sentences[0])
if head.raw is None and head.reason:
    st.warning(f"No Contamination Confidence: {head.reason}.")

st.subheader("Contamination Confidence per metric")
if tests is not None and len(tests):
    st.plotly_chart(vp.confidence_figure(tests), width="stretch")
    st.caption("Bars near 1 mean the original beats its twin far more than chance allows; 0.5 is no evidence.")
metric_table, test_name = constant_column(rep.table(), "Test")
st.dataframe(metric_table, width="stretch", hide_index=True,
             column_config=column_widths(metric_table.columns, METRIC_TABLE_WIDTHS))
if test_name:
    st.caption(f"Test on every metric: {test_name}.")
for sentence in rep.sentences[1:]:
    st.markdown(sentence)
st.caption(" ".join(rep.notes) + f" A metric with fewer than {MIN_PAIRS} pairs gets no confidence.")
st.caption(f"Reproduce: `{rep.command}`" if rep.command else "")

records = run.records
release_ids = twin_ids(run)  # a twin shows its release id (<original id>-ref) everywhere
st.subheader("Items")
st.caption(f"Flagged items first ({flags_text(run.summary)}), then by each item's own p against its twins "
           "(where it has one) and the gap in P(all answer tokens), original minus the mean of its twins. "
           "Not graded: a box that holds no number, opens with a word where the number should be, or never closed. Click a row to open the item."
           + (" Lab split: **C** = trained on (memorised), **U** = held out." if split else ""))
st.caption(item_terms_text())
table = browse_table(items, split)
if st.session_state.get("item_browser_run") != str(run.path):
    st.session_state.pop("item_browser", None)  # a selection made on another run's table: its rows are other items
st.session_state["item_browser_run"] = str(run.path)
picked = st.dataframe(table, width="stretch", hide_index=True, on_select="rerun", selection_mode="single-row",
                      key="item_browser", column_config=column_widths(table.columns, ITEM_TABLE_WIDTHS))
rows = picked.selection.rows if picked is not None else []
# The open item stays open when another model's run of the same items opens (the switch button above); a row
# deselected on the same run closes it.
if rows:
    st.session_state["probe_item"] = (str(table.iloc[rows[0]]["Item"]), str(run.path))
elif st.session_state.get("probe_item", ("", str(run.path)))[1] == str(run.path):
    st.session_state.pop("probe_item", None)
open_item = st.session_state.get("probe_item", ("", ""))[0]
if open_item in set(table["Item"].astype(str)):
    view = item_view(records, items, open_item)
    with st.container(border=True):
        trained = {"C": " · trained on (C)", "U": " · held out (U)"}.get(split.get(view.pair_id, ""), "")
        st.markdown(f"**{view.pair_id}** · {'flagged' if view.flagged else 'not flagged'}{trained} · "
                    f"{FLIP_WORDS.get(view.flip, view.flip)} · {GAP_WORDS} {fmt_num(view.p_all_gap, signed=True)}"
                    f" · {view.n_twins} twin{'s' if view.n_twins != 1 else ''} · {view.p_text}")
        # the original beside its twins, at most four panels a row so eight twins stay readable
        cells = [c for start in range(0, len(view.arms), 4)
                 for c in st.columns(min(4, len(view.arms) - start))]
        for col, arm in zip(cells, view.arms):
            shown_id = release_ids.get(arm.id, arm.id) if arm.arm == "reference" else arm.id
            col.markdown(f"**{'twin' if arm.arm == 'reference' else arm.arm}** `{shown_id}`")
            col.markdown(segments_markdown(arm.segments))
            col.markdown(f"Gold: {render_answer(arm.gold)} · Prediction: {render_answer(arm.pred)} "
                         f"({arm.verdict})")
            col.caption(f"{capital(metric_name('p_first'))} {fmt_num(arm.p_first)} · "
                        f"{metric_name('p_all')} {fmt_num(arm.p_all)}")
            col.code(show_completion(arm.completion, arm.stop), language=None, wrap_lines=True)
        st.caption(f"Evidence: {view.evidence}. Numbers and number words that differ between original and twin are "
                   "highlighted; the code block is the model's zero-CoT answer inside the forced `\\boxed{…}`.")
untested = untested_items(run.path, items)
if len(untested):
    with st.expander(f"Untested items ({len(untested)}): no reference twin, so no paired evidence"):
        st.dataframe(untested, width="stretch", hide_index=True)
with st.expander("Zero-CoT flips table"):
    f1, f2, f3 = st.columns([3, 1, 2])
    kinds = f1.multiselect("Flip kind", list(vp.FLIP_KINDS), default=list(vp.FLIP_KINDS),
                           format_func=lambda k: FLIP_WORDS.get(k, k))
    flagged_only = f2.checkbox("Flagged only", value=False)
    sort_by = f3.selectbox("Sort by", ["p_all_gap", "p_all_gap_rank", "pair_id"],
                           format_func=lambda c: vp.COLUMN_WORDS.get(c, c))
    flips = vp.flips_table(items, kinds, flagged_only, sort_by)
    if "reference_id" in flips:
        flips = flips.assign(reference_id=flips["reference_id"].map(lambda i: release_ids.get(i, i)))
    st.dataframe(words(flips), width="stretch", hide_index=True)
    st.caption("Original right, twin wrong at zero-CoT: flagged as memorised-looking; a large positive gap in "
               "P(all answer tokens), original minus twin, supports the flag.")
if items["p_all_original"].notna().any():
    st.plotly_chart(vp.gap_figure(items), width="stretch")
    st.caption("Points above the diagonal: the model puts more probability on the gold answer of the original.")

st.subheader("Per-metric distributions, original against twin")
st.caption("Paired items only: originals without a reference twin have no paired evidence and are left out.")
tested = {m for m, v in (summary.get("metrics") or {}).items() if v.get("n")}  # the report's measured metrics
for m in [m for m in vp.measured_metrics(vp.paired_records(records)) if m in tested]:
    st.plotly_chart(vp.distribution_figure(records, m), width="stretch")
    st.caption(f"{vp.METRIC_LABELS[m]} at zero-CoT; a contaminated model sits higher on the original arm.")

if run.has_table("truncation"):
    trunc = run.table("truncation")
    if trunc["ratio"].nunique() > 1:
        st.subheader("Truncation curve")
        metric = st.selectbox("Metric", sorted(set(trunc["metric"])), key="trunc_metric", format_func=metric_name)
        st.plotly_chart(vp.truncation_figure(trunc, metric), width="stretch")
        st.caption("Memorisation shows as an original curve that is already high at r = 0 while the twin's "
                   "needs the CoT.")

# Drawn only when there is a curve (at least MIN_CURVE_POINTS sample sizes): an empty section says nothing.
if run.has_table("sample_size") and vp.curve_points(run.table("sample_size")) >= vp.MIN_CURVE_POINTS:
    st.subheader("Sample-size curve")
    st.plotly_chart(vp.sample_size_figure(sample_size_table(run)), width="stretch")
    st.caption("How C grows with the number of pairs; bars span the 10th-90th percentile of subsamples.")
