"""Reading the dataset back and checking it as a whole with gather."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.io.columns import POINTS_SCHEMA, THRESHOLDS_SCHEMA
from pipeline.io.dataset import GatherReport, gather, read_points, read_thresholds
from pipeline.io.parquet import OutputError
from pipeline.io.read import SplitSeriesError, part_series, read_table
from pipeline.model.records.results import SeriesLimits
from tests.io.helpers import (
    part_files,
    point_rows,
    split_part,
    threshold_row,
    write_part,
    write_series,
)
from tests.nightly.runs import plain_run

LIMITS = SeriesLimits(
    linear_end_flop=None, last_feasible_flop=3e27, first_infeasible_flop=1e28, max_utilization=0.7
)


def _write(root, series, points, provenance, *, with_thresholds: bool = True) -> None:
    table = point_rows(points, series, provenance)
    if not with_thresholds:
        write_part(root, "points", table, series.partition, series.series_id)
        return
    thresholds = threshold_row(
        series,
        LIMITS,
        n_points=len(points),
        alpha=0.0,
        t_lat_s=9e-6,
        t_crit_flop=1e28,
        t_limit_flop=2e28,
        provenance=provenance,
    )
    write_series(root, table, thresholds, series.partition, series.series_id)


def _bad_parts(report: GatherReport) -> list[str]:
    """The report's bad parts, less the tables a hand-written dataset of points and thresholds
    lacks (forecasts, series: `read.missing_tables`)."""
    return [entry for entry in report.bad_parts if ": table missing" not in entry]


def test_read_points_empty_root_has_schema(tmp_path) -> None:
    """An empty dataset reads as empty frames with every column."""
    assert read_points(tmp_path).columns == POINTS_SCHEMA.names
    assert read_thresholds(tmp_path).columns == THRESHOLDS_SCHEMA.names
    assert read_points(tmp_path).height == 0


def test_read_points_sorted_by_series_then_width(
    tmp_path, make_series, feasible_point, infeasible_point, provenance
) -> None:
    """Rows from several parts come back ordered by series_id, then d_model."""
    for hardware in ("h100", "a100", "h200"):
        points = [infeasible_point(36864), feasible_point(12288)]
        _write(tmp_path, make_series(hardware), points, provenance)
    frame = read_points(tmp_path)
    keys = list(zip(frame["series_id"], frame["d_model"], strict=True))
    assert keys == sorted(keys)


def test_gather_counts_rows_series_parts(
    tmp_path, make_series, feasible_point, infeasible_point, provenance
) -> None:
    """gather counts parts over both tables, rows of each table, and distinct series."""
    _write(tmp_path, make_series("h100"), [feasible_point(12288)], provenance)
    _write(
        tmp_path, make_series("a100"), [feasible_point(12288), infeasible_point(24576)], provenance
    )
    report = gather(tmp_path)
    assert (report.n_parts, report.n_point_rows, report.n_threshold_rows) == (4, 3, 2)
    assert report.n_series == 2
    assert _bad_parts(report) == []
    assert [entry.split(": ")[0] for entry in report.bad_parts] == [
        str(tmp_path / "forecasts"),
        str(tmp_path / "series"),
    ], "the tables every series writes and this hand-written dataset lacks"
    assert report.incomplete_series == ()
    assert report.split_series == ()


def test_gather_reports_corrupt_part(tmp_path, make_series, feasible_point, provenance) -> None:
    """A part that does not open as Parquet is reported, not raised."""
    series = make_series()
    _write(tmp_path, series, [feasible_point(12288)], provenance)
    broken = (
        tmp_path
        / "points"
        / "hardware=x"
        / "scaling=y"
        / "batch_law=z"
        / "part-0123456789abcdef.parquet"
    )
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"PAR1 truncated")
    report = gather(tmp_path)
    assert len(_bad_parts(report)) == 1
    assert "part-0123456789abcdef.parquet" in _bad_parts(report)[0]
    assert not report.ok


def test_gather_reports_other_schema(tmp_path, make_series, feasible_point, provenance) -> None:
    """A part lacking columns of its own schema version is reported as bad."""
    _write(tmp_path, make_series(), [feasible_point(12288)], provenance)
    other = tmp_path / "points" / "hardware=x" / "scaling=y" / "batch_law=z"
    other = other / "part-0123456789abcdef.parquet"
    other.parent.mkdir(parents=True)
    table = pa.table({"series_id": ["old"], "d_model": [1], "schema_version": [1]})
    pq.write_table(table, other)
    report = gather(tmp_path)
    assert len(_bad_parts(report)) == 1
    assert "missing columns" in _bad_parts(report)[0]


def test_gather_reports_series_without_thresholds(
    tmp_path, make_series, feasible_point, provenance
) -> None:
    """A series with points but no thresholds row (its job died in between) is incomplete."""
    series = make_series()
    _write(tmp_path, series, [feasible_point(12288)], provenance, with_thresholds=False)
    report = gather(tmp_path)
    assert report.incomplete_series == (series.series_id,)
    assert not report.ok


def test_gather_reports_series_in_two_parts(
    tmp_path, make_series, feasible_point, provenance
) -> None:
    """A series whose rows are in two parts of one table (never written so) is not ok."""
    series = make_series()
    _write(tmp_path, series, [feasible_point(12288)], provenance)
    table = point_rows([feasible_point(12288)], series, provenance)
    write_part(tmp_path, "points", table, series.partition, "00000000deadbeef")
    report = gather(tmp_path)
    assert report.split_series == (series.series_id,)
    assert "series in two parts of one table" in report.format()
    assert not report.ok


def test_reader_refuses_a_table_with_a_series_in_two_parts(
    tmp_path, make_series, feasible_point, provenance
) -> None:
    """The reader refuses the table gather reports split (one check, `read.part_series`): its
    rows would be read twice. The other tables of the directory still read."""
    for hardware in ("h100", "a100"):
        _write(tmp_path, make_series(hardware), [feasible_point(12288)], provenance)
    split_part(tmp_path, "points")
    found = part_series(part_files(tmp_path, "points"))
    assert (found.rows, len(found.series), len(found.split)) == (3, 2, 1)
    assert gather(tmp_path).split_series == found.split
    with pytest.raises(SplitSeriesError, match=r"1 series has rows in two parts of the points"):
        read_points(tmp_path)
    with pytest.raises(SplitSeriesError, match=rf"\(e\.g\. {found.split[0]}\).*dmlimits-gather"):
        read_table(tmp_path, "points", ["series_id"])
    assert read_thresholds(tmp_path).height == 2


def test_gather_reports_a_split_series_in_every_per_series_table(tmp_path) -> None:
    """Not only points and thresholds: a series in two parts of `forecasts` or `series` (which
    a BI view or the report would count twice) makes the dataset NOT OK too."""
    plain_run(tmp_path)
    assert gather(tmp_path).ok
    for table in ("forecasts", "series"):
        copy = split_part(tmp_path, table)
        report = gather(tmp_path)
        assert len(report.split_series) == 1, table
        assert not report.ok
        copy.unlink()


def test_gather_missing_root(tmp_path) -> None:
    """A root that does not exist is an OutputError, not an empty report."""
    with pytest.raises(OutputError, match="does not exist"):
        gather(tmp_path / "nope")
