"""The run summary's linear-end and wall columns: a linear end that linear scaling outlasted, and
a wall the grid never hit, read as the forecasts and the report page read them
(`pipeline.forecast.text.NULL_TEXT`)."""

from __future__ import annotations

import dataclasses
import html

from pipeline.app.summary import _last_feasible, _linear_end, _wall, footer_lines
from pipeline.forecast.null_years import YearNull
from pipeline.forecast.text import NULL_TEXT
from pipeline.model.limits import LinearEndBasis, SeriesEnd
from pipeline.model.records.results import SeriesLimits
from pipeline.report.page import _cell

BEYOND = NULL_TEXT[YearNull.BEYOND_GRID]


def _limits(linear_end: float | None, last_feasible: float | None) -> SeriesLimits:
    return SeriesLimits(
        linear_end_flop=linear_end,
        last_feasible_flop=last_feasible,
        first_infeasible_flop=2.03e26,
        max_utilization=None if last_feasible is None else 0.61,
        wall_flop=2.03e26,
        end_reason=str(SeriesEnd.WALL),
        linear_end_basis=None if last_feasible is None else str(LinearEndBasis.PEAK),
    )


def test_a_linear_end_past_the_last_feasible_size_reads_as_elsewhere() -> None:
    """Feasible sizes and none fell to the linear end: the forecasts' words, not "not
    reached"; no feasible size: the forecasts' words for that, in the linear end and the last
    feasible size alike; a linear end measured from the peak: its FLOP, starred."""
    assert _linear_end(_limits(None, 1.12e26)) == BEYOND
    none_feasible = NULL_TEXT[YearNull.NO_FEASIBLE_SIZE]
    assert _linear_end(_limits(None, None)) == none_feasible
    assert _last_feasible(_limits(None, None)) == none_feasible
    assert _linear_end(_limits(1.32e28, 3.22e29)) == "1.32e+28*"


def test_the_footer_explains_both_nulls_in_the_column_s_words() -> None:
    """The legend names the label the column prints and the dash, and no other null text."""
    legend = footer_lines([])[0]
    assert f"{BEYOND}: no feasible size fell that low" in legend
    assert f"{NULL_TEXT[YearNull.NO_FEASIBLE_SIZE]}: none trains within the duration" in legend
    assert "not reached" not in legend


def test_a_missing_wall_reads_why_as_the_forecasts_and_the_page_do() -> None:
    """A series with no wall says why in the forecasts' words: every grid size ran, or the
    search's cluster cap ended it; the report page's thresholds cell says the same."""
    ran = dataclasses.replace(_limits(1.32e28, 2.42e36), wall_flop=None, end_reason="end_of_grid")
    capped = dataclasses.replace(ran, end_reason=str(SeriesEnd.CLUSTER_CAP))
    assert _wall(ran) == NULL_TEXT[YearNull.END_OF_GRID]
    assert _wall(capped) == NULL_TEXT[YearNull.CLUSTER_CAP]
    assert _wall(_limits(None, 1.12e26)) == "2.03e+26"
    for lim in (ran, capped, _limits(None, None)):
        row = dataclasses.asdict(lim)
        for column, text in (("wall_flop", _wall), ("linear_end_flop", _linear_end)):
            if row[column] is None:
                assert _cell(column, None, row) == html.escape(text(lim))
