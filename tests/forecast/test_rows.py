"""One series' forecasts rows: schema, one row per growth factor, years from the thresholds."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from pipeline.catalog.load import fractional_year
from pipeline.forecast import ForecastSettings, forecast_dicts, forecast_rows, year_reaching_flop
from pipeline.forecast.budget import budget_dicts
from pipeline.forecast.frontier import FrontierYear, MovingFrontier, frontier_dicts
from pipeline.forecast.inputs import observe_for_run, observe_frontier, trajectories
from pipeline.forecast.observed import FrontierSettings
from pipeline.forecast.text import year_text
from pipeline.forecast.uncertainty import UncertaintySettings
from pipeline.io.columns import FORECASTS_SCHEMA
from pipeline.io.rows import Provenance, SeriesKey
from pipeline.model.limits import SeriesEnd, linear_end_beyond_grid
from pipeline.model.records.results import SeriesLimits
from pipeline.sources.settings import FetchSettings, SourceSpec, SourcesSettings
from tests.io.helpers import write_part

SERIES = SeriesKey("h100_sxm", "dense", "critical", 7.885e6, "0123456789abcdef", 3.154e7)
LIMITS = SeriesLimits(
    linear_end_flop=2.05e28, last_feasible_flop=2.7e31, first_infeasible_flop=None,
    max_utilization=0.7, end_reason="end_of_grid",
)  # fmt: skip
SETTINGS = ForecastSettings(5e25, 2024.0, (5.0, 4.0))
PROVENANCE = Provenance("run", created_at=datetime(2025, 1, 1, tzinfo=UTC))


def test_forecast_rows_one_per_growth_factor() -> None:
    """Two growth factors give two rows, ascending, in the forecasts schema."""
    table = forecast_rows(SERIES, LIMITS, 3.76e28, 7.1e31, SETTINGS, PROVENANCE)
    assert table.schema.equals(FORECASTS_SCHEMA)
    assert table.column("growth_per_year").to_pylist() == [4.0, 5.0]
    assert len(set(table.column("config_hash").to_pylist())) == 2


def test_forecast_rows_years_follow_thresholds() -> None:
    """Each year is the trajectory's year for its threshold; a null threshold gives null."""
    table = forecast_rows(SERIES, LIMITS, 3.76e28, None, SETTINGS, PROVENANCE)
    row = table.to_pylist()[0]
    assert row["linear_end_year"] == pytest.approx(
        year_reaching_flop(2.05e28, 5e25, 2024.0, 4.0), rel=1e-12
    )
    assert row["t_crit_year"] == pytest.approx(2028.78, abs=0.005)  # 3.76e28 / 5e25 = 752 = 4^4.78
    assert row["wall_year"] is None
    assert row["t_limit_year"] is None


def test_trajectories_are_kept_for_the_same_settings_object() -> None:
    """The series of a run share their trajectories (and the intervals each keeps): the same
    settings object gives the same objects, other settings, even equal ones, their own."""
    first = trajectories(SETTINGS)
    assert trajectories(SETTINGS) is first
    other = trajectories(replace(SETTINGS))
    assert other is not first
    assert [t.name for t in other] == [t.name for t in first]


def test_forecast_rows_written_as_part(tmp_path: Path) -> None:
    """The table is a valid `forecasts` part in the series' partition."""
    table = forecast_rows(SERIES, LIMITS, 3.76e28, 7.1e31, SETTINGS, PROVENANCE)
    path = write_part(tmp_path, "forecasts", table, SERIES.partition, SERIES.series_id)
    assert path.parent.relative_to(tmp_path).as_posix() == (
        "forecasts/hardware=h100_sxm/scaling=dense/batch_law=critical"
    )


def _observed_settings() -> ForecastSettings:
    """The default settings with the shipped snapshots read and the frontier fitted."""
    settings = ForecastSettings(5e25, 2024.0, (4.0, 5.0), fitted=FrontierSettings())
    sources = SourcesSettings(
        SourceSpec("frontier_runs", "package:notable_ai_models.csv"), None, FetchSettings(), None
    )
    return observe_frontier(settings, sources, None, dt.date(2026, 1, 1))


def test_forecast_rows_fitted_first_with_intervals_around_the_median() -> None:
    """With observations the fitted trajectory comes first, its years inside their intervals,
    and every row names the data's date and the source copy."""
    rows = forecast_dicts(SERIES, LIMITS, 3.76e28, 7.1e31, _observed_settings(), PROVENANCE)
    assert [r["trajectory"] for r in rows] == ["fitted", "hand_set_4x", "hand_set_5x"]
    fitted = rows[0]
    for column in ("linear_end_year", "last_feasible_year", "t_crit_year", "t_limit_year"):
        assert fitted[f"{column}_low"] < fitted[column] < fitted[f"{column}_high"], column
    assert (
        fitted["growth_per_year_low"] < fitted["growth_per_year"] < fitted["growth_per_year_high"]
    )
    assert all(r["data_as_of"] == dt.date(2025, 4, 10) for r in rows)
    assert all(r["source_hashes"].startswith("frontier_runs=") for r in rows)
    hand_set = rows[1]
    assert hand_set["linear_end_year_low"] == hand_set["linear_end_year"]


def test_forecast_rows_threshold_below_the_observed_frontier_is_already_passed() -> None:
    """A threshold the observed runs already exceed is listed in already_passed, not hidden."""
    low = SeriesLimits(linear_end_flop=1e24, last_feasible_flop=2.7e31, first_infeasible_flop=None,
                       max_utilization=0.7, end_reason="end_of_grid")  # fmt: skip
    rows = forecast_dicts(SERIES, low, None, None, _observed_settings(), PROVENANCE)
    for row in rows:
        assert row["already_passed"] == "linear_end_year"
        assert row["linear_end_year"] < 2025.3


GROK_3 = fractional_year(dt.date(2025, 2, 17))
"""The largest run of the shipped snapshot (4.64e26 FLOP), published before its 2025-04-10."""


def test_forecast_rows_threshold_below_the_largest_observed_run_is_dated_by_the_run() -> None:
    """A threshold below Grok 3 (the realistic dense critical linear end, 3.28e26) has been
    reached: on every trajectory its year and interval are Grok 3's date, and it is passed."""
    limits = replace(LIMITS, linear_end_flop=3.28e26)
    rows = forecast_dicts(SERIES, limits, None, None, _observed_settings(), PROVENANCE)
    for row in rows:
        assert row["linear_end_year"] == row["linear_end_year_low"] == GROK_3
        assert row["linear_end_year_high"] == GROK_3
        assert row["already_passed"] == "linear_end_year"


def test_forecast_rows_threshold_above_the_record_keeps_the_trajectory_year() -> None:
    """A threshold just above the largest observed run is not passed: the fitted row keeps
    its lines' quantiles, the hand-set rows their formula year."""
    limits = replace(LIMITS, linear_end_flop=4.7e26)
    rows = forecast_dicts(SERIES, limits, None, None, _observed_settings(), PROVENANCE)
    fitted, four = rows[0], rows[1]
    assert (
        fitted["linear_end_year_low"] < fitted["linear_end_year"] < fitted["linear_end_year_high"]
    )
    assert four["linear_end_year"] == pytest.approx(
        year_reaching_flop(4.7e26, 5e25, 2024.0, 4.0), rel=1e-12
    )
    assert all(r["already_passed"] == "" for r in rows)


def test_forecast_rows_moving_threshold_the_runs_met_is_dated_by_the_run() -> None:
    """A moving threshold Grok 3 met on its date's projected hardware is passed at its date."""
    moving = MovingFrontier(  # T(2025.13) = 1e26 * 1000^(1.13/6) = 3.7e26 < 4.64e26
        "h100_sxm", "hash", (_collapsed_year(2024.0, 1e26), _collapsed_year(2030.0, 1e29))
    )
    rows = forecast_dicts(SERIES, LIMITS, None, None, _observed_settings(), PROVENANCE, moving)
    for row in rows:
        assert row["moving_wall_year"] == row["moving_wall_year_high"] == GROK_3
        assert row["already_passed"] == "moving_wall_year"


def test_forecast_rows_data_as_of_is_the_newest_run_the_fit_saw() -> None:
    """A back-test's data_as_of and record end at window_end: a threshold only later runs
    reached is not passed, and the rows say the data's date is in 2022."""
    settings = replace(_observed_settings().fitted, window_end=dt.date(2023, 1, 1))
    sources = SourcesSettings(
        SourceSpec("frontier_runs", "package:notable_ai_models.csv"), None, FetchSettings(), None
    )
    observed = observe_frontier(
        replace(SETTINGS, fitted=settings), sources, None, dt.date(2026, 1, 1)
    )
    limits = replace(LIMITS, linear_end_flop=1e25, last_feasible_flop=2.6e24)
    rows = forecast_dicts(SERIES, limits, None, None, observed, PROVENANCE)
    for row in rows:
        assert row["data_as_of"] == dt.date(2022, 12, 28)
        assert row["already_passed"] == "last_feasible_year"  # Minerva, 2.74e24 in 2022-06
        assert row["last_feasible_year"] == fractional_year(dt.date(2022, 6, 29))


def _collapsed_year(year: float, wall_flop: float) -> FrontierYear:
    """A projected year whose series ended by utilization collapse (no infeasible size)."""
    name = f"projected_h100_sxm_{year:g}"
    return FrontierYear(
        year, name, name, 1e15, 1e29, wall_flop, None, wall_flop, "utilization_collapse"
    )


def test_forecast_rows_moving_wall_year_counts_a_collapse_as_the_wall() -> None:
    """A moving frontier whose years end by utilization collapse has a moving wall year, as the
    frozen forecasts give a collapsed series a wall year."""
    moving = MovingFrontier(
        "h100_sxm", "hash", (_collapsed_year(2024.0, 1e28), _collapsed_year(2030.0, 1e29))
    )
    rows = forecast_dicts(SERIES, LIMITS, None, None, SETTINGS, PROVENANCE, moving)
    g4 = rows[0]
    assert g4["growth_per_year"] == 4.0
    # C(y) = 5e25 * 4^(y - 2024) against ln T interpolated from 1e28 (2024) to 1e29 (2030)
    expected = 2024.0 + math.log(1e28 / 5e25) / (math.log(4.0) - math.log(1e29 / 1e28) / 6.0)
    assert g4["moving_wall_year"] == pytest.approx(expected, rel=1e-12)


def test_forecast_rows_year_before_the_run_date_is_passed() -> None:
    """A year after the data's date but before the run date is listed in passed_by_run_date,
    not in already_passed; a later run date lists more, and no run date lists nothing."""
    observed = _observed_settings()
    early = forecast_dicts(
        SERIES, LIMITS, None, None, replace(observed, run_date=dt.date(2026, 1, 1)), PROVENANCE
    )
    late = forecast_dicts(
        SERIES, LIMITS, None, None, replace(observed, run_date=dt.date(2040, 1, 1)), PROVENANCE
    )
    unknown = forecast_dicts(SERIES, LIMITS, None, None, observed, PROVENANCE)
    for before, after, none in zip(early, late, unknown, strict=True):
        assert before["passed_by_run_date"] == ""
        assert before["forecast_date"] == dt.date(2026, 1, 1)
        assert after["passed_by_run_date"] == "linear_end_year,last_feasible_year"
        assert after["already_passed"] == ""
        assert none["passed_by_run_date"] is None


def test_observe_for_run_sets_the_run_date_from_the_nightly() -> None:
    """The nightly's output.run_date is the date the forecasts judge passed years against."""
    settings = observe_for_run(SETTINGS, None, {"run_date": "2026-12-03"}, write=False)
    assert settings.run_date == dt.date(2026, 12, 3)


def test_uncertainty_budget_dates_a_passed_threshold_as_the_forecast_rows_do() -> None:
    """A design whose thresholds all lie below Grok 3 gives the budget's linear end Grok 3's
    date, median and interval, as the `forecasts` row dates it, with no variance left to the
    trajectory; without the record it read the lines' years, later and spread."""
    settings = _observed_settings()
    assert settings.observed is not None
    record = settings.observed.record
    assert record is not None
    trajectory = trajectories(settings)[0]
    n = 8
    uncertainty = UncertaintySettings(n, 1, ())
    values = np.zeros((n, 0))
    thresholds = {"linear_end_year": [3.28e26] * n, "wall_year": [1e27] * n}
    rows = budget_dicts(
        SERIES, uncertainty, values, thresholds, trajectory, PROVENANCE, None, record
    )
    [linear] = [r for r in rows if r["limit"] == "linear_end_year"]
    assert linear["year_median"] == linear["year_low"] == linear["year_high"] == GROK_3
    assert (linear["variance_share"], linear["budget_null_reason"]) == (None, "no_spread")
    free = budget_dicts(SERIES, uncertainty, values, thresholds, trajectory, PROVENANCE)
    [unknowing] = [r for r in free if r["limit"] == "linear_end_year"]
    assert unknowing["year_median"] > GROK_3
    assert unknowing["year_low"] < unknowing["year_high"]
    assert unknowing["variance_share"] is not None
    assert unknowing["budget_null_reason"] is None


def _grid_end_year(year: float, linear_end_flop: float | None) -> FrontierYear:
    """A projected year whose series ran to the grid's end: no wall on its grid."""
    name = f"projected_h100_sxm_{year:g}"
    return FrontierYear(year, name, name, 1e15, linear_end_flop, 1e33, None, None, "end_of_grid")


def test_forecast_rows_name_the_moving_years_with_no_threshold_on_any_grid() -> None:
    """No projected year has a wall: the moving wall year is null for want of a threshold, and
    `moving_without_threshold` says so (the text prints "-"); the moving linear end, whose
    thresholds exist but lie far beyond the lines by the last year, is null as "not reached"."""
    moving = MovingFrontier(
        "h100_sxm", "hash", (_grid_end_year(2024.0, 1e60), _grid_end_year(2030.0, 1e61))
    )
    rows = forecast_dicts(SERIES, LIMITS, None, None, SETTINGS, PROVENANCE, moving)
    for row in rows:
        assert row["moving_wall_year"] is None
        assert row["moving_linear_end_year"] is None
        assert row["moving_without_threshold"] == "moving_wall_year"
        assert year_text(row, "moving_wall_year", moving_frontier=True) == "-"
        assert year_text(row, "moving_linear_end_year", moving_frontier=True) == "not reached"
    without = forecast_dicts(SERIES, LIMITS, None, None, SETTINGS, PROVENANCE)
    assert all(r["moving_without_threshold"] is None for r in without)


def test_forecast_rows_say_whether_the_series_was_projected() -> None:
    """`moving_projected` is true on every row of a series with a moving frontier and false on
    those of one without (the run projected none, or not this series' hardware), so a null moving
    year of the second is never read as not reached (the text prints "not projected")."""
    moving = MovingFrontier(
        "h100_sxm", "hash", (_grid_end_year(2024.0, 1e60), _grid_end_year(2030.0, 1e61))
    )
    projected = forecast_dicts(SERIES, LIMITS, None, None, SETTINGS, PROVENANCE, moving)
    left_out = forecast_dicts(SERIES, LIMITS, None, None, SETTINGS, PROVENANCE)
    assert projected
    assert len(left_out) == len(projected)
    assert all(r["moving_projected"] is True for r in projected)
    for row in left_out:
        assert row["moving_projected"] is False
        assert row["moving_linear_end_year"] is None
        assert row["moving_wall_year"] is None
        for column in ("moving_linear_end_year", "moving_wall_year"):
            assert year_text(row, column, moving_frontier=True) == "not projected"
    table = forecast_rows(SERIES, LIMITS, None, None, SETTINGS, PROVENANCE)
    assert table.schema.field("moving_projected").type == pa.bool_()
    assert set(table.column("moving_projected").to_pylist()) == {False}


def test_uncertainty_budget_gives_a_trend_no_share_of_a_frozen_year() -> None:
    """A hardware trend's rate moves only the moving-hardware years (`budget.acts_on`): held
    constant in a frozen-hardware year's regression, its share there is exactly 0, where the
    fit over a few points would give it noise; on a moving year it is the fit's."""
    from pipeline.forecast.uncertainty import Distribution, UncertainInput

    settings = _observed_settings()
    trajectory = trajectories(settings)[0]
    n = 16
    rng = np.random.default_rng(7)
    config = UncertainInput("batch.exponent", Distribution.UNIFORM, 0.11, 0.22)
    trend = UncertainInput(
        "trends.growth_per_year.flop_per_s", Distribution.TREND, 1.3, 1.5, centre=1.4
    )
    values = np.column_stack([rng.uniform(0.11, 0.22, n), rng.uniform(1.3, 1.5, n)])
    thresholds = {
        "linear_end_year": list(1e27 * np.exp(10.0 * values[:, 0])),
        "wall_year": list(1e28 * np.exp(10.0 * values[:, 0])),
    }
    moving = {
        "moving_linear_end_year": 2030.0 + 20.0 * (values[:, 1] - 1.4),
        "moving_wall_year": 2032.0 + 20.0 * (values[:, 1] - 1.4),
    }
    uncertainty = UncertaintySettings(n, 1, (config, trend))
    rows = budget_dicts(SERIES, uncertainty, values, thresholds, trajectory, PROVENANCE, moving)
    share = {(r["limit"], r["input"]): r["variance_share"] for r in rows}
    assert share[("linear_end_year", trend.key)] == 0.0
    assert share[("wall_year", trend.key)] == 0.0
    assert share[("moving_wall_year", trend.key)] > 0.5


def test_forecast_rows_name_the_fit_they_rest_on() -> None:
    """Every row of a fitted run, hand-set ones too (their data_as_of and already_passed are
    the fit's), names the fit in `fit_hash`; a back-test's fit is another; a run without a fit
    leaves it null on every row."""
    observed = _observed_settings()
    assert observed.observed is not None
    rows = forecast_dicts(SERIES, LIMITS, 3.76e28, 7.1e31, observed, PROVENANCE)
    assert {r["fit_hash"] for r in rows} == {observed.observed.fit_hash}
    assert observed.observed.fit_hash is not None
    fitted = observed.fitted
    assert fitted is not None
    sources = SourcesSettings(
        SourceSpec("frontier_runs", "package:notable_ai_models.csv"), None, FetchSettings(), None
    )
    back = replace(SETTINGS, fitted=replace(fitted, window_end=dt.date(2023, 1, 1)))
    back_rows = forecast_dicts(
        SERIES, LIMITS, None, None, observe_frontier(back, sources, None, dt.date(2026, 1, 1)),
        PROVENANCE,
    )  # fmt: skip
    assert len({r["fit_hash"] for r in back_rows}) == 1
    assert back_rows[0]["fit_hash"] not in {None, rows[0]["fit_hash"]}
    bare = observe_frontier(SETTINGS, sources, None, dt.date(2026, 1, 1))
    bare_rows = forecast_dicts(SERIES, LIMITS, None, None, bare, PROVENANCE)
    assert [r["fit_hash"] for r in bare_rows] == [None, None]
    assert (
        forecast_rows(SERIES, LIMITS, None, None, SETTINGS, PROVENANCE)
        .column("fit_hash")
        .null_count
        == 2
    )


@pytest.mark.parametrize(
    ("linear_end", "last_feasible", "end_reason", "beyond"),
    [
        (None, 1e30, "end_of_grid", True),
        (None, 1e30, "wall", True),
        (1e28, 1e30, "wall", False),
        (None, None, "wall", False),
        (None, 1e26, SeriesEnd.RUN.value, None),
    ],
    ids=["past_grid_end", "past_every_point_to_a_wall", "reached", "nothing_feasible", "run"],
)
def test_frontier_rows_say_why_a_years_linear_end_is_null(
    linear_end: float | None, last_feasible: float | None, end_reason: str, beyond: bool | None
) -> None:
    """Each `frontier` row carries its projected series' `linear_end_beyond_grid`, the one
    rule of `thresholds` (`limits.linear_end_beyond_grid`): a null `linear_end_flop`
    past every feasible point is true, with no feasible point false; a run's is null."""
    limits = SeriesLimits(linear_end, last_feasible, None, None, end_reason=end_reason)
    assert linear_end_beyond_grid(limits) is beyond
    name = "projected_h100_sxm_2030"
    year = FrontierYear(
        2030.0, name, name, 1e15, linear_end, last_feasible, None, None, end_reason,
        linear_end_beyond_grid(limits),
    )  # fmt: skip
    (row,) = frontier_dicts(SERIES, MovingFrontier("h100_sxm", "hash", (year,)), PROVENANCE)
    assert row["linear_end_beyond_grid"] is beyond


def _assert_every_null_year_has_one_reason(row: dict[str, object]) -> None:
    """Each null year column of a row is named once in `year_null_reasons`, each set one not at
    all, and a `_high` key only where the year is set and its 95th percentile is not."""
    from pipeline.io.columns import FORECAST_YEARS

    keys = [p.partition("=")[0] for p in str(row["year_null_reasons"]).split(",") if p]
    assert len(keys) == len(set(keys))
    for column in FORECAST_YEARS:
        assert (column in keys) == (row[column] is None), column
        high_alone = row[column] is not None and row[f"{column}_high"] is None
        assert (f"{column}_high" in keys) == high_alone, column


def test_forecast_rows_say_why_each_null_year_is_null() -> None:
    """`year_null_reasons` names each null year's one reason: no wall on the grid, no closed
    form, a series never projected; then linear scaling past the grid and no feasible size."""
    rows = forecast_dicts(SERIES, LIMITS, 3.76e28, None, SETTINGS, PROVENANCE)
    for row in rows:
        _assert_every_null_year_has_one_reason(row)
        assert row["year_null_reasons"] == (
            "wall_year=end_of_grid,t_limit_year=no_closed_form,"
            "moving_linear_end_year=not_projected,moving_wall_year=not_projected"
        )
    beyond = replace(LIMITS, linear_end_flop=None)
    row = forecast_dicts(SERIES, beyond, None, None, SETTINGS, PROVENANCE)[0]
    _assert_every_null_year_has_one_reason(row)
    assert row["year_null_reasons"].startswith("linear_end_year=beyond_grid,wall_year=end_of_grid")
    assert year_text(row, "linear_end_year") == "none: linear to last size"
    none = SeriesLimits(None, None, 1e24, None, wall_flop=1e24, end_reason=SeriesEnd.WALL)
    row = forecast_dicts(SERIES, none, None, None, SETTINGS, PROVENANCE)[0]
    _assert_every_null_year_has_one_reason(row)
    assert row["year_null_reasons"].startswith(
        "linear_end_year=no_feasible_size,last_feasible_year=no_feasible_size,t_crit_year="
    )
    assert year_text(row, "last_feasible_year") == "no feasible size"
    capped = SeriesLimits(None, None, 1e24, None, end_reason=SeriesEnd.CLUSTER_CAP)
    row = forecast_dicts(SERIES, capped, None, None, SETTINGS, PROVENANCE)[0]
    _assert_every_null_year_has_one_reason(row)
    assert row["year_null_reasons"].startswith(
        "linear_end_year=cluster_cap,last_feasible_year=cluster_cap,wall_year=cluster_cap"
    )
    assert year_text(row, "wall_year") == "cluster cap"
    run = replace(LIMITS, linear_end_flop=None, end_reason=SeriesEnd.RUN)
    row = forecast_dicts(SERIES, run, None, None, SETTINGS, PROVENANCE)[0]
    assert row["year_null_reasons"].startswith("linear_end_year=run,wall_year=run")
    assert year_text(row, "linear_end_year") == "-"


def test_forecast_rows_say_which_moving_years_are_not_reached_and_which_lack_a_threshold() -> None:
    """On a projected series a moving year with no threshold on any grid reads `no_threshold`
    (as `moving_without_threshold` lists it) and one whose thresholds lie beyond the lines
    `not_reached`; the fitted line's open interval is named by its `_high` key alone."""
    far = MovingFrontier(
        "h100_sxm", "hash", (_grid_end_year(2024.0, 1e60), _grid_end_year(2030.0, 1e61))
    )
    for row in forecast_dicts(SERIES, LIMITS, None, None, SETTINGS, PROVENANCE, far):
        _assert_every_null_year_has_one_reason(row)
        assert row["year_null_reasons"].endswith(
            "moving_linear_end_year=not_reached,moving_wall_year=no_threshold"
        )
    # 1e29 on every year's grid: the fitted lines' median reaches it about 2029.3, but their
    # 95th percentile lies past 2030, the last projected year
    near = MovingFrontier(
        "h100_sxm", "hash", (_grid_end_year(2024.0, 1e29), _grid_end_year(2030.0, 1e29))
    )
    fitted = forecast_dicts(SERIES, LIMITS, None, None, _observed_settings(), PROVENANCE, near)[0]
    _assert_every_null_year_has_one_reason(fitted)
    assert fitted["moving_linear_end_year"] < 2030.0
    assert fitted["moving_linear_end_year_high"] is None
    assert fitted["year_null_reasons"].endswith(
        "moving_linear_end_year_high=not_reached,moving_wall_year=no_threshold"
    )


def test_forecast_rows_call_a_moving_linear_end_past_every_years_grid_beyond_it() -> None:
    """Linear scaling outlasting the grid on every projected year makes the moving linear end
    `beyond_grid`, as the frozen one, not a threshold merely absent; one year without a
    feasible size leaves it `no_threshold`."""
    past = [replace(_grid_end_year(y, None), linear_end_beyond_grid=True) for y in (2024.0, 2030.0)]
    moving = MovingFrontier("h100_sxm", "hash", tuple(past))
    row = forecast_dicts(SERIES, LIMITS, None, None, SETTINGS, PROVENANCE, moving)[0]
    _assert_every_null_year_has_one_reason(row)
    assert "moving_linear_end_year=beyond_grid" in row["year_null_reasons"]
    assert year_text(row, "moving_linear_end_year") == "none: linear to last size"
    mixed = MovingFrontier(
        "h100_sxm", "hash", (past[0], replace(past[1], linear_end_beyond_grid=False))
    )
    row = forecast_dicts(SERIES, LIMITS, None, None, SETTINGS, PROVENANCE, mixed)[0]
    assert "moving_linear_end_year=no_threshold" in row["year_null_reasons"]
    assert year_text(row, "moving_linear_end_year") == "-"
