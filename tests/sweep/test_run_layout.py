"""A run is evaluated as given unless `run.layout_search=true`, the one switch that searches
its layout (docs/configuration.md, "One concrete run")."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from pipeline.app.api import run
from pipeline.app.plan import compose_run_config, plan_run
from pipeline.schema import ConfigError, Scenario

RUN = "run=gpt_1p7b"


def planned(overrides: Sequence[str]) -> Scenario:
    """The one scenario the planning layer makes of `overrides`."""
    (scenario,) = plan_run(
        compose_run_config(overrides), overrides=overrides, write=False
    ).scenarios
    return scenario


def searched(overrides: Sequence[str]) -> bool:
    """Whether the planned run's layout is searched."""
    run = planned(overrides).run
    assert run is not None
    return run.layout_search


def test_run_layout_is_given_by_default() -> None:
    """Without `run.layout_search` the run keeps its own layout."""
    assert not searched([RUN])


def test_run_layout_is_given_under_an_explicit_parallelism_search() -> None:
    """Choosing parallelism=search (the grid's option) does not search a run's layout."""
    assert not searched([RUN, "parallelism=search"])


def test_run_layout_is_searched_with_the_run_key() -> None:
    """`run.layout_search=true` searches the run's layout."""
    assert searched([RUN, "run.layout_search=true"])


def test_run_layout_search_with_a_fixed_layout_is_refused() -> None:
    """A searched run layout and parallelism=fixed contradict each other: one line refuses."""
    with pytest.raises(ConfigError, match=r"run\.layout_search"):
        planned([RUN, "run.layout_search=true", "parallelism=fixed"])


def test_run_layout_search_is_never_slower_than_the_given_layout() -> None:
    """The searched layout's step is at most the given one's (the given layout is a candidate)."""
    base = [RUN, "hardware=a100_sxm_80gb", "physics=realistic"]
    given = run(base).points.row(0, named=True)
    best = run([*base, "run.layout_search=true"]).points.row(0, named=True)
    assert best["mfu"] >= given["mfu"] * (1 - 1e-12)
    assert best["run_name"] == given["run_name"] == "gpt_1p7b"


def test_run_layout_is_searched_for_runs_of_a_sweep_choice() -> None:
    """Runs chosen by a sweep are searched with the key as a one-value axis."""
    overrides = [
        "+sweep.choices.run=[gpt_1p7b,gpt_3p6b]",
        "+sweep.axes.run.layout_search=[true]",
    ]
    series = plan_run(compose_run_config(overrides), overrides=overrides, write=False).series
    runs = [s.scenario.run for s in series]
    assert [r.name for r in runs if r is not None] == ["gpt_1p7b", "gpt_3p6b"]
    assert all(r is not None and r.layout_search for r in runs)
