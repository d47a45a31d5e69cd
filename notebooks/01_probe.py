# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 01 · The Zero-CoT probe: a contaminated model against a clean one
#
# A model that memorised a benchmark still answers it when its chain of thought is cut away; on an isomorphic twin with new numbers that advantage disappears. This notebook shows that signal on two models probed on **the same 80 GSM8K test items against the same numeric twins**:
#
# * `lab:direct`: the embedded SmolLM2-135M fine-tuned with LoRA on 40 of those items (the lab's split **C**), so it has memorised them; the other 40 (**U**) were held out;
# * `smollm2`: the untouched embedded model, which has seen none of them.
#
# Both runs are **bundled examples** in `data/examples/`, made by `scripts/make_examples.py` (each manifest's `example` key holds the command that reproduces it; a fresh build and both probes take about 10 minutes on a CPU). The notebook only reads the stored runs with `zcp_core.runs.load_run`; no model output is recomputed here. The app's probe page opens the same runs.

# %%
import json

import pandas as pd
from IPython.display import Image, display

from zcp_core.data import install_root, load_items
from zcp_core.probe import viz as viz_probe
from zcp_core.probe.browse import browse_table, browse_text, item_view
from zcp_core.probe.report import flags_text, item_terms_text
from zcp_core.report import fmt_num, metric_name
from zcp_core.reference import perturb_gsm8k
from zcp_core.runs import load_run

EXAMPLES = install_root() / "data" / "examples"  # the checkout's, or the copy an installed wheel ships
RUNS = {"lab:direct (trained on C)": EXAMPLES / "probe-lab-direct", "smollm2 (clean)": EXAMPLES / "probe-smollm2-lab-items"}
from zcp_core.probe.report import report, sample_size_table

runs = {name: load_run(path) for name, path in RUNS.items()}
# Every number printed below comes from the run's report, as in `zcp confidence`, the app and the release card.
reports = {name: report(run) for name, run in runs.items()}
for name, run in runs.items():
    print(f"{name}: {run.path.name}, model {run.manifest['model']}, reproduce with `{reports[name].command}`")

# %% [markdown]
# ## Originals and their numeric twins
# A twin keeps the question's wording and changes its numbers, recomputing the answer from GSM8K's `<<expr=result>>` annotations. The example runs store their twins; here one is made live for the first GSM8K test item, to show the idea (no model involved, it takes milliseconds).

# %%
first = load_items(install_root() / "data" / "gsm8k" / "test.jsonl")[:1]
twin = perturb_gsm8k(first, seed=0).items[0]
print("original:", first[0].question, "->", first[0].answer)
print("twin:    ", twin.question, "->", twin.answer)

# %% [markdown]
# ## The verdict of each run
# Both runs probed the same 80 pairs at zero-CoT (the assistant turn is prefilled with the forcing suffix, so no chain of thought is generated). The headline is the Contamination Confidence C of P_all, the geometric-mean probability of the gold answer's tokens.

# %%
for name, rep in reports.items():
    print(f"{name}: {rep.headline.text}; pairs {rep.fact('Pairs')}, flagged items {rep.fact('Flagged items')}, "
          f"twins per item {rep.fact('Twins per item')}; how items are flagged: {rep.fact('How items are flagged')}")

# %% [markdown]
# ## How C is computed, and the evidence behind it
# The same words the app shows beside the number: the test, the Bayes-factor bound, the prior, and what 0.5 and 1 mean; then, for each metric of the contaminated run, the effect with its 95% CI and the discordant pairs.

# %%
from IPython.display import Markdown

from zcp_core.app.labels import CONFIDENCE_EXPLAINED

lab_run = runs["lab:direct (trained on C)"]
display(Markdown(CONFIDENCE_EXPLAINED.format(prior=lab_run.manifest["config"]["prior"])))
display(Markdown(reports["lab:direct (trained on C)"].to_markdown()))

# %% [markdown]
# ## C per metric, side by side
# C near 0.5 means no evidence; near 1, the original beats its twin far more than chance allows. The clean model stays at 0.5 on every metric it has; the contaminated one is near 1 on P_all. Neither has Acc: at zero-CoT the contaminated model writes the word `answer` in most boxes and the clean one mostly never closes its box, and such answers are not graded (the report says how many). (Both runs pool C and U items, so half of the contaminated model's pairs are held-out items: notebook 02 separates them.)

# %%
table = viz_probe.compare_confidence({name: run.table("tests") for name, run in runs.items()})
table = table.dropna(subset=["confidence"])  # Con needs a full CoT, which these runs did not generate
# The numbers as every surface shows them (C above the ceiling reads "≥ 0.999"); the figure reads the run.
pd.DataFrame({name: rep.table().set_index("Metric")["Confidence C"] for name, rep in reports.items()}).fillna(
    "not measured")

# %%
fig = viz_probe.compare_confidence_figure(table)
display(fig, Image(viz_probe.static_png(fig)))

# %% [markdown]
# ## The evidence beside each C
# Difference: original − twin in the metric's units (for accuracy the difference in accuracy, for the probabilities the mean difference), with its two-sided 95% CI and the one-sided 95% lower bound that matches the one-sided test (above 0 exactly when p < 0.05); Cohen's d_z is that difference over its standard deviation. C above 0.999 is shown as "≥ 0.999". The same table is printed by `zcp confidence RUN` (and its numbers by `zcp confidence RUN --json`).

# %%
pd.concat([rep.table().assign(Model=name) for name, rep in reports.items()]).set_index(["Model", "Metric"])

# %% [markdown]
# ## Flagged items
# Each run says how it flags items. With two or more twins per item, every item gets its own one-sided p against its twins, and the flags are Benjamini-Hochberg discoveries at a false-discovery level q: across audits at most about a share q of flags are false on average, and a given list can hold more. With one twin, the paper's rule applies (original right at zero-CoT, twin wrong), which has no such control. The lab split says which originals were trained on, so we can check where the flags land.

# %%
print(item_terms_text())

# %%
split = {json.loads(line)["id"]: json.loads(line)["split"]
         for line in (EXAMPLES / "lab-direct-items.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()}
for name, run in runs.items():
    flagged = run.table("items").query("flagged")
    by_split = flagged["pair_id"].map(split).value_counts().to_dict()
    print(f"{name}: {len(flagged)} flagged ({flags_text(run.summary)}): {by_split.get('C', 0)} trained on (C), "
          f"{by_split.get('U', 0)} held out (U)")

# %%
lab = runs["lab:direct (trained on C)"]
browse_text(lab.table("items"), split).head(10).style.hide(axis="index")

# %% [markdown]
# ### One flagged item, the original beside its twins
# The raw zero-CoT completions are what the model wrote after the forced `\boxed{`.

# %%
first = browse_table(lab.table("items"), split).iloc[0]["Item"]
view = item_view(lab.records, lab.table("items"), str(first))
print(f"{view.pair_id} ({split.get(view.pair_id)}), {view.n_twins} twins: {view.p_text}\n{view.evidence}\n")
for arm in view.arms:
    print(f"[{'twin' if arm.arm == 'reference' else arm.arm} {arm.id}] {arm.question}")
    print(f"  gold {arm.gold} | completion {arm.completion!r} | {'correct' if arm.correct else 'wrong'}"
          f" | {metric_name('p_first')} {fmt_num(arm.p_first)} | {metric_name('p_all')} {fmt_num(arm.p_all)}\n")

# %% [markdown]
# ## Per-pair gaps under each model
# Each point is one pair: its P_all gap (original minus twin) under the clean model (x) against the contaminated one (y). Held-out U items sit near the diagonal and near 0 on both axes; trained-on C items rise above it, because only the lab model memorised them.

# %%
gaps = viz_probe.pair_gaps({"smollm2": runs["smollm2 (clean)"].table("items"), "lab:direct": lab.table("items")}, split)
gaps.groupby("split")[["gap smollm2", "gap lab:direct"]].mean().round(3)

# %%
fig = viz_probe.pair_gap_figure(gaps, "smollm2", "lab:direct")
display(fig, Image(viz_probe.static_png(fig, height=5)))

# %% [markdown]
# ## P_all distribution of the contaminated model, original against twin
# Paired items only (an original without a twin has no paired evidence).

# %%
fig = viz_probe.distribution_figure(lab.records, "p_all")
display(fig, Image(viz_probe.static_png(fig)))

# %% [markdown]
# ## Sample size
# The sample-size curve subsamples N pairs for N in {50, 100, 200, 500, 1000} up to the run's size; with 80 pairs it has only N = 50 and N = 80. A curve needs at least 3 points, so none is drawn here (the app does the same); the table shows what was measured. At N = 80 the one "subsample" is the run itself, so it shows the run's own C (the headline's).

# %%
from zcp_core.report import fmt_c, fmt_count, metric_name

ss = sample_size_table(lab)
print(f"{viz_probe.curve_points(ss)} sample sizes measured; a curve needs {viz_probe.MIN_CURVE_POINTS}")
pd.DataFrame({"Metric": ss["metric"].map(metric_name), "Pairs": ss["n"].map(fmt_count),
              "Subsamples": ss["repeats"].map(fmt_count), "Mean C": ss["confidence_mean"].map(fmt_c),
              "C, 10th percentile": ss["confidence_q10"].map(fmt_c), "C, 90th percentile": ss["confidence_q90"].map(fmt_c)})
