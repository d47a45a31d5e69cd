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
# zcp audits LLM benchmarks and training data for contamination. This tour touches each part on the embedded SmolLM2-135M model, with tiny parameters so it runs in about a minute on a CPU: the data layer, a backend call, the Zero-CoT probe, an artifact scan, the answer-first-rate screen, and the run folders the app reads. Each method has its own notebook (01–06) for the full story.

# %%
import os
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from zcp_core.data import install_root
from zcp_core.runs import load_run, runs_table

RUNS = Path(tempfile.mkdtemp(prefix="zcp-tour-"))

# %% [markdown]
# ## Data
# Loaders detect the format from the content and give every item a stable id taken from the data; bad rows are reported with file, line and field.

# %%
from zcp_core.data import load_dataset

ROOT = install_root()  # the checkout, or the copy an installed wheel ships
ds = load_dataset(ROOT / "data" / "gsm8k" / "test.jsonl")
print(ds.format, len(ds), ds.items[0].id)
ds.items[0]

# %% [markdown]
# ## A backend call
# One protocol for transformers, vLLM and OpenAI-compatible servers: batch in, batch out, order kept, responses cached. Here the assistant turn is *prefilled* with the Zero-CoT forcing suffix.

# %%
from zcp_core.backends import GenerateRequest, SamplingParams, ScoreRequest, chat, load_backend
from zcp_core.probe import DEFAULT_SUFFIX

backend = load_backend("smollm2")
q = ds.items[0].question
(c,) = backend.generate([GenerateRequest(messages=chat(q), prefill=DEFAULT_SUFFIX, params=SamplingParams(max_new_tokens=12))])
(lp,) = backend.score([ScoreRequest(continuation=ds.items[0].answer, messages=chat(q), prefill=DEFAULT_SUFFIX + "{")])
print(repr(c.text))
print(list(zip(lp.tokens, [round(v, 3) for v in lp.logprobs])))

# %% [markdown]
# ## The Zero-CoT probe
# Five GSM8K items against their deterministic numeric twins. Five pairs are below the product's minimum sample (10 pairs), so the probe reports *too few pairs for a verdict* instead of a Contamination Confidence — notebook 01 and the lab (02) show more.

# %%
from zcp_core.probe import ProbeConfig, run_probe
from zcp_core.reference import perturb_gsm8k

original = list(ds.items[:5])
twins = perturb_gsm8k(original, seed=0)
probe = run_probe(backend, original, list(twins.items), ProbeConfig(n_resamples=2000), out=RUNS / "probe", model_spec="smollm2")
probe.summary["headline"], {m: v and v.get("confidence") for m, v in probe.summary["metrics"].items()}

# %% [markdown]
# ## Artifact scan of a generated-text benchmark
# The bundled DetectRL sample; human texts flagged are false positives.

# %%
from zcp_core.artifacts import RunInputs, load_library, write_scan_run
from zcp_core.data import load_texts

sample = sorted((ROOT / "data" / "detectrl_sample").glob("*.json"))
folder, scan_summary = write_scan_run(RUNS / "scan", load_texts(sample), load_library(), RunInputs(tuple(map(str, sample))))
load_run(folder).table("by_llm_type")

# %% [markdown]
# ## Answer-first rate
# The screen on the bundled chains the embedded model wrote for simple arithmetic problems, without (blind) and with (leaked) the answer shown.

# %%
from zcp_core.afr import resolve_arms, screen, screen_report

print(screen_report(screen(resolve_arms(ROOT / "data" / "afr_sample" / "arith_smollm2"), n_boot=500)))

# %% [markdown]
# ## Runs
# Every command writes a run folder (manifest + parquet tables). The app's run browser lists them; `zcp app` opens it.

# %%
runs_table(RUNS)[["name", "kind", "model", "headline_label", "headline_value"]]
