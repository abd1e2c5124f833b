"""Series evaluated ahead, in forked worker processes, for the jobs of a small command.

Hydra's basic launcher runs the jobs of ``dmlimits -m`` one after another in one process, and a
job with a single chunk of series evaluates it in-process (`run_series` starts no pool for one
chunk). A comparison like ``-m hardware=v100_sxm,a100_sxm,h100_sxm`` would so use one core.
The command's check already expands every job's series before the jobs run
(`pipeline.cli.check`, a multirun's in dmlimits' sweeper); the CLI hands them to `Ahead` as they are checked (`pipeline.cli.startup`,
the one switch `execution.ahead`). Worker processes,
forked from the command (they inherit the imported package, so they start in milliseconds),
evaluate them while the check composes the next job and Hydra sets up its jobs. A job's
`run_series` then takes a series' outcome from there (`take`) when the job has that very
scenario, and evaluates anything else as before; so the check never decides what runs, and
the rows are those of `evaluate_series` either way (docs/scale-out.md, "Small commands").

A worker that fails or dies makes `take` return None: the job evaluates the series itself,
raising the same error in the same place as without `Ahead`.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
from collections.abc import Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing.queues import SimpleQueue

from pipeline.execute.parent import watch_parent
from pipeline.execute.series import SeriesOutcome, evaluate_series
from pipeline.identity import series_id
from pipeline.schema import Scenario

MAX_SERIES = 64
"""The most series evaluated ahead in one command: more belong to a job's own worker pool."""


def forking_supported() -> bool:
    """Whether worker processes can be forked: POSIX with fork, not macOS (where Python itself
    stopped forking by default, some system libraries being unsafe after fork)."""
    return "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin"


def start_worker(run_pid: int, pids: SimpleQueue[int]) -> None:
    """Initializer of each worker: Ctrl-C is the command's to handle (it stops the workers; a
    worker would only print a traceback), the worker ends once the command is gone, and it
    tells the command its process id (so that `Ahead.close` can stop it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    watch_parent(run_pid)
    pids.put(os.getpid())


class Ahead:
    """Series submitted to forked workers, taken back by scenario (module docstring)."""

    def __init__(self, workers: int, max_series: int = MAX_SERIES) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self.max_series = max_series
        self._executor: ProcessPoolExecutor | None = None
        self._pids: SimpleQueue[int] | None = None
        self._futures: dict[str, Future[SeriesOutcome]] = {}
        self.submitted = 0
        """Series submitted so far (at most `max_series`)."""
        self.taken = 0
        """Series taken back so far: evaluated ahead, not by the job that uses them."""

    def submit(self, scenarios: Iterable[Scenario], whole_grid: bool) -> bool:
        """Evaluate these series ahead, all of them or, when they would pass `max_series`, none;
        True if they were submitted. A series already submitted is not submitted again."""
        new: dict[str, Scenario] = {}
        for scenario in scenarios:
            key = series_id(scenario, whole_grid)
            if key not in self._futures:
                new[key] = scenario
        if self.submitted + len(new) > self.max_series:
            return False
        for key, scenario in new.items():
            self._futures[key] = self._pool().submit(evaluate_series, scenario, whole_grid)
        self.submitted += len(new)
        return True

    def take(self, scenario: Scenario, whole_grid: bool) -> SeriesOutcome | None:
        """The outcome of a submitted series (waiting for it), or None: not submitted, or its
        worker failed (the caller then evaluates it, meeting the same error if there is one)."""
        future = self._futures.pop(series_id(scenario, whole_grid), None)
        if future is None:
            return None
        try:
            outcome = future.result()
        except Exception:  # the series' own error, or a worker that died (BrokenProcessPool)
            return None
        if outcome.scenario != scenario:
            return None
        self.taken += 1
        return outcome

    def close(self) -> None:
        """Stop the workers; any series not taken is dropped (its worker ended at once)."""
        executor, self._executor = self._executor, None
        if executor is None:
            return
        busy = any(not f.done() for f in self._futures.values())
        self._futures.clear()
        if busy:  # a job failed or the run was interrupted: do not wait for their series
            self._stop_workers()
        executor.shutdown(wait=not busy, cancel_futures=True)

    def _stop_workers(self) -> None:
        """SIGTERM to every worker started so far (each told its process id as it started)."""
        pids = self._pids
        while pids is not None and not pids.empty():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pids.get(), signal.SIGTERM)

    def __enter__(self) -> Ahead:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _pool(self) -> ProcessPoolExecutor:
        if self._executor is None:
            sys.stdout.flush()  # a forked child must not write the parent's buffered output
            sys.stderr.flush()
            context = multiprocessing.get_context("fork")
            self._pids = context.SimpleQueue()
            self._executor = ProcessPoolExecutor(
                self.workers,
                mp_context=context,
                initializer=start_worker,
                initargs=(os.getpid(), self._pids),
            )
        return self._executor
