"""The Zero-CoT probe against its floor: one batched forward pass over exactly the tokens it scores.

On the same GSM8K pairs, in one process with the same torch threads:

(a) the floor: the prompt + gold-answer tokens the probe scores (chat template,
    forcing suffix, ``{``, gold), length-sorted, left-padded batches, one plain
    forward pass each, vocabulary projection and log-softmax only at the gold
    positions. It is measured before and after (b); the faster of the two is
    the denominator, so load drift cannot flatter the probe.
(b) the probe at r = 0 with acc, p_first and p_all and the response cache off:
    ``run_probe`` in-process, or with ``--cli`` the ``zcp probe`` command itself
    (a subprocess with the same thread count), timed from start to exit.

It checks that (a) scores the same tokens as the probe (P_all from both
agrees), prints the ratio b / a and writes the result and the command.

    .venv/bin/python benchmarks/probe_throughput.py --n 200 --threads 2
    .venv/bin/python benchmarks/probe_throughput.py --n 0 --cli --threads 2 --floor-runs 1
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from _provenance import header  # noqa: E402


def _twin_method() -> str:
    from zcp_core.reference import METHOD_NUMERIC

    return METHOD_NUMERIC
DATA = ROOT / "data" / "gsm8k" / "test.jsonl"


def pairs(n: int, k: int, every_original: bool = False) -> tuple[list, list]:  # type: ignore[type-arg]
    """The first ``n`` GSM8K test items (``n = 0``: all) and their twins, built as `zcp probe` builds them when
    no ``--reference`` is given: ``k`` twins per item and a spare, twin j from seed j - 1. ``run_probe`` scores
    only originals that have a twin; the `zcp probe` command answers every original (``every_original``)."""
    from zcp_core.data import load_items
    from zcp_core.reference import perturb_gsm8k

    items = load_items(DATA)
    items = items[:n] if n > 0 else items
    sets = [perturb_gsm8k(items, seed=j - 1, twin=j) for j in range(1, k + 2)]
    twins = [t for r in sets for t in r.items]
    keep = {t.original_id for t in twins}
    return [it for it in items if every_original or it.id in keep], twins


def scored_sequences(backend, items) -> list[tuple[list[int], int]]:  # type: ignore[no-untyped-def]
    """Token ids of prompt + gold as the probe scores them, and where the gold starts (joint tokenization)."""
    from zcp_core.backends import ScoreRequest, chat
    from zcp_core.probe import DEFAULT_INSTRUCTION, DEFAULT_SUFFIX

    out = []
    for it in items:
        req = ScoreRequest(messages=chat(f"{it.question}\n{DEFAULT_INSTRUCTION}"), prefill=DEFAULT_SUFFIX + "{",
                           continuation=it.answer.strip(), thinking="off")
        context = backend.render(req)
        enc = backend.tokenizer(context + req.continuation, add_special_tokens=False, return_offsets_mapping=True)
        start = next(k for k, (_, e) in enumerate(enc["offset_mapping"]) if e > len(context))
        out.append((list(enc["input_ids"]), start))
    return out


def floor(model, seqs: list[tuple[list[int], int]], batch: int, pad: int) -> tuple[float, float, list[float]]:  # type: ignore[no-untyped-def]
    """Wall and CPU seconds of the floor, and each sequence's mean gold logprob (in input order)."""
    import torch

    order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i][0]))
    means = [math.nan] * len(seqs)
    w0, c0 = time.perf_counter(), time.process_time()
    with torch.inference_mode():
        for s in range(0, len(order), batch):
            part = order[s : s + batch]
            width = max(len(seqs[i][0]) for i in part)
            ids = torch.full((len(part), width), pad, dtype=torch.long)
            mask = torch.zeros((len(part), width), dtype=torch.long)
            for r, i in enumerate(part):
                ids[r, width - len(seqs[i][0]):] = torch.tensor(seqs[i][0])
                mask[r, width - len(seqs[i][0]):] = 1
            keep = max(len(seqs[i][0]) - seqs[i][1] + 1 for i in part)
            logits = model(input_ids=ids, attention_mask=mask, position_ids=(mask.cumsum(-1) - 1).clamp(min=0),
                           logits_to_keep=keep).logits
            logp = torch.log_softmax(logits.float(), -1)
            for r, i in enumerate(part):
                seq, start = seqs[i]
                cols = torch.arange(start, len(seq)) - 1 + keep - len(seq)
                means[i] = float(logp[r, cols, torch.tensor(seq[start:])].mean())
    return time.perf_counter() - w0, time.process_time() - c0, means


def main(argv: list[str] | None = None) -> int:
    """Measure the floor, the probe and the floor again; print and write the comparison."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200, help="GSM8K test items (0: all 1,319), each with its twins")
    ap.add_argument("--twins", type=int, default=None, help="twins per item (default: the probe's default K), "
                    "and a spare, as `zcp probe` builds them")
    ap.add_argument("--threads", type=int, default=2, help="torch threads for both arms")
    ap.add_argument("--batch-size", type=int, default=16, help="the floor's batch and the probe's --batch-size")
    ap.add_argument("--cli", action="store_true", help="time the `zcp probe` command instead of run_probe")
    ap.add_argument("--answer-format", choices=["free", "number", "auto"], default="free",
                    help="the probe's zero-CoT answer format (the floor does not depend on it)")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "probe_throughput.md")
    ap.add_argument("--floor-runs", type=int, choices=(1, 2), default=2,
                    help="2: the floor before and after the probe (the faster counts); 1: before only (long runs)")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("ZCP_CACHE", str(ROOT / ".zcp_cache"))
    import torch

    from zcp_core.backends import load_backend

    torch.set_num_threads(args.threads)
    from zcp_core.probe.ktwins import DEFAULT_TWINS

    k = args.twins or DEFAULT_TWINS
    original, reference = pairs(args.n, k, every_original=args.cli)
    backend = load_backend("smollm2", cache=None, device="cpu", batch_size=args.batch_size)
    seqs = scored_sequences(backend, original + reference)
    n_tokens = sum(len(s) for s, _ in seqs)
    pad = backend.tokenizer.pad_token_id
    floor(backend.model, seqs[:4], 4, pad)  # warm-up: first-call allocations count for neither arm
    load0 = os.getloadavg()[0]
    fw1, fc1, means = floor(backend.model, seqs, args.batch_size, pad)
    print(f"floor: {fw1:.1f} s wall, {fc1:.1f} s CPU ({n_tokens / fw1:.0f} tokens/s)", flush=True)
    probe = _cli(args) if args.cli else _in_process(backend, original, reference, args.answer_format)
    fw2, fc2 = (floor(backend.model, seqs, args.batch_size, pad)[:2] if args.floor_runs == 2
                else (math.inf, math.inf))
    print(f"floor again: {fw2:.1f} s wall, {fc2:.1f} s CPU", flush=True)
    load1 = os.getloadavg()[0]
    fw, fc = min(fw1, fw2), min(fc1, fc2)
    recs = probe["records"]
    diff = max(abs(math.log(p) - m) for p, m in zip(recs["p_all"], means))
    answer = recs["answer_tokens"]
    stops = recs["answer_stop"].value_counts().to_dict()
    from zcp_core.probe.config import NOT_GRADED

    graded = int((~recs["grade_status"].isin(NOT_GRADED)).sum())
    lines = [
        header(f"probe_throughput: the Zero-CoT probe vs its forward-pass floor ({len(original)} originals, "
               f"{len(reference)} twins)", f"twins {_twin_method()}; torch {torch.__version__}; model "
               "SmolLM2-135M-Instruct (embedded)", command=_command(argv)),
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}, {args.threads} torch "
        f"threads; load average {load0:.1f} before, {load1:.1f} after. The machine is shared with other "
        "engineers' jobs, so absolute times vary; the arms ran back to back in one session and only their "
        "ratio is the claim.", "",
        f"Workload: SmolLM2-135M-Instruct (transformers, fp32, CPU), {len(seqs)} prompts of GSM8K test items "
        f"({len(original)} originals and {len(reference)} numeric twins: K = {k} and a spare, as `zcp probe` builds "
        f"them) = {n_tokens} prompt + gold tokens; "
        "response cache off.", "",
        "| arm | wall s | CPU s | prompt+gold tokens/s (wall) |", "|---|---:|---:|---:|",
        f"| (a) floor: one forward over prompt + gold, batch {args.batch_size} (before) | {fw1:.1f} | {fc1:.1f} | "
        f"{n_tokens / fw1:.0f} |",
        f"| (b) {probe['name']} | {probe['wall']:.1f} | {probe['cpu']} | {n_tokens / probe['wall']:.0f} |",
        *([f"| (a) floor again (after) | {fw2:.1f} | {fc2:.1f} | {n_tokens / fw2:.0f} |"] if args.floor_runs == 2
          else []), "",
        f"**Ratio b / a: {probe['wall'] / fw:.2f}x wall**"
        + (f", {probe['cpu_s'] / fc:.2f}x CPU" if probe.get("cpu_s") else "") + " (a = the faster floor run).", "",
        f"The probe generated {int(answer.sum())} answer tokens ({answer.mean():.1f} per answer). How answers "
        f"ended: box closed {stops.get('closed', 0)}, stopped where the box opened with a word "
        f"{stops.get('word', 0)}, budget spent {stops.get('budget', 0)} "
        f"({stops.get('budget', 0) / len(recs):.1%} of {len(recs)} answers), EOS {stops.get('eos', 0)}. "
        f"Zero-CoT answers graded {graded} of {len(recs)}; right {int(recs['acc'].sum())}.",
        f"Check: the floor scores the probe's tokens: max |log P_all(probe) - mean gold logprob(floor)| = {diff:.1e}.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"written to {args.out}", file=sys.stderr)
    return 0


def _in_process(backend, original, reference, answer_format="free") -> dict:  # type: ignore[no-untyped-def,type-arg]
    from zcp_core.probe import ProbeConfig, run_probe

    w0, c0 = time.perf_counter(), time.process_time()
    res = run_probe(backend, original, reference, ProbeConfig(metrics=("acc", "p_first", "p_all"),
                                                              answer_format=answer_format))
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    print(f"probe: {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
    return {"name": f"`run_probe` at r = 0 (acc, p_first, p_all; answer format {answer_format}), cache off",
            "wall": wall, "cpu": f"{cpu:.1f}",
            "cpu_s": cpu, "records": _ordered(res.records, original, reference)}


def _cli(args: argparse.Namespace) -> dict:  # type: ignore[type-arg]
    import pandas as pd

    out = ROOT / "runs" / "probe-gsm8k-throughput"
    cmd = [str(ROOT / ".venv" / "bin" / "zcp"), "probe", "--model", "smollm2", "--dataset", str(DATA.relative_to(ROOT)),
           "--out", str(out), "--no-cache", "--batch-size", str(args.batch_size), "--answer-format", args.answer_format,
           "--overwrite", *(["--limit", str(args.n)] if args.n > 0 else []),
           *(["--twins", str(args.twins)] if args.twins else [])]
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
    r0, w0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    wall, r1 = time.perf_counter() - w0, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    print(f"zcp probe: {wall:.1f} s wall", flush=True)
    from zcp_core.data import load_items

    recs = pd.read_parquet(out / "records.parquet")
    original = load_items(out / "items_original.jsonl")
    reference = load_items(out / "items_reference.jsonl")
    return {"name": f"`{' '.join(['zcp', *cmd[1:]])}` (subprocess, OMP_NUM_THREADS={args.threads})", "wall": wall,
            "cpu": f"{cpu:.1f}", "cpu_s": cpu, "records": _ordered(recs, original, reference)}


def _ordered(records, original, reference):  # type: ignore[no-untyped-def]
    """Records in the floor's order: originals, then twins."""
    z = records[records["ratio"] == 0.0].set_index(["arm", "id"])
    keys = [("original", it.id) for it in original] + [("reference", it.id) for it in reference]
    return z.loc[keys].reset_index()


def _command(argv: list[str] | None) -> str:
    return "HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/probe_throughput.py " + " ".join(argv or sys.argv[1:])


if __name__ == "__main__":
    raise SystemExit(main())
