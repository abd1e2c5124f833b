"""`dmlimits-report ROOT --out DIR`: PNG charts and an index.html for one dataset.

ROOT is a dataset root or a nightly root (its newest run_date, or --run-date). Writes
utilization.png, thresholds.png, parallelism.png, step_time.png (and observed.png, trends.png,
frontier.png when the dataset holds their tables) and index.html into DIR; docs/report.md shows
what each chart draws. `--series` and `--where` choose the series drawn.

    dmlimits-report outputs/dataset --out outputs/report
    dmlimits-report outputs/dataset --out outputs/report --where "batch_law = 'critical'"
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import polars as pl
from matplotlib.figure import Figure

from pipeline.io.parquet import OutputError, check_writable
from pipeline.io.read import (
    date_dir,
    dated_dirs,
    latest_dataset_dir,
    missing_tables,
    not_read_total,
    parse_date_dir,
    read_table,
    root_entries_skipped,
    run_dates,
)
from pipeline.io.tables import TABLES
from pipeline.io.text import write_text_atomic
from pipeline.nightly.partition import REPORTS_DIR
from pipeline.report.catalog_points import catalog_points
from pipeline.report.charts import parallelism_figure, thresholds_figure, utilization_figure
from pipeline.report.observed_chart import observed_frontier_figure
from pipeline.report.page import render_page
from pipeline.report.selection import Selection, SelectionError, select_series
from pipeline.report.step_chart import STEP_PANELS, breakdown_ids, step_time_figure
from pipeline.report.trend_charts import frontier_figure, trends_figure
from pipeline.report.uncertainty_chart import uncertainty_figure

Builder = Callable[[pl.DataFrame, pl.DataFrame, Selection, pl.DataFrame | None], Figure]
"""A chart from the `points`, `thresholds` and `series` tables and the selection."""
CHARTS: tuple[tuple[str, str, Builder], ...] = (
    ("utilization.png", "Utilization against training compute", utilization_figure),
    ("thresholds.png", "Limits of each series, sorted by its wall", thresholds_figure),
    ("parallelism.png", "Parallelism mix of the smallest sufficient cluster", parallelism_figure),
    ("step_time.png", "Step time: its exposed parts, and the time overlap hides", step_time_figure),
)
"""(file name, caption, figure builder) of every chart, in page order."""


def _caption(name: str, caption: str, sel: Selection, points: pl.DataFrame) -> str:
    """A chart's caption with what it draws: every chosen series, or the step-time panels'."""
    if name == "step_time.png":
        drawn = len(breakdown_ids(points, sel))
        if drawn < len(sel.ids):
            return f"{caption} ({drawn} with feasible points, at most {STEP_PANELS}, of {sel.note})"
    return f"{caption} ({sel.note})"


def _say(message: str) -> None:
    print(f"[dmlimits-report] {message}", file=sys.stderr, flush=True)


def read_tables(directory: Path) -> dict[str, pl.DataFrame | None]:
    """Every table of the dataset in `directory` (None when it has no readable part); each part
    the reader skips is named on stderr, then the rows not read in total (`not_read_total`)."""
    frames = {}
    skipped = missing_tables(directory)
    for spec in TABLES:
        read = read_table(directory, spec.name)
        skipped += read.skipped
        frames[spec.name] = read.frame
    for entry in skipped:
        _say(f"skipped {entry}")
    if (total := not_read_total(skipped)) is not None:
        _say(total)
    return frames


def _trend_figures(
    directory: Path,
    tables: dict[str, pl.DataFrame | None],
    thresholds: pl.DataFrame,
    sel: Selection,
) -> list[tuple[str, str, Figure]]:
    """The observed-frontier, trends and moving-frontier charts, for the tables the dataset in
    `directory` holds."""
    figures = []
    observed = tables["observed_runs"]
    if observed is not None:
        figure = observed_frontier_figure(observed, tables["forecasts"], thresholds, sel.labels)
        figures.append(("observed.png", "Observed frontier runs, the fit, the limits", figure))
    trends = tables["trends"]
    if trends is not None:
        points = catalog_points(directory, tables["sources"], str(trends["catalog_hash"][-1]))
        if not points:
            _say(f"trends.png: catalog {trends['catalog_hash'][-1]} cannot be rebuilt, no points")
        figure = trends_figure(trends, points)
        figures.append(("trends.png", "Hardware metrics against release year", figure))
    frontier, forecasts = tables["frontier"], tables["forecasts"]
    if frontier is not None and forecasts is not None:
        figure = frontier_figure(frontier, forecasts, thresholds, sel)
        caption = f"The moving frontier on improving hardware ({sel.note})"
        figures.append(("frontier.png", caption, figure))
    if (budget := tables["uncertainty"]) is not None:
        caption = "The uncertainty budget: what moves each limit year (forecast.uncertainty)"
        figures.append(("uncertainty.png", caption, uncertainty_figure(budget)))
    return figures


def check_outside_dataset(dataset: Path, out: Path) -> None:
    """OutputError when `out` is the dataset directory or root `dataset`, or inside it: no
    command writes among a dataset's files (a chart could replace one, and every reader would
    meet foreign files)."""
    target, root = out.resolve(), dataset.resolve()
    if target == root or root in target.parents:
        raise OutputError(
            f"--out {out} is inside the dataset {dataset}: the report would sit among its "
            f"files; put it beside the dataset, e.g. {dataset.parent / (dataset.name + '-report')}"
        )


def latest_changes(directory: Path) -> str | None:
    """The change report of a nightly partition (ROOT/reports/changes-D.md), if there is one."""
    day = parse_date_dir(directory.name)
    if day is None:
        return None
    path = directory.parent / REPORTS_DIR / f"changes-{day.isoformat()}.md"
    return path.read_text(encoding="utf-8") if path.is_file() else None


def write_report(
    directory: Path,
    out: Path,
    embed: bool = False,
    chosen: Sequence[str] = (),
    where: str | None = None,
) -> list[Path]:
    """Draw every chart of the dataset in `directory` and the page; return the written paths.

    `out` must lie outside the dataset (`check_outside_dataset`). `chosen` and `where` choose
    the series drawn (`selection.select_series`: id prefixes or
    label parts, and a SQL condition on the `series` table). Parts the reader skips
    (`pipeline.io.read`) are named on stderr, one line each. Raises `FileNotFoundError` when
    the directory has no readable points or thresholds, `SelectionError` when the choice is
    empty or invalid, `OutputError` when `out` cannot be written; nothing is written then.
    """
    check_outside_dataset(directory, out)
    _say(f"reading {directory}")
    tables = read_tables(directory)
    _say(f"read {sum(t is not None for t in tables.values())} tables")
    points, thresholds, forecasts = tables["points"], tables["thresholds"], tables["forecasts"]
    if points is None or thresholds is None:
        raise FileNotFoundError(f"{directory} holds no readable points or thresholds parts")
    sel = select_series(thresholds, tables["series"], chosen, where)
    thresholds = thresholds.filter(pl.col("series_id").is_in(sel.ids))
    points = points.filter(pl.col("series_id").is_in(sel.ids))
    if forecasts is not None:
        forecasts = forecasts.filter(pl.col("series_id").is_in(sel.ids))
    check_writable(out)
    written = []
    for i, (name, _, build) in enumerate(CHARTS, 1):
        figure = build(points, thresholds, sel, tables["series"])
        figure.savefig(out / name, dpi=figure.dpi)
        written.append(out / name)
        _say(f"{name} ({i}/{len(CHARTS)})")
    images = [(out / name, _caption(name, caption, sel, points)) for name, caption, _ in CHARTS]
    for name, caption, figure in _trend_figures(
        directory, {**tables, "forecasts": forecasts}, thresholds, sel
    ):
        figure.savefig(out / name, dpi=figure.dpi)
        written.append(out / name)
        images.append((out / name, caption))
        _say(name)
    page = render_page(
        f"dmlimits report: {directory}",
        images,
        thresholds,
        forecasts,
        sel.labels,
        embed=embed,
        moving_frontier=tables["frontier"] is not None,
        changes=latest_changes(directory),
        reality=tables["reality"],
    )
    index = out / "index.html"
    write_text_atomic(index, page)
    _say(f"index.html -> {index}")
    return [*written, index]


def _run_date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date written YYYY-MM-DD") from None


def dataset_directory(root: Path, run_date: dt.date | None) -> Path:
    """The directory to draw: `root`, a nightly root's newest date, or its `run_date`."""
    if not root.is_dir():
        raise FileNotFoundError(f"dataset root {root} does not exist or is not a directory")
    for entry in root_entries_skipped(root) + dated_dirs(root)[1]:
        _say(f"skipped {entry}")
    if run_date is None:
        return latest_dataset_dir(root)
    directory = date_dir(root, run_date)
    if not directory.is_dir():
        dates = run_dates(root)
        if not dates:
            raise FileNotFoundError(
                f"--run-date {run_date} picks a nightly root's partition, but {root} has no "
                "run_date=YYYY-MM-DD partitions (a dataset root): drop --run-date"
            )
        have = ", ".join(day.isoformat() for day in dates)
        raise FileNotFoundError(
            f"nightly root {root} has no partition for {run_date} (its dates: {have})"
        )
    return directory


def main(argv: Sequence[str] | None = None) -> int:
    """Console entry point; exit status 2 when ROOT holds no dataset or OUT cannot be written."""
    parser = argparse.ArgumentParser(
        prog="dmlimits-report", description="Charts and an HTML page for a dmlimits dataset."
    )
    parser.add_argument("root", type=Path, help="dataset root or nightly root")
    parser.add_argument("--out", type=Path, required=True, help="directory for PNGs and index.html")
    parser.add_argument(
        "--run-date",
        type=_run_date,
        default=None,
        help="YYYY-MM-DD: a nightly root's partition (default: the newest)",
    )
    parser.add_argument(
        "--embed", action="store_true", help="embed the PNGs in index.html (one file to send)"
    )
    parser.add_argument(
        "--series",
        action="append",
        default=[],
        metavar="TEXT",
        help="draw the series whose id starts with TEXT or whose label contains it (repeatable)",
    )
    parser.add_argument(
        "--where",
        default=None,
        metavar="SQL",
        help="draw the series for which this SQL condition on the series table holds, "
        "e.g. \"batch_law = 'critical' AND net_latency_top_s < 1e-6\"",
    )
    args = parser.parse_args(argv)
    try:
        check_outside_dataset(args.root, args.out)
        write_report(
            dataset_directory(args.root, args.run_date),
            args.out,
            args.embed,
            args.series,
            args.where,
        )
    except (FileNotFoundError, OutputError, SelectionError) as err:
        print(f"dmlimits-report: error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(
            f"dmlimits-report: error: cannot write {args.out}: {err.strerror or err}",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
