"""Finished series waiting to be written: one buffer per partition, flushed as one part per table.

A Parquet part per series costs a file, a zstd set-up per column and two fsyncs per table; a
part of many series costs them once. `PartBuffer` keeps the rows of finished series
(`SeriesRows`) per partition (hardware, scaling, batch law) and writes a partition's buffer as
one batch (`pipeline.app.write.write_batch`) when it holds `series_per_part` series, when its
oldest series has waited `flush_s` seconds (checked as each series arrives), and on `flush_all`,
which the run calls at its end and when it is interrupted (Ctrl-C, SIGTERM). So memory stays
flat, at most `series_per_part` series per partition and about `flush_s` seconds of results,
and a run killed outright (SIGKILL) loses at most the series still buffered, which resumption
evaluates again.

Without an index (a run without a root) nothing is written: a flush only builds the batch's
tables, which the caller may keep (`pipeline.run(write=False)`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pipeline.app.plan import FLUSH_S, SERIES_PER_PART
from pipeline.app.write import SeriesRows, Tables, tables_of, write_batch
from pipeline.io.parts import Partition, SeriesIndex, partition_key


@dataclass(slots=True)
class _Waiting:
    since: float
    rows: dict[str, SeriesRows] = field(default_factory=dict)
    """series_id -> rows: a series evaluated twice in a run is written once, as last seen."""


class PartBuffer:
    """The rows of finished series per partition, written in batches (module docstring)."""

    def __init__(
        self,
        index: SeriesIndex | None,
        series_per_part: int = SERIES_PER_PART,
        flush_s: float = FLUSH_S,
        *,
        keep: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if series_per_part < 1:
            raise ValueError(f"series_per_part must be at least 1, got {series_per_part}")
        self.index = index
        self.series_per_part = series_per_part
        self.flush_s = flush_s
        self.keep = keep
        self.clock = clock
        self.kept: list[Tables] = []
        """The flushed batches' tables, when `keep`."""
        self.batches_written = 0
        """Batches written (each one part per table that has rows)."""
        self._waiting: dict[Partition, _Waiting] = {}

    def add(self, rows: SeriesRows) -> None:
        """Buffer one finished series; flush its partition when full, and any partition whose
        oldest series has waited `flush_s`."""
        now = self.clock()
        partition = partition_key(rows.key.partition)
        waiting = self._waiting.setdefault(partition, _Waiting(now))
        waiting.rows[rows.key.series_id] = rows
        if len(waiting.rows) >= self.series_per_part:
            self._flush(partition)
        for key in [k for k, w in self._waiting.items() if now - w.since >= self.flush_s]:
            self._flush(key)

    def flush_all(self) -> None:
        """Write every buffered series (end of run, or interrupted)."""
        for key in list(self._waiting):
            self._flush(key)

    def _flush(self, partition: Partition) -> None:
        batch = list(self._waiting.pop(partition).rows.values())
        if self.index is not None:
            tables = write_batch(self.index.root, batch, self.index)
            self.batches_written += 1
        elif self.keep:
            tables = tables_of(batch)
        else:
            return
        if self.keep:
            self.kept.append(tables)
