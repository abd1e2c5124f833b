"""Reading the dataset back, and checking a dataset as a whole.

`read_points` and `read_thresholds` return polars frames with every column of the schema, in
schema order, sorted by series_id (then d_model), through the one reader `pipeline.io.read`.
`gather` checks every part as that reader does and counts rows and series: what is wrong is a
part file that does not open or does not match the schema, a series without thresholds, a
series with rows in two parts of one per-series table (`read.part_series`, the check by which
`read_table` and `dmlimits-bi` refuse such a table). Files that are not parts (a copy, a
foreign file, a backup folder) are listed as ignored: no reader reads them. The root may be a dataset root or a
nightly root (every date is checked). The `dmlimits-gather` command (`pipeline.cli.gather`)
prints this report, with the Hydra jobs of a multirun that did not finish.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pipeline.io.parquet import OutputError
from pipeline.io.read import (
    Skipped,
    checked_parts,
    dated_dirs,
    missing_tables,
    not_read_total,
    part_series,
    read_or_empty,
    root_entries_skipped,
    table_parts,
)
from pipeline.io.tables import SERIES_TABLES, TABLES

if TYPE_CHECKING:
    import polars as pl


def temp_files(root: Path | str, table_name: str) -> list[Path]:
    """Temporary files left by writers that died before renaming (invisible to readers)."""
    return list(table_parts(Path(root), table_name).temp_files)


def read_points(root: Path | str) -> pl.DataFrame:
    """The `points` table, sorted by series_id and d_model (empty with the schema if none)."""
    return read_or_empty(Path(root), "points")


def read_thresholds(root: Path | str) -> pl.DataFrame:
    """The `thresholds` table, sorted by series_id (empty with the schema if none)."""
    return read_or_empty(Path(root), "thresholds")


MAX_IGNORED_SHOWN = 20
"""Ignored entries the report lists one by one; the rest are counted (a root given by mistake,
say a home directory, holds hundreds)."""


@dataclass(frozen=True, slots=True)
class GatherReport:
    """What `gather` found in a dataset or nightly root."""

    root: Path
    n_parts: int
    """Accepted part files over every table."""
    n_point_rows: int
    n_threshold_rows: int
    n_series: int
    """Distinct series_id over the points and thresholds tables."""
    incomplete_series: tuple[str, ...]
    """series_id with `points` rows but no `thresholds` row (the job died between the two)."""
    bad_parts: tuple[str, ...]
    """"path: reason" for each part file that does not open or does not match the schema."""
    temp_files: tuple[Path, ...]
    """Leftovers of interrupted writes; the next write into their folder deletes them."""
    ignored: tuple[str, ...] = ()
    """"path: reason" for files and folders that are not parts of the dataset (never read)."""
    n_dates: int | None = None
    """Dated partitions of a nightly root; None for a plain dataset root."""
    split_series: tuple[str, ...] = ()
    """series_id with rows in two parts of one per-series table (`forecasts`, `frontier`,
    `series`, `points`, `thresholds`) of one dataset directory (the writer keeps each series in
    one part per table; `read.part_series`): every reader refuses such a table."""
    not_read: str | None = None
    """The rows of the bad parts, in total (`read.not_read_total`); None without a bad part."""

    @property
    def ok(self) -> bool:
        """No unreadable part, no incomplete or split series."""
        return not (self.bad_parts or self.incomplete_series or self.split_series)

    @property
    def empty(self) -> bool:
        """Nothing of a dataset here: no part of any table, readable or not, no leftover."""
        return not (self.n_parts or self.bad_parts or self.temp_files or self.n_dates)

    def format(self) -> str:
        """The report as a few lines of text, ending with its verdict."""
        return "\n".join([*self.findings(), "ok" if self.ok else "NOT OK"])

    def findings(self) -> list[str]:
        """The report's lines without its verdict: the counts, then each finding."""
        dates = "" if self.n_dates is None else f"{self.n_dates} dates, "
        lines = [
            f"dataset {self.root}: {dates}{self.n_parts} parts, {self.n_series} series, "
            f"{self.n_point_rows} point rows, {self.n_threshold_rows} threshold rows",
        ]
        lines += [f"bad part: {entry}" for entry in self.bad_parts]
        lines += [] if self.not_read is None else [self.not_read]
        lines += [f"series without thresholds: {sid}" for sid in self.incomplete_series]
        lines += [f"series in two parts of one table: {sid}" for sid in self.split_series]
        lines += [f"ignored: {entry}" for entry in self.ignored[:MAX_IGNORED_SHOWN]]
        if len(self.ignored) > MAX_IGNORED_SHOWN:
            more = len(self.ignored) - MAX_IGNORED_SHOWN
            lines.append(f"... and {more} more ignored (files and folders no reader reads)")
        lines += [f"leftover temporary file: {path}" for path in self.temp_files]
        return lines


@dataclass(slots=True)
class _Tally:
    parts: int = 0
    point_rows: int = 0
    threshold_rows: int = 0
    point_series: set[str] = field(default_factory=set)
    threshold_series: set[str] = field(default_factory=set)
    split_series: set[str] = field(default_factory=set)


def _scan_directory(
    directory: Path, tally: _Tally, bad: list[Skipped], ignored: list[str]
) -> list[Path]:
    """Check every part of every table of one dataset directory; return its temporary files."""
    temps: list[Path] = []
    bad += missing_tables(directory)
    for table_name in (t.name for t in TABLES):
        good, skipped = checked_parts(directory, table_name)
        for entry in skipped:
            if entry.damaged:
                bad.append(entry)
            else:
                ignored.append(str(entry))
        temps += table_parts(directory, table_name).temp_files
        tally.parts += len(good)
        if table_name not in SERIES_TABLES:
            continue
        found = part_series(good)  # the check `read_table` and `dmlimits-bi` refuse by
        tally.split_series.update(found.split)
        if table_name == "points":
            tally.point_rows += found.rows
            tally.point_series |= found.series
        elif table_name == "thresholds":
            tally.threshold_rows += found.rows
            tally.threshold_series |= found.series
    return temps


def gather(root: Path | str) -> GatherReport:
    """Check a dataset or nightly root: which parts are readable, rows and series, leftovers.

    Each date of a nightly root is checked as one dataset. An empty directory is an empty
    report (`GatherReport.empty`).
    """
    base = Path(root)
    if not base.is_dir():
        raise OutputError(f"dataset root {base} does not exist or is not a directory")
    bad: list[Skipped] = []
    ignored = [str(entry) for entry in root_entries_skipped(base)]
    dates, skipped_dates = dated_dirs(base)
    ignored += [str(entry) for entry in skipped_dates]
    tally = _Tally()
    temps: list[Path] = []
    for directory in [path for _, path in dates] or [base]:
        temps += _scan_directory(directory, tally, bad, ignored)
    return GatherReport(
        root=base,
        n_parts=tally.parts,
        n_point_rows=tally.point_rows,
        n_threshold_rows=tally.threshold_rows,
        n_series=len(tally.point_series | tally.threshold_series),
        incomplete_series=tuple(sorted(tally.point_series - tally.threshold_series)),
        bad_parts=tuple(str(entry) for entry in bad),
        temp_files=tuple(temps),
        ignored=tuple(ignored),
        n_dates=len(dates) if dates else None,
        split_series=tuple(sorted(tally.split_series)),
        not_read=not_read_total(bad),
    )
