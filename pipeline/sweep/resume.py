"""Resumption: which series of a run are already in the dataset, and which are still to do.

A series is done when it has rows in every table each series writes (`DONE_TABLES`, from the
table registry) under the dataset root. A batch of series is written with its thresholds part last
(`pipeline.io.parquet.write_parts`), so a thresholds row proves the series' other rows are
there too; asking for the series table as well back-fills that table in a dataset written
before it existed. Parts may hold many series, so what they hold is read from their
`series_id` column (`pipeline.io.parts.SeriesIndex`), only in the partitions of the run's
series; parts of a version-1 dataset (one series each) are read the same way.

Resumption trusts existing rows. After changing the model code, re-run with
`output.resume=false`, which recomputes (and replaces) every series of the sweep.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from pipeline.io.columns import PARTITION_COLUMNS
from pipeline.io.parts import Partition, SeriesIndex
from pipeline.io.tables import EVERY_SERIES_TABLES
from pipeline.schema import Scenario
from pipeline.sweep.expand import SweepSeries

DONE_TABLES = EVERY_SERIES_TABLES
"""Tables that must all hold a series' rows for it to count as done: every table each series
has rows in (`pipeline.io.tables.TableSpec.every_series`), so a dataset missing one of them (a
deleted points/ folder, `pipeline.io.read.missing_tables`) is restored by resuming."""


def scenario_partition(scenario: Scenario) -> Partition:
    """The partition (hardware, scaling, batch_law) a scenario's rows are written to."""
    values = {
        "hardware": scenario.hardware_name,
        "scaling": scenario.scaling_name,
        "batch_law": scenario.batch_law_name,
    }
    return tuple((name, values[name]) for name in PARTITION_COLUMNS)


def series_index(
    root: Path | str, series: Iterable[SweepSeries], tables: Iterable[str] = DONE_TABLES
) -> SeriesIndex:
    """The parts of `tables` in the partitions of `series`, with the series each holds."""
    return SeriesIndex.build(Path(root), (scenario_partition(s.scenario) for s in series), tables)


def done_series_ids(index: SeriesIndex) -> set[str]:
    """series_id of every series complete in the indexed parts (rows in every `DONE_TABLES`)."""
    return set.intersection(*(index.series_ids(table) for table in DONE_TABLES))


def pending(
    series: Sequence[SweepSeries], root: Path | str, index: SeriesIndex | None = None
) -> list[SweepSeries]:
    """The series not yet complete under `root`, in their expansion order.

    `index` must cover the `DONE_TABLES` in the series' partitions (default: built here).
    """
    done = done_series_ids(index if index is not None else series_index(root, series))
    return [s for s in series if s.series_id not in done]
