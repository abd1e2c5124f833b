"""Evaluate many series with joblib: in-process, on local cores (loky, threads), or on dask.

Series are grouped into chunks of consecutive series, one joblib task each: `execution.chunk_size`
of them, or with `auto` (the default) a share sized by `chunk_size_for`. Chunks are made lazily
and dispatched a few at a time (joblib's pre_dispatch), and results stream back as tasks finish
(unordered), so the caller writes each series at once and memory stays flat however long the
sweep. Every backend runs the same pure `evaluate_series`, so the rows are identical.

Dask: with `execution.dask_address` the run connects to a running dask.distributed scheduler
(whose workers must have this package installed, see docs/scale-out.md); without it, it starts a
local cluster of `execution.dask_workers` single-threaded worker processes for the run.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import math
import os
import signal
import threading
import time
from collections.abc import Iterable, Iterator, Sequence, Sized
from typing import TYPE_CHECKING, Any

from pipeline.execute.series import SeriesOutcome, evaluate_series
from pipeline.execute.settings import Backend, ExecutionSettings
from pipeline.schema import Scenario
from pipeline.schema.errors import ConfigError

if TYPE_CHECKING:
    from pipeline.execute.ahead import Ahead

DASK_WAIT_FOR_WORKERS_S = 300.0
"""How long a run waits for the first worker of a remote dask cluster (batch-queued workers)."""
DASK_CONNECT_TIMEOUT_S = 10.0
"""How long a run tries to reach the scheduler at `execution.dask_address` before giving up."""


AUTO_CHUNKS_PER_WORKER = 4
"""With `execution.chunk_size=auto`, a local run's series are cut into about this many chunks
per worker (`chunk_size_for`)."""
AUTO_CHUNK_MIN = 8
"""The fewest series in an `auto` chunk (and the size when the number of series or workers is
not known): a series takes 0.01-1 s, so a task stays well above the scheduler's overhead."""
AUTO_CHUNK_MAX = 128
"""The most series in an `auto` chunk: a chunk's series come back together, so this bounds the
series a worker holds, the wait between progress updates and the work an interrupt loses."""

PARENT_POLL_S = 0.5
"""How often a worker process checks that the run that started it is still alive."""


def _watchdog(run_pid: int) -> None:
    """Exit this worker as soon as its parent, the run's main process, is gone."""
    while os.getppid() == run_pid:
        time.sleep(PARENT_POLL_S)
    os._exit(1)  # orphaned: nobody will read our results


def watch_parent(run_pid: int) -> None:
    """Initializer of each local (loky) worker process: a daemon thread ends the worker once
    its parent `run_pid` is gone, so a run killed with SIGKILL leaves no worker computing, or
    idling, for nobody. A worker already orphaned when it starts exits at once."""
    threading.Thread(target=_watchdog, args=(run_pid,), name="dmlimits-parent", daemon=True).start()


def evaluate_chunk(chunk: Sequence[Scenario], whole_grid: bool) -> list[SeriesOutcome]:
    """One joblib task: a few series, evaluated one after another."""
    return [evaluate_series(s, whole_grid) for s in chunk]


class Terminated(SystemExit):
    """The run received SIGTERM or SIGHUP: unwind (release locks, stop workers), then exit."""


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """While the block runs, SIGTERM and SIGHUP raise `Terminated` in the main thread, so
    `finally` blocks run and joblib stops its workers, as on Ctrl-C (SIGINT). Outside the main
    thread (signals cannot be caught there) the block runs unchanged."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        raise Terminated(128 + signum)

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def chunk_size_for(settings: ExecutionSettings, n_series: int | None) -> int:
    """Series per task: `execution.chunk_size`, or for `auto` (None) on local workers
    ⌈n_series / (AUTO_CHUNKS_PER_WORKER · workers)⌉ within [AUTO_CHUNK_MIN, AUTO_CHUNK_MAX].

    Consecutive series of a sweep differ in the innermost axes only, so they share the model's
    caches (candidate layouts, per-pair traffic, network tables: docs/model.md §9.2), which
    each worker process builds for itself: a worker that takes a long run of them builds those
    caches once, where chunks of a few series spread every model over every worker. Four
    chunks per worker still balance the load and keep the progress line moving. On dask
    (workers not known here), or when the number of series is not, `auto` is AUTO_CHUNK_MIN.
    """
    if settings.chunk_size is not None:
        return settings.chunk_size
    if n_series is None or settings.backend is Backend.DASK:
        return AUTO_CHUNK_MIN
    workers = usable_cpus() if settings.n_jobs == -1 else settings.n_jobs
    share = math.ceil(n_series / (AUTO_CHUNKS_PER_WORKER * workers))
    return min(AUTO_CHUNK_MAX, max(AUTO_CHUNK_MIN, share))


def chunked(items: Iterable[Scenario], size: int) -> Iterator[list[Scenario]]:
    """Consecutive chunks of at most `size` scenarios, made as they are consumed."""
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


@contextlib.contextmanager
def dask_client(settings: ExecutionSettings) -> Iterator[object]:
    """A dask.distributed client: to a running scheduler, or to a local cluster it starts."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as err:  # pragma: no cover - exercised only without the extra
        raise RuntimeError(
            "execution.backend=dask needs the dask extra: pip install 'dmlimits[dask]'"
        ) from err
    if settings.dask_address:
        with _connected(Client, settings.dask_address) as client:
            yield client
        return
    with (
        _quiet("distributed"),  # the cluster's start and stop lines would bury the progress
        LocalCluster(
            n_workers=settings.dask_workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,  # no web server for a run-scoped cluster
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


@contextlib.contextmanager
def _connected(client_class: Any, address: str) -> Iterator[Any]:
    """A client of the scheduler at `address` with one worker, or a one-line ConfigError."""
    key = "execution.dask_address"
    try:
        with _quiet("distributed"):
            client = client_class(address, timeout=DASK_CONNECT_TIMEOUT_S)
    except Exception as err:  # a peer that is not a scheduler fails in many ways
        reason = " ".join(str(err).split())[:200] or type(err).__name__
        raise ConfigError(
            key,
            address,
            f"no dask scheduler answers there within {DASK_CONNECT_TIMEOUT_S:g} s ({reason})",
        ) from None
    with client:
        try:
            client.wait_for_workers(1, timeout=DASK_WAIT_FOR_WORKERS_S)
        except TimeoutError:
            raise ConfigError(
                key, address, f"the scheduler has no worker after {DASK_WAIT_FOR_WORKERS_S:g} s"
            ) from None
        yield client


@contextlib.contextmanager
def _quiet(logger_name: str) -> Iterator[None]:
    """Only warnings and errors from a logger while the block runs."""
    logger = logging.getLogger(logger_name)
    level = logger.level
    logger.setLevel(max(level, logging.WARNING))
    try:
        yield
    finally:
        logger.setLevel(level)


def run_series(
    scenarios: Iterable[Scenario],
    settings: ExecutionSettings,
    whole_grid: bool = False,
    ahead: Ahead | None = None,
) -> Iterator[SeriesOutcome]:
    """Yield every scenario's outcome as soon as its chunk finishes (order not guaranteed).

    With `ahead`, the series it evaluated ahead are taken from it first (`Ahead.take`); the
    others are evaluated here.
    """
    if ahead is not None:
        rest = []
        for scenario in scenarios:
            outcome = ahead.take(scenario, whole_grid)
            if outcome is None:
                rest.append(scenario)
            else:
                yield outcome
        scenarios = rest
    n_series = len(scenarios) if isinstance(scenarios, Sized) else None
    chunks = chunked(scenarios, chunk_size_for(settings, n_series))
    head = list(itertools.islice(chunks, 2))
    if settings.backend is not Backend.DASK and (settings.n_jobs == 1 or len(head) < 2):
        for chunk in itertools.chain(head, chunks):  # no pool: one chunk runs faster in-process
            yield from evaluate_chunk(chunk, whole_grid)
        return
    import joblib  # deferred: a run without a worker pool does not pay its import

    tasks = (
        joblib.delayed(evaluate_chunk)(chunk, whole_grid) for chunk in itertools.chain(head, chunks)
    )
    if settings.backend is Backend.DASK:
        with (
            stop_on_signals(),
            dask_client(settings) as client,
            joblib.parallel_config(
                backend="dask", client=client, wait_for_workers_timeout=DASK_WAIT_FOR_WORKERS_S
            ),
        ):
            parallel = joblib.Parallel(n_jobs=-1, return_as="generator_unordered")
            for result in parallel(tasks):
                yield from result
        return
    workers = (
        {"initializer": watch_parent, "initargs": (os.getpid(),)}
        if settings.backend is Backend.LOKY
        else {}
    )
    with (
        stop_on_signals(),
        joblib.parallel_config(backend=settings.backend.value, **workers),
    ):
        parallel = joblib.Parallel(n_jobs=settings.n_jobs, return_as="generator_unordered")
        for result in parallel(tasks):
            yield from result
