"""Write notebooks/00_tour.ipynb (no outputs). Rerun after editing the cells below."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from nbgen import write_notebook  # noqa: E402


def md(src: str) -> tuple[str, str]:
    return ("md", src)


def code(src: str) -> tuple[str, str]:
    return ("code", src)


cells = [
    md("# 00 · A tour of zcp\n\n"
       "zcp audits LLM benchmarks and training data for contamination. This tour touches each part on the "
       "embedded SmolLM2-135M model, with tiny parameters so it runs in about a minute on a CPU: the data "
       "layer, a backend call, the Zero-CoT probe, an artifact scan, the answer-first-rate screen, and the run "
       "folders the app reads. Each method has its own notebook (01–06) for the full story."),
    code("import os\nimport tempfile\nfrom pathlib import Path\n\nos.environ.setdefault(\"HF_HUB_OFFLINE\", \"1\")\n\n"
         "from zcp_core.appkit import REPO\nfrom zcp_core.runs import load_run, runs_table\n\n"
         "RUNS = Path(tempfile.mkdtemp(prefix=\"zcp-tour-\"))"),
    md("## Data\nLoaders detect the format from the content and give every item a stable id taken from the data; "
       "bad rows are reported with file, line and field."),
    code("from zcp_core.data import load_dataset\n\nds = load_dataset(REPO / \"data\" / \"gsm8k\" / \"test.jsonl\")\n"
         "print(ds.format, len(ds), ds.items[0].id)\nds.items[0]"),
    md("## A backend call\nOne protocol for transformers, vLLM and OpenAI-compatible servers: batch in, batch out, "
       "order kept, responses cached. Here the assistant turn is *prefilled* with the Zero-CoT forcing suffix."),
    code("from zcp_core.backends.base import GenerateRequest, SamplingParams, ScoreRequest, chat\n"
         "from zcp_core.backends.spec import load_backend\nfrom zcp_core.probe import DEFAULT_SUFFIX\n\n"
         "backend = load_backend(\"smollm2\")\nq = ds.items[0].question\n"
         "(c,) = backend.generate([GenerateRequest(messages=chat(q), prefill=DEFAULT_SUFFIX, "
         "params=SamplingParams(max_new_tokens=12))])\n"
         "(lp,) = backend.score([ScoreRequest(continuation=ds.items[0].answer, messages=chat(q), "
         "prefill=DEFAULT_SUFFIX + \"{\")])\n"
         "print(repr(c.text))\nprint(list(zip(lp.tokens, [round(v, 3) for v in lp.logprobs])))"),
    md("## The Zero-CoT probe\nFive GSM8K items against their deterministic numeric twins. With so few pairs the "
       "Contamination Confidence stays near 0.5 (no evidence) — notebook 01 and the lab (02) show more."),
    code("from zcp_core.probe import ProbeConfig, run_probe\nfrom zcp_core.reference import perturb_gsm8k\n\n"
         "original = list(ds.items[:5])\ntwins = perturb_gsm8k(original, seed=0)\n"
         "probe = run_probe(backend, original, list(twins.items), ProbeConfig(n_resamples=2000), "
         "out=RUNS / \"probe\", model_spec=\"smollm2\")\n"
         "probe.summary[\"headline\"], {m: v and v.get(\"confidence\") for m, v in probe.summary[\"metrics\"].items()}"),
    md("## Artifact scan of a generated-text benchmark\nThe bundled DetectRL sample; human texts flagged are "
       "false positives."),
    code("from zcp_core.artifacts import load_library\nfrom zcp_core.artifacts.release import RunInputs, write_scan_run\n"
         "from zcp_core.data import load_texts\n\nsample = sorted((REPO / \"data\" / \"detectrl_sample\").glob(\"*.json\"))\n"
         "folder, scan_summary = write_scan_run(RUNS / \"scan\", load_texts(sample), load_library(), "
         "RunInputs(tuple(map(str, sample))))\nload_run(folder).table(\"by_llm_type\")"),
    md("## Answer-first rate\nThe screen on the bundled chains the embedded model wrote for simple arithmetic "
       "problems, without (blind) and with (leaked) the answer shown."),
    code("from zcp_core.afr_screen import resolve_arms, screen, screen_report\n\n"
         "print(screen_report(screen(resolve_arms(REPO / \"data\" / \"afr_sample\" / \"arith_smollm2\"), n_boot=500)))"),
    md("## Runs\nEvery command writes a run folder (manifest + parquet tables). The app's run browser lists them; "
       "`zcp app` opens it."),
    code("runs_table(RUNS)[[\"name\", \"kind\", \"model\", \"headline_label\", \"headline_value\"]]"),
]
write_notebook(ROOT / "notebooks" / "00_tour.ipynb", cells)
