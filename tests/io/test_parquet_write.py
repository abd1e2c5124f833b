"""Atomic part files in the hive-partitioned dataset, read back by polars and DuckDB."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

from pipeline.io import parquet
from pipeline.io.columns import POINTS_SCHEMA
from pipeline.io.dataset import read_points, read_thresholds
from pipeline.io.parquet import OutputError, check_writable
from pipeline.io.rows import SeriesKey
from pipeline.model.records.results import SeriesLimits
from tests.io.helpers import point_rows, threshold_row, write_part, write_series

LIMITS = SeriesLimits(
    linear_end_flop=1e26, last_feasible_flop=3e27, first_infeasible_flop=1e28, max_utilization=0.7
)


def _write_two_series(root, make_series, feasible_point, infeasible_point, provenance):
    """Two series in different partitions; returns their (series, points table) pairs."""
    written = []
    for series, widths in (
        (make_series("h100", "dense"), (12288, 24576)),
        (make_series("a100", "sparse"), (12288, 36864)),
    ):
        points = [feasible_point(widths[0]), infeasible_point(widths[1])]
        table = point_rows(points, series, provenance)
        thresholds = threshold_row(
            series,
            LIMITS,
            n_points=2,
            alpha=0.1,
            t_lat_s=9e-6,
            t_crit_flop=1e28,
            t_limit_flop=2e28,
            provenance=provenance,
        )
        write_series(root, table, thresholds, series.partition, series.series_id)
        written.append((series, table))
    return written


def _sorted_frame(tables: list[pa.Table]) -> pl.DataFrame:
    frame = pl.DataFrame(pa.concat_tables(tables))
    return frame.sort(["series_id", "d_model"])


def test_write_part_roundtrip_polars(
    tmp_path, make_series, feasible_point, infeasible_point, provenance
) -> None:
    """What point_rows built is what read_points returns, columns, types and values."""
    written = _write_two_series(tmp_path, make_series, feasible_point, infeasible_point, provenance)
    expected = _sorted_frame([table for _, table in written])
    got = read_points(tmp_path)
    assert got.schema == expected.schema
    assert got.equals(expected)
    assert got.columns == POINTS_SCHEMA.names
    assert len(read_thresholds(tmp_path)) == 2


def test_write_part_partition_layout(
    tmp_path, make_series, feasible_point, infeasible_point, provenance
) -> None:
    """Parts land in hardware=/scaling=/batch_law= directories without those columns inside."""
    written = _write_two_series(tmp_path, make_series, feasible_point, infeasible_point, provenance)
    series = written[0][0]
    path = tmp_path / "points/hardware=h100/scaling=dense/batch_law=critical"
    assert sorted(p.name for p in path.iterdir()) == [f"part-{series.series_id}.parquet"]
    stored = pl.read_parquet(next(path.iterdir()), hive_partitioning=False)
    assert "hardware" not in stored.columns
    assert "series_id" in stored.columns


def test_write_part_polars_hive_glob(
    tmp_path, make_series, feasible_point, infeasible_point, provenance
) -> None:
    """A plain polars hive scan of the glob reads both partitions as strings, no conflict."""
    _write_two_series(tmp_path, make_series, feasible_point, infeasible_point, provenance)
    frame = pl.scan_parquet(f"{tmp_path}/points/**/*.parquet", hive_partitioning=True).collect()
    assert frame.height == 4
    assert frame.schema["hardware"] == pl.String
    assert sorted(frame["hardware"].unique()) == ["a100", "h100"]


def test_write_part_duckdb_hive_glob(
    tmp_path, make_series, feasible_point, infeasible_point, provenance
) -> None:
    """DuckDB's hive read of the glob gives the rows, with and without declared hive types."""
    duckdb = pytest.importorskip("duckdb")
    _write_two_series(tmp_path, make_series, feasible_point, infeasible_point, provenance)
    glob = f"{tmp_path}/points/**/*.parquet"
    inferred = duckdb.sql(
        f"SELECT hardware, scaling, count(*) AS n, count(n_gpu) AS n_feasible "
        f"FROM read_parquet('{glob}', hive_partitioning = true) GROUP BY ALL ORDER BY hardware"
    ).fetchall()
    assert inferred == [("a100", "sparse", 2, 1), ("h100", "dense", 2, 1)]
    typed = duckdb.sql(
        f"SELECT typeof(hardware), typeof(created_at), typeof(n_params) FROM read_parquet('{glob}',"
        " hive_partitioning = true,"
        " hive_types = {'hardware': VARCHAR, 'scaling': VARCHAR, 'batch_law': VARCHAR}) LIMIT 1"
    ).fetchall()
    assert typed == [("VARCHAR", "TIMESTAMP WITH TIME ZONE", "DOUBLE")]


def test_write_part_same_key_replaces(
    tmp_path, make_series, feasible_point, infeasible_point, provenance
) -> None:
    """Writing a key again replaces the part rather than adding rows."""
    series = make_series()
    first = point_rows([feasible_point(12288), infeasible_point(24576)], series, provenance)
    second = point_rows([feasible_point(12288)], series, provenance)
    write_part(tmp_path, "points", first, series.partition, series.series_id)
    write_part(tmp_path, "points", second, series.partition, series.series_id)
    got = read_points(tmp_path)
    assert got.height == 1
    assert got["d_model"].to_list() == [12288]


def test_write_part_crash_keeps_previous(
    tmp_path, monkeypatch, make_series, feasible_point, infeasible_point, provenance
) -> None:
    """A write that dies between the temporary file and the rename leaves the old part alone."""
    series = make_series()
    old = point_rows([feasible_point(12288)], series, provenance)
    new = point_rows([feasible_point(12288), infeasible_point(24576)], series, provenance)
    final = write_part(tmp_path, "points", old, series.partition, series.series_id)
    before = final.read_bytes()

    def crash(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        assert Path(src).is_file()  # the temporary file was fully written
        raise KeyboardInterrupt

    monkeypatch.setattr(parquet.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        write_part(tmp_path, "points", new, series.partition, series.series_id)
    monkeypatch.undo()
    assert final.read_bytes() == before
    assert [p.name for p in final.parent.iterdir()] == [final.name]
    assert read_points(tmp_path)["d_model"].to_list() == [12288]


def test_write_part_leftover_temp_invisible(
    tmp_path, make_series, feasible_point, provenance
) -> None:
    """A temporary file left by a killed writer is read by neither polars nor DuckDB."""
    series = make_series()
    table = point_rows([feasible_point(12288)], series, provenance)
    final = write_part(tmp_path, "points", table, series.partition, series.series_id)
    leftover = final.with_name(f".{final.name}.999.deadbeef.tmp")
    leftover.write_bytes(final.read_bytes())  # a complete but never-renamed write
    assert read_points(tmp_path).height == 1
    duckdb = pytest.importorskip("duckdb")
    count = duckdb.sql(
        f"SELECT count(*) FROM read_parquet('{tmp_path}/points/**/*.parquet', "
        "hive_partitioning = true)"
    ).fetchall()
    assert count == [(1,)]


def test_write_part_rejects_rows_of_another_partition(
    tmp_path, make_series, feasible_point, provenance
) -> None:
    """Rows whose hardware differs from the partition directory are refused."""
    series = make_series("h100")
    table = point_rows([feasible_point(12288)], series, provenance)
    wrong = {**series.partition, "hardware": "a100"}
    with pytest.raises(ValueError, match="hardware other than 'a100'"):
        write_part(tmp_path, "points", table, wrong, series.series_id)


@pytest.mark.parametrize("value", ["../etc", "a/b", "x=y", ".hidden", "", "ABCDEF01", "0123"])
def test_write_part_rejects_unsafe_keys(
    tmp_path, make_series, feasible_point, provenance, value
) -> None:
    """Part keys other than a lowercase hex series id are refused: readers would not see them."""
    series = make_series()
    table = point_rows([feasible_point(12288)], series, provenance)
    with pytest.raises(ValueError, match="lowercase hex"):
        write_part(tmp_path, "points", table, series.partition, value)


@pytest.mark.parametrize("value", ["../etc", "a/b", "x=y", ".hidden", "", "my gpu"])
def test_write_part_rejects_unsafe_partition_values(
    tmp_path, make_series, feasible_point, provenance, value
) -> None:
    """Partition values that would escape or confuse the directory layout are refused."""
    series = make_series()
    table = point_rows([feasible_point(12288)], series, provenance)
    partition = {**series.partition, "hardware": value}
    with pytest.raises(ValueError, match="file-name-safe"):
        write_part(tmp_path, "points", table, partition, series.series_id)


def test_write_part_rejects_foreign_schema(tmp_path, make_series) -> None:
    """A table that is not of the points schema is refused, naming the columns."""
    series: SeriesKey = make_series()
    table = pa.table({"series_id": ["x"]})
    with pytest.raises(ValueError, match="does not match the points schema"):
        write_part(tmp_path, "points", table, series.partition, series.series_id)


def test_check_writable_creates_root(tmp_path) -> None:
    """A missing root is created and returned."""
    root = tmp_path / "a" / "b"
    assert check_writable(root) == root
    assert root.is_dir()
    assert list(root.iterdir()) == []


def test_check_writable_unwritable_root(tmp_path) -> None:
    """A root that cannot be created gives a one-line OutputError naming it."""
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(OutputError) as info:
        check_writable(blocker / "out")
    message = str(info.value)
    assert "\n" not in message
    assert str(blocker / "out") in message
    assert "not writable" in message
