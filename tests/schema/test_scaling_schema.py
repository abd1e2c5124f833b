"""The scaling group: the duration in months, days or hours (exactly one), and the fine
model-size grid that reaches below the paper's smallest width."""

from __future__ import annotations

import itertools

import pytest

from pipeline.model.records.scaling import model_shape, paper_d_model_grid
from pipeline.schema import ConfigError, Scenario, compose_config, load_scenario
from pipeline.schema.scaling import fine_d_model_grid

FINE_FROM_1E23 = ["scaling.grid.kind=fine", "scaling.grid.min_d_model=5632"]
"""The overrides the dense config documents for a grid from about 1e23 FLOP."""
PAPER_TOP_STEP = 9 / 8
"""Largest width ratio between neighbours in the paper grid's top octave (spec §2.2)."""


def scenario(*overrides: str) -> Scenario:
    """The scenario of the default config with `overrides`."""
    return load_scenario(compose_config(list(overrides)))


@pytest.mark.parametrize(
    ("overrides", "seconds"),
    [
        (["scaling.duration_months=null", "scaling.duration_days=30"], 30 * 86400.0),
        (["scaling.duration_months=null", "scaling.duration_hours=1.5"], 5400.0),
        (["scaling.duration_months=6"], 6 * 3.154e7 / 12),
    ],
    ids=["days", "hours", "months"],
)
def test_scaling_duration_in_each_unit(overrides: list[str], seconds: float) -> None:
    """Days, hours and months convert to the budget in seconds (a month is year_s / 12)."""
    assert scenario(*overrides).duration_s == pytest.approx(seconds, rel=1e-15)


@pytest.mark.parametrize(
    "overrides",
    [["scaling.duration_days=30"], ["scaling.duration_months=null"]],
    ids=["two_given", "none_given"],
)
def test_scaling_duration_needs_exactly_one_unit(overrides: list[str]) -> None:
    """Two durations, or none, are refused in one line naming the scaling group."""
    with pytest.raises(ConfigError) as err:
        scenario(*overrides)
    assert str(err.value).startswith("scaling = ")
    assert "exactly one" in str(err.value)


def test_scaling_default_grid_is_the_papers() -> None:
    """The default grid stays the paper's (the golden series depend on it)."""
    assert scenario().d_models == tuple(paper_d_model_grid())


def test_scaling_fine_grid_reaches_1e23_flop() -> None:
    """The documented fine grid starts at or below 1e23 FLOP of training compute."""
    s = scenario(*FINE_FROM_1E23)
    assert model_shape(s.d_models[0], s.laws).training_flop <= 1e23


def test_scaling_fine_grid_steps_no_coarser_than_the_papers_top() -> None:
    """Every step of the fine grid is at most the paper grid's largest step at its top."""
    grid = scenario(*FINE_FROM_1E23).d_models
    paper_top = paper_d_model_grid()[-9:]
    paper_step = max(b / a for a, b in itertools.pairwise(paper_top))
    assert paper_step == PAPER_TOP_STEP
    assert max(b / a for a, b in itertools.pairwise(grid)) <= paper_step


def test_scaling_fine_grid_holds_the_paper_grid() -> None:
    """Every width of the paper grid is also a width of the fine grid over the same range."""
    assert set(paper_d_model_grid()) <= set(fine_d_model_grid(12288, 12288 * 128))


def test_scaling_fine_grid_widths_hold_whole_heads() -> None:
    """Every fine width is a multiple of d_head = 128."""
    assert all(d % 128 == 0 for d in fine_d_model_grid(1, 10**6))
