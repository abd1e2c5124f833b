"""The report page's table cells: a null threshold says why where one label exists for it."""

from __future__ import annotations

import datetime as dt

import polars as pl

from pipeline.forecast.null_years import YearNull
from pipeline.forecast.text import NULL_TEXT
from pipeline.report.page import _cell, _forecast_table


def test_a_linear_end_past_the_grid_reads_as_the_forecasts_do() -> None:
    """A null `linear_end_flop` whose series kept linear scaling to its last feasible size
    (`linear_end_beyond_grid`) reads as the forecast tables read its year; another null,
    without a feasible size or in a row older than the column, stays "–"."""
    label = NULL_TEXT[YearNull.BEYOND_GRID]
    assert _cell("linear_end_flop", None, {"linear_end_beyond_grid": True}) == label
    assert _cell("linear_end_flop", None, {"linear_end_beyond_grid": False}) == "–"
    assert _cell("linear_end_flop", None, {}) == "–"
    assert _cell("wall_flop", None, {"linear_end_beyond_grid": True}) == "–"
    assert _cell("linear_end_flop", 3.28e26, {"linear_end_beyond_grid": False}) == "3.28e+26"


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
