"""Forecast years follow from the compute trajectory's arithmetic."""

from __future__ import annotations

import math

import pytest

from pipeline.forecast import frontier_flop, year_reaching_flop

BASE_FLOP, BASE_YEAR = 5e25, 2024.0
SEED_TOLERANCE_YEARS = 0.05
"""The seed claim's "3.7-4.3 years" is quoted to one decimal."""


def _year_by_iteration(flop: float, growth: float, steps_per_year: int = 10_000) -> float:
    """The first time, on a grid of 1/steps_per_year years, the frontier is at least `flop`.

    Independent of the closed form: multiplies the compute by growth^(1/steps) one step at a
    time, whole years first.
    """
    year, compute = BASE_YEAR, BASE_FLOP
    while compute * growth <= flop:  # whole years
        compute *= growth
        year += 1.0
    step = growth ** (1.0 / steps_per_year)
    ticks = 0
    while compute < flop:
        compute *= step
        ticks += 1
    return year + ticks / steps_per_year


@pytest.mark.parametrize("growth", [4.0, 5.0, 2.5])
@pytest.mark.parametrize("flop", [6e25, 2e28, 3.76e28, 7.1e31, 1e36])
def test_year_reaching_flop_matches_year_by_year_iteration(flop: float, growth: float) -> None:
    """The closed form agrees with stepping the trajectory forward to within one step."""
    year = year_reaching_flop(flop, BASE_FLOP, BASE_YEAR, growth)
    assert year is not None
    assert year == pytest.approx(_year_by_iteration(flop, growth), abs=1e-4)


def test_year_reaching_flop_seed_claim() -> None:
    """2e28 FLOP is about 4.3 years after 5e25 at 4x per year and 3.7 at 5x (2024 -> ~2028)."""
    at_4x = year_reaching_flop(2e28, BASE_FLOP, BASE_YEAR, 4.0)
    at_5x = year_reaching_flop(2e28, BASE_FLOP, BASE_YEAR, 5.0)
    assert at_4x is not None
    assert at_5x is not None
    assert at_4x - BASE_YEAR == pytest.approx(4.3, abs=SEED_TOLERANCE_YEARS)
    assert at_5x - BASE_YEAR == pytest.approx(3.7, abs=SEED_TOLERANCE_YEARS)
    assert round(at_4x) == round(at_5x) == 2028


@pytest.mark.parametrize("year", [2020.0, 2024.0, 2027.25, 2031.9])
def test_year_reaching_flop_inverts_frontier_flop(year: float) -> None:
    """The year the trajectory reaches C(y) is y, before and after the base year."""
    flop = frontier_flop(year, BASE_FLOP, BASE_YEAR, 4.0)
    assert year_reaching_flop(flop, BASE_FLOP, BASE_YEAR, 4.0) == pytest.approx(year, abs=1e-9)


@pytest.mark.parametrize("flop", [None, math.inf, math.nan, 0.0, -1.0])
def test_year_reaching_flop_none_without_threshold(flop: float | None) -> None:
    """A missing, infinite or non-positive threshold has no year."""
    assert year_reaching_flop(flop, BASE_FLOP, BASE_YEAR, 4.0) is None
