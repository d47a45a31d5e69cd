"""Write ``notebooks/02_contamination_lab.ipynb`` (no outputs): build a lab model, audit it, read the run.

    .venv/bin/python benchmarks/lab_make_notebook.py && .venv/bin/pytest --nbmake notebooks/02_contamination_lab.ipynb
"""

from __future__ import annotations

from pathlib import Path

from nbgen import write_notebook

OUT = Path(__file__).resolve().parent.parent / "notebooks" / "02_contamination_lab.ipynb"

CELLS = [
    ("md", "# 02 · Contamination lab: a model with known contamination\n\n"
           "A detector's scores can only be judged against ground truth. The lab draws a seeded split of GSM8K "
           "into **C** (trained on) and **U** (held out), fine-tunes the embedded SmolLM2-135M with LoRA on C in a "
           "*natural* answer format (`The answer is N.`, never the probe's forcing suffix), and then runs the "
           "Zero-CoT probe on C and U against their numeric reference twins. A good detector gives high "
           "Contamination Confidence on C and about 0.5 on U.\n\n"
           "This notebook uses `PROFILE = \"smoke\"` (2 training steps on 4 items) so it runs in about a minute: "
           "it shows the workflow, not a memorised model. Set `PROFILE = \"default\"` (|C| = |U| = 40, 6 epochs) "
           "for the real experiment, or run `zcp lab build && zcp lab evaluate`."),
    ("code", "import os\nimport tempfile\nfrom pathlib import Path\n\nos.environ.setdefault(\"HF_HUB_OFFLINE\", \"1\")\n\n"
             "from zcp_core import viz_lab\nfrom zcp_core.appkit import REPO\n"
             "from zcp_core.lab import build_lab, profile_config\n"
             "from zcp_core.lab_eval import EvalOptions, evaluate_lab, format_table\n"
             "from zcp_core.runs import load_run\n\n"
             "PROFILE = \"smoke\"\nMODE = \"direct\"\nRUNS = Path(tempfile.mkdtemp())"),
    ("md", "## Build (cached)\nThe build is keyed by everything that changes the weights; a second call with the "
           "same config returns at once. Its run holds the split (C and U ids), the training texts and the loss "
           "curve."),
    ("code", "cfg = profile_config(PROFILE, MODE, dataset=str(REPO / \"data/gsm8k/test.jsonl\"))\n"
             "build = build_lab(cfg, runs_out=RUNS / \"lab-build\")\n"
             "print(build.spec, \"alias lab:\" + build.alias, \"cached\" if build.cached else \"built\", "
             "f\"in {build.seconds:.1f} s\")\n"
             "build_run = load_run(RUNS / \"lab-build\")\nbuild_run.records"),
    ("code", "build_run.table(\"training_texts\")[[\"original_id\", \"target\"]]"),
    ("code", "viz_lab.loss_figure(build_run.table(\"loss\"), build_run.table(\"epochs\"))"),
    ("md", "## Audit\nOne batched probe over C and U and their reference twins (Acc, P_first, P_all at zero CoT), "
           "then a Contamination Confidence per metric for C and for U, and the AUROC of the per-item "
           "original-minus-reference gap (C positive, U negative)."),
    ("code", "ev = evaluate_lab(build.name, EvalOptions(n_resamples=2000), out=RUNS / \"lab-eval\")\n"
             "print(format_table(ev.summary))"),
    ("md", "## C on C against U\nThe figures read the stored evaluate run; nothing is recomputed."),
    ("code", "run = load_run(RUNS / \"lab-eval\")\nviz_lab.confidence_figure(run.table(\"confidence\"))"),
    ("md", "## Flips\n`orig_only`: right on the original, wrong on its numeric twin, the memorisation signature."),
    ("code", "viz_lab.flip_counts(run.table(\"flips\"))"),
    ("code", "viz_lab.flips_view(run.table(\"flips\"))"),
    ("md", "## AUROC curve"),
    ("code", "viz_lab.roc_figure(run.table(\"roc\"), dict(run.summary[\"detection\"]))"),
    ("code", "viz_lab.gap_figure(run.table(\"gaps\"), \"p_all\")"),
]


def main() -> None:
    """Build and write the notebook."""
    write_notebook(OUT, CELLS)


if __name__ == "__main__":
    main()
