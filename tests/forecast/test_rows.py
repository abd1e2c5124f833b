"""One series' forecasts rows: schema, one row per growth factor, years from the thresholds."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.forecast import ForecastSettings, forecast_rows, year_reaching_flop
from pipeline.io.columns import FORECASTS_SCHEMA
from pipeline.io.parquet import write_part
from pipeline.io.rows import Provenance, SeriesKey
from pipeline.model.records.results import SeriesLimits

SERIES = SeriesKey("h100_sxm", "dense", "critical", 7.885e6, "0123456789abcdef", 3.154e7)
LIMITS = SeriesLimits(
    linear_end_flop=2.05e28, last_feasible_flop=2.7e31, first_infeasible_flop=None,
    max_utilization=0.7,
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


def test_forecast_rows_written_as_part(tmp_path: Path) -> None:
    """The table is a valid `forecasts` part in the series' partition."""
    table = forecast_rows(SERIES, LIMITS, 3.76e28, 7.1e31, SETTINGS, PROVENANCE)
    path = write_part(tmp_path, "forecasts", table, SERIES.partition, SERIES.series_id)
    assert path.parent.relative_to(tmp_path).as_posix() == (
        "forecasts/hardware=h100_sxm/scaling=dense/batch_law=critical"
    )
