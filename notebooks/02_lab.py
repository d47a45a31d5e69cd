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
# # 02 · Contamination lab: a model with known contamination
#
# A detector's scores can only be judged against ground truth. The lab draws a seeded split of GSM8K into **C** (trained on) and **U** (held out), fine-tunes the embedded SmolLM2-135M with LoRA on C in a *natural* answer format (`The answer is N.`, never the probe's forcing suffix), and then runs the Zero-CoT probe on C and U against their numeric reference twins. A good detector gives high Contamination Confidence on C and about 0.5 on U, and the per-item gap separates C from U.
#
# This notebook reads the **default build** (`|C| = |U| = 40`, 6 epochs, mode `direct`), not a smoke build. Training it takes several minutes on a CPU, too long for CI, so the evaluate runs are **bundled examples** in `data/examples/`, made by `scripts/make_examples.py`:
#
# * `lab-eval-direct`: the lab model `lab:direct` probed on its own C and U items;
# * `lab-eval-direct-smollm2`: the untouched base model probed on the same items, the clean control.
#
# To make them yourself: `zcp lab build --mode direct && zcp lab evaluate --name direct` (and `--model smollm2` for the control). The notebook only reads the stored runs with `zcp_core.runs.load_run`; nothing is recomputed.

# %%
import pandas as pd
from IPython.display import Image, display

from zcp_core.data import install_root
from IPython.display import Markdown

from zcp_core.app.labels import readable
from zcp_core.lab import profile_config
from zcp_core.lab.report import TOOK_COLUMNS, report, took_rows
from zcp_core.lab import viz as viz_lab
from zcp_core.probe.viz import static_png
from zcp_core.report import capital, fmt_num, metric_name
from zcp_core.runs import load_run

def words(df: pd.DataFrame) -> pd.DataFrame:
    """A stored table as the lab page shows it: column names and flip kinds in words, numbers rounded."""
    return readable(df, words=viz_lab.COLUMN_WORDS)


EXAMPLES = install_root() / "data" / "examples"  # the checkout's, or the copy an installed wheel ships
run = load_run(EXAMPLES / "lab-eval-direct")
clean = load_run(EXAMPLES / "lab-eval-direct-smollm2")
for r in (run, clean):
    s = r.summary
    print(f"{r.path.name}: model {s['model']}, build {s['build']} ({s['mode']}, profile {s['profile']}), "
          f"|C| = {s['n_c']}, |U| = {s['n_u']}; reproduce with `{r.manifest['example']['command']}`")

# %% [markdown]
# ## The default build
# What the `default` profile trains (computed from the profile, not a build): the split size, epochs, LoRA and the training format.

# %%
cfg = profile_config("default", "direct", dataset=str(install_root() / "data/gsm8k/test.jsonl"))
print(f"|C| = |U| = {cfg.n_contaminated}, {cfg.epochs} epochs, lr {cfg.lr}, LoRA r = {cfg.lora.r}, "
      f"training format {cfg.train_format!r}")

# %% [markdown]
# ## C on C against C on U
# One batched probe over C and U and their twins (Acc, P_first, P_all at zero-CoT), then a Contamination Confidence per metric for each split. The targets: C on C at least 0.95 for the logit metrics, C on U at most 0.6.

# %%
display(Markdown(report(run, load_run(EXAMPLES / "lab-matrix")).to_markdown()))

# %%
conf = run.table("confidence")
fig = viz_lab.confidence_figure(conf)
display(fig, Image(static_png(fig)))

# %% [markdown]
# ## Per-item detection: ROC and AUROC
# Each item's original-minus-twin gap is a score; C items are the positives, U items the negatives. The AUROC says how well that score alone tells a trained-on item from a held-out one (0.5 is chance).

# %%
pd.DataFrame({"Metric": [capital(metric_name(m)) for m in run.summary["detection"]],
              "AUROC": [fmt_num(d["auroc"]) for d in run.summary["detection"].values()]})

# %%
fig = viz_lab.roc_figure(run.table("roc"), dict(run.summary["detection"]))
display(fig, Image(static_png(fig, height=4.5)))

# %%
fig = viz_lab.gap_figure(run.table("gaps"), "p_all")
display(fig, Image(static_png(fig)))

# %% [markdown]
# ## Flips
# Original only (`orig_only`): right on the original, wrong on its numeric twin, the memorisation signature. It should be common on C and rare on U. This build was trained on "The answer is N.", and at zero-CoT it writes the word `answer` in most boxes: a box with no number (`no_number`) is not graded, so flips are few here and the logit metrics above carry the evidence.

# %%
words(viz_lab.flip_counts(run.table("flips")))

# %%
words(viz_lab.flips_view(run.table("flips")).head(10))

# %% [markdown]
# ## The clean base model on the same items
# The control: the untouched SmolLM2 probed on the same C and U items. It never saw C, so its confidences should stay near 0.5 on both splits and its AUROC near chance. If it scored high on C too, the signal would come from the items, not from contamination.

# %%
models = {"lab:direct": run, "smollm2 (clean)": clean}
viz_lab.compare_models({k: r.table("confidence") for k, r in models.items()},
                       {k: dict(r.summary["detection"]) for k, r in models.items()}).round(3)

# %%
fig = viz_lab.confidence_figure(clean.table("confidence"))
display(fig, Image(static_png(fig)))

# %% [markdown]
# ## Which detector catches which leak: the lab matrix
# One build per kind of leak (`direct` answers, `evasive` paraphrases, `verbatim` raw text, `solution` worked solutions, `paper` the ZCP paper's recipe at lab scale) and the untouched model (`none`), each read by every detector on the same C and U items. The bundled `lab-matrix` example is the seed-0 replicate of the replicate run below, the same as `zcp lab matrix --build-missing` (about 107 minutes cold on 2 cores, under 5 from the cache).
#
# First the **manipulation check**: did each build take? `took_gain` is the full-CoT accuracy gain of the lab model over its base on C, minus the same on U, with its 95% CI. Only a build that took can show a detector blind; a build that did not take says nothing about the detectors.

# %%
matrix = load_run(EXAMPLES / "lab-matrix")
took = matrix.table("took")
pd.DataFrame(list(took_rows(took[took["kind"] != "none"], 40)), columns=list(TOOK_COLUMNS)).drop(
    columns=["Exposures per C item"])

# %% [markdown]
# Each cell is the per-item AUROC of C against U; a detector *catches* a kind when the exact permutation p of its AUROC (every labelling of the items as C or U), Holm-adjusted across every cell the reading uses, is below 0.05. `cot_acc` keeps the chain: full-CoT accuracy on the original against its twin, the classic perturbation check the ZCP paper argues against; it reuses the manipulation check's generations, so it stays outside that family.

# %%
fig = viz_lab.matrix_figure(matrix.table("matrix"))
display(fig, Image(viz_lab.matrix_png(matrix.table("matrix"))))  # cell values printed, white at chance (0.5)

# %%
display(Markdown(report(matrix).to_markdown()))

# %% [markdown]
# The untouched model must read about 0.5 everywhere: a detector that flags it is a false alarm, not a finding.

# %%
evidence = report(matrix).table()  # the rows of the report above: the same strings as the lab page and the CLI
evidence[evidence["Contamination kind"].str.startswith("none")][["Detector", "AUROC, C against U", "Family-wise 95% CI"]]

# %% [markdown]
# ## One build is one realisation: replicate builds
# Two builds of one recipe can read very differently, so the matrix above is one draw per kind, not the kind's property. The bundled `lab-matrix-replicates` example builds `direct`, `verbatim` and `solution` three times, each replicate with its own split and training seed (`zcp lab matrix --replicates 3 --single-build evasive,paper --build-missing`; the matrix above is its replicate 0), and reads the untouched model on each replicate's items; `evasive` and `paper` keep their single build, marked as such. Per kind and detector: the median AUROC, its range, how many replicates caught the leak on their own, and a pooled exact test that permutes the C/U labels within each replicate, Holm-adjusted across every cell but `cot_acc`.

# %%
replicates = load_run(EXAMPLES / "lab-matrix-replicates")
display(Markdown(report(replicates).to_markdown()))

# %%
fig = viz_lab.replicates_figure(replicates.table("replicates"))
display(fig, Image(viz_lab.heatmap_png(fig, "Median AUROC over replicate builds, C against U (0.5 = chance; * caught)")))

# %% [markdown]
# ## How much contamination each detector needs: the dose
# The bundled `lab-dose` and `lab-dose-paper` examples build `solution` and `paper` at 2, 6 and 12 exposures per C item (epochs for `solution`, paraphrase versions for `paper`) and read the detectors and the manipulation check at each dose (`zcp lab dose --kinds KIND --build-missing`). A detector that stays at 0.5 while the build's gain rises with the dose misses that kind of leak at any dose.

# %%
doses = [load_run(EXAMPLES / name) for name in ("lab-dose", "lab-dose-paper")]
for d in doses:
    display(Markdown(report(d).to_markdown()))

# %%
for dose in doses:  # one figure a kind: the static image draws a single panel, without its title
    fig = viz_lab.dose_figure(dose.table("dose"), dose.table("took"))
    print(fig.layout.annotations[0].text)  # the panel's title: the kind and at which doses it took
    display(fig, Image(static_png(fig, height=4.5)))
