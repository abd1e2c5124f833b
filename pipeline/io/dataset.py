"""Reading the dataset back, and checking a finished sweep.

`read_points` and `read_thresholds` return polars frames with every column of the schema, in
schema order, sorted by series_id (then d_model), through the one reader `pipeline.io.read`.
`gather` checks every part as that reader does, counts rows and series, and lists the Hydra jobs
that did not finish.

Job-completion convention: a sweep job calls `mark_done(job_dir)` as its last act, which
writes `<job output dir>/.dmlimits_done`. A job directory of a Hydra multirun (the numbered
subdirectories 0, 1, 2, … of the sweep directory) without that file is a failed job: it crashed,
was killed, or is still running.

    dmlimits-gather ROOT [--multirun DIR]

prints the report and exits 1 if anything is wrong: a part file that does not open or does not
match the schema, a series without thresholds, a series with rows in two parts of one table, a
failed job. Files that are not parts (a copy,
a foreign file, a backup folder) are listed as ignored: no reader reads them. ROOT may be a
dataset root or a nightly root (every date is checked); an empty directory is ok.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq

from pipeline.io.parquet import OutputError
from pipeline.io.read import (
    checked_parts,
    dated_dirs,
    read_or_empty,
    root_entries_skipped,
    table_parts,
)
from pipeline.io.tables import TABLES
from pipeline.io.text import write_text_atomic

if TYPE_CHECKING:
    import polars as pl

DONE_MARKER = ".dmlimits_done"


def temp_files(root: Path | str, table_name: str) -> list[Path]:
    """Temporary files left by writers that died before renaming (invisible to readers)."""
    return list(table_parts(Path(root), table_name).temp_files)


def read_points(root: Path | str) -> pl.DataFrame:
    """The `points` table, sorted by series_id and d_model (empty with the schema if none)."""
    return read_or_empty(Path(root), "points")


def read_thresholds(root: Path | str) -> pl.DataFrame:
    """The `thresholds` table, sorted by series_id (empty with the schema if none)."""
    return read_or_empty(Path(root), "thresholds")


def mark_done(job_dir: Path | str, detail: Mapping[str, Any] | None = None) -> Path:
    """Mark a sweep job as finished: write `<job_dir>/.dmlimits_done` (JSON), atomically."""
    content = {"finished_at": datetime.now(UTC).isoformat(timespec="seconds"), **(detail or {})}
    return write_text_atomic(
        Path(job_dir) / DONE_MARKER, json.dumps(content, sort_keys=True) + "\n"
    )


def failed_jobs(multirun_dir: Path | str) -> tuple[list[int], int]:
    """Job numbers of a Hydra multirun directory without a done marker, and the job count."""
    sweep = Path(multirun_dir)
    if not sweep.is_dir():
        raise OutputError(f"multirun directory {sweep} does not exist")
    jobs = sorted(int(p.name) for p in sweep.iterdir() if p.is_dir() and p.name.isdigit())
    return [j for j in jobs if not (sweep / str(j) / DONE_MARKER).is_file()], len(jobs)


@dataclass(frozen=True, slots=True)
class GatherReport:
    """What `gather` found in a dataset or nightly root (and a multirun directory, if given)."""

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
    n_jobs: int | None
    """Job directories in the multirun directory; None when none was given."""
    failed_jobs: tuple[int, ...]
    ignored: tuple[str, ...] = ()
    """"path: reason" for files and folders that are not parts of the dataset (never read)."""
    n_dates: int | None = None
    """Dated partitions of a nightly root; None for a plain dataset root."""
    split_series: tuple[str, ...] = ()
    """series_id with rows in two parts of the `points` or `thresholds` table of one dataset
    directory (the writer keeps each series in one part per table)."""

    @property
    def ok(self) -> bool:
        """No unreadable part, no incomplete or split series, no failed job."""
        return not (
            self.bad_parts or self.incomplete_series or self.split_series or self.failed_jobs
        )

    def format(self) -> str:
        """The report as a few lines of text."""
        dates = "" if self.n_dates is None else f"{self.n_dates} dates, "
        lines = [
            f"dataset {self.root}: {dates}{self.n_parts} parts, {self.n_series} series, "
            f"{self.n_point_rows} point rows, {self.n_threshold_rows} threshold rows",
        ]
        if self.n_jobs is not None:
            failed = ", ".join(map(str, self.failed_jobs)) or "none"
            lines.append(f"jobs: {self.n_jobs}, failed (no {DONE_MARKER}): {failed}")
        lines += [f"bad part: {entry}" for entry in self.bad_parts]
        lines += [f"series without thresholds: {sid}" for sid in self.incomplete_series]
        lines += [f"series in two parts of one table: {sid}" for sid in self.split_series]
        lines += [f"ignored: {entry}" for entry in self.ignored]
        lines += [f"leftover temporary file: {path}" for path in self.temp_files]
        lines.append("ok" if self.ok else "NOT OK")
        return "\n".join(lines)


@dataclass(slots=True)
class _Tally:
    parts: int = 0
    point_rows: int = 0
    threshold_rows: int = 0
    point_series: set[str] = field(default_factory=set)
    threshold_series: set[str] = field(default_factory=set)
    split_series: set[str] = field(default_factory=set)


def _scan_directory(
    directory: Path, tally: _Tally, bad: list[str], ignored: list[str]
) -> list[Path]:
    """Check every part of every table of one dataset directory; return its temporary files."""
    temps: list[Path] = []
    for table_name in (t.name for t in TABLES):
        good, skipped = checked_parts(directory, table_name)
        for entry in skipped:
            (bad if entry.damaged else ignored).append(str(entry))
        temps += table_parts(directory, table_name).temp_files
        tally.parts += len(good)
        if table_name not in ("points", "thresholds"):
            continue
        seen: set[str] = set()
        for path in good:
            ids = pq.read_table(path, columns=["series_id"]).column("series_id").to_pylist()
            distinct = set(ids)
            tally.split_series |= distinct & seen
            seen |= distinct
            if table_name == "points":
                tally.point_rows += len(ids)
                tally.point_series.update(ids)
            else:
                tally.threshold_rows += len(ids)
                tally.threshold_series.update(ids)
    return temps


def gather(root: Path | str, multirun_dir: Path | None = None) -> GatherReport:
    """Check a dataset or nightly root: which parts are readable, rows and series, leftovers.

    Each date of a nightly root is checked as one dataset. With `multirun_dir`, also list its
    job directories that have no done marker. An empty directory is a valid, empty dataset.
    """
    base = Path(root)
    if not base.is_dir():
        raise OutputError(f"dataset root {base} does not exist or is not a directory")
    bad: list[str] = []
    ignored = [str(entry) for entry in root_entries_skipped(base)]
    dates, skipped_dates = dated_dirs(base)
    ignored += [str(entry) for entry in skipped_dates]
    tally = _Tally()
    temps: list[Path] = []
    for directory in [path for _, path in dates] or [base]:
        temps += _scan_directory(directory, tally, bad, ignored)
    failed, n_jobs = failed_jobs(multirun_dir) if multirun_dir is not None else ([], None)
    return GatherReport(
        root=base,
        n_parts=tally.parts,
        n_point_rows=tally.point_rows,
        n_threshold_rows=tally.threshold_rows,
        n_series=len(tally.point_series | tally.threshold_series),
        incomplete_series=tuple(sorted(tally.point_series - tally.threshold_series)),
        bad_parts=tuple(bad),
        temp_files=tuple(temps),
        n_jobs=n_jobs,
        failed_jobs=tuple(failed),
        ignored=tuple(ignored),
        n_dates=len(dates) if dates else None,
        split_series=tuple(sorted(tally.split_series)),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print the gather report of a dataset root; exit status 1 unless it is ok."""
    parser = argparse.ArgumentParser(
        prog="dmlimits-gather",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("root", type=Path, help="dataset root (holds points/ and thresholds/)")
    parser.add_argument("--multirun", type=Path, default=None, help="Hydra multirun sweep dir")
    args = parser.parse_args(argv)
    try:
        report = gather(args.root, args.multirun)
    except OutputError as exc:
        print(f"dmlimits-gather: error: {exc}", file=sys.stderr)
        return 2
    print(report.format())
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
