"""Invariants of the model over random hardware and models (hypothesis, spec §17 safe properties)."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.scaling import ModelShape
from pipeline.model.search.search import optimal_layout, smallest_cluster
from pipeline.model.step.evaluate import evaluate_layout
from tests.strategies import hardware, models, scale_network

EXAMPLES = settings(max_examples=25, deadline=None)
DURATION_S = 0.25 * 3.154e7


def cluster(shape: ModelShape, doublings: int) -> int:
    return shape.sparsity * 2 ** (10 + doublings)


@EXAMPLES
@given(hardware(), models(), st.integers(0, 4), st.floats(1.0, 100.0), st.floats(0.0, 1.0))
def test_fixed_layout_step_never_longer_with_faster_network(
    hw: HardwareSpec, shape: ModelShape, doublings: int, faster: float, lower: float
) -> None:
    """At a fixed layout, more bandwidth and less latency never lengthen the step."""
    found = optimal_layout(hw, shape, cluster(shape, doublings))
    if found is None:
        return
    layout, cost = found
    better = evaluate_layout(scale_network(hw, faster, lower), shape, layout)
    assert better.step_time_s <= cost.step_time_s * (1.0 + 1e-12)


@EXAMPLES
@given(hardware(), models(), st.integers(0, 4), st.floats(1.0, 100.0), st.floats(0.0, 1.0))
def test_best_training_time_never_longer_with_faster_network(
    hw: HardwareSpec, shape: ModelShape, doublings: int, faster: float, lower: float
) -> None:
    """At a fixed cluster size, the best training time never lengthens on a faster network."""
    n_gpu = cluster(shape, doublings)
    base = optimal_layout(hw, shape, n_gpu)
    better = optimal_layout(scale_network(hw, faster, lower), shape, n_gpu)
    if base is None:
        return
    assert better is not None
    assert better[1].training_time_s <= base[1].training_time_s * (1.0 + 1e-12)


@EXAMPLES
@given(hardware(), models(), st.integers(0, 6))
def test_utilization_within_zero_and_u_eff(
    hw: HardwareSpec, shape: ModelShape, doublings: int
) -> None:
    """Utilization of the best layout lies in (0, u_eff]."""
    found = optimal_layout(hw, shape, cluster(shape, doublings))
    if found is None:
        return
    assert 0.0 < found[1].utilization <= hw.u_eff * (1.0 + 1e-12)


@EXAMPLES
@given(hardware(), models(), st.integers(0, 4))
def test_single_pipeline_stage_has_no_bubble(
    hw: HardwareSpec, shape: ModelShape, doublings: int
) -> None:
    """A layout with one pipeline stage has bubble fraction 0 on either schedule."""
    found = optimal_layout(hw, shape, cluster(shape, doublings))
    if found is None:
        return
    layout, _ = found
    if layout.pp != tuple(1 for _ in layout.pp):
        return
    for zb in (False, True):
        cost = evaluate_layout(hw, shape, replace(layout, zero_bubble=zb, pp_interleave=1))
        assert cost.bubble_fraction == 0.0


@settings(max_examples=10, deadline=None)
@given(hardware(), models(), st.floats(1.0, 4.0))
def test_longer_duration_keeps_feasible_sizes_feasible(
    hw: HardwareSpec, shape: ModelShape, longer: float
) -> None:
    """A size feasible within a duration stays feasible within a longer one."""
    short = smallest_cluster(hw, shape, DURATION_S)
    if not short.feasible:
        return
    assert smallest_cluster(hw, shape, DURATION_S * longer).feasible
