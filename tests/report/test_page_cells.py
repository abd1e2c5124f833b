"""The report page's table cells: a null threshold says why where one label exists for it."""

from __future__ import annotations

from pipeline.forecast.null_years import YearNull
from pipeline.forecast.text import NULL_TEXT
from pipeline.report.page import _cell


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
