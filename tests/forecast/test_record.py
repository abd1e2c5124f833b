"""The observed record: the running maximum of the runs, and when it reached a threshold."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.forecast.record import ObservedRecord

RECORD = ObservedRecord.of_runs(
    [2020.0, 2021.0, 2021.5, 2022.0, 2024.0], [1e24, 5e23, 1e25, 1e25, 1e26], 2023.0
)


def test_observed_record_keeps_each_run_above_every_earlier_one_by_the_data_date() -> None:
    """A run no larger than an earlier one, or published after data_as_of, is no record."""
    assert RECORD.years == (2020.0, 2021.5)
    assert RECORD.flop == (1e24, 1e25)
    assert RECORD.flop_by(2021.0) == 1e24
    assert RECORD.flop_by(2019.0) == 0.0


def test_year_reached_is_the_date_of_the_first_run_at_or_above() -> None:
    """A threshold at or below the largest run is dated by the first run reaching it."""
    assert RECORD.year_reached(1e23) == 2020.0
    assert RECORD.year_reached(1e24) == 2020.0
    assert RECORD.year_reached(2e24) == 2021.5
    assert RECORD.year_reached(1e25) == 2021.5


def test_year_reached_none_above_the_record_or_without_a_threshold() -> None:
    """A threshold above every run (or none at all) was not reached."""
    assert RECORD.year_reached(1.01e25) is None
    assert RECORD.year_reached(None) is None
    assert RECORD.year_reached(float("inf")) is None


def test_moving_year_reached_at_the_record_that_meets_the_years_threshold() -> None:
    """On a rising threshold the runs meet it at a record's date."""
    # T: 2e24 before 2021, 1e25 at 2022 (ln-linear between): the 2021.5 run (1e25) meets it
    assert RECORD.moving_year_reached([2021.0, 2022.0], [2e24, 1e25]) == 2021.5
    assert RECORD.moving_year_reached([2021.0, 2022.0], [2e24, 3e25]) == 2021.5  # T 7.7e24
    assert RECORD.moving_year_reached([2021.0, 2022.0], [2e24, 1e26]) is None  # T 1.4e25


def test_moving_year_reached_inside_an_interval_where_the_threshold_falls() -> None:
    """A threshold falling to the record between two dates is met where it crosses."""
    # after 2021.5, M = 1e25; T falls from 1e26 (2022) to 1e24 (2024): T = 1e25 at 2023.0
    year = ObservedRecord.of_runs([2020.0, 2021.5], [1e24, 1e25], 2024.0).moving_year_reached(
        [2022.0, 2024.0], [1e26, 1e24]
    )
    assert year == pytest.approx(2023.0, abs=1e-12)
    assert RECORD.moving_year_reached([2022.0, 2024.0], [1e26, 1e25]) is None  # T(2023) 3e25


def test_moving_year_reached_none_without_thresholds() -> None:
    """Projected years without a threshold are never met."""
    assert RECORD.moving_year_reached([2021.0, 2022.0], [None, None]) is None


def test_years_given_dates_the_reached_thresholds_and_keeps_the_lines_elsewhere() -> None:
    """Each line's year of its own threshold: the first run's date where the runs reached it,
    the line's year above the record or without a threshold (NaN)."""
    flops = np.array([1e23, 2e24, 2e25, np.nan])
    lines = np.array([2019.0, 2019.5, 2026.0, np.nan])
    got = RECORD.years_given(flops, lines)
    assert got[:3].tolist() == [2020.0, 2021.5, 2026.0]
    assert np.isnan(got[3])
    assert lines.tolist()[:3] == [2019.0, 2019.5, 2026.0]  # a new array: the lines untouched
