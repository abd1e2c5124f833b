"""The table registry: every registered table is written by a run, read back, viewed, documented
and returned by `pipeline.run`."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import pipeline
from pipeline.app.api import Result
from pipeline.app.write import write_run_tables
from pipeline.bi.views import build_database
from pipeline.io.columns import PARTITION_COLUMNS
from pipeline.io.read import read_table, table_parts
from pipeline.io.tables import (
    BY_NAME,
    COMPLETION_MARKER,
    REMOVAL_ORDER,
    RUN_SCOPE_TABLES,
    SERIES_TABLES,
    TABLES,
    Scope,
    TableSpec,
    table_spec,
)
from pipeline.sweep.resume import DONE_TABLES
from tests.command import VOLATILE

DOCS = Path(__file__).resolve().parents[2] / "docs"
MOVING = [
    "scaling.grid.max_d_model=16384",
    "execution.n_jobs=1",
    "forecast.moving_frontier_years=[2024,2030]",
    "+forecast.uncertainty={samples: 8, seed: 1, inputs: "
    "{hardware.u_eff: {distribution: uniform, low: 0.6, high: 0.8}}}",
    "forecast.reality=true",
]
"""Three paper-grid sizes with a moving frontier over two years, an 8-point uncertainty
design and the reality check: a run that writes every table."""


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Result]:
    """A run with a moving frontier, written into a fresh root, and its result."""
    root = tmp_path_factory.mktemp("tables") / "dataset"
    return root, pipeline.run(MOVING, write=True, root=root)


def test_registry_names_are_unique_and_looked_up() -> None:
    """Each name is registered once; an unknown name is a ValueError naming the tables."""
    assert len(BY_NAME) == len(TABLES)
    assert table_spec("points") is BY_NAME["points"]
    with pytest.raises(ValueError, match="expected one of"):
        table_spec("point")


@pytest.mark.parametrize("spec", TABLES, ids=lambda s: s.name)
def test_registry_keys_are_columns_of_their_table(spec: TableSpec) -> None:
    """Sort keys, the part-key column and the partition columns are columns of the table."""
    names = spec.schema.names
    assert set(spec.sort_keys) <= set(names)
    assert spec.part_key_column in names
    assert set(spec.partition_columns) <= set(names)
    assert spec.partitioned == (spec.partition_columns == PARTITION_COLUMNS)
    assert spec.rows.startswith("one per ")


def test_registry_write_order_ends_with_the_resumption_marker() -> None:
    """The completion marker is written last and removed first, and resumption checks it."""
    assert SERIES_TABLES[-1] == COMPLETION_MARKER == REMOVAL_ORDER[0]
    assert sorted(REMOVAL_ORDER) == sorted(SERIES_TABLES)
    assert COMPLETION_MARKER in DONE_TABLES
    assert set(DONE_TABLES) <= set(SERIES_TABLES)


def test_every_table_is_written_by_a_run(written: tuple[Path, Result]) -> None:
    """A run with a moving frontier and a design writes at least one readable part of every
    table."""
    root, _ = written
    for spec in TABLES:
        assert table_parts(root, spec.name).parts, spec.name
        read = read_table(root, spec.name)
        assert read.frame is not None, spec.name
        assert read.frame.height, spec.name
        assert not read.skipped, spec.name


def test_every_table_is_in_the_result(written: tuple[Path, Result]) -> None:
    """`pipeline.run` returns every table it writes, as written, under the table's name."""
    root, result = written
    assert list(result.tables) == [spec.name for spec in TABLES]
    for spec in TABLES:
        frame = getattr(result, spec.name)
        assert frame is result.tables[spec.name]
        on_disk = read_table(root, spec.name).frame
        assert on_disk is not None
        assert frame.drop(VOLATILE).equals(on_disk.drop(VOLATILE)), spec.name


def test_result_unknown_table_is_an_attribute_error(written: tuple[Path, Result]) -> None:
    """A name that is no table fails as a missing attribute would, naming the tables."""
    _, result = written
    with pytest.raises(AttributeError, match="points"):
        _ = result.point
    assert {spec.name for spec in TABLES} <= set(dir(result))


def test_every_table_has_a_bi_view(written: tuple[Path, Result], tmp_path: Path) -> None:
    """The BI database has a view and a latest_ view of every table, with its rows."""
    root, result = written
    views, skipped = build_database(root, tmp_path / "dmlimits.duckdb")
    assert not skipped
    import duckdb

    with duckdb.connect(str(tmp_path / "dmlimits.duckdb"), read_only=True) as con:
        for spec in TABLES:
            assert {spec.name, f"latest_{spec.name}"} <= set(views)
            (count,) = con.execute(f"SELECT count(*) FROM {spec.name}").fetchone() or (0,)
            assert count == result.tables[spec.name].height, spec.name


def test_every_table_is_listed_in_docs_schema() -> None:
    """docs/schema.md has a section per table and shows each table's folder in its layout."""
    text = (DOCS / "schema.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## `(\w+)`$", text, flags=re.MULTILINE)
    assert sorted(sections) == sorted(BY_NAME)
    for spec in TABLES:
        layout = "hardware=H/scaling=S/batch_law=B/" if spec.scope is Scope.SERIES else ""
        assert f"ROOT/{spec.name}/{layout}part-" in text, spec.name


def test_every_table_is_listed_in_docs_api() -> None:
    """docs/api.md's table of `Result` attributes names every table."""
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \|", text, flags=re.MULTILINE)
    assert set(BY_NAME) <= set(rows)


def test_run_without_moving_frontier_returns_empty_frontier_frames() -> None:
    """A run without a moving frontier still has every table, the frontier's ones empty."""
    result = pipeline.run(MOVING[:2])
    for spec in TABLES:
        frame = result.tables[spec.name]
        assert isinstance(frame, pl.DataFrame)
        assert frame.columns == spec.schema.names
    assert result.frontier.height == result.trends.height == 0
    assert result.thresholds.height == 1


def test_resumed_run_returns_every_table(written: tuple[Path, Result]) -> None:
    """A run that skips every series (resume) returns the same rows of every table, read back."""
    root, first = written
    again = pipeline.run([*MOVING, "output.resume=true"], write=True, root=root)
    assert (again.report.skipped, len(again.report.outcomes)) == (1, 0)
    for spec in TABLES:
        frame = again.tables[spec.name].drop(VOLATILE)
        assert frame.equals(first.tables[spec.name].drop(VOLATILE)), spec.name


def test_per_run_table_without_rows_writes_no_part(tmp_path: Path) -> None:
    """A per-run table with no rows leaves no part (a part names the inputs of its rows)."""
    empty = {name: BY_NAME[name].schema.empty_table() for name in RUN_SCOPE_TABLES}
    assert write_run_tables(tmp_path, empty) == []
    assert not any(tmp_path.iterdir())


def test_frontier_part_of_version_3_reads_without_its_wall(
    written: tuple[Path, Result], tmp_path: Path
) -> None:
    """A `frontier` part written before the table had `wall_flop` and `end_reason` (version 3),
    nor `linear_end_beyond_grid` (version 17), is read, those columns null, not refused as
    damaged."""
    (part,) = table_parts(written[0], "frontier").parts
    added = ["wall_flop", "end_reason", "linear_end_beyond_grid"]
    old = pq.read_table(part).drop_columns(added)
    old = old.set_column(
        old.schema.get_field_index("schema_version"),
        "schema_version",
        pa.array([3] * old.num_rows, old.schema.field("schema_version").type),
    )
    target = tmp_path / part.relative_to(written[0])
    target.parent.mkdir(parents=True)
    pq.write_table(old, target)
    read = read_table(tmp_path, "frontier")
    assert read.skipped == ()
    assert read.frame is not None
    assert read.frame.height == old.num_rows
    for name in added:
        assert read.frame[name].null_count() == old.num_rows
