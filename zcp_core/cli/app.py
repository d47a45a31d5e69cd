"""``zcp app``: start the Streamlit app (127.0.0.1 by default)."""

from __future__ import annotations

import argparse

from zcp_core.cli.common import port


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``app`` command."""
    p = sub.add_parser("app", help="start the Streamlit app")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default %(default)s)")
    p.add_argument("--port", type=port, default=8501, help="port (default %(default)s)")
    p.add_argument("--runs", default=None, help="runs directory (default ./runs or $ZCP_RUNS)")
    p.add_argument("--check-port", action="store_true",
                   help="only check that the port is free (exit 0) or say how to pick another (exit 1)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check the port, then exec ``streamlit run app.py`` with the project's defaults (``--check-port``: only check)."""
    import os
    import sys
    from pathlib import Path

    from zcp_core.app import app_script
    from zcp_core.app.port import port_problem
    from zcp_core.errors import ZcpError

    problem = port_problem(args.host, args.port)
    if problem:
        raise ZcpError(problem)
    if args.check_port:
        return 0
    # The app runs from its own folder, so fix the runs folder before changing directory.
    os.environ["ZCP_RUNS"] = str(Path(args.runs or os.environ.get("ZCP_RUNS") or "runs").resolve())
    app = app_script()
    cmd = [sys.executable, "-m", "streamlit", "run", str(app), "--server.address", args.host,
           "--server.port", str(args.port), "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    os.chdir(app.parent)
    os.execv(sys.executable, cmd)
    return 0  # not reached
