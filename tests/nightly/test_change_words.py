"""The change report writes a forecast year as the console summary does."""

from __future__ import annotations

import datetime as dt
import re

from pipeline.forecast.text import year_text
from pipeline.nightly.changes import ChangeReport, Move, SeriesMatch, render_markdown


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
