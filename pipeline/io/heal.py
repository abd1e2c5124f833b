"""A run heals the partitions it writes: parts no reader accepts are set aside, never deleted.

A part that does not open, or whose columns are not its table's (an extra column, as a newer
dmlimits writes; a schema version this code does not know), is skipped by every reader
(`pipeline.io.read.check_part`), yet it would stay where it is forever, and a foreign part that
still opens would make resumption take its series for done while no reader shows them. Before
a run writes, every such part in the partitions it writes is moved, whole and under its own
name, to ROOT/.set_aside/<table>/<partition folders>/ (a numbered suffix where a name is taken),
and the run names each on stderr with its reason; the series it held are then evaluated again
and written like any other. Nothing is deleted: the user decides what to do with the files.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

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


def set_aside_bad_parts(root: Path, partitions: Iterable[Partition]) -> list[str]:
    """Move every part of the run's `partitions` that `check_part` refuses to ROOT/.set_aside/;
    return one line per part moved: `set aside PATH -> DEST: reason`."""
    lines = []
    for partition in dict.fromkeys(partitions):
        for table_name in REMOVAL_ORDER:
            for path in part_paths(partition_dir(root, table_name, dict(partition))):
                reason = check_part(path, table_name)
                if reason is None:
                    continue
                dest = _free_name(root / SET_ASIDE_DIR / path.relative_to(root))
                dest.parent.mkdir(parents=True, exist_ok=True)
                os.rename(path, dest)
                fsync_dir(path.parent)
                fsync_dir(dest.parent)
                lines.append(f"set aside {path} -> {dest}: {reason}")
    return lines
