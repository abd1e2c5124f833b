"""Evaluate many series with joblib: in-process, on local cores (loky, threads), or on dask.

Series are grouped into chunks, one joblib task each; results stream back as tasks
finish (unordered) so the caller can write each series at once and memory stays flat.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import joblib

from pipeline.execute.series import SeriesOutcome, evaluate_series
from pipeline.execute.settings import Backend, ExecutionSettings
from pipeline.schema import Scenario


def evaluate_chunk(chunk: Sequence[Scenario], whole_grid: bool) -> list[SeriesOutcome]:
    """One joblib task: a few series, evaluated one after another."""
    return [evaluate_series(s, whole_grid) for s in chunk]


def chunked(items: Sequence[Scenario], size: int) -> list[list[Scenario]]:
    """Consecutive chunks of at most `size` scenarios."""
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


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
        with Client(settings.dask_address) as client:
            yield client
        return
    with (
        LocalCluster(
            n_workers=settings.dask_workers, threads_per_worker=1, processes=True
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client


def run_series(
    scenarios: Sequence[Scenario], settings: ExecutionSettings, whole_grid: bool = False
) -> Iterator[SeriesOutcome]:
    """Yield every scenario's outcome as soon as its chunk finishes (order not guaranteed)."""
    chunks = chunked(scenarios, settings.chunk_size)
    if settings.backend is not Backend.DASK and (settings.n_jobs == 1 or len(chunks) == 1):
        for chunk in chunks:  # no pool: a single chunk runs faster in-process
            yield from evaluate_chunk(chunk, whole_grid)
        return
    tasks = (joblib.delayed(evaluate_chunk)(chunk, whole_grid) for chunk in chunks)
    if settings.backend is Backend.DASK:
        with dask_client(settings), joblib.parallel_config(backend="dask"):
            for result in joblib.Parallel(n_jobs=-1, return_as="generator_unordered")(tasks):
                yield from result
        return
    parallel = joblib.Parallel(
        n_jobs=settings.n_jobs, backend=settings.backend.value, return_as="generator_unordered"
    )
    for result in parallel(tasks):
        yield from result
