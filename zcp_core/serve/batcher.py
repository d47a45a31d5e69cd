"""The batching worker of ``zcp serve``: one thread owns the backend and feeds it batches.

The worker takes the first waiting request, collects whatever else arrives
within ``batch_wait_ms`` (up to ``max_batch``) and sends the lot to the
backend's batch ``generate``/``score`` in one call. Since backends keep order
and make per-request results independent of batch composition, a batched
answer equals the one a single request would get.
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Literal

from zcp_core.backends import GenerateRequest, GenerateScoreRequest, ScoreRequest, generate_and_score

JobKind = Literal["generate", "score", "generate_score"]


@dataclass
class _Job:
    kind: JobKind
    request: GenerateRequest | ScoreRequest | GenerateScoreRequest
    future: Future = field(default_factory=Future)


class Batcher:
    """One worker thread that feeds queued requests to the backend in batches.

    Args:
        backend: Any backend; only this thread calls it.
        max_batch: Most requests per backend call.
        wait_s: How long to wait for more requests after the first.
    """

    def __init__(self, backend: Any, max_batch: int = 16, wait_s: float = 0.005):
        self.backend = backend
        self.max_batch = max(1, max_batch)
        self.wait_s = wait_s
        self._queue: queue.Queue[_Job | None] = queue.Queue()
        # Held around every backend call; endpoints hold it for tokenizer work too.
        self.lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="zcp-serve-batcher", daemon=True)
        self._thread.start()

    def run(self, kind: JobKind, requests: list[Any]) -> list[Any]:
        """Queue requests (together, so they can share a batch) and wait for their results."""
        jobs = [_Job(kind, r) for r in requests]
        for j in jobs:
            self._queue.put(j)
        return [j.future.result() for j in jobs]

    def close(self) -> None:
        """Stop the worker after the queued jobs."""
        self._queue.put(None)
        self._thread.join(timeout=30)

    def _loop(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            jobs, stop = [first], False
            deadline = time.monotonic() + self.wait_s
            while len(jobs) < self.max_batch:
                try:
                    nxt = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    break
                if nxt is None:
                    stop = True
                    break
                jobs.append(nxt)
            self._execute(jobs)
            if stop:
                return

    def _execute(self, jobs: list[_Job]) -> None:
        fns = {"generate": self.backend.generate, "score": self.backend.score,
               "generate_score": lambda reqs: generate_and_score(self.backend, reqs)}
        for kind, fn in fns.items():
            group = [j for j in jobs if j.kind == kind]
            if not group:
                continue
            try:
                with self.lock:
                    results = fn([j.request for j in group])
            except Exception as e:  # noqa: BLE001 - handed to each waiting request
                for j in group:
                    j.future.set_exception(e)
                continue
            for j, r in zip(group, results):
                j.future.set_result(r)
