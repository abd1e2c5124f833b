"""The frontier of observed runs and its fitted trajectory."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import replace

import numpy as np
import pytest

from pipeline.catalog.load import fractional_year
from pipeline.forecast import paths
from pipeline.forecast.inputs import observe_frontier
from pipeline.forecast.observed import (
    FrontierLine,
    FrontierRule,
    FrontierSettings,
    fit_frontier,
    fit_hash,
    frontier_flags,
)
from pipeline.forecast.paths import YearInterval, fitted, hand_set
from pipeline.forecast.settings import ForecastSettings, forecast_from_config
from pipeline.schema import compose_config
from pipeline.sources import observe, sources_from_config
from pipeline.sources.acquire import SourceError
from pipeline.sources.epoch import ObservedRun
from pipeline.sources.settings import FetchSettings, SourceSpec, SourcesSettings

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
    """On exact data the typical line's median year is y0 + ln(T/C0)/ln g, interval collapsed."""
    fit, _ = fit_frontier(_exact(range(2018, 2026)), FrontierSettings(line=FrontierLine.TYPICAL))
    years = fitted(fit, 2026.0).year_intervals([1e20 * GROWTH**20])[0]
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
    years = trajectory.year_intervals([1e30])[0]
    assert years is not None
    assert years.low < years.median < years.high
    assert trajectory.base_flop == pytest.approx(fit.flop_at(2026.0))


def test_year_intervals_equal_each_thresholds_own_quantiles() -> None:
    """The intervals of several thresholds taken at once are, bit for bit, each threshold's
    lines' years' median and 90% quantiles (numpy's linear quantiles of one row), and None
    where a threshold is missing, infinite or not positive."""
    path = _noisy_fit()
    flops = [1e30, None, math.inf, 0.0, 3e26, -1.0, 2e27]
    got = path.year_intervals(flops)
    for flop, interval in zip(flops, got, strict=True):
        if flop is None or not math.isfinite(flop) or flop <= 0.0:
            assert interval is None
            continue
        assert interval == _own_interval(path, flop)


def test_year_intervals_kept_equal_each_thresholds_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """A trajectory asked again gives each threshold, asked before or not, repeated or not, the
    interval of its own lines' years, bit for bit, and keeps at most `KEPT_INTERVALS` of them."""
    monkeypatch.setattr(paths, "KEPT_INTERVALS", 3)
    path = _noisy_fit()
    path.year_intervals([1e30, 3e26])
    flops = [3e26, 5e28, None, 5e28, 1e30, 7e29]
    got = path.year_intervals(flops)
    assert got[2] is None
    for flop, interval in zip(flops, got, strict=True):
        if flop is not None:
            assert interval == _own_interval(path, flop)
    assert len(path._intervals) <= 3


def _noisy_fit() -> paths.Trajectory:
    """The fitted trajectory of runs scattered about a 4x-a-year line."""
    rng = np.random.default_rng(2)
    runs = [
        _run(f"m{y}{m}", y, 1e20 * GROWTH ** (y - 2010) * math.exp(rng.normal(0, 1)), month=m)
        for y in range(2016, 2026)
        for m in (1, 4, 7, 10)
    ]
    fit, _ = fit_frontier(runs, FrontierSettings())
    return fitted(fit, 2026.0)


def _own_interval(path: paths.Trajectory, flop: float) -> YearInterval:
    """The median and 90% quantiles (numpy's linear) of the lines' years of `flop` alone."""
    bases = path.sample_log_flop - (0.0 if path.sample_log_gap is None else path.sample_log_gap)
    years = path.reference_year + (math.log(flop) - bases) / path.sample_log_growth
    low, median, high = np.quantile(years, [0.05, 0.5, 0.95])
    return YearInterval(float(median), float(low), float(high))


def test_hand_set_trajectory_has_no_interval() -> None:
    """A hand-set scenario is one line: low = median = high = the closed-form year."""
    years = hand_set(5e25, 2024.0, 4.0).year_intervals([2e28])[0]
    assert years is not None
    assert (
        years.median == years.low == years.high == pytest.approx(2024 + math.log(400) / math.log(4))
    )


ENVELOPE_FLOP_2018 = 1e23
"""The synthetic envelope's compute at 2018.0 (FLOP); it grows by GROWTH a year."""


def _below_envelope(seed: int) -> list[ObservedRun]:
    """Monthly runs on or below C = 1e23 · 4^(y − 2018): a record on the line every January,
    the others a random factor 1-30 below it, every run flagged frontier."""
    rng = np.random.default_rng(seed)
    runs = []
    for y in range(2018, 2026):
        for m in range(1, 13):
            on_line = ENVELOPE_FLOP_2018 * GROWTH ** (fractional_year(dt.date(y, m, 1)) - 2018)
            below = 1.0 if m == 1 else math.exp(rng.uniform(0.0, math.log(30.0)))
            runs.append(_run(f"m{y}-{m}", y, on_line / below, month=m))
    return runs


def test_envelope_recovers_a_known_envelope() -> None:
    """Runs on or below a known line give back that line: its growth and its compute."""
    fit, _ = fit_frontier(_below_envelope(3), FrontierSettings())
    assert fit.line is FrontierLine.ENVELOPE
    assert fit.growth_per_year == pytest.approx(GROWTH, rel=0.05)
    assert fit.flop_at(2022.0) == pytest.approx(ENVELOPE_FLOP_2018 * GROWTH**4, rel=0.25)


def test_envelope_is_not_below_the_largest_run_so_far() -> None:
    """At every run's date the envelope (each bootstrap line too) is at least the largest run
    published by then, where the least-squares line falls below it."""
    runs = _below_envelope(4)
    envelope, _ = fit_frontier(runs, FrontierSettings())
    typical, _ = fit_frontier(runs, FrontierSettings(line=FrontierLine.TYPICAL))
    largest, short = 0.0, []
    for run in sorted(runs, key=lambda r: r.publication_date):
        largest = max(largest, run.training_flop)
        x = fractional_year(run.publication_date)
        lines = envelope.sample_log_flop + envelope.sample_log_growth * (
            x - envelope.reference_year
        )
        assert envelope.flop_at(x) >= largest * (1 - 1e-12)
        assert np.all(lines >= math.log(largest) - 1e-12)
        short.append(typical.flop_at(x) < largest)
    assert any(short)


def test_envelope_prediction_interval_covers_the_largest_run() -> None:
    """The 5th-95th percentile prediction of the largest run holds it on about 90% of months
    of the data; the parameters' band alone (no scatter) holds far fewer."""
    runs = _below_envelope(5)
    fit, _ = fit_frontier(runs, FrontierSettings())
    dated = sorted((fractional_year(r.publication_date), r.training_flop) for r in runs)
    covered, in_band = 0, 0
    largest = 0.0
    for x, flop in dated:
        largest = max(largest, flop)
        _, low, high = fit.flop_prediction_at(x)
        covered += low <= largest <= high
        lines = np.exp(fit.sample_log_flop + fit.sample_log_growth * (x - fit.reference_year))
        in_band += float(np.quantile(lines, 0.05)) <= largest <= float(np.quantile(lines, 0.95))
    assert 0.8 <= covered / len(dated) <= 1.0
    assert in_band / len(dated) < 0.5


def test_envelope_years_add_the_wait_for_the_next_record() -> None:
    """With one record a year, the median year is the envelope's year plus half a year's wait,
    and the interval spans the wait (about 0.05 to 0.95 of a year)."""
    fit, _ = fit_frontier(_exact(range(2018, 2026)), FrontierSettings())
    years = fitted(fit, 2026.0).year_intervals([1e20 * GROWTH**20])[0]
    assert years is not None
    assert years.median == pytest.approx(2030.5, abs=0.05)
    assert years.low == pytest.approx(2030.05, abs=0.05)
    assert years.high == pytest.approx(2030.95, abs=0.05)


def test_envelope_on_the_shipped_snapshot_is_not_below_the_largest_run() -> None:
    """On the shipped Epoch snapshot, at every window run's date the default trajectory is at
    least the largest run of the window published by then (2018 on: AlphaGo Zero, 2017, stood
    above the later trend until 2021 and is outside the window)."""
    settings = forecast_from_config(compose_config().forecast)
    assert settings.fitted is not None
    sources = sources_from_config(compose_config().sources)
    runs = observe(sources, None, dt.datetime(2026, 1, 1, tzinfo=dt.UTC), warn=False).runs
    fit, _ = fit_frontier(runs, settings.fitted)
    window = sorted(
        (r for r in runs if r.publication_date >= settings.fitted.window_start),
        key=lambda r: r.publication_date,
    )
    largest = 0.0
    for run in window:
        largest = max(largest, run.training_flop)
        assert fit.flop_at(fractional_year(run.publication_date)) >= largest * (1 - 1e-12)


def test_observed_frontier_data_as_of_is_the_fits_in_a_back_test() -> None:
    """With window_end the forecasts' data_as_of is the newest run the fit could see, not the
    source's newest (2025-04-10 on the shipped snapshot)."""
    settings = ForecastSettings(5e25, 2024.0, (4.0,), fitted=FrontierSettings(
        window_end=dt.date(2023, 1, 1)))  # fmt: skip
    sources = SourcesSettings(
        SourceSpec("frontier_runs", "package:notable_ai_models.csv"), None, FetchSettings(), None
    )
    observed = observe_frontier(settings, sources, None, dt.date(2026, 1, 1)).observed
    assert observed is not None
    assert observed.data_as_of == dt.date(2022, 12, 28)


def test_fit_hash_names_the_copy_and_the_settings_that_decide_the_flags() -> None:
    """`fit_hash` changes with the copy, the rule, the window and top_n under the top_n rule,
    which decide the frontier flags, and not with `line` or an unread top_n; no fit has its
    own."""
    base = FrontierSettings()
    key = fit_hash("a" * 64, base)
    assert fit_hash("a" * 64, FrontierSettings()) == key
    assert fit_hash("b" * 64, base) != key
    assert fit_hash("a" * 64, None) != key
    changed = [
        replace(base, window_end=dt.date(2023, 1, 1)),
        replace(base, window_start=dt.date(2019, 1, 1)),
        replace(base, rule=FrontierRule.RUNNING_MAX),
    ]
    assert len({key, *(fit_hash("a" * 64, s) for s in changed)}) == 1 + len(changed)
    assert fit_hash("a" * 64, replace(base, line=FrontierLine.TYPICAL)) == key
    assert fit_hash("a" * 64, replace(base, top_n=5)) == key  # epoch_flag reads no top_n
    top = replace(base, rule=FrontierRule.TOP_N)
    assert fit_hash("a" * 64, replace(top, top_n=5)) != fit_hash("a" * 64, top)


def test_observed_frontier_fit_hash_is_its_fits_and_none_without_a_fit() -> None:
    """The run's fit_hash hashes the copy it read with the fit's settings; without a fit the
    observed_runs rows still have a key (no fit), and the forecasts none."""
    sources = SourcesSettings(
        SourceSpec("frontier_runs", "package:notable_ai_models.csv"), None, FetchSettings(), None
    )
    fitted = FrontierSettings(window_end=dt.date(2023, 1, 1))
    settings = ForecastSettings(5e25, 2024.0, (4.0,), fitted=fitted)
    observed = observe_frontier(settings, sources, None, dt.date(2026, 1, 1)).observed
    assert observed is not None
    read = observed.observations.read("frontier_runs")
    assert read is not None
    assert observed.fit_hash == fit_hash(read.snapshot.content_hash, fitted)
    assert observed.forecast_fit_hash == observed.fit_hash
    no_fit = replace(settings, fitted=None)
    bare = observe_frontier(no_fit, sources, None, dt.date(2026, 1, 1)).observed
    assert bare is not None
    assert bare.fit_hash == fit_hash(read.snapshot.content_hash, None)
    assert bare.forecast_fit_hash is None


def test_largest_run_prediction_never_falls_below_the_record() -> None:
    """A running maximum never falls: at and after `data_as_of` no percentile of the largest
    run's prediction lies below the largest run the fit saw, and before it none below the
    record by then; a typical run's prediction is not held to it."""
    runs = _below_envelope(5)
    fit, _ = fit_frontier(runs, FrontierSettings())
    record = fit.record
    for year in (record.years[0], record.as_of_year, record.as_of_year + 0.5, 2040.0):
        _, low, _ = fit.flop_prediction_at(year)
        assert low >= record.flop_by(min(year, record.as_of_year))
    before = record.years[len(record.years) // 2]
    assert fit.flop_prediction_at(before)[1] >= record.flop_by(before)
