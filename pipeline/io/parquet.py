"""Atomic, idempotent Parquet part files in a hive-partitioned dataset.

Layout under a dataset root (partition columns are directory names, not stored in the files):

    ROOT/<table>/hardware=H/scaling=S/batch_law=B/part-<key>.parquet

where <table> is a per-series table of the registry (`pipeline.io.tables`: points, thresholds,
series, ...); a per-run table (trends) is ROOT/<table>/part-<key>.parquet. A part holds the
rows of one or more series of its partition, and its key is `part_key` of their series ids, so
the same series always give the same name. A series' rows are in at most one part per table:
the writer removes a series from the parts that hold it (`remove_series_rows`) before it writes
the series again.

A part is written to a hidden temporary file in its final directory (".part-<key>.parquet.<pid>.
<random>.tmp": the leading dot and the ".tmp" suffix keep it out of every reader's
`**/*.parquet` glob), fsynced, then renamed onto `part-<key>.parquet` with `os.replace`, which
is atomic on POSIX within one file system. A reader sees the old part or the new one, never a
partial file; writing the same key again replaces the part instead of adding a duplicate.
`write_parts` writes the parts of one batch of series and makes the others durable before the last
table's part (the completion marker) is renamed into place: every temporary file of the batch is
fsynced, the others are renamed and their directories fsynced, then the marker is renamed and its
directory fsynced. The fsyncs of one step run side by side (`fsync_all`: threads, as an fsync
releases the interpreter), so a batch waits for three rounds of the disk, not one fsync per file
and directory in turn; what is durable before the marker appears is the same.

Compression is zstd at Arrow's default level (1): on these float and low-cardinality string
columns it gives smaller files than snappy at similar decode speed, and pyarrow, polars,
DuckDB and Spark all read it; gzip decodes several times slower.

This is pyarrow's stable `parquet.write_table`, not polars' partitioned writer, which is marked
unstable.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import tempfile
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.io.columns import PARTITION_COLUMNS
from pipeline.io.tables import Scope, table_spec
from pipeline.schema.section import NAME_RULE, SAFE_NAME

COMPRESSION = "zstd"
PART_PREFIX = "part-"
PART_SUFFIX = ".parquet"
TEMP_SUFFIX = ".tmp"

PART_KEY = re.compile(r"[0-9a-f]{8,64}")
"""A part key (`part_key`), lowercase hex. Readers accept only `part-<key>.parquet`
(`PART_NAME`)."""
PART_KEY_HEX_CHARS = 16
"""Length of the key of a part of several series, as long as a series id."""


class OutputError(Exception):
    """The dataset root cannot be written (a one-line message, shown to the user as is)."""


PROBE_BYTES = 1 << 20
"""What the writability probe writes and fsyncs: 1 MiB, so a full disk fails before the run."""
STALE_TEMP_S = 600.0
"""A temporary part older than this is a leftover of a killed writer (`clean_stale_temps`):
a part is at most one batch of series (`output.series_per_part`), written in well under a
second, so no live write is ever this old."""
PART_NAME = re.compile(r"part-(?P<key>[0-9a-f]{8,64})\.parquet")
"""A part file the writer makes: `part-<key>.parquet` (see `part_path`)."""
TEMP_NAME = re.compile(r"\.part-[0-9a-f]{8,64}\.parquet\.(?P<pid>\d+)\.[0-9a-f]+\.tmp")
"""A temporary part file of the writer: `.part-<key>.parquet.<pid>.<random>.tmp`."""

PROBE_VALID_S = 60.0
"""A root this process proved writable this recently is not probed again (`check_writable`):
a command checks each job's root before the jobs run, and each job checks it again as it
starts; the disk does not fill between them in a minute, but it may in an hour of sweeping."""

_proven_roots: dict[Path, float] = {}
"""When this process last proved each root writable (`time.monotonic`)."""

_cleaned_dirs: set[Path] = set()
"""Partition folders this process has already swept of stale temporary parts."""


def check_writable(root: Path | str) -> Path:
    """Create `root` if needed and prove `PROBE_BYTES` can be written and fsynced in it.

    Call it before any work starts, so a sweep does not run for an hour and then fail to save.
    The probe file is removed at once. A root this process proved within `PROBE_VALID_S` that
    is still there is not probed again. Raises `OutputError` (one line) if the root
    is a file, is not writable, or its disk is full.
    """
    path = Path(root)
    if path.exists() and not path.is_dir():
        raise OutputError(f"output root {path} is a file, not a directory")
    key = path.absolute()
    proven = _proven_roots.get(key)
    if proven is not None and time.monotonic() - proven < PROBE_VALID_S and path.is_dir():
        return path
    probe = None
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".dmlimits-probe-", suffix=TEMP_SUFFIX, dir=path)
        try:
            block = b"\0" * PROBE_BYTES
            written = 0
            while written < PROBE_BYTES:
                written += os.write(fd, block[written:])
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise OutputError(f"output root {path} is not writable: {reason}") from None
    finally:
        if probe is not None:
            Path(probe).unlink(missing_ok=True)
    _proven_roots[key] = time.monotonic()
    return path


def clean_stale_temps(directory: Path, now: float | None = None) -> list[Path]:
    """Delete the writer's temporary parts in a partition folder older than `STALE_TEMP_S`.

    Only names matching `TEMP_NAME` are touched; anything else is not ours. Returns the paths
    deleted. A writer calls it once per folder and process, before its first write there.
    """
    moment = time.time() if now is None else now
    removed = []
    for path in sorted(directory.iterdir()) if directory.is_dir() else []:
        if not TEMP_NAME.fullmatch(path.name) or not path.is_file():
            continue
        try:
            if path.stat().st_mtime < moment - STALE_TEMP_S:
                path.unlink()
                removed.append(path)
        except FileNotFoundError:
            continue  # removed meanwhile by another run
    return removed


def _check_name(kind: str, value: str) -> None:
    if not SAFE_NAME.fullmatch(value):
        raise ValueError(f"{kind} {value!r} {NAME_RULE}")


def partition_dir(root: Path | str, table_name: str, partition: Mapping[str, str]) -> Path:
    """ROOT/<table>/hardware=H/scaling=S/batch_law=B for the given partition values."""
    if not table_spec(table_name).partitioned:
        raise ValueError(f"table {table_name!r} is not partitioned")
    if tuple(partition) != PARTITION_COLUMNS:
        raise ValueError(
            f"partition keys {list(partition)} differ from {list(PARTITION_COLUMNS)} (in order)"
        )
    path = Path(root) / table_name
    for name in PARTITION_COLUMNS:
        _check_name(f"partition value {name}=", partition[name])
        path = path / f"{name}={partition[name]}"
    return path


def part_key(series_ids: Iterable[str]) -> str:
    """The key of a part holding the rows of `series_ids`: the series id of a part of one series
    (as every part of a version-1 dataset), else the first 16 hex digits of the sha256 of the
    sorted, distinct ids joined by newlines. Deterministic: the same series, the same name."""
    ids = sorted(set(series_ids))
    if not ids:
        raise ValueError("a part holds at least one series")
    if len(ids) == 1:
        return ids[0]
    digest = hashlib.sha256("\n".join(ids).encode("utf-8")).hexdigest()
    return digest[:PART_KEY_HEX_CHARS]


def part_path(root: Path | str, table_name: str, partition: Mapping[str, str], key: str) -> Path:
    """The final path of part `key` of a table's partition."""
    if not PART_KEY.fullmatch(key):
        raise ValueError(f"part key {key!r} must be 8 to 64 lowercase hex digits (`part_key`)")
    return partition_dir(root, table_name, partition) / f"{PART_PREFIX}{key}{PART_SUFFIX}"


def _check_table(table_name: str, data: pa.Table, partition: Mapping[str, str]) -> None:
    """The rows have exactly the table's declared schema and only the partition's values."""
    expected = table_spec(table_name).schema
    if not data.schema.equals(expected):
        got = {f.name: f for f in data.schema}
        diffs = [
            f.name
            for f in expected
            if f.name not in got or not got[f.name].equals(f)  # type or nullability
        ]
        extra = [name for name in got if name not in expected.names]
        raise ValueError(
            f"table does not match the {table_name} schema: differing {diffs}, extra {extra}"
        )
    for name in partition:
        values = set(data.column(name).to_pylist())  # no pyarrow.compute: a write skips its import
        if values - {partition[name]}:
            raise ValueError(f"rows of {table_name} have {name} other than {partition[name]!r}")


def fsync_dir(directory: Path) -> None:
    """Persist a rename: fsync the directory holding it (POSIX). Opened read-only, so a file's
    path works alike (`fsync_all` passes both)."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


FSYNC_THREADS = 8
"""The most fsyncs `fsync_all` waits for at once."""


def fsync_all(paths: Iterable[Path]) -> None:
    """fsync each file or directory (each once), side by side; return when all are durable.

    The same guarantee as fsyncing them one after another: each is on disk when this returns,
    and the first error is raised. An fsync releases the interpreter, so threads let the disk
    take them together instead of one round trip each.
    """
    unique = list(dict.fromkeys(paths))
    if len(unique) <= 1:
        for path in unique:
            fsync_dir(path)  # opens read-only: a file or a directory alike
        return
    with ThreadPoolExecutor(min(FSYNC_THREADS, len(unique))) as pool:
        for done in [pool.submit(fsync_dir, path) for path in unique]:
            done.result()


def write_parts(
    root: Path | str,
    tables: Sequence[tuple[str, pa.Table]],
    partition: Mapping[str, str],
    key: str | None = None,
) -> list[Path]:
    """Write each (table name, rows) as one part of that table under the partition, in order.

    Each table has its table's full schema (`pipeline.io.tables`); its partition columns must
    all equal `partition` and are dropped from the file. Each part is keyed by `part_key` of its
    series ids (or `key`) and written atomically, so writing the same series again replaces
    their parts; tables without rows are skipped. The last part is the batch's completion
    marker: every part's temporary file is fsynced, the others are renamed into place and their
    directories fsynced, and only then the marker is renamed and its directory fsynced (the
    fsyncs of each step side by side, `fsync_all`). Returns the paths written.
    """
    parts = []
    for name, table in tables:
        if not table.num_rows:
            continue
        part = key if key is not None else part_key(table.column("series_id").to_pylist())
        final = part_path(root, name, partition, part)  # validates names first
        _check_table(name, table, partition)
        parts.append((final, table.drop_columns(list(PARTITION_COLUMNS))))
    if not parts:
        return []
    *body, marker = _write_temps(parts)
    return [*_replace_all(body), *_replace_all([marker])]


def write_run_part(root: Path | str, table_name: str, data: pa.Table) -> Path:
    """Write the rows of a per-run table as ROOT/<table_name>/part-<key>.parquet, atomically.

    The key is `part_key` of the table's `part_key_column` values (the trends' catalog hash),
    so the same inputs give the same part and writing them again replaces it.
    """
    return write_run_parts(root, [(table_name, data)])[0]


def write_run_parts(root: Path | str, tables: Sequence[tuple[str, pa.Table]]) -> list[Path]:
    """`write_run_part` of each (table name, rows), in order, their fsyncs side by side
    (`fsync_all`): each part is durable, under its final name, when this returns."""
    return _replace_all(_write_temps([_run_part_of(root, name, data) for name, data in tables]))


def _run_part_of(root: Path | str, table_name: str, data: pa.Table) -> tuple[Path, pa.Table]:
    """Where `write_run_part` writes `data` (checked against its table's schema)."""
    spec = table_spec(table_name)
    if spec.scope is not Scope.RUN:
        raise ValueError(f"{table_name!r} is a per-series table: write it with `write_parts`")
    if not data.schema.equals(spec.schema):
        raise ValueError(f"table does not match the {table_name} schema")
    key = part_key(data.column(spec.part_key_column).to_pylist())
    return Path(root) / table_name / f"{PART_PREFIX}{key}{PART_SUFFIX}", data


def _write_temps(parts: Sequence[tuple[Path, pa.Table]]) -> list[tuple[Path, Path]]:
    """Write each part's rows to a temporary file beside its final name, then fsync them all
    (`fsync_all`); the (temporary, final) paths, in order. On any error every temporary file
    written is removed."""
    temps: list[tuple[Path, Path]] = []
    try:
        for final, data in parts:
            directory = final.parent
            directory.mkdir(parents=True, exist_ok=True)
            if directory not in _cleaned_dirs:
                clean_stale_temps(directory)
                _cleaned_dirs.add(directory)
            name = f".{final.name}.{os.getpid()}.{secrets.token_hex(4)}{TEMP_SUFFIX}"
            temps.append((directory / name, final))
            pq.write_table(data, temps[-1][0], compression=COMPRESSION)
        fsync_all(temp for temp, _ in temps)
    except BaseException:
        for temp, _ in temps:
            temp.unlink(missing_ok=True)
        raise
    return temps


def _replace_all(temps: Sequence[tuple[Path, Path]]) -> list[Path]:
    """Rename each fsynced temporary file onto its final name, then fsync their directories
    (`fsync_all`); the final paths. A temporary file not renamed is removed on an error."""
    for i, (temp, final) in enumerate(temps):
        try:
            os.replace(temp, final)
        except BaseException:
            for rest, _ in temps[i:]:
                rest.unlink(missing_ok=True)
            raise
    fsync_all(final.parent for _, final in temps)
    return [final for _, final in temps]


def remove_series_rows(path: Path, series_ids: Collection[str]) -> Path | None:
    """Rewrite the part `path` without the rows of `series_ids`, atomically; delete it if no row
    is left. The part keeps its name and its stored columns (a part of an older schema version
    stays one). Returns the path, or None when the part was deleted."""
    import pyarrow.compute as pc  # deferred: only a resumed run removes rows

    data = pq.read_table(path)
    keep = pc.invert(pc.is_in(data.column("series_id"), pa.array(list(series_ids), pa.string())))
    rest = data.filter(keep)
    if rest.num_rows == len(data):
        return path
    if rest.num_rows:
        return _replace_all(_write_temps([(path, rest)]))[0]
    path.unlink()
    fsync_dir(path.parent)
    return None
