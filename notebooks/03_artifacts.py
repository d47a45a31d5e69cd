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
# # 03 · Artifact scan of generated-text benchmarks (DetectRL)
#
# Counts the artifacts a detector can learn as shortcuts (openers like *"Here is a 6 sentence abstract"*, refusals, prompt echoes, chat-role tags) with the bundled RE2 pattern library, in the shape of Table 2 of *Contamination in Generated Text Detection Benchmarks* (2025). Human flag rates are false positives. Runs the bundled sample (`data/detectrl_sample`), and the full `Multi_LLM` split when `../shared/data/detectrl` exists.

# %%
import os
import tempfile
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")  # progress bars belong in a terminal; a notebook shows results

from IPython.display import Markdown

from zcp_core.artifacts import CleanConfig, RunInputs, load_library, write_clean_run, write_scan_run
from zcp_core.artifacts import viz as va
from zcp_core.artifacts.report import breakdown_frame, report
from zcp_core.data import install_root, load_texts
from zcp_core.probe.viz import show_figure
from zcp_core.runs import load_run

RUNS = Path(tempfile.mkdtemp(prefix="zcp-nb03-"))
ROOT = install_root()  # the checkout, or the copy an installed wheel ships
SAMPLE = sorted((ROOT / "data" / "detectrl_sample").glob("*.json"))
MULTI_LLM = sorted((ROOT.parent / "shared" / "data" / "detectrl" / "Multi_LLM").glob("*.json"))
library = load_library()
print(f"pattern library {library.version}: {len(library.patterns)} patterns")

# %% [markdown]
# ## Scan the bundled sample (600 records, 4 generators)

# %%
folder, summary = write_scan_run(RUNS / "scan-sample", load_texts(SAMPLE), library,
                                 RunInputs(tuple(map(str, SAMPLE)), command="notebook 03"))
run = load_run(folder)
Markdown(report(run).to_markdown())  # the same report as `zcp scan` prints and the app shows

# %%
show_figure(va.family_counts_figure(run.table("by_llm_type")))

# %%
breakdown_frame(run.table("by_label"), "label")

# %% [markdown]
# ## Clean the sample: edits, drops and the audit card
#
# The cleaned copy is a release a maintainer could publish: `cleaned/` holds the data, a dataset card
# (`README.md` with licence, counts and canary) and the upstream licence. DetectRL ships **no licence**, so the
# release is refused unless it is allowed explicitly, and then its card says so.
#
# Cleaning runs the patterns, then a learned edge detector for the headlines and titles they leave glued to a
# text's start (each cut an edit with the model's score; unsure texts go to review). A text that cutting cannot
# repair (an unfilled placeholder, an assistant's self-description, a refusal inside the story) is held back with
# its reason; the report counts both.

# %%
clean_folder, clean_summary = write_clean_run(RUNS / "clean-sample", load_texts(SAMPLE), library,
                                             RunInputs(tuple(map(str, SAMPLE)), allow_unlicensed=True),
                                             config=CleanConfig(edges="auto"))  # as `zcp clean` cleans
Markdown(report(load_run(clean_folder)).to_markdown())

# %%
print("release files:", ", ".join(sorted(p.name for p in (clean_folder / "cleaned").iterdir())))
Markdown((clean_folder / "cleaned" / "README.md").read_text().split("---", 2)[2])  # the card, rendered

# %% [markdown]
# ## Full Multi_LLM split (report split; patterns were developed on Multi_Domain and Direct_Prompt)
#
# Skipped when `../shared/data/detectrl` is absent.

# %%
if MULTI_LLM:
    ml_folder, ml_summary = write_scan_run(RUNS / "scan-multi-llm", load_texts(MULTI_LLM), library,
                                           RunInputs(tuple(map(str, MULTI_LLM))))
    display(Markdown(report(load_run(ml_folder)).to_markdown()))
