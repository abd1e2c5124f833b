"""The realistic grid: each candidate timed as the run of its layout, its bound and search
(pipeline/model/search/realistic.py; docs/model.md R.7, §9.2)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.execute.series import evaluate_series
from pipeline.model.compute.layer import layer_matmul_bound
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.results import MatmulBound
from pipeline.model.records.scaling import ModelShape, ScalingLaws, model_shape
from pipeline.model.records.switches import Physics
from pipeline.model.search.candidates import Candidates, enumerate_candidates
from pipeline.model.search.counts import grid_shape
from pipeline.model.search.grid import grid_layer_work
from pipeline.model.search.realistic import RealisticSteps, realistic_steps
from pipeline.model.search.search import optimal_layout, physics_hardware, smallest_cluster
from pipeline.model.step.assembly import StepParts
from pipeline.model.step.evaluate import matmul_bound
from pipeline.model.step.pipeline import StageLayers, pipeline_floor_s, pipeline_step_s
from pipeline.schema import compose_config, load_scenario
from tests.model.search.subsets import take_candidates
from tests.presets import preset
from tests.strategies import hardware, models, search_options

DURATION_S = 0.25 * 3.154e7
"""Model A's three months (spec §0)."""


def realistic() -> Physics:
    """The shipped realistic physics."""
    return load_scenario(compose_config(["physics=realistic"])).physics


@pytest.mark.parametrize(
    ("name", "sparse", "d_model", "n_gpu"),
    [
        ("h100_sxm", False, 12288, 2048),
        ("h100_sxm", True, 12288, 4096),
        ("v100_sxm", False, 8192, 512),
    ],
)
def test_realistic_step_floor_never_exceeds_a_candidate(
    name: str, sparse: bool, d_model: int, n_gpu: int
) -> None:
    """The compute-only floor of realistic candidates is at most every candidate's step, on
    the preset's network and on an infinitely fast one."""
    physics = realistic()
    shape = grid_shape(physics, model_shape(d_model, ScalingLaws(sparse=sparse)))
    hw = physics_hardware(preset(name), physics)
    fast = dataclasses.replace(
        hw,
        net_bandwidth_bytes_per_s=tuple(np.inf for _ in hw.net_bandwidth_bytes_per_s),
        net_latency_s=tuple(0.0 for _ in hw.net_latency_s),
    )
    for opts in (SearchOptions(), SearchOptions(overlap_tp=False, overlap_pp_ep=False)):
        c = enumerate_candidates(hw, shape, n_gpu, opts, physics)
        assert isinstance(c, Candidates)
        for net in (hw, fast):
            steps = realistic_steps(net, physics, shape, n_gpu, c, opts)
            assert c.step_floor_s <= steps.t_step_s.min()
        assert c.step_floor_s > 0.0


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(0.0, 1.0), min_size=6, max_size=6),
    st.integers(1, 8),
    st.integers(1, 4),
    st.booleans(),
)
def test_pipeline_floor_is_a_lower_bound(
    parts: list[float], pp: int, interleave: int, zero_bubble: bool
) -> None:
    """The step with every network time at 0 never exceeds the step with any non-negative
    network times (step/pipeline.py's monotonicity), within rounding."""
    t_layer, t_tp, t_p2p, t_dp, t_opt, t_last = (np.array([p]) for p in parts)
    layers = 4.0 * pp
    stages = StageLayers(np.array([4.0]), np.array([4.0]), layers)
    m, v, zb = np.array([float(pp)]), np.array([float(interleave)]), np.array([zero_bubble])
    floor = pipeline_floor_s(stages, t_layer, m, v, zb, t_opt)
    step = pipeline_step_s(stages, t_layer + t_tp, t_last, m, v, zb, t_p2p, t_dp, t_opt)
    assert floor[0] <= step.t_step_s[0] * (1.0 + 1e-12)


@settings(max_examples=20, deadline=None)
@given(hardware(), models(), search_options(), st.integers(0, 10))
def test_realistic_pruned_search_equals_exhaustive(
    hw: HardwareSpec, shape: ModelShape, opts: SearchOptions, doublings: int
) -> None:
    """Under realistic physics the pruned search picks the exhaustive one's layout and cost."""
    n_gpu = shape.sparsity * 2**doublings
    physics = realistic()
    pruned = optimal_layout(hw, shape, n_gpu, opts, physics=physics)
    exhaustive = optimal_layout(hw, shape, n_gpu, opts, prune=False, physics=physics)
    assert pruned == exhaustive


@settings(max_examples=5, deadline=None)
@given(hardware(), models())
def test_realistic_pruned_smallest_cluster_equals_exhaustive(
    hw: HardwareSpec, shape: ModelShape
) -> None:
    """Under realistic physics the smallest sufficient cluster does not depend on pruning."""
    physics = realistic()
    pruned = smallest_cluster(hw, shape, DURATION_S, SearchOptions(), physics=physics)
    exhaustive = smallest_cluster(hw, shape, DURATION_S, SearchOptions(), False, physics)
    assert pruned == exhaustive


@settings(max_examples=5, deadline=None)
@given(hardware(), models(), search_options())
def test_realistic_pruned_smallest_cluster_equals_exhaustive_under_any_options(
    hw: HardwareSpec, shape: ModelShape, opts: SearchOptions
) -> None:
    """With random search options (overlaps, schedules, tie tolerance) the walk's floors and
    the candidates they leave untimed change no point under realistic physics."""
    physics = realistic()
    pruned = smallest_cluster(hw, shape, DURATION_S, opts, physics=physics)
    exhaustive = smallest_cluster(hw, shape, DURATION_S, opts, False, physics)
    assert pruned == exhaustive


@pytest.mark.parametrize("doublings", [10, 14, 18])
def test_realistic_a_subset_of_candidates_keeps_their_times(doublings: int) -> None:
    """Timing candidates `take_candidates` picks gives each its time in the whole set, bit for
    bit (the walk times only those its floors leave)."""
    physics = realistic()
    shape = grid_shape(physics, model_shape(24576, ScalingLaws(sparse=True)))
    hw = physics_hardware(preset("h100_sxm"), physics)
    n_gpu = shape.sparsity * 2**doublings
    c = enumerate_candidates(hw, shape, n_gpu, SearchOptions(), physics)
    assert isinstance(c, Candidates)
    whole = realistic_steps(hw, physics, shape, n_gpu, c, SearchOptions())
    idx = np.arange(0, c.degrees.shape[0], 7)
    part = realistic_steps(hw, physics, shape, n_gpu, take_candidates(c, idx), SearchOptions())
    for field in RealisticSteps.__slots__:
        if field != "parts":
            assert np.array_equal(getattr(part, field), getattr(whole, field)[idx])
    for field in StepParts.__slots__:
        if getattr(whole.parts, field) is not None:
            assert np.array_equal(getattr(part.parts, field), getattr(whole.parts, field)[idx])


@pytest.mark.parametrize(
    "overrides",
    [(), ("scaling=sparse",), ("physics.precision=fp8",)],
    ids=["dense", "sparse", "fp8"],
)
def test_realistic_rows_name_the_bound_of_their_own_layer(overrides: tuple[str, ...]) -> None:
    """Each row of a default realistic H100 series names the bound of its layout's layer as
    its step times it (`compute.layer.layer_matmul_bound` of its grid row: shards, nanobatch,
    S/N_EP experts), not the paper's roofline: the rows from d_model 16,384 to 24,576 that
    Part I's terms call `smem` (dense 16,384: 844 µs of shared memory beside 918 µs of
    realistic FLOP) are FLOP-bound."""
    scenario = load_scenario(compose_config(["physics=realistic", *overrides]))
    physics, hw = scenario.physics, scenario.hardware
    rows = [p for p in evaluate_series(scenario).points if p.cost is not None]
    assert rows
    paper_smem = 0
    for p in rows:
        assert p.cost is not None
        assert p.layout is not None
        layout, one = p.layout, np.ones(1)
        work = grid_layer_work(
            physics,
            p.shape,
            one * int(np.prod(layout.tp_model)),
            one * int(np.prod(layout.tp_ff)),
            one * layout.nanobatch_tokens,
            one * (p.shape.sparsity // int(np.prod(layout.ep))),
        )
        assert p.cost.matmul_bound is layer_matmul_bound(hw, physics, work)
        if matmul_bound(hw, p.shape, layout) is MatmulBound.SMEM:
            paper_smem += 1
            assert p.cost.matmul_bound is MatmulBound.FLOP
    assert paper_smem > 0
