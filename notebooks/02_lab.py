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
# A detector's scores can only be judged against ground truth. The lab draws a seeded split of GSM8K into **C** (trained on) and **U** (held out), fine-tunes the embedded SmolLM2-135M with LoRA on C in a *natural* answer format (`The answer is N.`, never the probe's forcing suffix), and then runs the Zero-CoT probe on C and U against their numeric reference twins. A good detector gives high Contamination Confidence on C and about 0.5 on U.
#
# This notebook uses `PROFILE = "smoke"` (2 training steps on 4 items) so it runs in about a minute: it shows the workflow, not a memorised model. Set `PROFILE = "default"` (|C| = |U| = 40, 6 epochs) for the real experiment, or run `zcp lab build && zcp lab evaluate`.

# %%
import os
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from zcp_core.data import install_root
from zcp_core.lab import EvalOptions, build_lab, evaluate_lab, format_table, profile_config
from zcp_core.lab import viz as viz_lab
from zcp_core.runs import load_run

PROFILE = "smoke"
MODE = "direct"
RUNS = Path(tempfile.mkdtemp())

# %% [markdown]
# ## Build (cached)
# The build is keyed by everything that changes the weights; a second call with the same config returns at once. Its run holds the split (C and U ids), the training texts and the loss curve.

# %%
ROOT = install_root()  # the checkout, or the copy an installed wheel ships
cfg = profile_config(PROFILE, MODE, dataset=str(ROOT / "data/gsm8k/test.jsonl"))
build = build_lab(cfg, runs_out=RUNS / "lab-build")
print(build.spec, "alias lab:" + build.alias, "cached" if build.cached else "built", f"in {build.seconds:.1f} s")
build_run = load_run(RUNS / "lab-build")
build_run.records

# %%
build_run.table("training_texts")[["original_id", "target"]]

# %%
viz_lab.loss_figure(build_run.table("loss"), build_run.table("epochs"))

# %% [markdown]
# ## Audit
# One batched probe over C and U and their reference twins (Acc, P_first, P_all at zero CoT), then a Contamination Confidence per metric for C and for U, and the AUROC of the per-item original-minus-reference gap (C positive, U negative).

# %%
ev = evaluate_lab(build.name, EvalOptions(n_resamples=2000), out=RUNS / "lab-eval")
print(format_table(ev.summary))

# %% [markdown]
# ## C on C against U
# The figures read the stored evaluate run; nothing is recomputed.

# %%
run = load_run(RUNS / "lab-eval")
viz_lab.confidence_figure(run.table("confidence"))

# %% [markdown]
# ## Flips
# `orig_only`: right on the original, wrong on its numeric twin, the memorisation signature.

# %%
viz_lab.flip_counts(run.table("flips"))

# %%
viz_lab.flips_view(run.table("flips"))

# %% [markdown]
# ## AUROC curve

# %%
viz_lab.roc_figure(run.table("roc"), dict(run.summary["detection"]))

# %%
viz_lab.gap_figure(run.table("gaps"), "p_all")
