"""Resumption: a killed sweep, run again, evaluates only what is missing and ends as if whole."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.io.parquet import part_key, partition_dir
from pipeline.io.read import read_or_empty
from pipeline.io.tables import SERIES_TABLES
from pipeline.schema import compose_config
from pipeline.sweep import SweepSeries, done_series_ids, expand_sweep, pending
from pipeline.sweep.resume import DONE_TABLES, scenario_partition, series_index
from tests.command import command_env, dmlimits, dmlimits_argv, stable_table
from tests.io.helpers import part_files

pytestmark = pytest.mark.slow
"""Sweeps killed and resumed in subprocesses."""

SMOKE = ["sweep=smoke", "execution.n_jobs=1", "output.series_per_part=2"]
"""Twelve series, one after another in-process, written two to a part, so a kill lands
between two batches."""


def stand_in_part(root: Path, table: str, series: SweepSeries, *more: SweepSeries) -> None:
    """A part holding only the series_id column of some series of one partition (what
    resumption reads)."""
    ids = [s.series_id for s in (series, *more)]
    directory = partition_dir(root, table, dict(scenario_partition(series.scenario)))
    directory.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table({"series_id": ids}), directory / f"part-{part_key(ids)}.parquet")


def test_pending_skips_series_with_rows_in_every_series_table(tmp_path: Path) -> None:
    """A series is done when parts of every table each series writes hold it (`DONE_TABLES`);
    points and series alone are not enough."""
    overrides = ["sweep=smoke"]
    series = expand_sweep(compose_config(overrides), overrides=overrides)
    first, second, third = series[:3]
    for table in DONE_TABLES:
        stand_in_part(tmp_path, table, first, second)
    stand_in_part(tmp_path, "series", third)
    stand_in_part(tmp_path, "points", third)  # killed before its thresholds
    (tmp_path / "thresholds" / "hardware=h").mkdir()  # another partition: never read
    index = series_index(tmp_path, series)
    assert done_series_ids(index) == {first.series_id, second.series_id}
    left = pending(series, tmp_path)
    assert [s.series_id for s in left] == [s.series_id for s in series[2:]]


def visible_parts_open(root: Path) -> int:
    """Every file a reader's `**/*.parquet` glob sees is a whole Parquet file; their count."""
    files = list(root.glob("**/*.parquet"))
    for path in files:
        assert not path.name.startswith("."), path
        pq.read_metadata(path)  # raises on a partial file
    return len(files)


def kill_after_first_series(cwd: Path, root: Path) -> None:
    """Start the smoke sweep and SIGKILL it as soon as one series is complete."""
    process = subprocess.Popen(
        dmlimits_argv(*SMOKE, f"output.root={root}"),
        cwd=cwd,
        env=command_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not part_files(root, "thresholds"):
            assert process.poll() is None, "the sweep ended before it could be killed"
            assert time.monotonic() < deadline
            if root.is_dir():
                visible_parts_open(root)
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def no_duplicate_series(root: Path) -> None:
    """Every table holds each series' rows once: one row per series (per d_model in points)."""
    for table, keys in [
        ("thresholds", ["series_id"]),
        ("series", ["series_id"]),
        ("points", ["series_id", "d_model"]),
        ("forecasts", ["series_id", "growth_per_year"]),
    ]:
        assert read_or_empty(root, table).select(keys).is_duplicated().sum() == 0, table


def run_ids(root: Path) -> dict[str, str]:
    """series_id -> run_id of its thresholds row."""
    rows = read_or_empty(root, "thresholds").select("series_id", "run_id").rows()
    return dict(rows)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")
def test_killed_sweep_resumes_to_the_uninterrupted_dataset(tmp_path: Path) -> None:
    """A sweep killed after its first batch and run again ends with the uninterrupted rows."""
    interrupted, whole = tmp_path / "interrupted", tmp_path / "whole"
    kill_after_first_series(tmp_path, interrupted)
    visible_parts_open(interrupted)
    done_at_kill = run_ids(interrupted)
    assert 1 <= len(done_at_kill) < 12

    resumed = dmlimits(tmp_path, *SMOKE, f"output.root={interrupted}")
    assert resumed.returncode == 0, resumed.stderr
    assert f"({len(done_at_kill)} already done)" in resumed.stderr
    reference = dmlimits(tmp_path, *SMOKE, f"output.root={whole}")
    assert reference.returncode == 0, reference.stderr

    visible_parts_open(interrupted)
    assert visible_parts_open(whole) < 12 * len(SERIES_TABLES)  # several series to a part
    no_duplicate_series(interrupted)
    after = run_ids(interrupted)
    assert {s: after[s] for s in done_at_kill} == done_at_kill  # not evaluated again
    for table in SERIES_TABLES:
        mine, reference_rows = stable_table(interrupted, table), stable_table(whole, table)
        if table == "series":  # the overrides name each run's own output.root
            renamed = mine["overrides"].str.replace(str(interrupted), str(whole), literal=True)
            assert renamed.equals(reference_rows["overrides"])
            mine, reference_rows = mine.drop("overrides"), reference_rows.drop("overrides")
        assert mine.equals(reference_rows), table
    points = [json.loads(p) for p in stable_table(whole, "series")["sweep_point"]]
    assert {p["batch"] for p in points} == {"critical", "constant"}


def test_resume_false_recomputes_every_series(tmp_path: Path) -> None:
    """With output.resume=false a second run evaluates and replaces every series, no duplicate."""
    root = tmp_path / "data"
    args = [*SMOKE, "scaling.grid.max_d_model=12288", f"output.root={root}"]
    assert dmlimits(tmp_path, *args).returncode == 0
    first = stable_table(root, "thresholds")
    again = dmlimits(tmp_path, *args, "output.resume=false", "output.series_per_part=5")
    assert again.returncode == 0, again.stderr
    assert "already done" not in again.stderr
    assert len(set(run_ids(root).values())) == 1  # all from the second run
    no_duplicate_series(root)
    assert stable_table(root, "thresholds").equals(first)
    assert read_or_empty(root, "points").height == pl.Series(first["n_points"]).sum()
