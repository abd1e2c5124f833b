"""Reading the dataset back, and checking a finished sweep.

`read_points` and `read_thresholds` return polars frames with every column of the schema, in
schema order, sorted by series_id (then d_model). `gather` opens every part, counts rows and
series, and lists the Hydra jobs that did not finish.

Job-completion convention: a sweep job calls `mark_done(job_dir)` as its last act, which
writes `<job output dir>/.dmlimits_done`. A job directory of a Hydra multirun (the numbered
subdirectories 0, 1, 2, … of the sweep directory) without that file is a failed job: it crashed,
was killed, or is still running.

    dmlimits-gather ROOT [--multirun DIR]

prints the report and exits 1 if anything is wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

from pipeline.io.columns import (
    PARTITION_COLUMNS,
    SCHEMA_VERSION,
    SORT_KEYS,
    TABLES,
    file_schema,
)
from pipeline.io.parquet import PART_PREFIX, PART_SUFFIX, TEMP_SUFFIX, OutputError
from pipeline.io.text import write_text_atomic

DONE_MARKER = ".dmlimits_done"

HIVE_SCHEMA: dict[str, pl.DataType] = {name: pl.String() for name in PARTITION_COLUMNS}
"""Partition values are always read as strings (no type inference from directory names)."""


def part_files(root: Path | str, table_name: str) -> list[Path]:
    """The visible part files of a table, sorted by path (temporary files excluded)."""
    table_dir = Path(root) / table_name
    if not table_dir.is_dir():
        return []
    return sorted(table_dir.glob(f"*=*/*=*/*=*/{PART_PREFIX}*{PART_SUFFIX}"))


def temp_files(root: Path | str, table_name: str) -> list[Path]:
    """Temporary files left by writers that died before renaming (invisible to readers)."""
    table_dir = Path(root) / table_name
    if not table_dir.is_dir():
        return []
    return sorted(table_dir.glob(f"*=*/*=*/*=*/.{PART_PREFIX}*{TEMP_SUFFIX}"))


def _read(root: Path | str, table_name: str) -> pl.DataFrame:
    schema = TABLES[table_name]
    if not part_files(root, table_name):
        return pl.DataFrame(schema.empty_table())
    pattern = str(Path(root) / table_name / "**" / f"*{PART_SUFFIX}")
    frame = pl.scan_parquet(pattern, hive_partitioning=True, hive_schema=HIVE_SCHEMA)
    return frame.select(schema.names).sort(list(SORT_KEYS[table_name])).collect()


def read_points(root: Path | str) -> pl.DataFrame:
    """The `points` table, sorted by series_id and d_model (empty with the schema if none)."""
    return _read(root, "points")


def read_thresholds(root: Path | str) -> pl.DataFrame:
    """The `thresholds` table, sorted by series_id (empty with the schema if none)."""
    return _read(root, "thresholds")


def read_series(root: Path | str) -> pl.DataFrame:
    """The `series` table, sorted by series_id (empty with the schema if none)."""
    return _read(root, "series")


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
    """What `gather` found in a dataset root (and a multirun directory, if given)."""

    root: Path
    n_parts: int
    """Visible part files over both tables."""
    n_point_rows: int
    n_threshold_rows: int
    n_series: int
    """Distinct series_id over both tables."""
    incomplete_series: tuple[str, ...]
    """series_id with `points` rows but no `thresholds` row (the job died between the two)."""
    bad_parts: tuple[str, ...]
    """"path: reason" for each part that does not open or does not match the schema."""
    temp_files: tuple[Path, ...]
    """Leftovers of interrupted writes; harmless, safe to delete when no run is writing."""
    n_jobs: int | None
    """Job directories in the multirun directory; None when none was given."""
    failed_jobs: tuple[int, ...]

    @property
    def ok(self) -> bool:
        """No unreadable part, no incomplete series, no failed job."""
        return not (self.bad_parts or self.incomplete_series or self.failed_jobs)

    def format(self) -> str:
        """The report as a few lines of text."""
        lines = [
            f"dataset {self.root}: {self.n_parts} parts, {self.n_series} series, "
            f"{self.n_point_rows} point rows, {self.n_threshold_rows} threshold rows",
        ]
        if self.n_jobs is not None:
            failed = ", ".join(map(str, self.failed_jobs)) or "none"
            lines.append(f"jobs: {self.n_jobs}, failed (no {DONE_MARKER}): {failed}")
        lines += [f"bad part: {entry}" for entry in self.bad_parts]
        lines += [f"series without thresholds: {sid}" for sid in self.incomplete_series]
        if self.temp_files:
            lines.append(f"leftover temporary files: {len(self.temp_files)}")
        lines.append("ok" if self.ok else "NOT OK")
        return "\n".join(lines)


def _scan_parts(root: Path, table_name: str, bad: list[str]) -> tuple[int, int, set[str]]:
    """Open every part of a table: (parts, rows, series ids); problems appended to `bad`."""
    expected = file_schema(table_name)
    parts = part_files(root, table_name)
    rows, series = 0, set()
    for path in parts:
        try:
            schema = pq.read_schema(path)
            if not schema.equals(expected):
                bad.append(f"{path}: schema differs from {table_name} v{SCHEMA_VERSION}")
                continue
            ids = pq.read_table(path, columns=["series_id"]).column("series_id")
        except (OSError, ValueError) as exc:  # ArrowInvalid is a ValueError
            bad.append(f"{path}: {exc}")
            continue
        rows += len(ids)
        series.update(ids.to_pylist())
    return len(parts), rows, series


def gather(root: Path | str, multirun_dir: Path | None = None) -> GatherReport:
    """Check a dataset root: every part opens with the right schema; count rows and series.

    With `multirun_dir`, also list its job directories that have no done marker.
    """
    base = Path(root)
    if not base.is_dir():
        raise OutputError(f"dataset root {base} does not exist")
    bad: list[str] = []
    n_point_parts, n_point_rows, point_series = _scan_parts(base, "points", bad)
    n_thr_parts, n_thr_rows, thr_series = _scan_parts(base, "thresholds", bad)
    failed, n_jobs = failed_jobs(multirun_dir) if multirun_dir is not None else ([], None)
    temps = temp_files(base, "points") + temp_files(base, "thresholds")
    return GatherReport(
        root=base,
        n_parts=n_point_parts + n_thr_parts,
        n_point_rows=n_point_rows,
        n_threshold_rows=n_thr_rows,
        n_series=len(point_series | thr_series),
        incomplete_series=tuple(sorted(point_series - thr_series)),
        bad_parts=tuple(bad),
        temp_files=tuple(temps),
        n_jobs=n_jobs,
        failed_jobs=tuple(failed),
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
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report.format())
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
