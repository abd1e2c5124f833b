"""The joblib runner: lazy chunks, and the same rows whatever the backend (loky, threads, dask)."""

from __future__ import annotations

import contextlib
import itertools
import os
import pickle
import socket
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from distributed import Client, LocalCluster, get_task_stream

from pipeline.execute import runner
from pipeline.execute.runner import chunked, run_series, tasks_at_once
from pipeline.execute.series import SeriesOutcome
from pipeline.execute.settings import Backend, ExecutionSettings
from pipeline.identity import series_id
from pipeline.io.rows import Provenance, SeriesKey
from pipeline.model.caches import scale_byte_budgets
from pipeline.model.search import candidates
from pipeline.model.search.candidates import (
    CANDIDATE_CACHE_BYTES,
    REALISTIC_ROWS_CACHE_BYTES,
)
from pipeline.model.search.memo import ByteBoundedMemo
from pipeline.schema import Scenario, compose_config
from pipeline.sweep import expand_scenarios
from tests.command import dmlimits, stable_table
from tests.io.helpers import point_rows

TINY = ["scaling.grid.max_d_model=16384"]
NO_HTTP_ON_8787 = {
    "dashboard_address": None,
    "scheduler_kwargs": {"dashboard_address": runner.LOOPBACK_ANY_PORT},
}
"""A test cluster's scheduler serves HTTP on a free loopback port: :8787 may be another's."""
PROVENANCE = Provenance(run_id="test", created_at=datetime(2025, 1, 1, tzinfo=UTC))


def _candidates_memo() -> ByteBoundedMemo:
    """The model's candidate-set cache, with its byte budget."""
    return candidates._candidates


def _rows_memo() -> ByteBoundedMemo:
    """The model's realistic row-set cache, with its byte budget."""
    return candidates._realistic_rows


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    """Twelve small series (sweep=smoke), three widths each."""
    overrides = [*TINY, "sweep=smoke"]
    return expand_scenarios(compose_config(overrides), overrides=overrides)


def rows(outcomes: Iterator[SeriesOutcome]) -> pa.Table:
    """Every point row of the outcomes, in series_id order, with a fixed provenance."""
    tables = []
    for o in sorted(outcomes, key=lambda o: o.series_id):
        s = o.scenario
        key = SeriesKey(
            s.hardware_name, s.scaling_name, s.batch_law_name, s.duration_s, o.series_id, s.year_s
        )
        tables.append(point_rows(o.points, key, PROVENANCE))
    return pa.concat_tables(tables)


def test_chunked_reads_its_input_lazily() -> None:
    """Chunks are cut as they are consumed, so an endless input is fine."""
    chunks = chunked(itertools.count(), 3)  # type: ignore[arg-type]
    assert next(chunks) == [0, 1, 2]
    assert next(chunks) == [3, 4, 5]


def test_run_series_backends_give_the_same_rows(scenarios: list[Scenario]) -> None:
    """In-process, loky and threading runs give identical rows, series by series."""
    inline = rows(run_series(scenarios, ExecutionSettings(n_jobs=1)))
    loky = rows(run_series(scenarios, ExecutionSettings(n_jobs=2, chunk_size=2)))
    threads = rows(
        run_series(scenarios, ExecutionSettings(Backend.THREADING, n_jobs=2, chunk_size=1))
    )
    assert inline.num_rows == 12 * 3
    assert loky.equals(inline)
    assert threads.equals(inline)


@pytest.mark.slow
def test_run_series_on_a_running_dask_cluster(scenarios: list[Scenario]) -> None:
    """A run connected to a 2-worker dask.distributed cluster gives the loky rows."""
    loky = rows(run_series(scenarios, ExecutionSettings(n_jobs=2, chunk_size=2)))
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, **NO_HTTP_ON_8787
    ) as cluster:
        settings = ExecutionSettings(
            Backend.DASK, chunk_size=2, dask_address=cluster.scheduler_address
        )
        dask = rows(run_series(scenarios, settings))
    assert dask.equals(loky)


def cluster_tasks(records: list[dict[str, object]]) -> list[str]:
    """The workers that ran each of the run's chunks, from a scheduler's task stream."""
    return [str(r["worker"]) for r in records if str(r["key"]).startswith("evaluate_chunk")]


@contextlib.contextmanager
def one_worker_cluster() -> Iterator[tuple[LocalCluster, Client, Any]]:
    """A local cluster of one single-threaded worker process, a client and its task stream."""
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, **NO_HTTP_ON_8787
        ) as cluster,
        Client(cluster) as client,
        get_task_stream(client) as stream,
    ):
        yield cluster, client, stream


@pytest.mark.slow
def test_run_series_dask_one_worker_cluster_runs_the_tasks(scenarios: list[Scenario]) -> None:
    """On a one-worker cluster every chunk is a task of the cluster, none runs in the caller."""
    with one_worker_cluster() as (cluster, _, stream):
        settings = ExecutionSettings(
            Backend.DASK, chunk_size=5, dask_address=cluster.scheduler_address
        )
        outcomes = list(run_series(scenarios, settings))
    assert len(outcomes) == len(scenarios)
    assert len(cluster_tasks(stream.data)) == 3  # 12 series in chunks of 5


@pytest.mark.slow
def test_run_series_dask_gives_work_to_workers_that_join(
    scenarios: list[Scenario], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that joins the cluster during a run gets some of its chunks."""
    monkeypatch.setattr(runner, "DASK_WORKERS_REFRESH_S", 0.0)
    with one_worker_cluster() as (cluster, client, stream):
        settings = ExecutionSettings(
            Backend.DASK, chunk_size=1, dask_address=cluster.scheduler_address
        )
        outcomes = run_series(scenarios, settings)
        first = next(outcomes)
        cluster.scale(2)
        client.wait_for_workers(2)
        rest = list(outcomes)
    assert len([first, *rest]) == len(scenarios)
    assert len(set(cluster_tasks(stream.data))) == 2


@pytest.mark.slow
def test_run_series_dask_local_cluster_leaves_port_8787_alone(scenarios: list[Scenario]) -> None:
    """A run-scoped local cluster starts without a warning while another process holds :8787."""
    with socket.socket() as holder:
        with contextlib.suppress(OSError):  # already held by another process: as good
            holder.bind(("0.0.0.0", 8787))
            holder.listen()
        settings = ExecutionSettings(Backend.DASK, chunk_size=4, dask_workers=1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            outcomes = list(run_series(scenarios, settings))
    assert len(outcomes) == len(scenarios)


@pytest.mark.slow
def test_dmlimits_dask_local_cluster_matches_loky(tmp_path: Path) -> None:
    """`execution.backend=dask` on its own 2-worker local cluster writes the loky run's rows."""
    common = ["sweep=smoke", *TINY, "execution.chunk_size=2"]
    loky = dmlimits(tmp_path, *common, f"output.root={tmp_path / 'loky'}")
    assert loky.returncode == 0, loky.stderr
    dask = dmlimits(
        tmp_path,
        *common,
        "execution.backend=dask",
        "execution.dask_workers=2",
        f"output.root={tmp_path / 'dask'}",
    )
    assert dask.returncode == 0, dask.stderr
    for table in ("points", "thresholds"):
        expected = stable_table(tmp_path / "loky", table)
        assert expected.height > 0
        assert stable_table(tmp_path / "dask", table).equals(expected), table


@pytest.fixture
def loky_worker(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """This process as a loky worker (its budget set), its size a list the test advances."""
    sizes = [100 * 2**20]
    monkeypatch.setattr(runner, "watch_parent", lambda run_pid: None)
    monkeypatch.setattr(runner, "_rss_bytes", lambda: sizes[0])
    monkeypatch.setattr(runner, "_worker", {})
    runner.start_loky_worker(0)
    yield sizes
    scale_byte_budgets(1.0)


def test_loky_worker_forgets_caches_before_loky_takes_them_for_a_leak(
    loky_worker: list[int], scenarios: list[Scenario]
) -> None:
    """A worker keeps a quarter of each byte-bounded memo's budget (64 MiB of candidates), and
    forgets its caches once grown by the budget."""
    runner.evaluate_chunk(scenarios[:1], False)  # the first task: its size is the reference
    assert _candidates_memo().max_bytes == 64 * 2**20 == CANDIDATE_CACHE_BYTES // 4
    assert _rows_memo().max_bytes == REALISTIC_ROWS_CACHE_BYTES // 4
    assert _candidates_memo().cache_info().currsize > 0
    loky_worker[0] += runner.WORKER_GROWTH_BYTES  # grown by the budget exactly: kept
    runner.evaluate_chunk(scenarios[:1], False)
    assert _candidates_memo().cache_info().currsize > 0
    loky_worker[0] += 1
    runner.evaluate_chunk(scenarios[1:2], False)
    assert _candidates_memo().cache_info().currsize == 0


@pytest.mark.slow
def test_sensitivity_sweep_on_loky_has_no_worker_restart(tmp_path: Path) -> None:
    """sweep=sensitivity on two loky workers (psutil installed) ends without loky's
    "worker stopped ... memory leak" warning: the model's caches fit its memory budget."""
    pytest.importorskip("psutil")
    args = ("sweep=sensitivity", "execution.n_jobs=2", f"output.root={tmp_path / 'data'}")
    result = dmlimits(tmp_path, *args, timeout=1800)  # 360 series: minutes on a busy machine
    assert result.returncode == 0, result.stderr
    assert "worker stopped" not in result.stderr


def test_tasks_at_once_is_the_pools_workers_at_most_the_tasks() -> None:
    """In-process and dask runs count one task at once; a pool its workers, at most the tasks."""
    cpus = len(os.sched_getaffinity(0))
    local = ExecutionSettings(n_jobs=2)
    assert tasks_at_once(local, 8) == 2
    assert tasks_at_once(local, 1) == 1
    assert tasks_at_once(ExecutionSettings(n_jobs=1), 8) == 1
    assert tasks_at_once(ExecutionSettings(n_jobs=-1), 1000) == cpus
    assert tasks_at_once(ExecutionSettings(n_jobs=-1), 1) == 1


@pytest.mark.parametrize(
    ("chunk", "block", "rounded"), [(8, 36, 36), (40, 36, 72), (8, 2, 8), (1, 2, 2), (5, 1, 5)]
)
def test_chunks_round_up_to_whole_blocks(chunk: int, block: int, rounded: int) -> None:
    """`in_blocks` rounds the series per task up to a multiple of the block, no further."""
    assert ExecutionSettings(chunk_size=chunk).in_blocks(block).chunk_size == rounded


def test_a_chunk_gives_each_series_its_own_id(scenarios: list[Scenario]) -> None:
    """The ids a task gives its series (one `SeriesIds` for the chunk, its scenarios sharing
    their parts) are `series_id`'s, unpickled as a worker receives them."""
    chunk = pickle.loads(pickle.dumps(scenarios))
    outcomes = runner.evaluate_chunk(chunk, False)
    assert [o.series_id for o in outcomes] == [series_id(s, False) for s in scenarios]
    assert len(set(o.series_id for o in outcomes)) == len(scenarios)
