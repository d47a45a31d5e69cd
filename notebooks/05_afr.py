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
# # 05 · Answer-first rate (AFR): screening chains for answer leakage
#
# A generator shown the gold answer tends to write chains that state it early. The **answer-first rate** (AFR) is
# the share of chains whose think block first states the answer in its first 20%. **dAFR = AFR(leaked) −
# AFR(blind)** is read off unlabeled generations.
#
# Every headline uses **the paper's denominator**: the chains whose think block states the answer ("covered"),
# each n stated. Chains without a think block are never in it: they are their own group, measured on the text
# before their final answer and reported apart (Gemma-2 and the embedded model write no think block, so they have
# no paper's AFR at all), as in `AFR blind(nohint)=26.6% (n=918) leaked(hint)=47.4% (n=924) signature dAFR=+20.8`. The
# all-chains version follows, labelled as such. Matched arms keep **one chain per problem** (the first kept one),
# and each screen states which **keep-correct filter** ran (`mathverify` by default; `paper` is the seed's
# exact → math-verify → digit-stripping cascade) and how many chains had their final answer **forced** by
# `box_prefill`.
#
# This notebook (1) profiles two bundled public corpora on the same MATH-500 problems, the long-chain Sky-T1-27B
# against its short-chain base Gemma-2-27B-it; (2) screens the bundled embedded-model arms; (3) runs the whole
# pipeline (generate → keep-correct filter → matched arms → screen) on three arithmetic problems with the embedded
# SmolLM2-135M. All results are written as runs and read back.

# %%
import os
import shutil
import tempfile
import warnings
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")  # progress bars belong in a terminal; a notebook shows results
warnings.filterwarnings("ignore", message="IProgress not found")  # tqdm's note about Jupyter widgets

from IPython.display import Markdown, display

from zcp_core.afr import (
    FILTER_DESCRIPTIONS,
    ChainConfig,
    afr_ci_figure,
    compare,
    dry_run,
    filter_dir,
    filter_warnings,
    generate_chains,
    load_chains,
    load_problems,
    position_histogram,
    report,
    resolve_arms,
    save_chains,
    screen,
    write_profile_run,
    write_screen_run,
)
from zcp_core.app.labels import readable
from zcp_core.backends import load_backend
from zcp_core.data import install_root
from zcp_core.probe.viz import show_figure
from zcp_core.runs import load_run

ROOT = install_root()  # the checkout, or the copy an installed wheel ships
SAMPLE = ROOT / "data" / "afr_sample"
WORK = Path(tempfile.mkdtemp(prefix="zcp-afr-"))
N_BOOT = 500

# %% [markdown]
# ## 1 · Profile: long-chain Sky-T1-27B against its base (bundled 15-problem samples)

# %%
base = load_chains(SAMPLE / "skythought_math500_traces" / "gemma-2-27b-it_math500.jsonl", "skythought")
long = load_chains(SAMPLE / "skythought_math500_traces" / "sky-t1-math-correct-5k-27b_math500.jsonl", "skythought")
cmp = compare(base, long, ("gemma-2-27b-it", "sky-t1-27b"), n_boot=N_BOOT)  # (comparison, audited)
profile_run = load_run(write_profile_run(WORK / "profile", cmp, ("gemma", "sky-t1"), {"threshold": 0.2}))
display(Markdown(report(profile_run).to_markdown()))

# %%
show_figure(position_histogram(profile_run.records, 0.2))

# %% [markdown]
# The full 500-problem profiles with CIs are in `benchmarks/results/afr_profiles.md`.

# %% [markdown]
# ## 2 · Screen the bundled embedded-model arms (arithmetic, matched after the keep-correct filter)

# %%
bundled = screen(resolve_arms(SAMPLE / "arith_smollm2"), n_boot=N_BOOT)
display(Markdown(report(load_run(write_screen_run(WORK / "bundled", bundled, {"threshold": 0.2}))).to_markdown()))

# %% [markdown]
# ## 3 · The whole pipeline on three problems with the embedded model
#
# SmolLM2-135M rarely boxes an answer itself, so `finish="box_prefill"` forces one. The filter then grades the
# forced answers, and the screen says so: when forced finishes are more than half of an arm, the result is not
# about the model's own writing.

# %%
backend = load_backend("smollm2")
problems = load_problems(ROOT / "data" / "arith" / "problems.jsonl", limit=3)
cfg = ChainConfig(n=1, max_new_tokens=48, temperature=0.0, finish="box_prefill")
print(dry_run(backend, problems, ["nohint", "hint"], cfg, k=1))

# %%
chains = generate_chains(backend, problems, ["nohint", "hint"], cfg)
out = save_chains(WORK / "arith", chains, cfg, model="smollm2", model_revision=backend.revision)
kept = filter_dir(out, ["nohint", "hint"])  # defaults: filter "mathverify", keep "first" (one chain per problem)
print(f"filter: {kept.keep_filter} ({FILTER_DESCRIPTIONS[kept.keep_filter]}); keep: {kept.keep}")
print(f"matched problems: {len(kept.matched_uids)}")
print("\n".join(filter_warnings(kept)))
readable(kept.verdicts[["condition", "uid", "pred", "gold", "correct", "stage", "forced_finish", "reason"]])

# %% [markdown]
# Three problems keep no matched problem, so this demo's own chains cannot be screened. The screen below runs the
# same filter on the bundled generation of the same model on 40 arithmetic problems (`data/afr_sample/arith_smollm2`):
# it keeps 5 matched problems, all with forced finishes, too few for a verdict, and its report says so. For a
# reading with CIs, see the Sky-T1/Gemma profile in section 1.

# %%
arith = WORK / "arith40"
arith.mkdir()
for c in ("nohint", "hint"):
    shutil.copy(SAMPLE / "arith_smollm2" / f"{c}.jsonl", arith / f"{c}.jsonl")
kept40 = filter_dir(arith, ["nohint", "hint"])
result = screen(resolve_arms(arith), n_boot=N_BOOT)
screen_run = load_run(write_screen_run(WORK / "arith40-screen", result, {"threshold": 0.2}))
display(Markdown(report(screen_run).to_markdown()))

# %%
show_figure(afr_ci_figure(screen_run.summary, "ci_all_chains"))
