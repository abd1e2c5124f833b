"""The forecast config group loads, and bad values raise a one-line ConfigError."""

from __future__ import annotations

import datetime as dt

import pytest

from pipeline.forecast import ForecastSettings, forecast_from_config
from pipeline.forecast.observed import FrontierLine, FrontierRule, FrontierSettings
from pipeline.schema import ConfigError, compose_config

DEFAULT = {"base_flop": 5.0e25, "base_year": 2024, "growth_per_year": [4.0, 5.0]}


def test_forecast_settings_default_file() -> None:
    """conf/forecast/default.yaml: the frontier fitted on Epoch's flag from 2018, and the hand-set
    5e25 FLOP in 2024 growing 4x and 5x per year."""
    settings = forecast_from_config(compose_config().forecast)
    fitted = FrontierSettings(
        FrontierRule.EPOCH_FLAG, 10, dt.date(2018, 1, 1), None, FrontierLine.ENVELOPE
    )
    assert settings == ForecastSettings(5e25, 2024.0, (4.0, 5.0), fitted=fitted)


def test_forecast_settings_typical_line_is_the_option() -> None:
    """forecast.fitted.line=typical keeps the least-squares line of a typical frontier run."""
    settings = forecast_from_config(compose_config(["forecast.fitted.line=typical"]).forecast)
    assert settings.fitted is not None
    assert settings.fitted.line is FrontierLine.TYPICAL


def test_forecast_settings_hand_set_file_fits_nothing() -> None:
    """forecast=hand_set keeps the hand-set scenarios and switches the fit off."""
    settings = forecast_from_config(compose_config(["forecast=hand_set"]).forecast)
    assert settings == ForecastSettings(5e25, 2024.0, (4.0, 5.0))


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("forecast.fitted.rule=largest", "forecast.fitted.rule"),
        ("forecast.fitted.window_start=2018", "forecast.fitted.window_start"),
        ("forecast.fitted.window_end='2017-01-01'", "forecast.fitted.window_end"),
        ("forecast.fitted.top_n=0", "forecast.fitted.top_n"),
        ("forecast.fitted.line=median", "forecast.fitted.line"),
    ],
)
def test_forecast_settings_bad_fit_is_a_one_line_config_error(override: str, key: str) -> None:
    """A bad rule, date, window, N or line names its key."""
    with pytest.raises(ConfigError) as err:
        forecast_from_config(compose_config([override]).forecast)
    assert err.value.key == key


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"base_flop": -1.0}, "forecast.base_flop"),
        ({"base_flop": "lots"}, "forecast.base_flop"),
        ({"base_year": float("nan")}, "forecast.base_year"),
        ({"growth_per_year": [4.0, 1.0]}, "forecast.growth_per_year[1]"),
        ({"growth_per_year": []}, "forecast.growth_per_year"),
        ({"growth_per_year": [4.0, 4.0]}, "forecast.growth_per_year"),
        ({"growth_rate": 4.0}, "forecast.growth_rate"),
    ],
    ids=["negative_flop", "string_flop", "nan_year", "growth_one", "no_growth", "repeat", "typo"],
)
def test_forecast_settings_reject_bad_value(change: dict[str, object], key: str) -> None:
    """Each bad value names its dotted key on one line."""
    with pytest.raises(ConfigError) as info:
        forecast_from_config({**DEFAULT, **change})
    assert info.value.key == key
    assert "\n" not in str(info.value)


def test_forecast_settings_missing_group() -> None:
    """A config without the forecast group says which group is missing."""
    with pytest.raises(ConfigError, match="conf/forecast"):
        forecast_from_config(None)
