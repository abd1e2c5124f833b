"""The report page's table cells: a null threshold says why where one label exists for it."""

from __future__ import annotations

import datetime as dt

import polars as pl

from pipeline.forecast.null_years import YearNull
from pipeline.forecast.text import NULL_TEXT
from pipeline.report.page import _cell, _forecast_table


def test_a_linear_end_past_the_grid_reads_as_the_forecasts_do() -> None:
    """A null `linear_end_flop` whose series kept linear scaling to its last feasible size
    reads as the forecast tables read its year; a series without a feasible size says so; a
    row older than `end_reason` (no reason recorded) stays "–"."""
    beyond = {"linear_end_flop": None, "last_feasible_flop": 3.2e29, "end_reason": "wall"}
    none = {"linear_end_flop": None, "last_feasible_flop": None, "end_reason": "wall"}
    assert _cell("linear_end_flop", None, beyond) == NULL_TEXT[YearNull.BEYOND_GRID]
    assert _cell("linear_end_flop", None, none) == NULL_TEXT[YearNull.NO_FEASIBLE_SIZE]
    assert _cell("last_feasible_flop", None, none) == NULL_TEXT[YearNull.NO_FEASIBLE_SIZE]
    assert _cell("linear_end_flop", None, {"last_feasible_flop": 3.2e29}) == "–"
    assert _cell("first_infeasible_flop", None, beyond) == "–"
    assert _cell("linear_end_flop", 3.28e26, beyond) == "3.28e+26"


def test_the_forecasts_caption_dates_what_passed_means() -> None:
    """A year prefixed "passed" lies before the run's date: the caption names that date, as
    the console's heading does (`forecast.text`), beside the data's."""
    row = {
        "series_id": "s",
        "hardware": "h100_sxm",
        "scaling": "dense",
        "batch_law": "critical",
        "trajectory": "hand_set_4x",
        "growth_per_year": 4.0,
        "linear_end_year": 2026.5,
        "passed_by_run_date": "linear_end_year",
        "already_passed": "",
        "data_as_of": dt.date(2025, 2, 17),
        "forecast_date": dt.date(2026, 12, 7),
    }
    table = _forecast_table(pl.DataFrame([row]), {}, moving_frontier=False)
    assert "data as of 2025-02-17, run date 2026-12-07 (a year before it: passed)" in table
    assert "<td>passed 2026.5</td>" in table
