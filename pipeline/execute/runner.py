"""Evaluate many series: in-process, on local cores (joblib: loky, threads), or on dask.

Series are grouped into chunks of `execution.chunk_size`, one task each. Chunks are made
lazily and dispatched a few at a time (joblib's pre_dispatch; on dask, two per worker thread),
and results stream back as tasks finish (unordered), so the caller writes each series at once
and memory stays flat however long the sweep. Every backend runs the same pure
`evaluate_series`, so the rows are identical.

Dask: with `execution.dask_address` the run connects to a running dask.distributed scheduler
(whose workers must have this package installed, see docs/scale-out.md); without it, it starts a
local cluster of `execution.dask_workers` single-threaded worker processes for the run. Chunks
go to the cluster through its client (`run_on_dask`), not joblib's dask backend, which runs a
one-worker cluster's tasks in the calling process, counts the workers once at the start, and
groups short tasks into its own batches, so `chunk_size` would not be the task size.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import itertools
import logging
import math
import os
import signal
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pipeline.execute.ahead import Ahead
from pipeline.execute.parent import watch_parent
from pipeline.execute.series import SeriesOutcome, evaluate_series
from pipeline.execute.settings import Backend, ExecutionSettings
from pipeline.identity import SeriesIds
from pipeline.model.caches import clear_caches, scale_byte_budgets
from pipeline.schema import Scenario
from pipeline.schema.errors import ConfigError

DASK_WAIT_FOR_WORKERS_S = 300.0
"""How long a run waits for the first worker of a remote dask cluster (batch-queued workers)."""
DASK_CONNECT_TIMEOUT_S = 10.0
"""How long a run tries to reach the scheduler at `execution.dask_address` before giving up."""
LOOPBACK_ANY_PORT = "127.0.0.1:0"
"""Where a run-scoped local dask cluster serves its scheduler's HTTP routes."""
DASK_TASKS_PER_WORKER = 2
"""Tasks in flight per dask worker thread: one running, one waiting for it on the worker."""
DASK_WORKERS_REFRESH_S = 1.0
"""How often a dask run counts the cluster's worker threads again."""


WORKER_MEMO_SHARE = 0.25
"""The share of each byte-bounded memo's budget a loky worker keeps (`caches.scale_byte_budgets`:
its candidate sets 64 of 256 MiB, its realistic row sets 16 of 64 MiB, 186 MiB of the 744 its
fourteen byte-bounded memos hold together; 174 of 696 when measured below), so that its caches
stay within `WORKER_GROWTH_BYTES` and it evicts the least recently used entries instead of
forgetting them all. With the whole budgets, the workers of
`sweep=million_realistic`'s sample (bench/bench_million.py --every 100 --block 36) forgot
their caches 51 times in 144 tasks; with a quarter, never (peak RSS 770 MiB down to 608, CPU
within the host's noise, a few percent less)."""
WORKER_GROWTH_BYTES = 200 * 2**20
"""How much a loky worker may grow past its size after its first task before it forgets the
model's caches. Where psutil is installed, loky replaces a worker grown by 300 MB (286 MiB) and
warns "A worker stopped ... memory leak" (its memory-leak protection, which has no public
setting); the caches are not a leak, so a worker keeps them below that. On sweep=sensitivity a
worker grew by 457 MiB with 256 MiB of candidate sets, 344 MiB with 128 and 242 MiB with 64 (its
other caches were then bounded by entries), at the same CPU time within 7%."""

_worker: dict[str, int] = {}
"""This process's size after its first task (`reference_rss`), in a loky worker only."""


def start_loky_worker(run_pid: int) -> None:
    """Initializer of each local (loky) worker: `watch_parent`, and the worker's memory budget
    (`WORKER_MEMO_SHARE`, `WORKER_GROWTH_BYTES`)."""
    watch_parent(run_pid)
    scale_byte_budgets(WORKER_MEMO_SHARE)
    _worker["reference_rss"] = 0


def _rss_bytes() -> int | None:
    """This process's resident size, where psutil (which loky's check needs too) is installed."""
    try:
        psutil: Any = importlib.import_module("psutil")
    except ImportError:
        return None
    return int(psutil.Process().memory_info().rss)


def keep_within_budget() -> None:
    """In a loky worker: once grown by `WORKER_GROWTH_BYTES` past its size after its first
    task, forget the model's caches (they are rebuilt as needed), so loky never takes the
    caches for a leak."""
    if "reference_rss" not in _worker or (rss := _rss_bytes()) is None:
        return
    if not _worker["reference_rss"]:
        _worker["reference_rss"] = rss
    elif rss - _worker["reference_rss"] > WORKER_GROWTH_BYTES:
        clear_caches()
        gc.collect()


def evaluate_chunk(chunk: Sequence[Scenario], whole_grid: bool) -> list[SeriesOutcome]:
    """One joblib task: a few series, evaluated one after another (`keep_within_budget`), their
    ids from one `SeriesIds` (the chunk's scenarios share their laws, options and physics)."""
    ids = SeriesIds(whole_grid)
    outcomes = [evaluate_series(s, whole_grid, ids) for s in chunk]
    keep_within_budget()
    return outcomes


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
            dashboard_address=None,  # no dashboard for a run-scoped cluster,
            # and its scheduler's HTTP routes on a free loopback port, not :8787 of every
            # interface (taken by any other cluster, which made distributed warn)
            scheduler_kwargs={"dashboard_address": LOOPBACK_ANY_PORT},
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


def run_on_dask(
    client: Any, chunks: Iterator[list[Scenario]], whole_grid: bool
) -> Iterator[SeriesOutcome]:
    """Each chunk as one task of the dask cluster, with `DASK_TASKS_PER_WORKER` tasks per
    worker thread in flight (counted again every `DASK_WORKERS_REFRESH_S`, so workers that
    join during the run get work); outcomes as tasks finish. Tasks still running when the
    caller stops are cancelled."""
    from distributed import as_completed

    running = as_completed()
    pending: set[Any] = set()
    counted = {"at": -math.inf, "window": 1}

    def top_up() -> None:
        now = time.monotonic()
        if now - counted["at"] >= DASK_WORKERS_REFRESH_S:
            threads = sum(client.nthreads().values())
            counted.update(at=now, window=DASK_TASKS_PER_WORKER * max(1, threads))
        while len(pending) < counted["window"] and (chunk := next(chunks, None)) is not None:
            future = client.submit(evaluate_chunk, chunk, whole_grid, pure=False)
            pending.add(future)
            running.add(future)

    try:
        top_up()
        for future in running:
            outcomes = future.result()
            pending.discard(future)
            top_up()  # before yielding: the cluster works on while the caller writes
            yield from outcomes
    finally:
        if pending:
            client.cancel(list(pending))


def tasks_at_once(settings: ExecutionSettings, tasks: int) -> int:
    """How many of `tasks` chunks `run_series` evaluates at once: one in this process
    (`execution.n_jobs` = 1, or fewer than two chunks) or on dask (its workers unknown here),
    else the pool's workers (`n_jobs`, or for a negative one joblib's count: the usable CPUs
    + 1 + n_jobs), at most `tasks`."""
    if settings.backend is Backend.DASK or settings.n_jobs == 1 or tasks < 2:
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    workers = settings.n_jobs if settings.n_jobs > 0 else (cpus or 1) + 1 + settings.n_jobs
    return max(1, min(workers, tasks))


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
    chunks = chunked(scenarios, settings.chunk_size)
    head = list(itertools.islice(chunks, 2))
    if settings.backend is not Backend.DASK and (settings.n_jobs == 1 or len(head) < 2):
        for chunk in itertools.chain(head, chunks):  # no pool: one chunk runs faster in-process
            yield from evaluate_chunk(chunk, whole_grid)
        return
    if settings.backend is Backend.DASK:
        with stop_on_signals(), dask_client(settings) as client:
            yield from run_on_dask(client, itertools.chain(head, chunks), whole_grid)
        return
    import joblib  # deferred: a run without a worker pool does not pay its import

    tasks = (
        joblib.delayed(evaluate_chunk)(chunk, whole_grid) for chunk in itertools.chain(head, chunks)
    )
    workers = (
        {"initializer": start_loky_worker, "initargs": (os.getpid(),)}
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
