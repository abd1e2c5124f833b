"""`dmlimits-bi ROOT --db FILE.duckdb`: a DuckDB file of views over a dataset, for BI tools.

Superset, Tableau, Power BI (through DuckDB's ODBC or JDBC driver) and notebooks connect to the
one file. Its views hold no data: they read the Parquet files under ROOT, by absolute path, at
query time, so a nightly run that adds a date shows up without rebuilding the file. Rebuild it
when ROOT moves or a table appears that had no files before. docs/bi.md lists the views.

    dmlimits-bi outputs/nightly --db outputs/dmlimits.duckdb
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import duckdb

from pipeline.io.columns import PARTITION_COLUMNS
from pipeline.io.dataset import part_files
from pipeline.nightly.partition import RUN_DATE_KEY, date_dir, run_dates

VIEW_TABLES = ("points", "thresholds", "forecasts", "series", "frontier")
"""Tables that get a view (and a latest_ view) when the dataset has files of them."""
DESCRIPTIONS = {
    "points": "one row per evaluated model size of a series, feasible or not (docs/schema.md)",
    "thresholds": "one row per series: linear-scaling end, latency wall, closed forms",
    "forecasts": "one row per series and compute-growth scenario: the years limits are reached",
    "series": "one row per series: its configuration, sweep point and overrides",
    "frontier": "one row per series and projected year: its limits on that year's hardware",
    "runs": "one row per run: date, run id, series count, start time",
}


def _sql_text(text: str) -> str:
    """A SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


def _source(root: Path, table: str, dated: bool) -> str:
    """read_parquet over every part of a table, partition columns typed and placed first."""
    keys = ((RUN_DATE_KEY,) if dated else ()) + PARTITION_COLUMNS
    types = ", ".join(f"{_sql_text(k)}: {'DATE' if k == RUN_DATE_KEY else 'VARCHAR'}" for k in keys)
    glob = (root / f"{RUN_DATE_KEY}=*" if dated else root) / table / "**" / "*.parquet"
    return (
        f"SELECT {', '.join(keys)}, * EXCLUDE ({', '.join(keys)}) "
        f"FROM read_parquet({_sql_text(str(glob))}, hive_partitioning = true, "
        f"hive_types = {{{types}}}, union_by_name = true)"
    )


def view_statements(root: Path) -> list[tuple[str, str]]:
    """(view name, CREATE VIEW statement) for every view of the dataset under `root`."""
    root = root.resolve()
    dates = run_dates(root)
    dated = bool(dates)
    probe = [date_dir(root, d) for d in dates] if dated else [root]
    tables = [t for t in VIEW_TABLES if any(part_files(p, t) for p in probe)]
    if "thresholds" not in tables:
        raise FileNotFoundError(f"{root} holds no thresholds parts: not a dmlimits dataset")
    newest = f"(SELECT max({RUN_DATE_KEY}) FROM thresholds)"
    statements = [(t, f"CREATE VIEW {t} AS {_source(root, t, dated)}") for t in tables]
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
    return statements


def _describe(view: str) -> str:
    if view.startswith("latest_"):
        return f"{DESCRIPTIONS[view.removeprefix('latest_')]}; newest run only"
    return DESCRIPTIONS[view]


def build_database(root: Path, db: Path) -> list[str]:
    """Write the DuckDB file `db` with the dataset's views; return the view names.

    The file is built beside `db` under a temporary name and renamed over it, so a BI tool
    never opens a half-built file.
    """
    statements = view_statements(root)
    temp = db.with_name(f".{db.name}.{os.getpid()}.tmp")
    temp.unlink(missing_ok=True)
    try:
        with duckdb.connect(str(temp)) as con:
            for view, sql in statements:
                con.execute(sql)
                con.execute(f"COMMENT ON VIEW {view} IS {_sql_text(_describe(view))}")
                con.execute(f"SELECT * FROM {view} LIMIT 0").fetchall()  # fail here, not in BI
        os.replace(temp, db)
    finally:
        temp.unlink(missing_ok=True)
        Path(f"{temp}.wal").unlink(missing_ok=True)
    return [view for view, _ in statements]


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point: build the database; exit status 2 when ROOT is not a dataset."""
    parser = argparse.ArgumentParser(
        prog="dmlimits-bi",
        description="Create a DuckDB file with views over a dmlimits dataset (plain or nightly).",
    )
    parser.add_argument("root", type=Path, help="dataset root or nightly root")
    parser.add_argument("--db", type=Path, required=True, help="DuckDB file to (re)create")
    args = parser.parse_args(argv)
    try:
        args.db.parent.mkdir(parents=True, exist_ok=True)
        views = build_database(args.root, args.db)
    except (FileNotFoundError, duckdb.Error) as err:
        print(f"dmlimits-bi: error: {err}", file=sys.stderr)
        return 2
    print(f"dmlimits-bi: {len(views)} views in {args.db}: {', '.join(views)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
