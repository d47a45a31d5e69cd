"""The demo's live runs, one after another, as app jobs (progress on the New audit page).

``scripts/demo`` starts this in the background and then the app, so the app
opens at once on the bundled example runs while the live ones fill in. Each
step is a ``zcp`` command started with :func:`zcp_core.app.start_job` (its
own run folder with ``job.json`` and ``log.txt``); a step whose run already
has a manifest is skipped, so a second demo starts nothing. SIGINT/SIGTERM
stop the running step's process group and end the chain.

    .venv/bin/python scripts/demo_jobs.py RUNS_DIR
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

# (run folder, zcp arguments): the page without an example run first (detector), then the live probe
# (the probe page already shows the bundled examples). Time-Travel ships as an example: its generation
# takes minutes on a CPU.
STEPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("demo-detector-claude", ("detector", "compare", "--data", "data/detectrl_sample/multi_llms_Claude-instant_test.json",
                              "--explain-n", "20")),
    ("demo-probe-gsm8k50", ("probe", "--model", "smollm2", "--dataset", "data/gsm8k/test.jsonl", "--limit", "50")),
)


def main(argv: list[str] | None = None) -> int:
    """Run the steps in order under ``RUNS_DIR/`` and return when all have ended."""
    from zcp_core.app import job_status, start_job, stop_job

    args = argv if argv is not None else sys.argv[1:]
    runs = Path(args[0] if args else "runs").resolve()
    current: list[Path] = []

    def on_signal(signum: int, _frame: object) -> None:
        for f in current:
            stop_job(f)  # the job list then says "stopped by the user"
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    for name, zargs in STEPS:
        out = runs / name
        if (out / "manifest.json").exists():
            continue
        current[:] = [start_job(list(zargs), out)]
        while job_status(out).state == "running":
            time.sleep(1.0)
        print(f"demo job {name}: {job_status(out).headline}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
