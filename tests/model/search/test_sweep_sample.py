"""Rows of `dmlimits sweep=sensitivity physics=realistic` equal the exhaustive search's, bit for
bit: the walk's shortcuts (bounds, the usable layouts alone, caches) change no row
(docs/model.md §9.4)."""

from __future__ import annotations

import pytest

from pipeline.app.plan import plan_run
from pipeline.execute.series import evaluate_series
from pipeline.model.power import with_power
from pipeline.model.search.counts import series_shape
from pipeline.model.search.search import smallest_cluster
from pipeline.model.step.evaluate import with_q1_latency
from pipeline.schema import Scenario, compose_config

OVERRIDES = ["sweep=sensitivity", "physics=realistic"]
SAMPLE = (0, 125, 239, 358)
"""Series of the sweep: NVLink domains of 8, 64 and 256 GPUs and all four batch laws among
them, latencies from 0.25 to 4 us, inter-node bandwidths from 25 to 400 GB/s."""


def _sample() -> list[Scenario]:
    plan = plan_run(compose_config(OVERRIDES), overrides=OVERRIDES, write=False)
    return [plan.series[i].scenario for i in SAMPLE]


@pytest.mark.slow
@pytest.mark.parametrize("which", range(len(SAMPLE)))
def test_sensitivity_realistic_rows_equal_the_exhaustive_search(which: int) -> None:
    """The first, a middle and the last point of a sampled series of the sweep (the last
    infeasible, with its reason, where the series ends at a wall) equal the exhaustive walk's
    point with the same power and Q1 steps, every field."""
    scenario = _sample()[which]
    points = evaluate_series(scenario).points
    hw, opts, physics = scenario.hardware, scenario.options, scenario.physics
    for k in sorted({0, len(points) // 2, len(points) - 1}):
        point = points[k]
        shape = series_shape(point.shape.d_model, scenario.laws, opts.quirks, physics)
        exhaustive = smallest_cluster(hw, shape, scenario.duration_s, opts, False, physics)
        expected = with_q1_latency(with_power(exhaustive, hw, scenario.power), hw, opts)
        assert repr(point) == repr(expected)
