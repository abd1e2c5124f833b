"""Invariants of a whole series over random valid configs: schema -> Scenario -> evaluate_series.

Hardware comes as a config node in human units (`tests.strategies.hardware_configs`: any
positive rates, infinite network bandwidth, zero latencies, 1-3 network levels of any size)
and goes through `hardware_from_config`, as a run's would. numpy floating-point warnings are
errors inside every evaluation (`np.errstate(all="raise")`).
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.execute.series import SeriesOutcome, evaluate_series
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.step.evaluate import evaluate_layout
from pipeline.schema import Scenario, compose_config, hardware_from_config, load_scenario
from tests.strategies import SMALL_WIDTHS, hardware_configs

pytestmark = pytest.mark.filterwarnings("ignore::pipeline.schema.plausible.PlausibilityWarning")
"""Values far beyond every accelerator are the point here, not a slip to warn about."""
EXAMPLES = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BATCH_LAWS = ("critical", "constant", "deepseek", "zhang2024")
RELATIVE_SLACK = 1e-12
"""Float rounding allowed on an inequality between two evaluations."""


@lru_cache(maxsize=16)
def reference(scaling: str, batch: str) -> Scenario:
    """The shipped scaling and batch laws, as a run loads them (conf/scaling, conf/batch)."""
    return load_scenario(compose_config([f"scaling={scaling}", f"batch={batch}"]))


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    """A random valid scenario: random hardware, dense or sparse, any batch law and duration."""
    base = reference(draw(st.sampled_from(("dense", "sparse"))), draw(st.sampled_from(BATCH_LAWS)))
    widths = draw(st.lists(st.sampled_from(SMALL_WIDTHS), min_size=1, max_size=3, unique=True))
    months = draw(st.floats(0.05, 60.0))
    hardware = hardware_from_config(draw(hardware_configs()))
    return dataclasses.replace(
        base,
        hardware_name="random",
        hardware=hardware,
        d_models=tuple(sorted(widths)),
        duration_s=months * base.year_s / 12.0,
    )


def evaluate(scenario: Scenario, whole_grid: bool = True) -> SeriesOutcome:
    """evaluate_series with every numpy floating-point warning raised as an error."""
    with np.errstate(all="raise"):
        return evaluate_series(scenario, whole_grid=whole_grid)


def faster(hw: HardwareSpec, bandwidth: list[float], latency: list[float]) -> HardwareSpec:
    """The hardware with more bandwidth and less latency everywhere.

    ``bandwidth[i]`` >= 1 multiplies network level i (and bandwidth[0] HBM and L2 too);
    ``latency[i]`` in [0, 1] scales level i's latency (and latency[0] the matmul latency).
    """
    k = hw.n_levels
    return dataclasses.replace(
        hw,
        hbm_bandwidth_bytes_per_s=hw.hbm_bandwidth_bytes_per_s * min(bandwidth[0], 1e3),
        l2_bandwidth_bytes_per_s=hw.l2_bandwidth_bytes_per_s * min(bandwidth[0], 1e3),
        matmul_latency_s=hw.matmul_latency_s * latency[0],
        net_bandwidth_bytes_per_s=tuple(
            b * f for b, f in zip(hw.net_bandwidth_bytes_per_s, bandwidth[:k], strict=True)
        ),
        net_latency_s=tuple(t * f for t, f in zip(hw.net_latency_s, latency[:k], strict=True)),
    )


@pytest.mark.slow
@EXAMPLES
@given(scenarios(), st.booleans())
def test_valid_scenario_evaluates_to_sound_rows(scenario: Scenario, whole_grid: bool) -> None:
    """No valid input raises; feasible rows are finite with utilization in (0, u_eff], others say why.

    u_eff bounds utilization when the batch splits evenly. By default (quirk Q8 off) the nanobatch
    b = B_tok / (S·N_DP·m) is floored, and the step computes fewer tokens than the model FLOP
    count: utilization may then exceed u_eff by that ratio (seen: 0.5 % at 1 SM, 100 MHz).
    """
    outcome = evaluate(scenario, whole_grid)
    u_eff = scenario.hardware.u_eff
    for point in outcome.points:
        if not point.feasible:
            assert point.infeasible_reason is not None
            continue
        assert point.cost is not None
        assert point.layout is not None
        for field in dataclasses.fields(point.cost):
            value = getattr(point.cost, field.name)
            if isinstance(value, float):
                assert math.isfinite(value), (field.name, value)
                assert value >= 0.0, (field.name, value)
        layout, shape = point.layout, point.shape
        split = shape.batch_tokens / (shape.sparsity * math.prod(layout.dp) * layout.microbatches)
        floor_gain = split / layout.nanobatch_tokens  # quirk Q8: a floored nanobatch computes less
        assert 0.0 < point.cost.utilization <= u_eff * floor_gain * (1.0 + RELATIVE_SLACK)
        assert point.cost.training_time_s < scenario.duration_s
    assert math.isfinite(outcome.closed_forms.alpha)
    assert not math.isnan(outcome.closed_forms.t_crit_flop)
    assert not math.isnan(outcome.closed_forms.t_limit_flop)


@EXAMPLES
@given(
    scenarios(),
    st.lists(st.one_of(st.floats(1.0, 1e3), st.just(math.inf)), min_size=3, max_size=3),
    st.lists(st.one_of(st.just(0.0), st.floats(1e-6, 1.0)), min_size=3, max_size=3),
)
def test_fixed_layout_step_never_longer_with_faster_network(
    scenario: Scenario, bandwidth: list[float], latency: list[float]
) -> None:
    """At the layout the search chose, more bandwidth (network up to .inf, HBM, L2) and less
    latency (network, matmul) never lengthen the step."""
    hw = scenario.hardware
    quick = faster(hw, bandwidth, latency)
    for point in evaluate(scenario).points:
        if point.layout is None or point.cost is None:
            continue
        with np.errstate(all="raise"):
            better = evaluate_layout(quick, point.shape, point.layout, scenario.options)
        assert better.step_time_s <= point.cost.step_time_s * (1.0 + RELATIVE_SLACK)


@EXAMPLES
@given(scenarios(), st.floats(1.0, 10.0))
def test_feasibility_monotone_in_duration(scenario: Scenario, longer: float) -> None:
    """Every model size feasible within a duration stays feasible within a longer one."""
    short = evaluate(scenario)
    long = evaluate(dataclasses.replace(scenario, duration_s=scenario.duration_s * longer))
    for a, b in zip(short.points, long.points, strict=True):
        assert a.shape == b.shape
        if a.feasible:
            assert b.feasible, (a.shape.d_model, a.infeasible_reason, b.infeasible_reason)
