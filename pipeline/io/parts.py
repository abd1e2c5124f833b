"""Which series each part holds: the `series_id` column of the parts of some partitions.

A part holds the rows of one or more series (`pipeline.io.parquet.part_key`), so its name no
longer says which: resumption, the rows of skipped series and the removal of series about to
be written again all start from a `SeriesIndex`, built by reading only the `series_id` column
of the parts of the partitions a run touches (never whole files, never other partitions).
Parts of a version-1 dataset (one series each) are indexed the same way. A part that does not
open is left out (`dmlimits-gather` reports it).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.io.parquet import PART_NAME, partition_dir, remove_series_rows
from pipeline.io.tables import REMOVAL_ORDER

Partition = tuple[tuple[str, str], ...]
"""A partition as a hashable value: ((column, value), ...) in `PARTITION_COLUMNS` order."""


def partition_key(partition: Mapping[str, str]) -> Partition:
    """A partition mapping as a hashable `Partition`."""
    return tuple(partition.items())


def part_series_ids(path: Path) -> frozenset[str] | None:
    """The series ids in a part (its `series_id` column only); None when it does not open."""
    try:
        column = pq.read_table(path, columns=["series_id"]).column("series_id")
    except (OSError, ValueError, KeyError):  # damaged or foreign: gather reports it
        return None
    return frozenset(column.to_pylist())


def part_paths(directory: Path) -> list[Path]:
    """The part files in one partition folder (by name; regular files only), sorted."""
    if not directory.is_dir():
        return []
    return sorted(
        path
        for path in directory.iterdir()
        if PART_NAME.fullmatch(path.name) and path.is_file() and not path.is_symlink()
    )


@dataclass(slots=True)
class SeriesIndex:
    """The parts of some partitions of a dataset root and the series each holds, per table.

    Kept up to date by the run that writes (`refresh` before a batch is written, `record`
    after), so each part is read once however many batches a run writes.
    """

    root: Path
    parts: dict[str, dict[Path, frozenset[str]]] = field(default_factory=dict)
    """Table name -> part path -> series ids."""
    written_ids: bool = True
    """Whether `record` keeps the series ids of the parts this run writes. A run that never
    writes a series twice (a streamed sweep: `pipeline.sweep.expand.unique`) never removes a
    series from its own parts, nor reads its own series back, so it need not: its index then
    does not grow with the series it writes."""

    @classmethod
    def build(
        cls,
        root: Path,
        partitions: Iterable[Partition],
        tables: Iterable[str] = REMOVAL_ORDER,
    ) -> SeriesIndex:
        """Index the parts of `tables` in `partitions` (each read for its series ids only)."""
        index = cls(Path(root))
        names = list(tables)
        for partition in dict.fromkeys(partitions):
            index.refresh(partition, names)
        return index

    def refresh(self, partition: Partition, tables: Iterable[str] = REMOVAL_ORDER) -> None:
        """Bring one partition of `tables` up to date with the disk: parts not yet indexed are
        read, parts gone are dropped (another run may have written or rewritten some)."""
        for table_name in tables:
            known = self.parts.setdefault(table_name, {})
            directory = partition_dir(self.root, table_name, dict(partition))
            on_disk = set(part_paths(directory))
            for path in [p for p in known if p.parent == directory and p not in on_disk]:
                del known[path]
            for path in sorted(on_disk - known.keys()):
                ids = part_series_ids(path)
                if ids is not None:
                    known[path] = ids

    def record(self, table_name: str, path: Path, series_ids: Iterable[str]) -> None:
        """A part this run has just written (its series ids only with `written_ids`)."""
        kept = frozenset(series_ids) if self.written_ids else frozenset()
        self.parts.setdefault(table_name, {})[path] = kept

    def series_ids(self, table_name: str) -> set[str]:
        """Every series id with rows in an indexed part of `table_name`."""
        return set().union(*self.parts.get(table_name, {}).values())

    def holding(self, table_name: str, series_ids: Collection[str]) -> list[Path]:
        """The parts of `table_name` holding rows of any of `series_ids`, sorted."""
        wanted = set(series_ids)
        return sorted(p for p, ids in self.parts.get(table_name, {}).items() if ids & wanted)

    def remove(self, series_ids: Collection[str]) -> int:
        """Remove the rows of `series_ids` from every indexed part (`REMOVAL_ORDER`), each part
        rewritten atomically or deleted when empty; the index follows. Returns parts changed."""
        gone = set(series_ids)
        changed = 0
        for table_name in [t for t in REMOVAL_ORDER if t in self.parts]:
            table = self.parts[table_name]
            for path in self.holding(table_name, gone):
                kept = remove_series_rows(path, gone)
                changed += 1
                if kept is None:
                    del table[path]
                else:
                    table[path] = table[path] - gone
        return changed
