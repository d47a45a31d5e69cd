"""Evaluate template programs in a separate process with CPU-time and memory limits.

A :class:`Task` is one draw of a template: its variables' values, its derived variables, constraints and program,
and the answer form. The worker checks every program against the whitelist (:mod:`~zcp_core.reference.sandbox`),
runs it with the interpreter, and writes the answer; only plain values (text, Fractions) come back, so the
parent never holds a sympy object. Each evaluation has :data:`~zcp_core.reference.sandbox.EVAL_CPU_SECONDS` of
CPU; the worker has an address-space limit and a lifetime CPU limit, and a worker that dies takes only the
evaluation it was running with it: the batch is rerun one task at a time in a fresh worker.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from zcp_core.reference.forms import AnswerForm, answer_number, exact, write_answer
from zcp_core.reference.sandbox import (
    EVAL_CPU_SECONDS,
    WORKER_CPU_SECONDS,
    WORKER_MEMORY,
    check_program,
    run_program,
)

Failure = Literal["", "constraint", "program", "form", "killed"]


@dataclass(frozen=True)
class Task:
    """One evaluation: a program on a set of values.

    Attributes:
        program: The program; it must set ``answer``.
        env: The drawn variables.
        derived: ``(name, expression)`` pairs evaluated in order before the constraints.
        constraints: Expressions that must all hold, evaluated after the program (they may read ``answer``).
        form: How the answer is written.
        order: Expressions whose values come back in ``Outcome.order`` (a template's ``keep_order``).
    """

    program: str
    env: Mapping[str, Fraction]
    derived: tuple[tuple[str, str], ...] = ()
    constraints: tuple[str, ...] = ()
    form: AnswerForm = field(default_factory=AnswerForm)
    order: tuple[str, ...] = ()


@dataclass(frozen=True)
class Outcome:
    """What an evaluation gave.

    Attributes:
        ok: The constraints held and the program's answer was written.
        answer: The answer written by the form.
        number: The answer as a Fraction (rational single answers; None otherwise).
        derived: The derived variables' values (rational ones).
        failed: Which stage failed: ``constraint``, ``program``, ``form`` or ``killed`` (the worker died).
        detail: Why (the failing constraint, or the error).
        order: The task's ``order`` expressions' values (None where one is not rational).
    """

    ok: bool
    answer: str = ""
    number: Fraction | None = None
    derived: Mapping[str, Fraction] = field(default_factory=dict)
    failed: Failure = ""
    detail: str = ""
    order: tuple[Fraction | None, ...] = ()


@functools.lru_cache(maxsize=4096)
def _parsed(source: str, names: tuple[str, ...], mode: str) -> Any:
    return check_program(source, names, mode)


@functools.lru_cache(maxsize=1)
def _functions() -> Mapping[str, Any]:
    from zcp_core.reference.sandbox import _table

    return _table()


def _address_space() -> int:
    """This process's current virtual memory in bytes (0 where /proc is missing)."""
    import os

    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def _limit() -> None:
    """Worker initializer: memory and CPU limits, and a per-evaluation CPU alarm."""
    import resource
    import signal

    # a forked worker starts with its parent's address space (a loaded model is gigabytes): the cap is on growth
    for what, cap in ((resource.RLIMIT_AS, _address_space() + WORKER_MEMORY), (resource.RLIMIT_CPU, WORKER_CPU_SECONDS)):
        soft, hard = resource.getrlimit(what)
        resource.setrlimit(what, (cap if hard == resource.RLIM_INFINITY else min(cap, hard), hard))

    def _alarm(signum: int, frame: Any) -> None:
        raise TimeoutError(f"more than {EVAL_CPU_SECONDS} s of CPU")

    signal.signal(signal.SIGVTALRM, _alarm)
    _functions()  # import sympy once, outside any evaluation's CPU budget


def _plain(v: Any) -> Any:
    return int(v) if isinstance(v, Fraction) and v.denominator == 1 else v


def evaluate(task: Task) -> Outcome:
    """Evaluate one task in this process (the worker's function; :class:`Runner` is the safe way in)."""
    import signal

    names = tuple(task.env) + tuple(n for n, _ in task.derived)
    # whole values as ints: sympy's integer functions (isprime, divisors) refuse a Fraction such as 7/1
    env: dict[str, Any] = {k: _plain(v) for k, v in task.env.items()}
    signal.setitimer(signal.ITIMER_VIRTUAL, EVAL_CPU_SECONDS)
    stage: Failure = "program"
    try:
        table = _functions()
        for name, expr in task.derived:
            env[name] = _plain(run_program(_parsed(expr, names, "eval"), env, table)["value"])
        out = run_program(_parsed(task.program, names, "exec"), env, table)
        if "answer" not in out:
            return Outcome(False, failed="program", detail="the program sets no `answer`")
        stage = "constraint"  # after the program: a constraint may read `answer` ("a common fraction")
        for c in task.constraints:
            if not run_program(_parsed(c, (*names, "answer"), "eval"), out, table)["value"]:
                return Outcome(False, failed="constraint", detail=c)
        order = tuple(exact(run_program(_parsed(c, (*names, "answer"), "eval"), out, table)["value"])
                      for c in task.order)
        stage = "form"
        value = out["answer"]
        derived = {n: v for n, _ in task.derived if (v := exact(env[n])) is not None}
        return Outcome(True, write_answer(value, task.form), answer_number(value), derived, order=order)
    except Exception as e:  # noqa: BLE001  any failure of a sandboxed draw is that draw's failure, with its kind
        return Outcome(False, failed=stage, detail=f"{type(e).__name__}: {e}"[:300])
    finally:
        signal.setitimer(signal.ITIMER_VIRTUAL, 0)


def evaluate_batch(tasks: Sequence[Task]) -> list[Outcome]:
    """Evaluate ``tasks`` in order (picklable, for the worker)."""
    return [evaluate(t) for t in tasks]


class Runner:
    """A limited worker process that evaluates batches of tasks, in order (``result[i]`` answers ``tasks[i]``).

    Use as a context manager: ``with Runner() as r: r.run(tasks)``.
    """

    def __init__(self) -> None:
        self._pool: Any = None

    def __enter__(self) -> Runner:
        self._start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def _start(self) -> None:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor

        # fork where available: no `if __name__ == "__main__"` guard needed in a user's script, and a start in
        # milliseconds; the worker only runs the interpreter and sympy, so threads it inherits are harmless.
        method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
        self._pool = ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context(method), initializer=_limit)

    def run(self, tasks: Sequence[Task]) -> list[Outcome]:
        """Evaluate ``tasks``; a task that kills the worker gets ``failed="killed"``, the others their outcome."""
        from concurrent.futures.process import BrokenProcessPool

        if self._pool is None:
            self._start()
        try:
            return list(self._pool.submit(evaluate_batch, list(tasks)).result())
        except BrokenProcessPool:
            pass
        out: list[Outcome] = []
        self.__exit__()
        for t in tasks:  # find the task that killed it: one at a time, a fresh worker after each death
            if self._pool is None:
                self._start()
            try:
                out += self._pool.submit(evaluate_batch, [t]).result()
            except BrokenProcessPool:
                out.append(Outcome(False, failed="killed", detail="the worker died (memory or CPU limit)"))
                self.__exit__()
        return out
