"""Parts of many series: their keys, the series they hold, and removing a series from them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.io import parquet
from pipeline.io.columns import FORECASTS_SCHEMA
from pipeline.io.parquet import part_key, remove_series_rows, write_parts
from pipeline.io.parts import SeriesIndex, partition_key
from pipeline.io.rows import Provenance, SeriesKey
from pipeline.io.text import write_text_atomic
from pipeline.model.records.results import SeriesLimits
from tests.io.conftest import PointFactory
from tests.io.helpers import point_rows, threshold_row
from tests.robustness.damage import FIXTURE

SeriesFactory = Callable[..., SeriesKey]


def two_series_points(
    make_series: SeriesFactory, feasible_point: PointFactory, provenance: Provenance
) -> tuple[list[SeriesKey], pa.Table]:
    """Two series of one partition and their points, as one table."""
    first = make_series("h100", "dense")
    second = dataclasses.replace(first, series_id="0123456789abcdef")
    tables = [point_rows([feasible_point(12288)], s, provenance) for s in (first, second)]
    return [first, second], pa.concat_tables(tables)


def thresholds_of(keys: list[SeriesKey], provenance: Provenance) -> pa.Table:
    """One thresholds row per series."""
    limits = SeriesLimits(1e26, 3e27, 1e28, 0.7)
    rows = [
        threshold_row(
            k,
            limits,
            n_points=1,
            alpha=0.1,
            t_lat_s=9e-6,
            t_crit_flop=1e28,
            t_limit_flop=2e28,
            provenance=provenance,
        )
        for k in keys
    ]
    return pa.concat_tables(rows)


def test_part_key_is_a_hash_of_the_sorted_distinct_ids() -> None:
    """The key does not depend on the order of the ids; one series keeps its own id as key."""
    assert part_key(["bbbbbbbbbbbbbbbb", "aaaaaaaaaaaaaaaa"]) == part_key(
        ["aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "aaaaaaaaaaaaaaaa"]
    )
    assert part_key(["aaaaaaaaaaaaaaaa"]) == "aaaaaaaaaaaaaaaa"
    assert parquet.PART_KEY.fullmatch(part_key(["aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb"]))


def test_part_key_refuses_an_empty_part() -> None:
    """A part holds at least one series."""
    with pytest.raises(ValueError, match="at least one"):
        part_key([])


def test_write_parts_writes_one_part_of_several_series_marker_last(
    tmp_path: Path,
    make_series: SeriesFactory,
    feasible_point: PointFactory,
    provenance: Provenance,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each table is one part keyed by its series, empty tables are skipped, the last is last:
    every temporary file is fsynced before any rename, the others' folders before the marker's
    rename, and the marker's folder last."""
    keys, points = two_series_points(make_series, feasible_point, provenance)
    events: list[tuple[str, str]] = []
    real_replace, real_fsync = parquet.os.replace, parquet.fsync_dir

    def record(source: str, target: Path) -> None:
        events.append(("rename", Path(target).parts[-5]))  # the table folder
        real_replace(source, target)

    def fsync(path: Path) -> None:
        if path.name.endswith(parquet.TEMP_SUFFIX):
            events.append(("fsync temp", path.parts[-5]))
        else:
            events.append(("fsync dir", path.parts[-4]))
        real_fsync(path)

    monkeypatch.setattr(parquet.os, "replace", record)
    monkeypatch.setattr(parquet, "fsync_dir", fsync)
    tables = [
        ("points", points),
        ("forecasts", FORECASTS_SCHEMA.empty_table()),
        ("thresholds", thresholds_of(keys, provenance)),
    ]
    written = write_parts(tmp_path, tables, keys[0].partition)
    name = f"part-{part_key(k.series_id for k in keys)}.parquet"
    assert [p.name for p in written] == [name, name]
    assert sorted(events[:2]) == [("fsync temp", "points"), ("fsync temp", "thresholds")]
    assert events[2:] == [
        ("rename", "points"),
        ("fsync dir", "points"),
        ("rename", "thresholds"),
        ("fsync dir", "thresholds"),
    ]
    assert pq.read_table(written[0]).num_rows == 2


def test_remove_series_rows_rewrites_or_deletes_a_part(
    tmp_path: Path, make_series: SeriesFactory, feasible_point: PointFactory, provenance: Provenance
) -> None:
    """Removing one of two series keeps the other's rows under the same name; the last deletes it."""
    keys, points = two_series_points(make_series, feasible_point, provenance)
    (path,) = write_parts(tmp_path, [("points", points)], keys[0].partition)
    assert remove_series_rows(path, [keys[0].series_id]) == path
    assert pq.read_table(path).column("series_id").to_pylist() == [keys[1].series_id]
    assert remove_series_rows(path, ["fedcba9876543210"]) == path  # holds none: untouched
    assert remove_series_rows(path, [keys[1].series_id]) is None
    assert not path.exists()


def test_series_index_reads_ids_and_follows_removals(
    tmp_path: Path, make_series: SeriesFactory, feasible_point: PointFactory, provenance: Provenance
) -> None:
    """The index lists which part holds which series, skips a damaged part, and tracks removal."""
    keys, points = two_series_points(make_series, feasible_point, provenance)
    (path,) = write_parts(tmp_path, [("points", points)], keys[0].partition)
    write_text_atomic(path.with_name("part-00000000deadbeef.parquet"), "not parquet")
    partition = partition_key(keys[0].partition)
    index = SeriesIndex.build(tmp_path, [partition])
    assert index.holding("points", [keys[1].series_id]) == [path]
    assert index.series_ids("points") == {k.series_id for k in keys}
    assert index.remove([keys[0].series_id]) == 1
    assert index.series_ids("points") == {keys[1].series_id}
    path.unlink()
    index.refresh(partition)
    assert index.series_ids("points") == set()


def test_remove_series_rows_keeps_a_version1_part_a_version1_part(tmp_path: Path) -> None:
    """A part of an older schema version, rewritten without some rows, still reads as that version."""
    target = tmp_path / "part-0123456789abcdef.parquet"
    a, b = FIXTURE.glob("points/hardware=h100_sxm/scaling=*/batch_law=critical/*.parquet")
    pq.write_table(pa.concat_tables([pq.read_table(a), pq.read_table(b)]), target)
    dense = pq.read_table(a).column("series_id")[0].as_py()
    assert remove_series_rows(target, [dense]) == target
    assert pq.read_table(target).equals(pq.read_table(b))
    assert pq.read_table(target).column("schema_version").to_pylist() == [1, 1]
