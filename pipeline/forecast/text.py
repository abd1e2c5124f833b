"""Forecast years as text: the nightly summary, the report page and the README table.

Works on `forecasts` rows as dicts (`frame.to_dicts()`), so any reader can use it. A year is
shown as its median with the 5th-95th percentile; "passed before the data" when its column is
listed in the row's `already_passed` (an observed run by `data_as_of` reached the threshold);
prefixed "passed" when listed in `passed_by_run_date` (after the data's date, before the run's:
`forecast_date`); prefixed "overdue" when the year lies before `data_as_of` though no observed
run reached the threshold (the trajectory is ahead of the data there); "not reached" when the
moving frontier does not reach it by the last projected year; "not projected" for a moving year
of a series with no moving frontier (`moving_projected` false: the run projected no hardware, or
not this series', whose GPU is not a catalog preset as shipped); "none: linear to last size" for a
linear end that linear scaling outlasted on every feasible size, "no feasible size" for a series
with none, "none: every size ran" for a wall no grid size hit and "cluster cap" for a series the
search's cap ended (`forecasts.year_null_reasons`); and "-" when the series has no such threshold (a
moving year: no projected year's series has it, `moving_without_threshold`; docs/sources.md §5).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Any

from pipeline.catalog.load import fractional_year
from pipeline.forecast.null_years import YearNull, fixed_year_null, null_reason
from pipeline.forecast.paths import FITTED
from pipeline.model.records.results import SeriesLimits

OPEN_END = "later"
"""An interval's upper end past the last year projected, wherever a year is shown (the console
summary, the change report)."""

SHOWN_YEARS = (
    ("linear_end_year", "linear end"),
    ("moving_linear_end_year", "linear end, moving hw"),
    ("wall_year", "wall"),
    ("moving_wall_year", "wall, moving hw"),
)
"""The year columns a summary shows, frozen and moving hardware side by side."""


BEFORE_DATA = "passed before the data"
"""A threshold in `already_passed`: an observed run published by `data_as_of` reached it."""
PASSED = "passed"
"""The prefix of a year after the data's date but before the run's."""
OVERDUE = "overdue"
"""The prefix of a year before `data_as_of` of a threshold no observed run reached: the
trajectory places the crossing where the data show none."""
NOT_REACHED = "not reached"
"""A null moving year of a projected series: the trajectory does not reach the threshold by the
last projected year."""
NOT_PROJECTED = "not projected"
"""A moving year of a series with no moving frontier (`moving_projected` false): nothing was
projected for it to reach, so it is neither reached nor "not reached"."""
NULL_TEXT = {
    YearNull.BEYOND_GRID: "none: linear to last size",
    YearNull.NO_FEASIBLE_SIZE: "no feasible size",
    YearNull.CLUSTER_CAP: "cluster cap",
    YearNull.END_OF_GRID: "none: every size ran",
}
"""A null year whose reason (`forecasts.year_null_reasons`) says more than "-": linear scaling
lasting through every feasible size (on every projected year, for a moving one), a series
with no feasible size, one the search's cluster cap ended (`parallelism.max_cluster_doublings`),
or a wall that no grid size hit (every size ran above the utilization floor). The run summary
and the report page's thresholds table read the same words for the same null thresholds."""


def null_threshold_text(column: str, limits: SeriesLimits) -> str | None:
    """Why a series' null threshold (`linear_end_flop`, `last_feasible_flop` or `wall_flop`)
    is null, in the words its forecast year would read (`NULL_TEXT` of `fixed_year_null`),
    so the run summary and the report page say what the forecasts say; None where no reason
    says more than a dash (a concrete run, a row older than `end_reason`)."""
    try:
        reason = fixed_year_null(column.removesuffix("_flop") + "_year", limits)
    except ValueError:  # an older row: no reason recorded for it
        return None
    return NULL_TEXT.get(reason)


def _as_of_year(row: Mapping[str, Any]) -> float | None:
    """The row's `data_as_of` as a fractional year (a date or its ISO text), None without."""
    as_of = row.get("data_as_of")
    if isinstance(as_of, str):
        as_of = dt.date.fromisoformat(as_of)
    return fractional_year(as_of) if isinstance(as_of, dt.date) else None


def _listed(row: Mapping[str, Any], list_column: str, column: str) -> bool:
    return column in str(row.get(list_column) or "").split(",")


def _null_moving_year(row: Mapping[str, Any], column: str, moving_frontier: bool) -> str:
    """A null moving year: "not projected" (the series has no moving frontier), "-" (no projected
    year's grid has its threshold) or "not reached" (beyond the last projected year). A row
    before schema version 14 lacks `moving_projected`: `moving_frontier` (the run had a moving
    frontier) stands in for it, though it cannot tell a series left out of one."""
    projected = row.get("moving_projected")
    if not (moving_frontier if projected is None else projected):
        return NOT_PROJECTED
    return "-" if _listed(row, "moving_without_threshold", column) else NOT_REACHED


class YearStatus(StrEnum):
    """Where a set year stands against the data's date and the run's (`year_status`)."""

    BEFORE_DATA = "passed_before_data"
    """An observed run by `data_as_of` reached the threshold (`already_passed`): the year is
    that run's date, a fact, not a forecast."""
    PASSED = "passed_by_run_date"
    """On the trajectory, after the data's date and before the run's (`passed_by_run_date`)."""
    OVERDUE = "overdue"
    """Before the data's date though no observed run reached the threshold."""


STATUS_TEXT = {
    YearStatus.BEFORE_DATA: BEFORE_DATA,
    YearStatus.PASSED: PASSED,
    YearStatus.OVERDUE: OVERDUE,
}
"""A status in the words the year texts use."""


def year_status(row: Mapping[str, Any], column: str) -> YearStatus | None:
    """The status of a `forecasts` row's year `column`; None for a year still ahead, or null
    and not reached by the observed runs."""
    if _listed(row, "already_passed", column):
        return YearStatus.BEFORE_DATA
    year = row.get(column)
    if year is None:
        return None
    if _listed(row, "passed_by_run_date", column):
        return YearStatus.PASSED
    as_of = _as_of_year(row)
    return YearStatus.OVERDUE if as_of is not None and year < as_of else None


def year_text(row: Mapping[str, Any], column: str, moving_frontier: bool = False) -> str:
    """One year of a row: "2028.9 (2028.5-2029.3)", "passed 2026.4 (2026.1-2026.8)" (before the
    run date), "overdue 2025.2 (2024.8-2025.9)" (before the data's date, not reached by its
    runs), "passed before the data", "not reached" (a moving year beyond the last projected
    year), "not projected" (a moving year of a series with no moving frontier), "none: linear
    to last size", "no feasible size", "cluster cap" or "none: every size ran" (`NULL_TEXT`) or
    "-" (no such threshold; a moving year:
    on no projected year's grid). `moving_frontier`: the run had a
    moving frontier, read only for rows without `moving_projected` (before schema version 14)."""
    year = row.get(column)
    status = year_status(row, column)
    if status is YearStatus.BEFORE_DATA:
        return BEFORE_DATA
    if year is None:
        reason = null_reason(row.get("year_null_reasons"), column)
        if reason in NULL_TEXT:
            return NULL_TEXT[reason]
        return (
            _null_moving_year(row, column, moving_frontier) if column.startswith("moving_") else "-"
        )
    prefix = "" if status is None else f"{STATUS_TEXT[status]} "
    low, high = row.get(f"{column}_low"), row.get(f"{column}_high")
    if low is None or (low == year and high == year):
        return f"{prefix}{year:.1f}"
    return f"{prefix}{year:.1f} ({low:.1f}-{OPEN_END if high is None else f'{high:.1f}'})"


def trajectory_text(row: Mapping[str, Any]) -> str:
    """The trajectory of a row: "fitted 4.62x/yr (4.21-5.07)" or "hand-set 4x/yr"."""
    g = row["growth_per_year"]
    if row.get("trajectory") == FITTED:
        return (
            f"fitted {g:.2f}x/yr ({row['growth_per_year_low']:.2f}-"
            f"{row['growth_per_year_high']:.2f})"
        )
    return f"hand-set {g:g}x/yr"


def _series(row: Mapping[str, Any], labels: Mapping[str, str] | None = None) -> str:
    """The row's series: its label in `labels` (by `series_id`), else its name."""
    name = f"{row['hardware']} / {row['scaling']} / {row['batch_law']}"
    return name if labels is None else labels.get(str(row.get("series_id")), name)


def _ordered(
    rows: Sequence[Mapping[str, Any]], labels: Mapping[str, str] | None = None
) -> list[Mapping[str, Any]]:
    """Series by label (`_series`), the fitted trajectory first within each."""
    return sorted(
        rows,
        key=lambda r: (_series(r, labels), r.get("trajectory") != FITTED, r["growth_per_year"]),
    )


def forecast_lines(
    rows: Sequence[Mapping[str, Any]],
    moving_frontier: bool = False,
    limit: int = 24,
    labels: Mapping[str, str] | None = None,
) -> list[str]:
    """The forecast years of a run as plain text lines (a header, then one line per row);
    `moving_frontier`: the run had one (read for rows before schema version 14, `year_text`);
    `labels`: series_id -> the series' label (`pipeline.io.labels.scenario_labels`, which tells
    sweep points apart), else each series is named by hardware, scaling and batch law."""
    if not rows:
        return []
    lines = [_heading(rows)]
    ordered = _ordered(rows, labels)
    widest = max(len(_series(row, labels)) for row in ordered[:limit])
    widths = [max(30, widest), 28, *(31 for _ in SHOWN_YEARS)]
    names = ["series", "trajectory", *(name for _, name in SHOWN_YEARS)]
    lines.append("  ".join(f"{n:<{w}}" for n, w in zip(names, widths, strict=True)).rstrip())
    for row in ordered[:limit]:
        cells = [
            _series(row, labels),
            trajectory_text(row),
            *(year_text(row, c, moving_frontier) for c, _ in SHOWN_YEARS),
        ]
        lines.append("  ".join(f"{c:<{w}}" for c, w in zip(cells, widths, strict=True)).rstrip())
    if len(ordered) > limit:
        lines.append(f"... and {len(ordered) - limit} more forecast rows")
    return lines


def budget_lines(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The uncertainty budget's years as text (`uncertainty` rows, docs/sources.md §10): per
    limit of the series the design varied, its median and 5th-95th percentile over the design
    points with every input varied, and the trajectory's share of that variance, so a reader
    of the forecast table (whose intervals hold the trajectory alone) sees the whole interval
    of that series. Empty without a budget."""
    if not rows:
        return []
    first = rows[0]
    cells = []
    for column, name in SHOWN_YEARS:
        limit = [r for r in rows if r["limit"] == column]
        if not limit:
            continue
        year = limit[0]
        if year["year_median"] is None:
            cells.append(f"{name}: not reached by any design point")
            continue
        text = f"{name} {year['year_median']:.1f} ({year['year_low']:.1f}-{year['year_high']:.1f})"
        share = next((r["variance_share"] for r in limit if r["input"] == "trajectory"), None)
        if share is not None:
            text += f", {share:.0%} of its variance from the trajectory"
        if year["n_reached"] < year["n_samples"]:
            text += f" (over the {year['n_reached']} of {year['n_samples']} points that reach it)"
        cells.append(text)
    return [
        f"uncertainty budget of {_series(first)} ({first['trajectory']} trajectory, "
        f"{first['n_samples']} design points, every uncertain input varied; the intervals above "
        "hold the trajectory's uncertainty alone; the `uncertainty` table):",
        *(f"  {cell}" for cell in cells),
    ]


def _heading(rows: Sequence[Mapping[str, Any]]) -> str:
    """The summary's first line: what the years are, the data's date and the run's."""
    as_of = next((r["data_as_of"] for r in rows if r.get("data_as_of") is not None), None)
    on = next((r["forecast_date"] for r in rows if r.get("forecast_date") is not None), None)
    head = "forecast years: median (5th-95th percentile)"
    if as_of is not None:
        head += f", data as of {as_of}"
    if on is not None:
        head += f", run date {on} (a year before it: passed)"
    return head


def forecast_markdown(rows: Sequence[Mapping[str, Any]], moving_frontier: bool = False) -> str:
    """The forecast years as a Markdown table (the report page and the README)."""
    header = ["series", "trajectory", *(name for _, name in SHOWN_YEARS)]
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    for row in _ordered(rows):
        cells = [
            _series(row),
            trajectory_text(row),
            *(year_text(row, c, moving_frontier) for c, _ in SHOWN_YEARS),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
