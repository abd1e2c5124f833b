"""A run heals the partitions it writes: refused parts that hold its series are set aside, never
deleted.

A part that does not open, or whose columns are not its table's (an extra column, as a newer
dmlimits writes; a schema version this code does not know), is skipped by every reader
(`pipeline.io.read.check_part`), yet it would stay where it is forever, and a foreign part that
still opens would make resumption take its series for done while no reader shows them.

The rule: before a run writes, a refused part in the partitions it writes is moved when it holds
one of the run's series, or may hold one: its `series_id` column names a series of the run, or
cannot be read (the file does not open, or has no readable `series_id`), so what it holds is
unknown. A refused part whose `series_id` column names none of the run's series is left where
it is (another run's rows, or a newer version's; every reader keeps naming it). A part is moved
whole and under its own name to ROOT/.set_aside/<table>/<partition folders>/ (a numbered suffix
where a name is taken), and the run names each on stderr with its reason; the run's series are
then evaluated again and written like any other. Nothing is deleted: the user decides what to do
with the files.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.io.parquet import fsync_dir, partition_dir
from pipeline.io.parts import Partition, part_paths
from pipeline.io.read import SET_ASIDE_DIR, check_part
from pipeline.io.tables import REMOVAL_ORDER


def _free_name(path: Path) -> Path:
    """`path`, or `path` with `.1`, `.2`, ... appended where the name is taken."""
    candidate, n = path, 0
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.{n}")
    return candidate


def held_series(path: Path) -> set[str] | None:
    """The series_id values a part holds; None when they cannot be read (the file does not
    open, or has no readable `series_id` column)."""
    try:
        column = pq.read_table(path, columns=["series_id"]).column("series_id")
    except (OSError, ValueError, KeyError):  # ArrowInvalid is a ValueError
        return None
    return {str(value) for value in column.to_pylist()}


def why_set_aside(path: Path, series_ids: Collection[str]) -> str | None:
    """Why a refused part goes (it holds, or may hold, a series of the run); None to leave it."""
    held = held_series(path)
    if held is None:
        return "what it holds cannot be read, it may hold this run's series"
    ours = len(held & set(series_ids))
    return f"holds {ours} of this run's series" if ours else None


def set_aside_bad_parts(
    root: Path, partitions: Iterable[Partition], series_ids: Collection[str]
) -> list[str]:
    """Move the parts of the run's `partitions` that `check_part` refuses and that hold, or may
    hold, one of `series_ids` (module docstring) to ROOT/.set_aside/; return one line per part
    moved: `set aside PATH -> DEST: reason (why)`. `series_ids` is read only for a refused part
    (a run may make it lazily)."""
    lines = []
    for partition in dict.fromkeys(partitions):
        for table_name in REMOVAL_ORDER:
            for path in part_paths(partition_dir(root, table_name, dict(partition))):
                reason = check_part(path, table_name)
                if reason is None or (why := why_set_aside(path, series_ids)) is None:
                    continue
                dest = _free_name(root / SET_ASIDE_DIR / path.relative_to(root))
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.rename(path, dest)
                fsync_dir(path.parent)
                fsync_dir(dest.parent)
                lines.append(f"set aside {path} -> {dest}: {reason} ({why})")
    return lines
