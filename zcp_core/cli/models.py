"""``zcp models``: the backends and models usable on this machine."""

from __future__ import annotations

import argparse

from zcp_core.cli.common import add_common, emit


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``models`` command."""
    p = sub.add_parser("models", help="list the backends and models available here")
    add_common(p)
    p.set_defaults(func=run)
    register_calls(sub)


def run(args: argparse.Namespace) -> int:
    """List model specs with their status."""
    from zcp_core.backends import available_models
    from zcp_core.backends.cache import cache_dir, cache_origin

    rows = available_models()
    width = max(len(r["spec"]) for r in rows)
    text = "\n".join(f"{r['spec']:<{width}}  {r['backend']:<12}  {r['status']}" for r in rows)
    text += f"\ncache: {cache_dir()} ({cache_origin()})"
    emit(args, {"models": rows, "headline": {"label": "models", "value": len(rows)},
                "cache": {"path": str(cache_dir()), "origin": cache_origin()}}, text)
    return 0


def register_calls(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``generate`` and ``score``: one-off model calls from the shell."""
    from zcp_core.cli.common import add_model

    g = sub.add_parser("generate", help="generate a completion for one or more prompts")
    g.add_argument("prompts", nargs="+", help="user messages (chat template applied)")
    g.add_argument("--prefill", default="", help="text the assistant turn continues from")
    g.add_argument("--max-new-tokens", type=int, default=32)
    g.add_argument("--temperature", type=float, default=0.0)
    g.add_argument("--seed", type=int, default=0)
    add_model(g)
    add_common(g)
    g.set_defaults(func=generate)
    s = sub.add_parser("score", help="teacher-forced logprobs of a continuation after a prompt")
    s.add_argument("prompt", help="user message (chat template applied)")
    s.add_argument("continuation")
    s.add_argument("--prefill", default="")
    add_model(s)
    add_common(s)
    s.set_defaults(func=score)


def generate(args: argparse.Namespace) -> int:
    """Generate completions, one per prompt, in one batch."""
    from zcp_core.backends import GenerateRequest, SamplingParams, chat
    from zcp_core.cli.common import backend_from_args

    backend = backend_from_args(args)
    params = SamplingParams(max_new_tokens=args.max_new_tokens, temperature=args.temperature, seed=args.seed)
    reqs = [GenerateRequest(messages=chat(p), prefill=args.prefill, params=params) for p in args.prompts]
    outs = backend.generate(reqs, progress=True)
    rows = [{"prompt": p, "text": c.text, "n_tokens": c.n_tokens, "finish_reason": c.finish_reason}
            for p, c in zip(args.prompts, outs)]
    text = "\n".join(f"[{i}] {args.prefill}{r['text']}" for i, r in enumerate(rows))
    emit(args, {"model": args.model, "completions": rows, "headline": {"label": "completions", "value": len(rows)}},
         text)
    return 0


def score(args: argparse.Namespace) -> int:
    """Score one continuation and print per-token logprobs."""
    import math

    from zcp_core.backends import ScoreRequest, chat
    from zcp_core.cli.common import backend_from_args

    backend = backend_from_args(args)
    (lp,) = backend.score([ScoreRequest(continuation=args.continuation, messages=chat(args.prompt),
                                        prefill=args.prefill)])
    if not lp.available:
        emit(args, {"available": False, "reason": lp.reason, "headline": {"label": "p_all", "value": None}},
             f"scoring unavailable: {lp.reason}")
        return 1
    p_all = math.exp(lp.mean)
    summary = {"tokens": list(lp.tokens), "logprobs": list(lp.logprobs), "total": lp.total, "p_all": p_all,
               "headline": {"label": "p_all", "value": p_all}}
    lines = [f"{t!r:>12}  {v:9.4f}" for t, v in zip(lp.tokens, lp.logprobs)]
    emit(args, summary, "\n".join(lines + [f"sum {lp.total:.4f}   geometric-mean prob {p_all:.4f}"]))
    return 0
