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
# # 01 · The Zero-CoT probe on GSM8K
#
# A model that memorised a benchmark still answers it when its chain of thought is cut away; on an isomorphic twin with new numbers that advantage disappears. This notebook probes the first GSM8K test items and their deterministic numeric twins with the embedded SmolLM2-135M model, then shows the Contamination Confidence per metric, the zero-CoT flips and the per-metric distributions.
#
# All logic lives in `zcp_core`; the run is written to a folder the app can open.

# %%
import os
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from zcp_core.backends import load_backend
from zcp_core.cli.probe import format_summary
from zcp_core.data import install_root, load_items
from zcp_core.probe import ProbeConfig, run_probe
from zcp_core.probe import viz as viz_probe
from zcp_core.reference import perturb_gsm8k

# %% [markdown]
# Parameters: kept small so the notebook runs in a minute or two on a CPU.

# %%
N_ITEMS = 30  # about 60% of GSM8K items get a verified twin: enough pairs (>= 10) for a verdict
CONFIG = ProbeConfig(metrics=("acc", "p_first", "p_all"), ratios=(0.0,), n_resamples=2000)
RUN_DIR = os.path.join(tempfile.mkdtemp(prefix="zcp-nb01-"), "probe-gsm8k")

# %% [markdown]
# ## Data: originals and their numeric reference twins
# Twins are built from GSM8K's `<<expr=result>>` annotations; items that cannot be traced are reported, and originals without a twin are left out of the paired tests (and counted).

# %%
ROOT = install_root()  # the checkout, or the copy an installed wheel ships
original = load_items(ROOT / "data" / "gsm8k" / "test.jsonl")[:N_ITEMS]
reference = perturb_gsm8k(original, seed=0)
print(f"{len(original)} originals, {len(reference.items)} twins, {len(reference.failures)} not traced")
reference.items[0].question

# %% [markdown]
# ## Probe
# Zero-CoT (r = 0): the assistant turn is prefilled with the forcing suffix, so no chain of thought is generated; P_first and P_all come from one batched scoring call per arm.

# %%
backend = load_backend("smollm2")
result = run_probe(backend, original, list(reference.items), CONFIG, out=RUN_DIR, model_spec="smollm2")
print(format_summary(result.summary))

# %% [markdown]
# ## Confidence per metric
# C near 0.5 means no evidence; near 1, the original beats its twin far more than chance allows.

# %%
viz_probe.confidence_figure(result.tables["tests"])

# %%
viz_probe.confidence_table(result.tables["tests"])

# %% [markdown]
# ## Zero-CoT flips
# `orig_only` rows are correct at zero-CoT on the original but not on the twin; sorted by the P_all gap.

# %%
viz_probe.flips_table(result.items)

# %% [markdown]
# ## Per-metric distributions, original against reference

# %%
viz_probe.distribution_figure(result.records, "p_all")

# %%
viz_probe.gap_figure(result.items)

# %% [markdown]
# ## Sample-size curve
# With 10 items only N = number of pairs is available; a larger run fills the curve for N in {50, 100, 200, 500, 1000}.

# %%
viz_probe.sample_size_figure(result.tables["sample_size"])
