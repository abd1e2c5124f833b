"""Forecasts: the calendar year frontier training compute reaches each limit of a series.

- trajectory: pure arithmetic, compute <-> year on an exponential growth trajectory
- settings: conf/forecast/*.yaml -> ForecastSettings (checked, one-line ConfigError)
- rows: one series' `forecasts` rows as an Arrow table (one row per growth scenario)
- reality: the model's answer to each observed run that says how it was trained (`reality`)
"""

from pipeline.forecast.rows import forecast_dicts, forecast_rows
from pipeline.forecast.settings import ForecastSettings, forecast_from_config
from pipeline.forecast.trajectory import frontier_flop, year_reaching_flop

__all__ = [
    "ForecastSettings",
    "forecast_dicts",
    "forecast_from_config",
    "forecast_rows",
    "frontier_flop",
    "year_reaching_flop",
]
