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
# # 04 · Detector shortcuts: SHAP explains them, a prefix attack exploits them
#
# A generated-text detector trained on artifact-laden data (DetectRL) learns the artifacts — openers like
# *"Here is a 6 sentence abstract for the article:"* — instead of the writing. This notebook runs the closed loop
# of *Contamination in Generated Text Detection Benchmarks* (2025) on the bundled DetectRL sample:
#
# 1. deduplicate and split the texts (no text on both sides);
# 2. scan and clean the artifacts (the artifact scanner and cleaner, notebook 03);
# 3. train a TF-IDF + logistic-regression detector on the **original** and on the **cleaned** training texts;
# 4. explain both with exact linear SHAP and measure the attribution mass on artifact spans;
# 5. attack: prepend *"Here is a 7 sentence abstract for the provided article title: "* to human test texts.
#
# The sample is small (600 texts), so figures are noisy; `benchmarks/detector_shortcut.py` runs the paper's
# setting on the full Claude-instant file. Everything below reads one `detector` run.

# %%
import os
import tempfile
import warnings
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")  # progress bars belong in a terminal; a notebook shows results
warnings.filterwarnings("ignore", message="IProgress not found")  # tqdm's note about Jupyter widgets

from IPython.display import HTML, Markdown

from zcp_core.artifacts import load_library
from zcp_core.data import install_root
from zcp_core.detector import (
      CompareConfig,
      TfidfConfig,
      compare,
      load_texts_for_detector,
      split_texts,
      write_compare_run,
)
from zcp_core.detector import report as dr
from zcp_core.detector import viz as vd
from zcp_core.probe.viz import show_figure
from zcp_core.report import fmt_count
from zcp_core.runs import load_run

ROOT = install_root()  # the checkout, or the copy an installed wheel ships
SAMPLE = sorted((ROOT / "data" / "detectrl_sample").glob("*.json"))
RUNS = Path(tempfile.mkdtemp(prefix="zcp-nb04-"))
records = load_texts_for_detector([str(p) for p in SAMPLE])
library = load_library()

# %% [markdown]
# ## 1 · Deduplicated, seeded split
# Identical texts are collapsed first (each drop is logged), then each label is split 70/30 by a seeded hash of the text.

# %%
split = split_texts(records, test_size=0.3, seed=0)
print(f"{fmt_count(split.dedup.n_records)} input texts, {fmt_count(split.dedup.n_unique)} distinct texts: "
      f"{fmt_count(len(split.train))} training / {fmt_count(len(split.test))} test")

# %% [markdown]
# ## 2–5 · The closed loop
# `compare` scans and cleans the unique texts, trains both detectors, evaluates them, runs the prefix attack and explains a sample of test texts. The result is written as a run; the rest of the notebook only reads it.

# %%
config = CompareConfig(explain_n=60, explain_attacked=5,
                       detector_config=TfidfConfig(max_word_features=20_000, max_char_features=20_000))
result = compare(records, library, config)
run = load_run(write_compare_run(RUNS / "detector-sample", result, {"dataset": [str(p) for p in SAMPLE]}))
Markdown(dr.report(run).to_markdown())  # the same report as `zcp detector compare` prints and the app shows

# %% [markdown]
# TPR at 0.01% FPR (the paper's operating point) needs at least 10,000 human texts, so it is not estimable here ("–"); the notes under the table say why.

# %% [markdown]
# ## The attack table (paper Table 4 shape)

# %%
display(dr.frame(dr.ATTACK_COLUMNS, dr.attack_rows(run.table("attack"))))
show_figure(vd.attack_figure(run.table("attack")))

# %% [markdown]
# ## Where the attribution goes
# Share of |SHAP| on tokens inside high-precision artifact spans (texts that have one), for each detector — and on the attacked human texts.

# %%
show_figure(vd.artifact_share_figure(run.summary["artifact_share"]))

# %%
top = run.table("top_tokens")
show_figure(vd.top_tokens_figure(top[top["detector"] == "original"]), height=5)

# %%
show_figure(vd.top_tokens_figure(top[top["detector"] == "cleaned"]), height=5)

# %% [markdown]
# ## One attacked human text, token by token
# Red pushes toward LLM, blue toward human; artifact tokens are underlined. Compare the two detectors on the same text.

# %%
texts = run.table("text_attributions")
tokens = run.table("token_attributions")
attacked = texts[texts["detector"] == "original:attacked"].iloc[0]
HTML(vd.token_html(tokens[(tokens["detector"] == "original:attacked") & (tokens["id"] == attacked["id"])],
                   attacked["text"]))

# %%
same = texts[(texts["detector"] == "cleaned:attacked") & (texts["id"] == attacked["id"])].iloc[0]
HTML(vd.token_html(tokens[(tokens["detector"] == "cleaned:attacked") & (tokens["id"] == same["id"])], same["text"]))

# %%
show_figure(vd.waterfall_figure(tokens[(tokens["detector"] == "original:attacked") & (tokens["id"] == attacked["id"])],
                                float(attacked["base_value"])))

# %% [markdown]
# ## Going further
# * `zcp detector compare --data ../shared/data/detectrl/Multi_LLM/multi_llms_Claude-instant_test.json --out runs/det`
#   runs the paper's setting; add `--cross-domain ../shared/data/detectrl/Multi_Domain/*_test.json` for Table 5.
# * `--kind transformer` uses a frozen local checkpoint (the embedded SmolLM2 offline) with a trained head, and
#   shap's text masker for attributions.
# * `zcp_core.detector.detector_scorer(run)` gives the cleaner its under-cleaning scorer.
