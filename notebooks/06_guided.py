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
# # 06 · Time Travel: guided-instruction contamination probe
#
# Golchin & Surdeanu (arXiv 2308.08493): show a model the first piece of a benchmark instance with a **guided** instruction (naming the dataset and split) and with a **general** one (not naming them). If guided completions overlap the true second piece significantly more, the partition is suspect; an LLM judge also counts exact / near-exact reproductions (contaminated with >= 1 exact or >= 2 near-exact).
#
# Here: the embedded SmolLM2-135M on 5 GSM8K test items with short completions, so it runs in about a minute. Five items are below the 10 a verdict needs, so this part shows the workflow; the last section reads the bundled 12-item example run for the verdict and its numbers.

# %%
import os
import tempfile
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")  # progress bars belong in a terminal; a notebook shows results
warnings.filterwarnings("ignore", message="IProgress not found")  # tqdm's note about Jupyter widgets

from IPython.display import Markdown

from zcp_core.app.labels import readable
from zcp_core.backends import load_backend
from zcp_core.data import install_root
from zcp_core.guided import GuidedConfig, build_prompt, instances_frame, run_partition, split_dataset, write_guided_run
from zcp_core.guided import viz as vg
from zcp_core.guided.report import report
from zcp_core.probe.viz import show_figure
from zcp_core.runs import RunSpec, load_run

# %% [markdown]
# ## Split
# Each question is cut between 40% and 70% of its sentences, at a fraction drawn per instance from a generator seeded by (seed, id).

# %%
ROOT = install_root()  # the checkout, or the copy an installed wheel ships
split = split_dataset(str(ROOT / "data/gsm8k/test.jsonl"), limit=5, seed=0)
readable(instances_frame(split))  # column names in words

# %%
print(build_prompt(split.instances[0], "guided", "GSM8K", "test"))
print("-" * 40)
print(build_prompt(split.instances[0], "general", "GSM8K", "test"))

# %% [markdown]
# ## Probe
# One batched generate call for all guided and general prompts, then one batched judge call. Here the audited model judges itself (`judge_mode="self"`, an explicit opt-in for this demo); the default is the model-free `rule` judge, and a stronger judge can be passed as `judge=` with `judge_mode="model"`.

# %%
backend = load_backend("smollm2", device="cpu")
cfg = GuidedConfig("GSM8K", "test", max_new_tokens=24, judge_max_new_tokens=4)
result = run_partition(backend, split, cfg, judge_mode="self")

# %%
out = write_guided_run(str(Path(tempfile.mkdtemp()) / "guided-nb"), RunSpec("guided", {"limit": 5}, model="smollm2"), [result])
run = load_run(out)
display(Markdown(report(run).to_markdown()))  # the run's report, as the CLI and the app show it
readable(run.records[["id", "second_piece", "guided", "general", "rouge_l_guided", "rouge_l_general", "match_label"]])

# %% [markdown]
# ## Read the run
# The figures read the stored run; nothing is recomputed.

# %%
show_figure(vg.score_distribution_figure(run.records))

# %%
show_figure(vg.paired_scatter_figure(run.records))

# %% [markdown]
# ## The verdict on a run large enough for one
# The bundled example (`data/examples/guided-smollm2-gsm8k12`, made by `scripts/make_examples.py`): the same model on the first 12 GSM8K test items. Its report is the one the CLI prints and the app shows: the same numbers, formatted the same way (C < 0.75 reads as no evidence).

# %%
example = load_run(ROOT / "data" / "examples" / "guided-smollm2-gsm8k12")
display(Markdown(report(example).to_markdown()))
