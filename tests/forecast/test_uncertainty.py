"""The uncertainty design: seeded Sobol' values in each distribution, and variance shares."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from omegaconf import OmegaConf

from pipeline.forecast import forecast_from_config
from pipeline.forecast.uncertainty import (
    TREND_PREFIX,
    Distribution,
    UncertainInput,
    UncertaintySettings,
    design_values,
    with_trends,
    year_budget,
)
from pipeline.schema import ConfigError, compose_config
from pipeline.schema.projected import shipped_catalog
from pipeline.trends.catalog_fits import catalog_trends
from pipeline.trends.fit import TrendFit

LATENCY = UncertainInput("hardware.network.latency_us[*]", Distribution.LOGUNIFORM, 0.5, 2.0)
U_EFF = UncertainInput("hardware.u_eff", Distribution.UNIFORM, 0.6, 0.8)
SETTINGS = UncertaintySettings(64, 7, (LATENCY, U_EFF))


def test_design_values_are_seeded_and_inside_each_distribution() -> None:
    """The same seed gives the same design; each column lies in its bounds, the log-uniform one
    balanced about its geometric middle (1.0) and the uniform one about its middle."""
    values = design_values(SETTINGS)
    assert values.shape == (64, 2)
    assert np.array_equal(values, design_values(SETTINGS))
    assert not np.array_equal(values, design_values(UncertaintySettings(64, 8, SETTINGS.inputs)))
    assert np.all((values[:, 0] >= 0.5) & (values[:, 0] < 2.0))
    assert np.all((values[:, 1] >= 0.6) & (values[:, 1] < 0.8))
    assert np.median(values[:, 0]) == pytest.approx(1.0, rel=0.1)
    assert np.mean(values[:, 1]) == pytest.approx(0.7, abs=0.005)


def test_year_budget_recovers_known_variance_shares() -> None:
    """A year linear in two inputs, y = 2 x1 + x2 with equal spreads, gives shares 0.8 and 0.2,
    all of the variance explained; the distribution is the years' own."""
    values = design_values(UncertaintySettings(256, 1, (U_EFF, U_EFF)))
    x1, x2 = values[:, 0], values[:, 1]
    years = 2030.0 + 20.0 * x1 + 10.0 * x2
    budget = year_budget([x1, x2], years)
    assert budget.shares == pytest.approx((0.8, 0.2), abs=0.02)
    assert budget.explained == pytest.approx(1.0, abs=1e-9)
    assert budget.median == pytest.approx(float(np.median(years)))
    assert budget.n_reached == 256


def test_year_budget_leaves_unreached_points_out() -> None:
    """Points that never reach the limit (NaN) are counted out; none reaching gives no year."""
    x = design_values(UncertaintySettings(16, 1, (U_EFF,)))[:, 0]
    years = np.where(x < 0.7, 2030.0 + x, np.nan)
    assert year_budget([x], years).n_reached == int((x < 0.7).sum())
    nothing = year_budget([x], np.full(16, np.nan))
    assert (nothing.median, nothing.n_reached, nothing.shares) == (None, 0, (None,))


def test_year_budget_says_why_its_shares_are_none() -> None:
    """No reaching point, fewer than the inputs plus two, or one year for all: each is its own
    `BudgetNull`; shares that were computed have none."""
    from pipeline.forecast.uncertainty import BudgetNull

    x = design_values(UncertaintySettings(16, 1, (U_EFF,)))[:, 0]
    assert year_budget([x], np.full(16, np.nan)).null_reason == BudgetNull.NONE_REACHED
    two = np.where(np.arange(16) < 2, 2030.0 + x, np.nan)
    assert year_budget([x], two).null_reason == BudgetNull.TOO_FEW_REACHED
    flat = year_budget([x], np.full(16, 2031.5))
    assert (flat.median, flat.shares, flat.null_reason) == (2031.5, (None,), BudgetNull.NO_SPREAD)
    shared = year_budget([x], 2030.0 + x)
    assert shared.shares[0] is not None
    assert shared.null_reason is None


def _nightly_with(change: dict[str, object], key: str | None = None) -> dict[str, object]:
    """The nightly's forecast node as plain data, the design (or its input `key`) changed."""
    node = OmegaConf.to_container(compose_config(["+experiment=nightly"]).forecast)
    assert isinstance(node, dict)
    design = node["uncertainty"]
    (design if key is None else design["inputs"][key]).update(change)
    return node


@pytest.mark.parametrize(
    ("change", "input_key", "key"),
    [
        ({"samples": 24}, None, "forecast.uncertainty.samples"),
        ({"high": 0.5}, "hardware.u_eff", "forecast.uncertainty.inputs.hardware.u_eff.high"),
        ({"distribution": "normal"}, "hardware.u_eff", "forecast.uncertainty.inputs.hardware.u_eff.distribution"),
    ],
    ids=["not_a_power_of_two", "empty_range", "unknown_distribution"],
)  # fmt: skip
def test_uncertainty_settings_bad_value_names_its_key(
    change: dict[str, object], input_key: str | None, key: str
) -> None:
    """A design that is not a power of two, an empty range or an unknown distribution is a
    one-line ConfigError naming its key."""
    with pytest.raises(ConfigError) as err:
        forecast_from_config(_nightly_with(change, input_key))
    assert err.value.key == key


def test_uncertainty_settings_nightly_design() -> None:
    """+experiment=nightly carries a 32-point design over six config inputs and five hardware
    trend rates; the default has none."""
    nightly = forecast_from_config(compose_config(["+experiment=nightly"]).forecast)
    assert nightly.uncertainty is not None
    assert (nightly.uncertainty.samples, len(nightly.uncertainty.inputs)) == (32, 11)
    assert sum(i.trend_metric is not None for i in nightly.uncertainty.inputs) == 5
    assert forecast_from_config(compose_config().forecast).uncertainty is None


FLOP_TREND = TREND_PREFIX + "dense_16bit_flop_per_s"


def test_trend_input_is_lognormal_about_the_fit() -> None:
    """A trend input takes the fit's growth as its median and the fit's 90% interval as its
    5th-95th percentile (a symmetric interval in ln: 1.2 and 1.8 around sqrt(1.2 * 1.8))."""
    centre = (1.2 * 1.8) ** 0.5
    fit = TrendFit(5, 2020.0, 0.0, np.log(centre), 1.2, 1.8)
    trends = catalog_trends(shipped_catalog())
    fits = {**trends.fits, "dense_16bit_flop_per_s": fit}
    blank = UncertainInput(FLOP_TREND, Distribution.TREND, np.nan, np.nan)
    (inp,) = with_trends(UncertaintySettings(8, 1, (blank,)), replace(trends, fits=fits)).inputs
    assert inp.values(np.array([0.05, 0.5, 0.95])) == pytest.approx([1.2, centre, 1.8])
    values = design_values(UncertaintySettings(1024, 3, (inp,)))[:, 0]
    assert np.mean(values < 1.2) == pytest.approx(0.05, abs=0.01)
    with pytest.raises(ValueError, match="no fit"):
        blank.values(np.array([0.5]))


@pytest.mark.parametrize(
    ("change", "input_key"),
    [
        ({"distribution": "uniform", "low": 1.0, "high": 2.0}, FLOP_TREND),
        ({"low": 1.0}, FLOP_TREND),
        ({"distribution": "trend"}, "hardware.u_eff"),
    ],
    ids=["trend_key_other_distribution", "trend_with_bounds", "trend_on_a_config_key"],
)
def test_uncertainty_settings_trend_input_names_its_key(
    change: dict[str, object], input_key: str
) -> None:
    """A trend key without `distribution: trend`, a trend with its own bounds, or a config key
    drawn as a trend is a ConfigError naming the input."""
    with pytest.raises(ConfigError) as err:
        forecast_from_config(_nightly_with(change, input_key))
    assert err.value.key.startswith(f"forecast.uncertainty.inputs.{input_key}")


def test_uncertainty_settings_trend_inputs_need_moving_years() -> None:
    """Trend inputs without `forecast.moving_frontier_years` are a ConfigError naming it."""
    node = _nightly_with({})
    node["moving_frontier_years"] = None
    with pytest.raises(ConfigError) as err:
        forecast_from_config(node)
    assert err.value.key == "forecast.moving_frontier_years"
