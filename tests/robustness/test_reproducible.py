"""The same config gives the same data: across runs, chunk sizes, joblib backends and workers.

The sweep is conf/sweep/smoke.yaml (12 series: 2 batch laws x 3 latencies x 2 HBM bandwidths)
on a 3-width grid. One run is the real command in a subprocess (its own hash seed and process),
the others go through the job's own plan_run/execute_plan in-process with other execution
settings. Apart from run_id and created_at, every table must be equal, row for row.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, open_dict, read_write

from pipeline.app.execute import execute_plan
from pipeline.app.plan import plan_run
from pipeline.execute.settings import Backend, ExecutionSettings
from pipeline.identity import point_config_hash
from pipeline.io.dataset import read_points, read_thresholds
from pipeline.schema import compose_config
from tests.io.helpers import part_files
from tests.robustness.conftest import run_cli

pytestmark = pytest.mark.slow
"""Whole runs under several backends."""

SWEEP = ("sweep=smoke", "scaling.grid.max_d_model=16384")
PROVENANCE = ("run_id", "created_at")
N_SERIES = 12
SETTINGS = {
    "in_process": ExecutionSettings(n_jobs=1),
    "loky_chunk_1": ExecutionSettings(backend=Backend.LOKY, n_jobs=2, chunk_size=1),
    "loky_chunk_5": ExecutionSettings(backend=Backend.LOKY, n_jobs=2, chunk_size=5),
    "threading_chunk_2": ExecutionSettings(backend=Backend.THREADING, n_jobs=2, chunk_size=2),
}


@contextmanager
def job_config(overrides: Sequence[str]) -> Iterator[DictConfig]:
    """The config a Hydra job gets for these overrides, with HydraConfig set as in the job."""
    full = compose_config(list(overrides), return_hydra_config=True)
    hydra_config = HydraConfig.instance()
    hydra_config.set_config(full)
    try:
        with read_write(full), open_dict(full):
            del full["hydra"]
        yield full
    finally:
        hydra_config.cfg = None


def run_in_process(root: Path, settings: ExecutionSettings) -> None:
    """One run of the smoke sweep into ``root`` with these execution settings."""
    with job_config([*SWEEP, f"output.root={root}"]) as cfg:
        plan = plan_run(cfg)
        execute_plan(dataclasses.replace(plan, execution=settings), progress=False)


def tables(root: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """points and thresholds without the columns that name the run."""
    return read_points(root).drop(PROVENANCE), read_thresholds(root).drop(PROVENANCE)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The smoke sweep written by the real command with its default execution (loky, all cores)."""
    cwd = tmp_path_factory.mktemp("reference")
    result = run_cli(cwd, [*SWEEP, f"output.root={cwd / 'data'}"])
    assert result.returncode == 0, result.stderr
    return cwd / "data"


@pytest.mark.parametrize("name", list(SETTINGS))
def test_same_config_gives_same_rows_whatever_the_execution(
    reference: Path, name: str, tmp_path: Path
) -> None:
    """Rows equal the command's own, apart from run_id and created_at, for every execution setting."""
    run_in_process(tmp_path, SETTINGS[name])
    points, thresholds = tables(tmp_path)
    ref_points, ref_thresholds = tables(reference)
    assert thresholds.height == N_SERIES
    assert points.equals(ref_points)
    assert thresholds.equals(ref_thresholds)


def test_second_run_replaces_parts_with_equal_rows(reference: Path, tmp_path: Path) -> None:
    """Running the same config twice into one root leaves one copy of each row, unchanged."""
    run_in_process(tmp_path, SETTINGS["in_process"])
    first = tables(tmp_path)
    run_in_process(tmp_path, SETTINGS["in_process"])
    second = tables(tmp_path)
    assert second[0].equals(first[0])
    assert second[1].equals(first[1])
    assert len(part_files(tmp_path, "points")) == 2  # one batch per partition, the first replaced
    assert first[0].select("series_id", "d_model").is_duplicated().sum() == 0


def test_part_rows_are_written_in_width_order(reference: Path) -> None:
    """Inside every points part each series' rows are together, in ascending d_model, as
    written, not as read."""
    for path in part_files(reference, "points"):
        table = pq.read_table(path, columns=["series_id", "d_model"])
        ids, widths = table.column("series_id").to_pylist(), table.column("d_model").to_pylist()
        runs = [sid for i, sid in enumerate(ids) if i == 0 or ids[i - 1] != sid]
        assert len(runs) == len(set(runs))  # one run of rows per series
        for sid in runs:
            mine = [w for s, w in zip(ids, widths, strict=True) if s == sid]
            assert mine == sorted(mine)
            assert len(mine) == len(set(mine))


def test_each_row_carries_the_hash_of_its_scenario(reference: Path) -> None:
    """config_hash is unique per row, derived from series_id and d_model, equal to series_id in thresholds."""
    points = read_points(reference)
    assert points["config_hash"].n_unique() == points.height
    for series_id, d_model, config_hash in points.select(
        "series_id", "d_model", "config_hash"
    ).iter_rows():
        assert config_hash == point_config_hash(series_id, d_model)
    thresholds = read_thresholds(reference)
    assert thresholds["config_hash"].to_list() == thresholds["series_id"].to_list()
    assert thresholds["series_id"].n_unique() == N_SERIES
