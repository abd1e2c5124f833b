"""`dmlimits-bi ROOT --db FILE.duckdb`: a DuckDB file of views over a dataset, for BI tools.

Superset, Tableau, Power BI (through DuckDB's ODBC or JDBC driver) and notebooks connect to the
one file. Its views hold no data: they read the Parquet files under ROOT, by absolute path, at
query time. The views list the part files that `pipeline.io.read` accepts when the file is
built (never a glob: a root named `data[1]` reads only itself), so rebuild the file after each
run that adds parts or dates, and when ROOT moves. A root where a series has rows in two parts
of one table (two roots merged) is refused, exit 2, as `dmlimits-gather` reports it NOT OK.
docs/bi.md lists the views.

    dmlimits-bi outputs/nightly --db outputs/dmlimits.duckdb
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.io.parquet import OutputError, check_writable
from pipeline.io.read import (
    RUN_DATE_KEY,
    Skipped,
    checked_parts,
    dated_dirs,
    missing_tables,
    not_read_total,
    refuse_split_series,
    root_entries_skipped,
)
from pipeline.io.tables import BY_NAME, TABLES, table_spec

STORAGE_VERSION = "v1.0.0"
"""The DuckDB storage format the file is written in: DuckDB 1.0 and every later client (ODBC,
JDBC, Python, the CLI) read it, where DuckDB 2.0's own default format is read by 2.0 and later
only. Writing it needs DuckDB 1.2 or later (ATTACH's STORAGE_VERSION option; the `bi` extra's
floor). docs/bi.md, "Which DuckDB clients open the file"."""
RUNS_DESCRIPTION = (
    "one row per run with thresholds rows: date, run id, series whose row it wrote, start time"
)
"""The `runs` view's comment; each table's view takes its comment from the registry."""
SQL_TYPES: dict[pa.DataType, str] = {
    pa.string(): "VARCHAR",
    pa.float64(): "DOUBLE",
    pa.int64(): "BIGINT",
    pa.int32(): "INTEGER",
    pa.bool_(): "BOOLEAN",
    pa.timestamp("us", tz="UTC"): "TIMESTAMP WITH TIME ZONE",
    pa.date32(): "DATE",
}
"""The DuckDB type of each Arrow type of `pipeline.io.columns`: every view column is cast."""
_PARTITION_TAIL = "/hardware=([^/]+)/scaling=([^/]+)/batch_law=([^/]+)/[^/]+$"
"""The partition folders at the end of a part's path (`pipeline.io.parquet` layout)."""
_RUN_DATE = rf"/{RUN_DATE_KEY}=([0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}})/[^/]+"
"""A nightly root's date folder and the table folder below it."""


def _sql_text(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def glob_literal(path: Path) -> str:
    """A path as a DuckDB file pattern matching only itself: `[`, `*`, `?` in brackets.

    DuckDB expands glob characters even in a list of files, so `data[1]` would read `data1`.
    """
    return "".join(f"[{c}]" if c in "[*?" else c for c in str(path))


def _column(field: pa.Field, present: set[str]) -> str:
    name = f'"{field.name}"'
    value = name if field.name in present else "NULL"
    return f"CAST({value} AS {SQL_TYPES[field.type]}) AS {name}"


def _source(files: Sequence[Path], table: str, dated: bool) -> str:
    """SELECT over exactly `files` (checked parts): partition columns first, every column cast."""
    spec = table_spec(table)
    present = set().union(*(pq.read_schema(p).names for p in files))
    keys = [
        f"regexp_extract(filename, {_sql_text(_PARTITION_TAIL)}, {i}) AS {k}"
        for i, k in enumerate(spec.partition_columns, 1)
    ]
    if dated:
        tail = _RUN_DATE + (_PARTITION_TAIL if spec.partitioned else "/[^/]+$")
        keys.insert(
            0, f"CAST(regexp_extract(filename, {_sql_text(tail)}, 1) AS DATE) AS {RUN_DATE_KEY}"
        )
    partition = set(spec.partition_columns)
    columns = [_column(f, present) for f in spec.schema if f.name not in partition]
    listing = ", ".join(_sql_text(glob_literal(p)) for p in files)
    return (
        f"SELECT {', '.join(keys + columns)} "
        f"FROM read_parquet([{listing}], union_by_name = true, filename = true)"
    )


def dataset_files(root: Path) -> tuple[dict[str, list[Path]], bool, list[Skipped]]:
    """Per table, the checked parts of a plain or nightly root; whether it is dated; skips.

    Raises `SplitSeriesError` (one line) when a series has rows in two parts of one table of
    one dataset directory, as the reader does (`read.refuse_split_series`): its view would
    count them twice."""
    dates, skipped = dated_dirs(root)
    skipped = root_entries_skipped(root) + skipped
    directories = [path for _, path in dates] or [root]
    files: dict[str, list[Path]] = {}
    for table in (t.name for t in TABLES):
        for directory in directories:
            good, left_out = checked_parts(directory, table)
            refuse_split_series(directory, table, good)
            files.setdefault(table, []).extend(good)
            skipped += left_out
    for directory in directories:
        skipped += missing_tables(directory)
    return {t: f for t, f in files.items() if f}, bool(dates), skipped


def view_statements(root: Path) -> tuple[list[tuple[str, str]], list[Skipped]]:
    """(view name, CREATE VIEW statement) for every view of the dataset, and the skipped files."""
    root = root.resolve()
    if not root.is_dir():
        raise FileNotFoundError(f"dataset root {root} does not exist or is not a directory")
    files, dated, skipped = dataset_files(root)
    if "thresholds" not in files:
        raise FileNotFoundError(
            f"{root} holds no readable thresholds parts: not a dmlimits dataset"
        )
    tables = [t.name for t in TABLES if t.name in files]
    newest = f"(SELECT max({RUN_DATE_KEY}) FROM thresholds)"
    statements = [(t, f"CREATE VIEW {t} AS {_source(files[t], t, dated)}") for t in tables]
    statements += [
        (
            f"latest_{t}",
            f"CREATE VIEW latest_{t} AS SELECT * FROM {t}"
            + (f" WHERE {RUN_DATE_KEY} = {newest}" if dated else ""),
        )
        for t in tables
    ]
    run_key = f"{RUN_DATE_KEY}, " if dated else ""
    statements.append(
        (
            "runs",
            f"CREATE VIEW runs AS SELECT {run_key}run_id, count(*) AS n_series, "
            f"min(created_at) AS created_at FROM thresholds GROUP BY ALL ORDER BY ALL",
        )
    )
    return statements, skipped


def _describe(view: str) -> str:
    if view == "runs":
        return RUNS_DESCRIPTION
    table = view.removeprefix("latest_")
    text = f"{table} rows: {BY_NAME[table].rows} (docs/schema.md)"
    return f"{text}; newest run only" if view.startswith("latest_") else text


def _check_view(con: duckdb.DuckDBPyConnection, view: str) -> None:
    """Query the view now, so a bad file fails here and not in a dashboard; check its types."""
    con.execute(f"SELECT count(*) FROM {view}").fetchall()
    spec = BY_NAME.get(view.removeprefix("latest_"))
    if spec is None:
        return
    got = {row[0]: row[1] for row in con.execute(f"DESCRIBE {view}").fetchall()}
    for field in spec.schema:
        want = "VARCHAR" if field.name in spec.partition_columns else SQL_TYPES[field.type]
        if got.get(field.name) != want:
            raise OutputError(
                f"view {view}: column {field.name} is {got.get(field.name)}, expected {want}"
            )


DUCKDB_MAGIC = b"DUCK"
"""Bytes 8-11 of every DuckDB database file (DuckDB's storage header)."""


def check_not_overwriting(root: Path, db: Path) -> None:
    """OutputError if writing `db` would replace a file of the dataset under `root` (a part, a
    lock, a report), or an existing file that is not a DuckDB database."""
    target, dataset = db.resolve(), root.resolve()
    if target == dataset or dataset in target.parents:
        raise OutputError(
            f"--db {db} is inside the dataset {root}: the file would replace or sit among its "
            f"parts; put it beside the dataset, e.g. {root.parent / 'dmlimits.duckdb'}"
        )
    if target.is_file():
        with target.open("rb") as fh:
            header = fh.read(12)
        if header[8:12] != DUCKDB_MAGIC:
            raise OutputError(
                f"--db {db} exists and is not a DuckDB database; give a new name or remove it"
            )


def build_database(root: Path, db: Path) -> tuple[list[str], list[Skipped]]:
    """Write the DuckDB file `db` with the dataset's views; return the view names and skips.

    The file is built beside `db` under a temporary name, every view is queried once, and the
    file is renamed over `db`, so a BI tool never opens a half-built or failing file.
    """
    statements, skipped = view_statements(root)
    if db.is_dir():
        raise OutputError(
            f"--db {db} is a directory; give a file name such as {db / 'dmlimits.duckdb'}"
        )
    check_not_overwriting(root, db)
    check_writable(db.parent)
    temp = db.with_name(f".{db.name}.{os.getpid()}.tmp")
    temp.unlink(missing_ok=True)
    try:
        with duckdb.connect() as con:  # in memory; the file is attached in the oldest format
            con.execute(
                f"ATTACH {_sql_text(str(temp))} AS bi (STORAGE_VERSION {_sql_text(STORAGE_VERSION)})"
            )
            con.execute("USE bi")
            for view, sql in statements:
                con.execute(sql)
                con.execute(f"COMMENT ON VIEW {view} IS {_sql_text(_describe(view))}")
                _check_view(con, view)
            con.execute("USE memory")
            con.execute("DETACH bi")
        os.replace(temp, db)
    finally:
        temp.unlink(missing_ok=True)
        Path(f"{temp}.wal").unlink(missing_ok=True)
    return [view for view, _ in statements], skipped


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: build the database; exit status 2 when ROOT or --db is unusable."""
    parser = argparse.ArgumentParser(
        prog="dmlimits-bi",
        description="Create a DuckDB file with views over a dmlimits dataset (plain or nightly).",
    )
    parser.add_argument("root", type=Path, help="dataset root or nightly root")
    parser.add_argument("--db", type=Path, required=True, help="DuckDB file to (re)create")
    args = parser.parse_args(argv)
    try:
        views, skipped = build_database(args.root, args.db)
    except (FileNotFoundError, OutputError, duckdb.Error) as err:
        message = " ".join(str(err).split())
        print(f"dmlimits-bi: error: {message}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"dmlimits-bi: error: cannot write {args.db}: {err.strerror or err}", file=sys.stderr)
        return 2
    for entry in skipped:
        print(f"dmlimits-bi: skipped {entry}", file=sys.stderr)
    if (total := not_read_total(skipped)) is not None:
        print(f"dmlimits-bi: {total}", file=sys.stderr)
    print(f"dmlimits-bi: {len(views)} views in {args.db}: {', '.join(views)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
