"""Background jobs for the app: a ``zcp`` command in its own process.

The page starts the job and returns at once, so it never freezes. The job
writes a normal run folder; ``job.json`` and ``log.txt`` beside it let any
page (or a reload) find it again and follow its progress from tqdm's output.
Because model calls are cached, a job that dies can be restarted and resumes.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Sequence

from zcp_core.runs import STOPPED_BY_USER

JobState = Literal["running", "done", "failed", "stopped"]
_PCT = re.compile(r"(\d{1,3})%\|")
# A tqdm line: "desc:  40%|████      | 64/160 [00:41<01:02,  1.55it/s]" -> desc, counts, [elapsed<left, rate].
_BAR = re.compile(r"([^\r\n|]*?):?\s*\d{1,3}%\|[^|]*\|\s*(\d+/\d+)\s*(\[[^\]\r\n]*\])")
# The same line taken apart for the progress bar's label: desc, percent, done/total and the time left (or "?").
_PARTS = re.compile(r"([^\r\n|]*?):?\s*(\d{1,3})%\|[^|\r\n]*\|\s*(\d+)/(\d+)(?:\s*\[[^<\]\r\n]*<([^,\]\r\n]*))?")


@dataclass(frozen=True)
class Progress:
    """A job's last tqdm bar, read from its log.

    Attributes:
        fraction: Share done (0..1).
        done: Steps done.
        total: Steps in all.
        step: What the bar counts (tqdm's description), or ``""``.
        left: tqdm's estimate of the time left (``01:02``), or ``""`` when it has none yet.
    """

    fraction: float
    done: int
    total: int
    step: str = ""
    left: str = ""

    @property
    def words(self) -> str:
        """The bar's label: ``answer: 64 of 160 done, about 1 min left``."""
        head = f"{self.step}: " if self.step else ""
        left = _left_words(self.left) if self.left and self.done < self.total else ""
        return f"{head}{self.done:,} of {self.total:,} done" + (f", {left}" if left else "")


def _left_words(left: str) -> str:
    """tqdm's time left (``01:02``, ``1:02:03``) in words; ``""`` when it is not a time."""
    try:
        parts = [int(x) for x in left.strip().split(":")]
    except ValueError:
        return ""
    seconds = sum(v * 60**i for i, v in enumerate(reversed(parts)))
    if seconds < 60:
        return "under a minute left"
    if seconds < 3600:
        return f"about {round(seconds / 60)} min left"
    return f"about {seconds // 3600} h {round(seconds % 3600 / 60)} min left"


def parse_progress(log: str) -> Progress | None:
    """The last tqdm bar in a job's log (tqdm rewrites its line with ``\\r``), or ``None`` before any bar."""
    found = _PARTS.findall(log)
    if not found:
        return None
    step, pct, done, total, left = found[-1]
    step = step.strip().rstrip(":").strip()
    return Progress(min(int(pct), 100) / 100, int(done), int(total), step, "" if "?" in left else left.strip())


@dataclass(frozen=True)
class JobStatus:
    """Where a job stands.

    Attributes:
        folder: The run folder the job writes.
        state: ``running``, ``done`` (manifest written), ``stopped`` (by the user: Ctrl-C, the app's or
            the demo's stop) or ``failed``.
        progress: Last tqdm percentage seen (0..1), or None.
        log_tail: The last lines of the job's log.
        command: The command line.
        bar: The last tqdm bar's description, counts, rate and time left (e.g.
            ``answer 64/160 [00:41<01:02, 1.55it/s]``), or ``""``.
        last_bar: The same bar taken apart (:func:`parse_progress`), or None before any.
    """

    folder: Path
    state: JobState
    progress: float | None
    log_tail: str
    command: str
    bar: str = ""
    last_bar: Progress | None = None

    @property
    def progress_words(self) -> str:
        """The progress bar's label in words (``answer: 64 of 160 done, about 1 min left``; ``starting…``)."""
        return self.last_bar.words if self.last_bar else "starting…"

    @property
    def headline(self) -> str:
        """The state in words: ``done``, ``running``, ``stopped by the user``, or ``failed: <last error line>``."""
        if self.state == "stopped":
            return "stopped by the user"
        if self.state == "failed":
            errors = [ln.strip() for ln in self.log_tail.splitlines() if "error" in ln.lower() and ln.strip()]
            return f"failed: {errors[-1]}" if errors else "failed (see the log below)"
        return self.state


def start_job(args: Sequence[str], out: Path, out_option: str | None = "--out") -> Path:
    """Start ``zcp <args> <out_option> <out>`` in the background; returns ``out``.

    ``args`` must not contain ``--out``; it is added here so the job can only
    write where the caller chose. ``out_option=None`` is for a command that places
    its run itself (``lab build --runs``): ``out`` is then only where the job's log lives,
    and the command must write its run there.
    """
    out.mkdir(parents=True, exist_ok=True)
    full = [*args, *([out_option, str(out)] if out_option else [])]
    cmd = [sys.executable, "-m", "zcp_core.cli.main", *full]
    log = open(out / "log.txt", "wb")  # noqa: SIM115 - the child keeps it open
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    # Recorded as the user would type it, so it can be pasted into a shell.
    info = {"pid": proc.pid, "command": ["zcp", *full],
            "started": _dt.datetime.now(_dt.timezone.utc).isoformat()}
    (out / "job.json").write_text(json.dumps(info, indent=2))
    return out


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    try:  # a finished child that was not reaped is a zombie: not alive
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return True


def job_status(folder: Path) -> JobStatus:
    """Read a job's state from its folder (works after a page reload)."""
    info = json.loads((folder / "job.json").read_text()) if (folder / "job.json").exists() else {}
    log_path = folder / "log.txt"
    text = log_path.read_text(errors="replace") if log_path.exists() else ""
    pct = _PCT.findall(text)
    progress = int(pct[-1]) / 100 if pct else None
    tail = "\n".join(re.split(r"[\r\n]", text)[-15:])
    bars = _BAR.findall(text)
    bar = " ".join(x.strip() for x in bars[-1] if x.strip()) if bars else ""
    if (folder / "manifest.json").exists():
        state: JobState = "done"
    elif info.get("pid") and _alive(int(info["pid"])):
        state = "running"
    elif info.get("stopped") or STOPPED_BY_USER in text:
        state = "stopped"
    else:
        state = "failed"
    return JobStatus(folder, state, progress, tail, " ".join(info.get("command", [])), bar, parse_progress(text))


def stop_job(folder: Path) -> bool:
    """Stop the job writing ``folder`` (its whole process group) and mark it stopped by the user.

    Returns whether a running job was signalled.
    """
    import signal

    job = folder / "job.json"
    if not job.exists():
        return False
    info = json.loads(job.read_text())
    pid = int(info.get("pid", 0))
    if not pid or not _alive(pid):
        return False
    job.write_text(json.dumps({**info, "stopped": _dt.datetime.now(_dt.timezone.utc).isoformat()}, indent=2))
    try:
        os.killpg(pid, signal.SIGTERM)
    except OSError:
        return False
    return True


def list_jobs(runs: Path) -> list[JobStatus]:
    """Every job folder under ``runs``, newest first."""
    if not runs.exists():
        return []
    folders = sorted((p.parent for p in runs.glob("*/job.json")), key=lambda p: p.stat().st_mtime, reverse=True)
    return [job_status(f) for f in folders]
