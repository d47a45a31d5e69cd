"""Write ``notebooks/06_time_travel.ipynb`` (no outputs): the Time-Travel probe on 5 GSM8K items with SmolLM2.

    .venv/bin/python benchmarks/guided_make_notebook.py && .venv/bin/pytest --nbmake notebooks/06_time_travel.ipynb
"""

from __future__ import annotations

from pathlib import Path

from nbgen import write_notebook

OUT = Path(__file__).resolve().parent.parent / "notebooks" / "06_time_travel.ipynb"

CELLS = [
    ("md", "# 06 · Time Travel: guided-instruction contamination probe\n\n"
           "Golchin & Surdeanu (arXiv 2308.08493): show a model the first piece of a benchmark instance with a "
           "**guided** instruction (naming the dataset and split) and with a **general** one (not naming them). "
           "If guided completions overlap the true second piece significantly more, the partition is suspect; an "
           "LLM judge also counts exact / near-exact reproductions (contaminated with >= 1 exact or >= 2 "
           "near-exact).\n\nHere: the embedded SmolLM2-135M on 5 GSM8K test items with short completions, so it "
           "runs in about a minute. With 5 items the bootstrap p is not reliable; this shows the workflow, not a "
           "verdict on SmolLM2."),
    ("code", "import os\nimport tempfile\nfrom pathlib import Path\n\nos.environ.setdefault(\"HF_HUB_OFFLINE\", \"1\")\n\n"
             "from zcp_core import viz_guided as vg\nfrom zcp_core.appkit import REPO\n"
             "from zcp_core.backends.spec import load_backend\nfrom zcp_core.guided import build_prompt\n"
             "from zcp_core.guided_run import GuidedConfig, instances_frame, run_partition, split_dataset, "
             "write_guided_run\nfrom zcp_core.runs import RunSpec, load_run"),
    ("md", "## Split\nEach question is cut between 40% and 70% of its sentences, at a fraction drawn per instance "
           "from a generator seeded by (seed, id)."),
    ("code", "split = split_dataset(str(REPO / \"data/gsm8k/test.jsonl\"), limit=5, seed=0)\n"
             "instances_frame(split)"),
    ("code", "print(build_prompt(split.instances[0], \"guided\", \"GSM8K\", \"test\"))\nprint(\"-\" * 40)\n"
             "print(build_prompt(split.instances[0], \"general\", \"GSM8K\", \"test\"))"),
    ("md", "## Probe\nOne batched generate call for all guided and general prompts, then one batched judge call "
           "(the same model judges here; a stronger judge can be passed as `judge=`)."),
    ("code", "backend = load_backend(\"smollm2\", device=\"cpu\")\n"
             "cfg = GuidedConfig(\"GSM8K\", \"test\", max_new_tokens=24, judge_max_new_tokens=4)\n"
             "result = run_partition(backend, split, cfg, judge_mode=\"model\")\n"
             "{k: v for k, v in result.summary.items() if k != \"details\"}"),
    ("code", "out = write_guided_run(str(Path(tempfile.mkdtemp()) / \"guided-nb\"), "
             "RunSpec(\"guided\", {\"limit\": 5}, model=\"smollm2\"), [result])\n"
             "run = load_run(out)\n"
             "run.records[[\"id\", \"second_piece\", \"guided\", \"general\", \"rouge_l_guided\", "
             "\"rouge_l_general\", \"judge_raw\", \"match_label\"]]"),
    ("md", "## Read the run\nThe figures read the stored run; nothing is recomputed."),
    ("code", "vg.score_distribution_figure(run.records)"),
    ("code", "vg.paired_scatter_figure(run.records)"),
    ("code", "run.table(\"partitions\")"),
]


def main() -> None:
    """Build and write the notebook."""
    write_notebook(OUT, CELLS)


if __name__ == "__main__":
    main()
