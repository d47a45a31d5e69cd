"""Closed loop with the transformer detector (frozen SmolLM2 + logistic head) at small scale on CPU.

Runs scan -> clean -> train original/cleaned -> attack -> SHAP text masker on the bundled
Claude-instant sample and writes ``benchmarks/results/detector_transformer.md``.

Usage:
    .venv/bin/python benchmarks/detector_transformer.py [--max-length 64] [--explain-n 2] [--max-evals 40]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from _provenance import header  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ZCP_CACHE", str(ROOT / ".zcp_cache"))


def main() -> int:
    """Run the transformer closed loop and write the results file."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=[str(ROOT / "data" / "detectrl_sample" /
                                                      "multi_llms_Claude-instant_test.json")])
    ap.add_argument("--max-length", type=int, default=64)
    ap.add_argument("--explain-n", type=int, default=2)
    ap.add_argument("--max-evals", type=int, default=40)
    ap.add_argument("--out", default=str(ROOT / "runs" / "detector-transformer"))
    ap.add_argument("--results", default=str(ROOT / "benchmarks" / "results" / "detector_transformer.md"))
    args = ap.parse_args()

    from zcp_core.artifacts import load_library
    from zcp_core.detector import (
        CompareConfig,
        TransformerConfig,
        attack_verdict,
        compare,
        format_attack_table,
        load_texts_for_detector,
        write_compare_run,
    )

    t0 = time.perf_counter()
    cfg = CompareConfig(kind="transformer", detector_config=TransformerConfig(max_length=args.max_length),
                        explain_n=args.explain_n, explain_attacked=1, max_evals=args.max_evals)
    res = compare(load_texts_for_detector(args.data), load_library(), cfg)
    wall = time.perf_counter() - t0
    folder = write_compare_run(args.out, res, {"dataset": args.data, "command": " ".join(sys.argv),
                                               "model": "smollm2"})
    attack = format_attack_table(res.attack)
    verdict = attack_verdict(res.attack)
    shares = res.artifact_shares()
    print(attack, shares, verdict, sep="\n")
    lines = [
        header("Transformer detector closed loop (frozen SmolLM2-135M + logistic head, CPU, small scale)",
               "model SmolLM2-135M-Instruct (embedded), frozen, logistic head"),
        "Data: "
        f"{', '.join(Path(p).name for p in args.data)} (bundled sample); run `{folder}`.",
        f"{len(res.split.train)} train / {len(res.split.test)} test texts, truncated to {args.max_length} tokens. "
        f"Wall time on the shared 2-core box: {wall:.0f} s.", "",
        "```", attack, "```", "",
        f"Paper-style verdict: {verdict['paper_result_holds']} ({verdict['criterion']}).", "",
        "Artifact share of |SHAP| (shap text masker, Partition explainer, "
        f"max_evals={args.max_evals}; only {args.explain_n} texts, so indicative only):", "",
        *[f"- {k}: {'n/a (no explained text has an artifact)' if v is None else f'{v:.3f}'}" for k, v in shares.items()],
        "", "Metrics:", "```", res.metrics.drop(columns=["notes"]).round(4).to_string(index=False), "```", "",
        f"Scale caveat: {len(res.split.train)} training texts, {args.max_length}-token truncation, frozen backbone "
        "with mean pooling, so the 15-token "
        "prefix is a large share of each attacked text's pooled features. This run shows that the transformer path "
        "works end to end. It does not test the paper's fine-tuned RoBERTa result, and with "
        f"{int(res.attack['n'].iloc[0])} attacked texts the counts are noisy.",
    ]
    Path(args.results).write_text("\n".join(lines) + "\n")
    print(f"wrote {args.results}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
