"""Log-linear trend fits: recovery of known growth, determinism, the catalog's ordering."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pipeline.schema.projected import shipped_catalog
from pipeline.trends.catalog_fits import catalog_trends
from pipeline.trends.fit import bootstrap_slopes, fit_trend

EXACT = 1e-9
NOISY = 0.03
"""Relative tolerance on growth recovered from 12 points with 10% log-normal noise."""


def test_fit_recovers_growth_of_exact_exponential() -> None:
    """Points on 1.6^t give growth 1.6, doubling time ln2/ln1.6, and a zero-width interval."""
    years = np.arange(2010.0, 2025.0)
    fit = fit_trend(years, 3e12 * 1.6 ** (years - 2010.0))
    assert fit.growth_per_year == pytest.approx(1.6, rel=EXACT)
    assert fit.doubling_time_years == pytest.approx(math.log(2) / math.log(1.6), rel=EXACT)
    assert fit.growth_per_year_low == pytest.approx(1.6, rel=EXACT)
    assert fit.growth_per_year_high == pytest.approx(1.6, rel=EXACT)
    assert fit.value_at(2020.0) == pytest.approx(3e12 * 1.6**10, rel=EXACT)


def test_fit_recovers_growth_under_noise_and_covers_it() -> None:
    """Noisy synthetic data (seeded) give growth near the truth, inside the bootstrap interval."""
    rng = np.random.default_rng(7)
    years = np.sort(rng.uniform(2012.0, 2025.0, 12))
    values = 1e11 * 1.35 ** (years - 2012.0) * rng.lognormal(0.0, 0.1, years.size)
    fit = fit_trend(years, values)
    assert fit.growth_per_year == pytest.approx(1.35, rel=NOISY)
    assert fit.growth_per_year_low < 1.35 < fit.growth_per_year_high


def test_fit_bootstrap_is_deterministic_per_seed() -> None:
    """The same data and seed give the same interval; another seed another one."""
    years = [2016.4, 2018.2, 2020.4, 2022.7, 2024.9]
    values = [21e12, 125e12, 312e12, 989e12, 2250e12]
    assert fit_trend(years, values) == fit_trend(years, values)
    assert fit_trend(years, values, seed=1) != fit_trend(years, values, seed=2)


def test_fit_trend_with_the_callers_slopes_equals_its_own_bootstrap() -> None:
    """Slopes resampled by the caller (`bootstrap_slopes`, same data and seed) give the same fit."""
    years = np.array([2016.4, 2018.2, 2020.4, 2022.7, 2024.9])
    values = np.array([21e12, 125e12, 312e12, 989e12, 2250e12])
    slopes = bootstrap_slopes(years, np.log(values))
    assert fit_trend(years, values, slopes=slopes) == fit_trend(years, values)


def test_fit_flat_metric_has_no_growth() -> None:
    """Equal values give growth exactly 1 and an infinite doubling time."""
    fit = fit_trend([2017.0, 2020.0, 2022.0], [1.125e-6] * 3)
    assert fit.growth_per_year == 1.0
    assert math.isinf(fit.doubling_time_years)


@pytest.mark.parametrize(
    ("years", "values"),
    [([2020.0], [1.0]), ([2020.0, 2020.0], [1.0, 2.0]), ([2020.0, 2021.0], [1.0, -2.0])],
)
def test_fit_refuses_data_without_a_trend(years: list[float], values: list[float]) -> None:
    """One point, one year only, or a non-positive value cannot be fitted."""
    with pytest.raises(ValueError, match="trend"):
        fit_trend(years, values)


def test_catalog_trends_order_compute_over_memory_over_interconnect() -> None:
    """FLOP/s outgrows DRAM bandwidth, which outgrows NVLink bandwidth: the memory wall's ordering (Gholami et al. 2024, Fig. 1)."""
    fits = catalog_trends(shipped_catalog()).fits
    flop = fits["dense_16bit_flop_per_s"].growth_per_year
    dram = fits["hbm_bandwidth_bytes_per_s"].growth_per_year
    link = fits["intra_node_bandwidth_bytes_per_s"].growth_per_year
    assert flop > dram > link > 1.0
    assert fits["network_latency_s"].growth_per_year == 1.0
