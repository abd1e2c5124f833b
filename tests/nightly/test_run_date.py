"""A nightly run date past tomorrow or before 2000 is refused in one line, not a traceback."""

from __future__ import annotations

import datetime as dt

import pytest

from pipeline.nightly.settings import parse_run_date
from pipeline.schema import ConfigError


@pytest.mark.parametrize("value", ["9999-12-31", "0001-01-01", "1999-12-31"])
def test_run_date_absurd_is_refused_in_one_line(value: str) -> None:
    """The last and first dates of the calendar and one before 2000 name output.run_date."""
    with pytest.raises(ConfigError, match="must be a date from 2000-01-01") as info:
        parse_run_date(value)
    assert info.value.key == "output.run_date"


def test_run_date_after_tomorrow_is_refused_and_tomorrow_accepted() -> None:
    """A partition holds the data as of its date: tomorrow (time zones) is the latest."""
    tomorrow = dt.date.today() + dt.timedelta(days=1)
    assert parse_run_date(tomorrow.isoformat()) == tomorrow
    with pytest.raises(ConfigError):
        parse_run_date((tomorrow + dt.timedelta(days=1)).isoformat())
    with pytest.raises(ConfigError):
        parse_run_date(dt.date(9999, 12, 31))
