"""Datasets with one foreign or damaged file in them, built from the schema v1 fixture.

Each damage adds a file or folder next to the fixture's good parts and returns its path; the
good parts stay as they are, so a reader that mixes the damaged file in shows extra, null or
retyped rows, and one that refuses a good part shows fewer.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

FIXTURE = Path(__file__).parent.parent / "fixtures" / "dataset_v1"
"""Two series (dense, sparse) written by the schema v1 writer: tests/fixtures/README.md."""
DATE = "run_date=2025-01-01"
"""The one date of the nightly root made from the fixture."""
CLEAN_ROWS = {"points": 4, "thresholds": 2, "forecasts": 4, "series": 2}
"""Rows per table in the fixture."""

Damage = Callable[[Path], Path]


def plain_copy(root: Path) -> Path:
    """The fixture copied to `root` (a plain dataset root)."""
    shutil.copytree(FIXTURE, root)
    return root


def nightly_copy(root: Path) -> Path:
    """A nightly root whose one date holds the fixture."""
    root.mkdir(parents=True)
    shutil.copytree(FIXTURE, root / DATE)
    return root


def dataset_dir(root: Path) -> Path:
    """The folder holding the tables: the root, or its one date."""
    dated = root / DATE
    return dated if dated.is_dir() else root


def a_part(root: Path, table: str = "points") -> Path:
    """The dense series' part of a table."""
    folder = dataset_dir(root) / table / "hardware=h100_sxm" / "scaling=dense"
    return folder / "batch_law=critical" / "part-c21b0265b90f2fb7.parquet"


NEW_NAME = "part-00000000deadbeef.parquet"
"""A name the writer could have given: a damaged file under it is named like a good part."""


def _rewrite(root: Path, change: Callable[[pa.Table], pa.Table], table: str = "points") -> Path:
    """A copy of a good part with its table changed, under a new part name beside it."""
    source = a_part(root, table)
    target = source.with_name(NEW_NAME)
    pq.write_table(change(pq.read_table(source)), target)
    return target


def foreign_parquet(root: Path) -> Path:
    """Another program's Parquet file, named like a part."""
    target = a_part(root).with_name(NEW_NAME)
    pq.write_table(pa.table({"a": [1, 2], "b": ["x", "y"]}), target)
    return target


def foreign_parquet_own_name(root: Path) -> Path:
    """Another program's Parquet file under its own name."""
    target = a_part(root).with_name("export.parquet")
    pq.write_table(pa.table({"series_id": ["x"], "d_model": [1]}), target)
    return target


def truncated_part(root: Path) -> Path:
    """The first half of a good part, under a part name (a copy cut short)."""
    data = a_part(root).read_bytes()
    target = a_part(root).with_name(NEW_NAME)
    target.write_bytes(data[: len(data) // 2])
    return target


def empty_part(root: Path) -> Path:
    """A zero-byte file named like a part."""
    target = a_part(root).with_name(NEW_NAME)
    target.write_bytes(b"")
    return target


def copied_part(root: Path) -> Path:
    """A file manager's copy: `part-X (copy).parquet`, identical rows."""
    target = a_part(root).with_name("part-c21b0265b90f2fb7 (copy).parquet")
    shutil.copy(a_part(root), target)
    return target


def backup_suffix_part(root: Path) -> Path:
    """An editor's backup of a part: `part-X.parquet.bak`."""
    target = a_part(root).with_name("part-c21b0265b90f2fb7.parquet.bak")
    shutil.copy(a_part(root), target)
    return target


def uppercase_part(root: Path) -> Path:
    """A copy whose id is upper case: not a name the writer gives."""
    target = a_part(root).with_name("part-C21B0265B90F2FB7.parquet")
    shutil.copy(a_part(root), target)
    return target


def missing_column(root: Path) -> Path:
    """A part without one of its version's columns (`utilization`)."""
    return _rewrite(root, lambda t: t.drop_columns(["utilization"]))


def missing_required_column(root: Path) -> Path:
    """A part without a required column (`d_model`)."""
    return _rewrite(root, lambda t: t.drop_columns(["d_model"]))


def extra_column(root: Path) -> Path:
    """A part with a column no schema version has."""
    return _rewrite(root, lambda t: t.append_column("note", pa.array(["x"] * t.num_rows)))


def retyped_column(root: Path) -> Path:
    """A part whose `d_model` is a string column."""
    return _rewrite(
        root,
        lambda t: t.set_column(
            t.schema.get_field_index("d_model"), "d_model", t.column("d_model").cast(pa.string())
        ),
    )


def retyped_float_column(root: Path) -> Path:
    """A part whose `alpha` (thresholds) is a string column."""
    return _rewrite(
        root,
        lambda t: t.set_column(
            t.schema.get_field_index("alpha"), "alpha", t.column("alpha").cast(pa.string())
        ),
        table="thresholds",
    )


def newer_version(root: Path) -> Path:
    """A part claiming a schema version this code does not know."""
    index = pq.read_schema(a_part(root)).get_field_index("schema_version")
    return _rewrite(
        root,
        lambda t: t.set_column(index, "schema_version", pa.array([99] * t.num_rows, pa.int32())),
    )


def part_with_partition_column(root: Path) -> Path:
    """A part that stores a partition column inside the file (the writer drops them)."""
    return _rewrite(root, lambda t: t.append_column("hardware", pa.array(["x"] * t.num_rows)))


def other_table_part(root: Path) -> Path:
    """A good thresholds part placed among the points parts."""
    target = a_part(root).with_name(NEW_NAME)
    shutil.copy(a_part(root, "thresholds"), target)
    return target


def directory_named_like_part(root: Path) -> Path:
    """A folder named like a part."""
    target = a_part(root).with_name(NEW_NAME)
    target.mkdir()
    return target


def part_above_partitions(root: Path) -> Path:
    """A good part copied straight into the table folder, outside any partition."""
    target = dataset_dir(root) / "points" / NEW_NAME
    shutil.copy(a_part(root), target)
    return target


def unsafe_partition_folder(root: Path) -> Path:
    """A copy of a partition folder under a name with a space (no writer makes it)."""
    source = dataset_dir(root) / "points" / "hardware=h100_sxm"
    target = source.with_name("hardware=h100 sxm")
    shutil.copytree(source, target)
    return target


def backup_partition_folder(root: Path) -> Path:
    """A copy of a partition folder as a backup: `scaling=dense (old)`."""
    source = dataset_dir(root) / "points" / "hardware=h100_sxm" / "scaling=dense"
    target = source.with_name("scaling=dense (old)")
    shutil.copytree(source, target)
    return target


def keyless_partition_folder(root: Path) -> Path:
    """A copy of a partition folder without its `key=` prefix."""
    source = dataset_dir(root) / "points" / "hardware=h100_sxm"
    target = source.with_name("h100_sxm")
    shutil.copytree(source, target)
    return target


def stray_text_file(root: Path) -> Path:
    """Notes left in a table folder."""
    target = dataset_dir(root) / "points" / "README.txt"
    target.write_text("numbers from last week\n")
    return target


PLAIN_DAMAGES: dict[str, Damage] = {
    f.__name__: f
    for f in (
        foreign_parquet,
        foreign_parquet_own_name,
        truncated_part,
        empty_part,
        copied_part,
        backup_suffix_part,
        uppercase_part,
        missing_column,
        missing_required_column,
        extra_column,
        retyped_column,
        retyped_float_column,
        newer_version,
        part_with_partition_column,
        other_table_part,
        directory_named_like_part,
        part_above_partitions,
        unsafe_partition_folder,
        backup_partition_folder,
        keyless_partition_folder,
        stray_text_file,
    )
}
"""Damages of a plain dataset root (each also applies inside a nightly date)."""

BAD_PARTS = {
    "foreign_parquet",
    "truncated_part",
    "empty_part",
    "missing_column",
    "missing_required_column",
    "extra_column",
    "retyped_column",
    "retyped_float_column",
    "newer_version",
    "part_with_partition_column",
    "other_table_part",
    "directory_named_like_part",
}
"""Damages that put a bad file under a part's name: `dmlimits-gather` says NOT OK."""


def backup_date_folder(root: Path) -> Path:
    """A copy of a date as a backup: `run_date=2025-01-01 (old)`."""
    target = root / f"{DATE} (old)"
    shutil.copytree(root / DATE, target)
    return target


def impossible_date_folder(root: Path) -> Path:
    """A copy of a date under an impossible date, which would sort as the newest."""
    target = root / "run_date=2025-13-45"
    shutil.copytree(root / DATE, target)
    return target


def compact_date_folder(root: Path) -> Path:
    """A copy of a date written without dashes."""
    target = root / "run_date=20250102"
    shutil.copytree(root / DATE, target)
    return target


def date_file(root: Path) -> Path:
    """A file named like a date."""
    target = root / "run_date=2025-01-03"
    target.write_text("not a folder\n")
    return target


NIGHTLY_DAMAGES: dict[str, Damage] = {
    f.__name__: f
    for f in (backup_date_folder, impossible_date_folder, compact_date_folder, date_file)
}
"""Damages of a nightly root's dated folders."""
