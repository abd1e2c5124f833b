"""The change report writes a forecast year as the console summary does."""

from __future__ import annotations

import datetime as dt
import re

import polars as pl

from pipeline.forecast.text import year_text
from pipeline.io.columns import SCHEMA_VERSION
from pipeline.nightly.changes import (
    ChangeReport,
    Move,
    SeriesMatch,
    _moves,
    render_markdown,
    report_json,
)


def test_change_report_open_interval_reads_as_the_console() -> None:
    """A year whose interval has no upper end (past the last projected year) reads the same in
    the change report as in the console summary: one word for the open end."""
    row = {"wall_year": 2034.0, "wall_year_low": 2033.3, "wall_year_high": None}
    move = Move(
        SeriesMatch("h100_sxm", "dense", "critical"),
        "wall_year",
        2033.0,
        2034.0,
        growth_per_year=4.62,
        trajectory="fitted",
        previous_interval=(2032.5, 2033.5),
        current_interval=(2033.3, None),
    )
    report = ChangeReport(
        dt.date(2025, 2, 1), dt.date(2025, 1, 31), ("b",), ("a",), 1, forecasts=(move,)
    )
    open_end = re.compile(r"\(\d+\.\d+-([a-z]+)\)")
    console = open_end.findall(year_text(row, "wall_year"))
    assert console
    assert open_end.findall(render_markdown(report)) == console


def _forecasts(year: float, low: float, high: float, passed: str, by_date: str) -> pl.DataFrame:
    """One fitted `forecasts` row of series "s" with the linear end's year and its status."""
    return pl.DataFrame(
        {
            "series_id": ["s"],
            "trajectory": ["fitted"],
            "schema_version": [SCHEMA_VERSION],
            "growth_per_year": [4.62],
            "linear_end_year": [year],
            "linear_end_year_low": [low],
            "linear_end_year_high": [high],
            "already_passed": [passed],
            "passed_by_run_date": [by_date],
            "data_as_of": [dt.date(2025, 2, 17)],
            "year_null_reasons": [""],
        }
    )


def _linear_end_moves(previous: pl.DataFrame, current: pl.DataFrame) -> list[Move]:
    key = SeriesMatch("h100_sxm", "dense", "constant")
    return _moves(
        {"s": "s"},
        {"s": key},
        previous,
        current,
        ("linear_end_year",),
        ("series_id", "trajectory"),
        "forecasts",
    )


def test_a_year_the_runs_reached_reads_as_their_date_not_a_forecast() -> None:
    """A linear end overdue on one night (before the data's date, no run there yet) that an
    observed run reached by the next is that run's date: the report says so where the console
    says "passed before the data", and its JSON gives both statuses, not a bare year."""
    overdue = _forecasts(2024.84, 2024.27, 2025.90, "", "")
    reached = _forecasts(2025.13, 2025.13, 2025.13, "linear_end_year", "")
    (move,) = _linear_end_moves(overdue, reached)
    assert (move.previous_status, move.current_status) == ("overdue", "passed_before_data")
    report = ChangeReport(
        dt.date(2026, 12, 6), dt.date(2026, 12, 5), ("b",), ("a",), 1, forecasts=(move,)
    )
    text = render_markdown(report)
    assert "| overdue 2024.84 (2024.27-2025.90) | 2025.13 (passed before the data) |" in text
    assert "+0.29 years; overdue → passed before the data |" in text
    (row,) = report_json(report)["forecasts"]
    assert (row["previous_status"], row["current_status"]) == ("overdue", "passed_before_data")


def test_a_year_that_only_passed_the_run_date_is_listed() -> None:
    """The same year, ahead of one night's run date and passed by the next's: no value moved,
    its status did, and the headline says the year itself stayed."""
    ahead = _forecasts(2026.93, 2026.5, 2027.4, "", "")
    passed = _forecasts(2026.93, 2026.5, 2027.4, "", "linear_end_year")
    (move,) = _linear_end_moves(ahead, passed)
    report = ChangeReport(
        dt.date(2026, 12, 7), dt.date(2026, 12, 6), ("b",), ("a",), 1, forecasts=(move,)
    )
    text = render_markdown(report)
    assert "| 2026.93 (2026.50-2027.40) | passed 2026.93 (2026.50-2027.40) |" in text
    assert "+0.00 years; ahead → passed |" in text
    assert "1 forecast years moved (1 the same year with another status)" in text
    assert "- no value moved: the run date moved from 2026-12-06 to 2026-12-07" in text
    assert "the model, a hardware preset or the scenario changed" not in text
