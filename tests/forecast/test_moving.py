"""The moving frontier: crossing years on moving thresholds, monotone in the growth rate."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from pipeline.forecast.frontier import frontier_scenarios
from pipeline.forecast.moving import moving_year, moving_years
from pipeline.forecast.trajectory import year_reaching_flop
from pipeline.schema import compose_config, load_scenario
from pipeline.schema.projected import catalog_and_trends
from tests.nightly.runs import plain_run

BASE = (5e25, 2024.0)
YEARS = [2024.0, 2026.0, 2028.0, 2030.0, 2032.0, 2034.0]


def test_moving_year_on_constant_threshold_is_the_frozen_year() -> None:
    """A threshold that does not move is reached in the frozen-hardware year."""
    for growth in (3.0, 4.0, 5.0):
        frozen = year_reaching_flop(2e28, *BASE, growth)
        assert moving_year(YEARS, [2e28] * len(YEARS), *BASE, growth) == pytest.approx(frozen)


def test_moving_year_interpolates_a_rising_threshold() -> None:
    """A threshold rising 2x a year under a 4x trajectory is met where ln C and ln T cross."""
    thresholds = [1e27 * 2.0 ** (y - 2024.0) for y in YEARS]
    expected = 2024.0 + np.log(1e27 / 5e25) / np.log(4.0 / 2.0)  # 2028.32
    assert moving_year(YEARS, thresholds, *BASE, 4.0) == pytest.approx(expected, rel=1e-12)


def test_moving_years_equal_moving_year_line_by_line() -> None:
    """The vectorized years equal the one-line rule on every line of a random set, thresholds
    that rise, fall, start met, and are missing (None) in some years included."""
    rng = np.random.default_rng(5)
    for _ in range(40):
        thresholds: list[float | None] = [
            None if rng.random() < 0.2 else float(10 ** rng.uniform(25.5, 30.0)) for _ in YEARS
        ]
        log_base = np.log(5e25) + rng.normal(0.0, 1.0, size=30)
        log_growth = np.log(rng.uniform(1.5, 6.0, size=30))
        found = moving_years(YEARS, thresholds, log_base, 2024.0, log_growth)
        for a, b, year in zip(log_base, log_growth, found, strict=True):
            one = moving_year(YEARS, thresholds, float(np.exp(a)), 2024.0, float(np.exp(b)))
            assert (one is None and year == np.inf) or year == pytest.approx(one, rel=1e-12)


def test_moving_year_none_when_never_reached() -> None:
    """A threshold out of reach in every projected year, or absent from the grid, gives None."""
    assert moving_year(YEARS, [1e40] * len(YEARS), *BASE, 4.0) is None
    assert moving_year(YEARS, [None] * len(YEARS), *BASE, 4.0) is None


def test_moving_years_monotone_in_growth_rate() -> None:
    """On any moving thresholds above today's compute, faster growth never reaches them later."""
    rng = np.random.default_rng(11)
    growths = [2.0, 3.0, 4.0, 5.0, 6.0]
    for _ in range(200):
        thresholds: list[float | None] = list(10.0 ** rng.uniform(26.0, 33.0, len(YEARS)))
        if rng.random() < 0.3:
            thresholds[int(rng.integers(len(YEARS)))] = None
        years = [moving_year(YEARS, thresholds, *BASE, g) for g in growths]
        reached = [y for y in years if y is not None]
        assert reached == sorted(reached, reverse=True)
        assert years[len(years) - len(reached) :] == reached  # None only for the slowest


@pytest.fixture(scope="module")
def moving_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The constant batch law up to its wall, with a moving frontier over four projected years."""
    root = tmp_path_factory.mktemp("moving") / "dataset"
    plain_run(
        root,
        "batch=constant",
        "scaling.grid.max_d_model=1572864",
        "forecast.moving_frontier_years=[2024,2027,2030,2033]",
        "forecast.growth_per_year=[3.0,4.0,5.0,6.0]",
    )
    return root


@pytest.mark.slow
def test_moving_frontier_run_writes_frontier_and_moving_years(moving_run: Path) -> None:
    """The run writes one frontier row per projected year and fills the moving years."""
    frontier = pl.read_parquet(moving_run / "frontier" / "**" / "*.parquet")
    assert frontier["year"].to_list() == [2024.0, 2027.0, 2030.0, 2033.0]
    assert frontier["projected_hardware"][0] == "projected_h100_sxm_2024"
    forecasts = pl.read_parquet(moving_run / "forecasts" / "**" / "*.parquet")
    assert forecasts["moving_linear_end_year"].null_count() == 0
    assert forecasts["moving_wall_year"].null_count() == 0
    assert (moving_run / "trends").is_dir()


@pytest.mark.slow
def test_moving_frontier_run_years_monotone_in_growth(moving_run: Path) -> None:
    """In the written hand-set forecasts (one base), the moving years never increase with the
    growth rate."""
    forecasts = (
        pl.read_parquet(moving_run / "forecasts" / "**" / "*.parquet")
        .filter(pl.col("trajectory").str.starts_with("hand_set_"))
        .sort("growth_per_year")
    )
    for column in ("moving_linear_end_year", "moving_wall_year"):
        years = [y for y in forecasts[column].to_list() if y is not None]
        assert years == sorted(years, reverse=True), column


def test_moving_frontier_skips_changed_or_unknown_hardware() -> None:
    """Only a catalog preset as shipped is projected: an override or a what-if preset is not."""
    catalog, trends = catalog_and_trends(None)
    shipped = load_scenario(compose_config())
    changed = load_scenario(compose_config(["hardware.hbm_gb=96"]))
    what_if = load_scenario(compose_config(["hardware=h100_low_latency"]))
    assert len(frontier_scenarios(shipped, [2025.0, 2030.0], catalog, trends)) == 2
    assert frontier_scenarios(changed, [2025.0, 2030.0], catalog, trends) == []
    assert frontier_scenarios(what_if, [2025.0, 2030.0], catalog, trends) == []
