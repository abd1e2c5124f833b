"""The frontier of observed runs and its fitted trajectory."""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest

from pipeline.forecast.observed import FrontierRule, FrontierSettings, fit_frontier, frontier_flags
from pipeline.forecast.paths import fitted, hand_set
from pipeline.sources.acquire import SourceError
from pipeline.sources.epoch import ObservedRun

GROWTH = 4.0


def _run(
    name: str, year: int, flop: float, flag: bool | None = True, month: int = 1
) -> ObservedRun:
    return ObservedRun(name, None, dt.date(year, month, 1), flop, None, flag, 0)


def _exact(years: range) -> list[ObservedRun]:
    """Runs exactly on C = 1e20 · 4^(y − 2010), one per year."""
    return [_run(f"m{y}", y, 1e20 * GROWTH ** (y - 2010)) for y in years]


def test_fit_frontier_recovers_an_exact_exponential() -> None:
    """Runs on one exponential give its growth, with a degenerate interval."""
    fit, flags = fit_frontier(_exact(range(2018, 2026)), FrontierSettings())
    assert fit.growth_per_year == pytest.approx(GROWTH, rel=1e-3)
    assert fit.growth_per_year_low == pytest.approx(GROWTH, rel=1e-3)
    assert all(flags)


def test_frontier_flags_running_max_keeps_only_records() -> None:
    """running_max flags a run only when nothing earlier was larger."""
    runs = [_run("a", 2018, 10.0), _run("b", 2019, 5.0), _run("c", 2020, 20.0)]
    assert frontier_flags(runs, FrontierRule.RUNNING_MAX) == [True, False, True]


def test_frontier_flags_top_n_counts_earlier_runs() -> None:
    """top_n flags a run when fewer than N earlier runs were larger."""
    runs = [
        _run("a", 2018, 10.0),
        _run("b", 2019, 30.0),
        _run("c", 2020, 20.0),
        _run("d", 2021, 5.0),
    ]
    assert frontier_flags(runs, FrontierRule.TOP_N, top_n=2) == [True, True, True, False]


def test_frontier_flags_epoch_flag_needs_the_column() -> None:
    """The epoch_flag rule on a source without the flag is a one-line error."""
    with pytest.raises(SourceError, match="'Frontier model' is missing"):
        frontier_flags([_run("a", 2018, 1.0, flag=None)], FrontierRule.EPOCH_FLAG)


def test_fit_frontier_window_end_leaves_later_runs_out() -> None:
    """Runs after window_end neither enter the fit nor move data_as_of."""
    runs = [*_exact(range(2018, 2024)), _run("outlier", 2025, 1e40)]
    fit, flags = fit_frontier(runs, FrontierSettings(window_end=dt.date(2023, 12, 31)))
    assert fit.growth_per_year == pytest.approx(GROWTH, rel=1e-3)
    assert fit.data_as_of == dt.date(2023, 1, 1)
    assert flags[-1] is False


def test_fit_frontier_refuses_too_few_runs() -> None:
    """Fewer than three frontier runs in the window is a one-line error."""
    with pytest.raises(SourceError, match="at least three"):
        fit_frontier(_exact(range(2018, 2020)), FrontierSettings())


def test_fitted_trajectory_years_agree_with_the_closed_form() -> None:
    """On exact data the median year is y0 + ln(T/C0)/ln g and the interval collapses on it."""
    fit, _ = fit_frontier(_exact(range(2018, 2026)), FrontierSettings())
    years = fitted(fit, 2026.0).year_interval(1e20 * GROWTH**20)
    assert years is not None
    assert years.median == pytest.approx(2030.0, abs=1e-2)
    assert years.low == pytest.approx(2030.0, abs=1e-2)


def test_fitted_trajectory_interval_contains_the_median_on_noisy_data() -> None:
    """With scatter about the line, low < median < high and the base is the fit at the run date."""
    rng = np.random.default_rng(1)
    runs = [
        _run(f"m{y}{m}", y, 1e20 * GROWTH ** (y - 2010) * math.exp(rng.normal(0, 1)), month=m)
        for y in range(2018, 2026)
        for m in (1, 7)
    ]
    fit, _ = fit_frontier(runs, FrontierSettings())
    trajectory = fitted(fit, 2026.0)
    years = trajectory.year_interval(1e30)
    assert years is not None
    assert years.low < years.median < years.high
    assert trajectory.base_flop == pytest.approx(fit.flop_at(2026.0))


def test_hand_set_trajectory_has_no_interval() -> None:
    """A hand-set scenario is one line: low = median = high = the closed-form year."""
    years = hand_set(5e25, 2024.0, 4.0).year_interval(2e28)
    assert years is not None
    assert (
        years.median == years.low == years.high == pytest.approx(2024 + math.log(400) / math.log(4))
    )
