"""Resumption: which series of a run are already in the dataset, and which are still to do.

A series is done when its `thresholds` and `series` parts both exist under the dataset root.
Parts are keyed by the deterministic `series_id` and written atomically, series first and
thresholds last (`pipeline.io.parquet.write_series`), so a thresholds part proves the series'
points are there too; asking for the series part as well back-fills that table in a dataset
written before it existed. Nothing is opened: part names alone decide.

Resumption trusts existing parts. After changing the model code, re-run with
`output.resume=false`, which recomputes (and replaces) every series of the sweep.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pipeline.io.parquet import PART_PREFIX, PART_SUFFIX
from pipeline.io.read import part_files
from pipeline.sweep.expand import SweepSeries

DONE_TABLES = ("thresholds", "series")
"""Tables whose parts must all exist for a series to count as done."""


def part_keys(root: Path | str, table_name: str) -> set[str]:
    """The keys (series_id) of a table's visible parts."""
    return {p.name[len(PART_PREFIX) : -len(PART_SUFFIX)] for p in part_files(root, table_name)}


def done_series_ids(root: Path | str) -> set[str]:
    """series_id of every series complete in the dataset root."""
    keys = [part_keys(root, table) for table in DONE_TABLES]
    return set.intersection(*keys)


def pending(series: Sequence[SweepSeries], root: Path | str) -> list[SweepSeries]:
    """The series not yet complete under `root`, in their expansion order."""
    done = done_series_ids(root)
    return [s for s in series if s.series_id not in done]
