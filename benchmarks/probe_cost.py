"""Cost of the Zero-CoT probe at r = 0 against the reference approach (full CoT first, then truncation).

The published reference code always generates a full chain of thought before
cutting it; ZCP at r = 0 only generates the short forced answer. Both arms
run on the same model and items with the response cache disabled, in one
process, and the script prints generated tokens per item, wall time, CPU
time and the ratios, plus how the zero-CoT answers ended (box closed or
token budget spent).

    .venv/bin/python benchmarks/probe_cost.py --n 12 --cot-tokens 256 --out benchmarks/results/probe_cost.md
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


def _measure(backend, items, config) -> dict:  # type: ignore[no-untyped-def]
    from zcp_core.probe import probe_items

    w0, c0 = time.perf_counter(), time.process_time()
    recs = probe_items(backend, items, config)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    cot = int(recs.drop_duplicates("id")["cot_tokens"].fillna(0).sum())
    answer = int(recs["answer_tokens"].sum())
    stops = recs["answer_stop"].value_counts().to_dict()
    return {"wall_s": wall, "cpu_s": cpu, "tokens_per_item": (cot + answer) / len(items), "cot_tokens": cot,
            "answer_tokens": answer, "answer_per_item": answer / len(items), "acc": float(recs["acc"].mean()),
            "stops": ", ".join(f"{k} {stops.get(k, 0)}" for k in ("closed", "word", "budget", "eos"))}


def main(argv: list[str] | None = None) -> int:
    """Run both arms and print (and optionally write) the comparison."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--n", type=int, default=12, help="GSM8K test items")
    ap.add_argument("--cot-tokens", type=int, default=256, help="full-CoT budget of the reference approach")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1 avoids stalls on a shared box)")
    ap.add_argument("--out", default=None, help="markdown file for the results")
    ap.add_argument("--answer-format", choices=["free", "number", "auto"], default="free",
                    help="the probe's zero-CoT answer format, in both arms")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    torch.set_num_threads(args.threads)
    from zcp_core.backends import load_backend
    from zcp_core.data import load_items
    from zcp_core.probe import ProbeConfig

    items = load_items("data/gsm8k/test.jsonl")[: args.n]
    backend = load_backend(args.model, cache=None, device="cpu")
    fmt = args.answer_format
    # First-call overheads (kernel set-up, allocator growth) must not count for either arm: both arms run
    # once, untimed, on two items outside the measured ones.
    spare = load_items("data/gsm8k/test.jsonl")[args.n : args.n + 2]
    _measure(backend, spare, ProbeConfig(metrics=("acc",), answer_format=fmt))
    _measure(backend, spare, ProbeConfig(metrics=("acc",), full_cot=True, cot_tokens=args.cot_tokens, answer_format=fmt))
    zcp = _measure(backend, items, ProbeConfig(metrics=("acc",), answer_format=fmt))
    base = _measure(backend, items, ProbeConfig(metrics=("acc",), full_cot=True, cot_tokens=args.cot_tokens,
                                                answer_format=fmt))
    lines = [
        header(f"probe_cost: ZCP at r=0 vs full CoT ({args.cot_tokens} tokens) then truncation at r=0",
               f"model {args.model}; answer format {fmt}; originals only (no twins)"),
        "",
        f"Model {args.model}, {args.n} GSM8K test items, greedy, response cache disabled, torch threads "
        f"{args.threads}, CPU.", "",
        "| approach | generated tokens / item | CoT tokens | answer tokens (/ item) | answers ended | wall s | "
        "CPU s | zero-CoT acc |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in (("ZCP r=0 (no CoT)", zcp), (f"reference: CoT {args.cot_tokens} then r=0", base)):
        lines.append(f"| {name} | {r['tokens_per_item']:.1f} | {r['cot_tokens']} | {r['answer_tokens']} "
                     f"({r['answer_per_item']:.1f}) | {r['stops']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | "
                     f"{r['acc']:.2f} |")
    lines += ["", f"Ratio (reference / ZCP): generated tokens {base['tokens_per_item'] / zcp['tokens_per_item']:.1f}x, "
              f"wall time {base['wall_s'] / zcp['wall_s']:.1f}x, CPU time {base['cpu_s'] / zcp['cpu_s']:.1f}x.",
              f"Load average {os.getloadavg()[0]:.1f} at the end (the machine is shared; CPU time, this process "
              "only, is the steadier comparison). Both arms ran in the same process, ZCP first, each after an "
              "untimed pass on two other items. Answers stop "
              "at the `}` that closes the prefilled `\\boxed{`, where a numeric gold's box opens with a word (`word`), "
              "or when the answer budget is spent. Both arms use "
              f"answer format `{fmt}`" + (" (the box may hold only a number)." if fmt != "free" else "."), ""]
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text)
        print(f"written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
