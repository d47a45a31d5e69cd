"""``zcp serve``: an OpenAI-compatible HTTP server over any local backend."""

from __future__ import annotations

import argparse

from zcp_core.cli.common import add_common, add_model, emit, log, port


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``serve`` command."""
    p = sub.add_parser(
        "serve", help="serve a model over an OpenAI-compatible HTTP API",
        description="Serve --model at /v1/models, /v1/chat/completions, /v1/completions (echo, logprobs), "
                    "/tokenize and /detokenize. Clients: openai:http://HOST:PORT/v1#NAME.",
    )
    add_common(p)
    add_model(p)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default %(default)s: this machine only)")
    p.add_argument("--port", type=port, default=8000, help="port (default %(default)s)")
    p.add_argument("--served-model-name", default=None,
                   help="model name clients send (default: the --model spec)")
    p.add_argument("--max-batch", type=int, default=16, help="most concurrent requests batched into one backend call")
    p.add_argument("--batch-wait-ms", type=float, default=5.0,
                   help="how long to wait for more concurrent requests before running a batch")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Load the backend and serve until interrupted."""
    from zcp_core.cli.common import backend_from_args
    from zcp_core.serve import ServerConfig, serve

    backend = backend_from_args(args)
    name = args.served_model_name or args.model
    cfg = ServerConfig(served_model_name=name, max_batch=args.max_batch, batch_wait_ms=args.batch_wait_ms)
    url = f"http://{args.host}:{args.port}/v1"
    summary = {"url": url, "model": name, "backend": backend.name, "revision": backend.revision,
               "spec": f"openai:{url}#{name}", "headline": {"label": "serving on port", "value": args.port}}
    emit(args, summary, f"serving {name} ({backend.name}) at {url}; clients use --model openai:{url}#{name}")
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        log(f"warning: binding {args.host} exposes the model to other machines; there is no authentication")
    import sys

    sys.stdout.flush()
    serve(backend, cfg, host=args.host, port=args.port)
    return 0
