"""The uncertainty design as series: one per point, the inputs set together in config units."""

from __future__ import annotations

import pytest

from pipeline.forecast.uncertainty import (
    Distribution,
    UncertainInput,
    UncertaintySettings,
    design_values,
)
from pipeline.schema import ConfigError, compose_config
from pipeline.sweep.design import design_series

U_EFF = UncertainInput("hardware.u_eff", Distribution.UNIFORM, 0.6, 0.8)
LATENCY = UncertainInput("hardware.network.latency_us[*]", Distribution.LOGUNIFORM, 0.5, 2.0)
SETTINGS = UncertaintySettings(8, 3, (U_EFF, LATENCY))


def test_design_series_set_every_input_of_each_point() -> None:
    """Point k's series has u_eff and every level's latency at the design's row k (zipped, not
    a product), distinct series ids, and the base is the config as composed."""
    base, series = design_series(compose_config(), SETTINGS)
    values = design_values(SETTINGS)
    assert len(series) == 8 == len({s.series_id for s in series})
    for row, s in zip(values, series, strict=True):
        assert s.scenario.hardware.u_eff == pytest.approx(row[0])
        assert s.scenario.hardware.net_latency_s == pytest.approx((row[1] * 1e-6,) * 2)
    assert base.scenario.hardware.u_eff == pytest.approx(0.70)
    assert base.series_id not in {s.series_id for s in series}


def test_design_series_unknown_key_names_the_input() -> None:
    """An input that is not a config field is a ConfigError under forecast.uncertainty.inputs."""
    bad = UncertainInput("hardware.u_effective", Distribution.UNIFORM, 0.6, 0.8)
    with pytest.raises(ConfigError) as err:
        design_series(compose_config(), UncertaintySettings(8, 3, (bad,)))
    assert err.value.key == "forecast.uncertainty.inputs.hardware.u_effective"
