"""Why a `forecasts` year is null: one reason per null year column (`forecasts.year_null_reasons`).

A null year stood for several things a reader could only tell apart by joining `thresholds`
and by elimination over `moving_projected` and `moving_without_threshold`: linear scaling
lasting past the grid, a series with no feasible size, no wall on the grid, a trajectory that
does not reach a moving threshold by the last projected year. Each is a `YearNull` value here.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from pipeline.forecast.paths import is_threshold
from pipeline.model.limits import SeriesEnd, linear_end_beyond_grid
from pipeline.model.records.results import SeriesLimits


class YearNull(StrEnum):
    """Why a year column of a `forecasts` row is null (its `_low` and `_high` with it)."""

    BEYOND_GRID = "beyond_grid"
    """The linear end: linear scaling lasted through every feasible size of the grid
    (`thresholds.linear_end_beyond_grid` true); the moving one: so on every projected year
    (`frontier.linear_end_beyond_grid`)."""
    NO_FEASIBLE_SIZE = "no_feasible_size"
    """No size of the series trains within its duration (or budget): no linear end, no last
    feasible size."""
    END_OF_GRID = "end_of_grid"
    """The wall: every grid size is feasible above the utilization floor (`SeriesEnd`)."""
    CLUSTER_CAP = "cluster_cap"
    """The search's cluster cap, not the physics, ended the series (`SeriesEnd`): no wall; and,
    when the cap stopped its first size, no linear end and no last feasible size either."""
    RUN = "run"
    """A concrete run: one point and no grid, so no linear end and no wall (`SeriesEnd`)."""
    NO_CLOSED_FORM = "no_closed_form"
    """`t_crit_year`, `t_limit_year`: the closed form has no finite value (`thresholds`)."""
    NOT_PROJECTED = "not_projected"
    """A moving year of a series without a moving frontier (`moving_projected` false)."""
    NO_THRESHOLD = "no_threshold"
    """A moving year whose threshold no projected year's series has on its grid (the column is
    in `moving_without_threshold`), but a linear end outlasting the grid every year."""
    NOT_REACHED = "not_reached"
    """A moving year the median line does not reach by the last projected year; on a `_high`
    key alone, more than 5% of the lines do not."""


def fixed_year_null(column: str, limits: SeriesLimits) -> YearNull:
    """Why the frozen-hardware `column` (not a closed-form one) has no threshold in `limits`."""
    if limits.end_reason == SeriesEnd.RUN:
        return YearNull.RUN
    if column == "wall_year" and limits.end_reason is not None:
        return YearNull(str(limits.end_reason))
    if limits.last_feasible_flop is None:  # the cap, not the physics, may have stopped the first
        capped = limits.end_reason == SeriesEnd.CLUSTER_CAP
        return YearNull.CLUSTER_CAP if capped else YearNull.NO_FEASIBLE_SIZE
    if column == "linear_end_year" and linear_end_beyond_grid(limits):
        return YearNull.BEYOND_GRID
    raise ValueError(f"{column}: no reason for its null threshold in {limits}")


def year_null_reasons(
    years: Mapping[str, float | None],
    thresholds: Mapping[str, float | None],
    limits: SeriesLimits,
    moving_columns: tuple[str, ...],
    moving_projected: bool,
    without_threshold: str | None,
    moving_beyond_grid: bool = False,
) -> str:
    """`forecasts.year_null_reasons` of one row: `<column>=<YearNull>` for each null year
    column of `years` (a frozen one from `thresholds`, the `moving_columns`), and
    `<column>_high=not_reached` for a year whose interval alone is open (more than 5% of the
    lines do not reach the threshold); comma-separated in column order, "" for none.
    `moving_beyond_grid`: linear scaling outlasted the grid on every projected year, so the
    moving linear end, with no threshold, is `beyond_grid` as a frozen one would be."""
    closed_form = ("t_crit_year", "t_limit_year")
    without = set((without_threshold or "").split(","))
    pairs: list[str] = []
    for column in (*thresholds, *moving_columns):
        if years[column] is not None:
            if years[f"{column}_high"] is None:
                pairs.append(f"{column}_high={YearNull.NOT_REACHED}")
            continue
        if column in moving_columns:
            if not moving_projected:
                reason = YearNull.NOT_PROJECTED
            elif column in without:
                beyond = moving_beyond_grid and column == "moving_linear_end_year"
                reason = YearNull.BEYOND_GRID if beyond else YearNull.NO_THRESHOLD
            else:
                reason = YearNull.NOT_REACHED
        elif is_threshold(thresholds[column]):
            raise ValueError(f"{column} is null though its threshold is {thresholds[column]}")
        elif column in closed_form:
            reason = YearNull.NO_CLOSED_FORM
        else:
            reason = fixed_year_null(column, limits)
        pairs.append(f"{column}={reason}")
    return ",".join(pairs)


def null_reason(reasons: str | None, column: str) -> YearNull | None:
    """The reason `year_null_reasons` (`reasons`) gives for `column`; None where it names none
    (the column is set, or the row is older than the column)."""
    for pair in (reasons or "").split(","):
        key, _, value = pair.partition("=")
        if key == column:
            return YearNull(value)
    return None
