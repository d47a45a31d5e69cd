"""Why Time-Travel misses verbatim leakage: the guided instruction against a raw continuation, same pieces.

The lab matrix (issue 14) finds that on ``lab:verbatim`` (causal-LM loss on the raw question + solution
text, no chat template) Min-K% and zlib reach AUROC 1.00 while guided ROUGE-L stays near 0.5. This
script tests the explanation that the memorised text is reachable by plain continuation, but not
through the chat-templated guided instruction. It reads the matrix run's ``guided`` table (the same
C/U items, the same first/second pieces and the same guided completions). For each kind it then
generates a raw continuation of each first piece (no template, greedy, the same token budget) and
reports the AUROC of the continuation's ROUGE-L against the second piece (C positive, U negative),
next to the guided AUROC.

    .venv/bin/python benchmarks/guided_raw_continuation.py --matrix RUN --kinds verbatim,none \\
        --out benchmarks/results/guided_raw_continuation.md
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from _provenance import header  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--matrix", required=True, help="a `zcp lab matrix` run with guided detectors")
    ap.add_argument("--kinds", default="verbatim,none")
    ap.add_argument("--max-new-tokens", type=int, default=64)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    from zcp_core.backends import GenerateRequest, SamplingParams, load_backend
    from zcp_core.guided.overlap import rouge_l
    from zcp_core.runs import load_run
    from zcp_core.stats import auroc

    run = load_run(args.matrix)
    guided = run.table("guided")
    split = run.records.drop_duplicates(["kind", "id"]).set_index(["kind", "id"])["split"]
    builds = run.table("builds").set_index("kind")
    lines = [header("Time-Travel on verbatim leakage: guided instruction vs raw continuation",
                    f"lab builds and pieces of the matrix run {Path(args.matrix).name}; model SmolLM2-135M-Instruct"),
             "",
             "Same C/U items and pieces as the matrix run; raw = the first piece as a plain prompt (no chat "
             "template), greedy; AUROC of ROUGE-L against the second piece, C positive.", "",
             "| kind | model | guided ROUGE-L, C / U | raw ROUGE-L, C / U | AUROC guided | AUROC raw |",
             "|---|---|---|---|---|---|"]
    examples: list[str] = []
    for kind in [k.strip() for k in args.kinds.split(",") if k.strip()]:
        g = guided[guided["kind"] == kind].copy()
        g["split"] = [split.get((kind, i)) for i in g["id"]]
        model = str(builds.loc[kind, "model"])
        backend = load_backend(model, cache="default", device="cpu")
        params = SamplingParams(max_new_tokens=args.max_new_tokens)
        outs = backend.generate([GenerateRequest(prompt=p.rstrip() + " ", params=params) for p in g["first_piece"]],
                                progress=True)
        g["raw"] = [o.text for o in outs]
        g["rouge_raw"] = rouge_l(list(g["raw"]), list(g["second_piece"]))
        c, u = g[g["split"] == "C"], g[g["split"] == "U"]
        a_g = auroc(c["rouge_l_guided"].tolist(), u["rouge_l_guided"].tolist())
        a_r = auroc(c["rouge_raw"].tolist(), u["rouge_raw"].tolist())
        lines.append(f"| {kind} | {model} | {c['rouge_l_guided'].mean():.3f} / {u['rouge_l_guided'].mean():.3f} | "
                     f"{c['rouge_raw'].mean():.3f} / {u['rouge_raw'].mean():.3f} | {a_g:.3f} | {a_r:.3f} |")
        for _, x in c.head(3).iterrows():
            examples += [f"**{kind}, {x['id']}** (C). First piece: {x['first_piece']!r}", "",
                         f"- truth: {x['second_piece']!r}", f"- guided ({x['rouge_l_guided']:.2f}): {x['guided'][:220]!r}",
                         f"- general ({x['rouge_l_general']:.2f}): {x['general'][:220]!r}",
                         f"- raw continuation ({x['rouge_raw']:.2f}): {x['raw'][:220]!r}", ""]
    lines += ["", "## Three C items per kind", "", *examples]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
        print(f"written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
