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
# # 00 · A tour of zcp
#
# zcp audits LLM benchmarks and training data for contamination. This tour touches each part in about a minute on a CPU: the data layer, a call to the embedded SmolLM2-135M model, the Zero-CoT probe (on the bundled example runs of a contaminated and a clean model), an artifact scan, the answer-first-rate screen, and the run folders the app reads. Each method has its own notebook (01–06) for the full story.

# %%
import os
import tempfile
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TQDM_DISABLE", "1")  # progress bars belong in a terminal; a notebook shows results
warnings.filterwarnings("ignore", message="IProgress not found")  # tqdm's note about Jupyter widgets

from zcp_core.data import install_root
from zcp_core.app.labels import readable
from zcp_core.runs import load_run, runs_table

RUNS = Path(tempfile.mkdtemp(prefix="zcp-tour-"))

# %% [markdown]
# ## Data
# Loaders detect the format from the content and give every item a stable id taken from the data; bad rows are reported with file, line and field.

# %%
from zcp_core.data import load_dataset

ROOT = install_root()  # the checkout, or the copy an installed wheel ships
ds = load_dataset(ROOT / "data" / "gsm8k" / "test.jsonl")
first = ds.items[0]
print(f"{ds.format} format, {len(ds)} items, {len(ds.bad_rows)} bad rows")
print(f"id: {first.id}\nquestion: {first.question}\ngold answer: {first.answer}")

# %% [markdown]
# ## A backend call
# One protocol for transformers, vLLM and OpenAI-compatible servers: batch in, batch out, order kept, responses cached. Here the assistant turn is *prefilled* with the Zero-CoT forcing suffix, so the model must answer at once, inside `\boxed{`; the number constraint keeps the box to number characters. Then the gold answer's tokens are scored in the same position: P_all is the geometric mean of their probabilities.

# %%
import math

from zcp_core.backends import GenerateRequest, SamplingParams, ScoreRequest, chat, load_backend
from zcp_core.probe import DEFAULT_SUFFIX
from zcp_core.probe.browse import show_completion

backend = load_backend("smollm2")
q = first.question
(c,) = backend.generate([GenerateRequest(messages=chat(q), prefill=DEFAULT_SUFFIX + "{",
                                         params=SamplingParams(max_new_tokens=12, constraint="number"))])
(lp,) = backend.score([ScoreRequest(continuation=first.answer, messages=chat(q), prefill=DEFAULT_SUFFIX + "{")])
print(f"zero-CoT answer: {show_completion(c.text, c.stop_reason)}   (gold {first.answer})")
p_all = math.exp(sum(lp.logprobs) / len(lp.logprobs))
print(f"gold answer tokens {lp.tokens}: P_all = {p_all:.3f}")

# %% [markdown]
# ## The Zero-CoT probe
# The probe asks each original item and its numeric twin (same question, new numbers) at zero-CoT. A model that memorised the originals answers them, not their twins; the paired test turns that gap into a **Contamination Confidence** C (0.5: no evidence, near 1: memorised). A verdict needs at least 10 pairs and a CPU probe of that size takes minutes, so the tour reads the two bundled example runs: the same 80 GSM8K items and twins, probed on `lab:direct` (a LoRA that memorised 40 of them) and on the untouched model.

# %%
from zcp_core.probe.report import report

EXAMPLES = ROOT / "data" / "examples"
for name in ("probe-lab-direct", "probe-smollm2-lab-items"):
    rep = report(EXAMPLES / name)  # the numbers as the CLI, the app and notebook 01 show them
    print(f"{rep.fact('Model')}: {rep.headline.text}; {rep.fact('Pairs')} pairs, "
          f"{rep.fact('Flagged items')} items flagged")

# %% [markdown]
# ## Artifact scan of a generated-text benchmark
# The bundled DetectRL sample; human texts flagged are false positives.

# %%
from zcp_core.artifacts import RunInputs, load_library, write_scan_run
from zcp_core.artifacts.report import breakdown_frame
from zcp_core.data import load_texts

sample = sorted((ROOT / "data" / "detectrl_sample").glob("*.json"))
folder, scan_summary = write_scan_run(RUNS / "scan", load_texts(sample), load_library(), RunInputs(tuple(map(str, sample))))
fp = scan_summary["human_false_positives"]
print(f"{scan_summary['flagged']} of {scan_summary['texts']} texts flagged; human texts flagged: {fp['flagged']} of {fp['texts']}")
breakdown_frame(load_run(folder).table("by_llm_type"), "llm_type")  # per generator, as the app shows it

# %% [markdown]
# ## Answer-first rate
# A model that saw its answers during training tends to state the answer early in its chain of thought. The bundled 15 MATH-500 chains of the long-chain Sky-T1-27B against those of its base Gemma-2-27B: the share of chains that state their final answer in the first 20% of the reasoning, and the difference (audited minus comparison) with a bootstrap CI.

# %%
import tempfile

from zcp_core.afr import compare, load_chains, report, write_profile_run

traces = ROOT / "data" / "afr_sample" / "skythought_math500_traces"
cmp = compare(load_chains(traces / "gemma-2-27b-it_math500.jsonl", "skythought"),
              load_chains(traces / "sky-t1-math-correct-5k-27b_math500.jsonl", "skythought"),
              ("gemma-2-27b-it", "sky-t1-27b"), n_boot=500)
afr_run = load_run(write_profile_run(Path(tempfile.mkdtemp()) / "afr", cmp, ("gemma", "sky-t1"), {"threshold": 0.2}))
print(report(afr_run).headline.text)  # names its denominator: Gemma-2 has no think block, so all chains

# %% [markdown]
# ## Runs
# Every command writes a run folder (manifest + parquet tables). The app's run browser lists them; `zcp app` opens it.

# %%
readable(runs_table(RUNS)[["name", "kind", "headline_label", "headline_value"]])  # column names in words
