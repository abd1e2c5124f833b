"""Series evaluated ahead in forked workers: the same outcomes, taken only for the same series."""

from __future__ import annotations

import time

import pytest

from pipeline.execute import ahead as ahead_module
from pipeline.execute.ahead import Ahead, forking_supported
from pipeline.execute.runner import run_series
from pipeline.execute.series import SeriesOutcome, evaluate_series
from pipeline.execute.settings import ExecutionSettings
from pipeline.identity import SeriesIds
from pipeline.schema import Scenario, compose_config
from pipeline.sweep import expand_scenarios

TINY = ["scaling.grid.max_d_model=16384"]

pytestmark = pytest.mark.skipif(not forking_supported(), reason="needs fork (POSIX, not macOS)")


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    """Twelve small series (sweep=smoke), three widths each."""
    overrides = [*TINY, "sweep=smoke"]
    return expand_scenarios(compose_config(overrides), overrides=overrides)


def test_outcomes_taken_are_those_evaluated_in_process(scenarios: list[Scenario]) -> None:
    with Ahead(2) as ahead:
        assert ahead.submit(scenarios[:3], whole_grid=False)
        for scenario in scenarios[:3]:
            taken = ahead.take(scenario, whole_grid=False)
            assert taken == evaluate_series(scenario, False)
        assert ahead.taken == 3
        assert ahead.take(scenarios[0], whole_grid=False) is None  # taken once
        assert ahead.take(scenarios[3], whole_grid=False) is None  # never submitted


def test_a_series_is_taken_only_for_the_same_scenario_and_grid(scenarios: list[Scenario]) -> None:
    with Ahead(2) as ahead:
        assert ahead.submit(scenarios[:1], whole_grid=False)
        assert ahead.take(scenarios[0], whole_grid=True) is None  # another series id
        assert ahead.take(scenarios[0], whole_grid=False) is not None


def test_submissions_past_the_budget_are_refused_whole(scenarios: list[Scenario]) -> None:
    with Ahead(2, max_series=4) as ahead:
        assert ahead.submit(scenarios[:3], whole_grid=False)
        assert not ahead.submit(scenarios[3:5], whole_grid=False)  # 5 > 4: none of them
        assert ahead.submitted == 3
        assert ahead.submit(scenarios[:3], whole_grid=False)  # already there: nothing new
        assert ahead.take(scenarios[3], whole_grid=False) is None


def test_a_failed_series_is_left_to_the_caller(
    scenarios: list[Scenario], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's error makes `take` return None, so the job evaluates (and fails) itself."""

    def broken(scenario: Scenario, whole_grid: bool) -> SeriesOutcome:
        raise RuntimeError("boom")

    monkeypatch.setattr(ahead_module, "evaluate_series", broken)  # inherited by the fork
    with Ahead(2) as ahead:
        assert ahead.submit(scenarios[:1], whole_grid=False)
        assert ahead.take(scenarios[0], whole_grid=False) is None


def test_run_series_takes_what_was_evaluated_ahead(
    scenarios: list[Scenario], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Series evaluated ahead are not evaluated again; the others are, with the same rows."""
    expected = {o.series_id: o for o in run_series(scenarios[:4], ExecutionSettings(n_jobs=1))}
    with Ahead(2) as ahead:
        assert ahead.submit(scenarios[:2], whole_grid=False)  # the workers are forked here
        evaluated: list[Scenario] = []

        def counting(
            scenario: Scenario, whole_grid: bool = False, ids: SeriesIds | None = None
        ) -> SeriesOutcome:
            evaluated.append(scenario)
            return evaluate_series(scenario, whole_grid, ids)

        monkeypatch.setattr("pipeline.execute.runner.evaluate_series", counting)
        got = {
            o.series_id: o
            for o in run_series(scenarios[:4], ExecutionSettings(n_jobs=1), ahead=ahead)
        }
    assert got == expected
    assert evaluated == scenarios[2:4]


def test_closing_with_series_still_running_does_not_wait_for_them(
    scenarios: list[Scenario], monkeypatch: pytest.MonkeyPatch
) -> None:
    def slow(scenario: Scenario, whole_grid: bool) -> SeriesOutcome:
        time.sleep(60)
        raise AssertionError("not reached")

    monkeypatch.setattr(ahead_module, "evaluate_series", slow)
    ahead = Ahead(2)
    assert ahead.submit(scenarios[:2], whole_grid=False)
    time.sleep(0.2)
    start = time.monotonic()
    ahead.close()
    assert time.monotonic() - start < 10
