"""Realistic physics on the scaling-law grid (docs/model.md, "Realistic physics", R.7)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.execute.series import evaluate_series
from pipeline.model.grid_physics import grid_layer_times
from pipeline.model.options import SearchOptions
from pipeline.model.physics import Physics, Recompute
from pipeline.model.results import InfeasibleReason
from pipeline.model.scaling import ScalingLaws, model_shape
from pipeline.model.search import optimal_layout, smallest_cluster
from pipeline.model.step import layer_matmul_time_s
from pipeline.schema import compose_config, load_scenario
from tests.presets import preset

DURATION_S = 0.25 * 3.154e7
MEMORY = Physics(name="memory", gpu_memory=True, recompute=Recompute.AUTO, zero_stage=1)


def dense(d_model: int = 12288):
    """A dense model of the paper's grid."""
    return model_shape(d_model, ScalingLaws(), SearchOptions().quirks)


def test_grid_layer_time_with_switches_off_is_the_papers() -> None:
    """With every switch off and ideal efficiencies, a layer costs the paper's six matmuls."""
    hw = preset("h100_sxm")
    tpm, tpff, nano = np.array([1.0, 4.0]), np.array([2.0, 8.0]), np.array([64.0, 2048.0])
    shape = dense()
    ours = grid_layer_times(hw, Physics(), shape, tpm, tpff, nano)
    paper = layer_matmul_time_s(hw, shape.d_model // tpm, shape.d_ff // tpff, nano)
    np.testing.assert_allclose(ours.forward_s + ours.backward_s, paper, rtol=1e-12)


def test_grid_point_exceeding_gpu_memory_has_its_reason() -> None:
    """A GPU of 64 bytes holds no shard of a 12288-wide model at any cluster: exceeds_gpu_memory."""
    hw = dataclasses.replace(preset("h100_sxm"), hbm_bytes=64.0)
    point = smallest_cluster(hw, dense(), DURATION_S, SearchOptions(), physics=MEMORY)
    assert not point.feasible
    assert point.infeasible_reason is InfeasibleReason.EXCEEDS_GPU_MEMORY


def test_grid_point_records_its_recompute_mode() -> None:
    """A feasible grid point under per-GPU memory names the recomputation mode it chose."""
    point = smallest_cluster(
        preset("h100_sxm"), dense(), DURATION_S, SearchOptions(), physics=MEMORY
    )
    assert point.feasible
    assert point.recompute in {"none", "selective", "full"}


@settings(max_examples=8, deadline=None)
@given(st.sampled_from([12288, 16384, 24576]), st.floats(20e9, 80e9), st.floats(1.0, 4.0))
def test_more_hbm_never_makes_a_feasible_grid_point_infeasible(
    d_model: int, hbm: float, factor: float
) -> None:
    """If a size trains within the duration on some GPU memory, it does on more."""
    hw = dataclasses.replace(preset("h100_sxm"), hbm_bytes=hbm)
    small = smallest_cluster(hw, dense(d_model), DURATION_S, SearchOptions(), physics=MEMORY)
    big_hw = dataclasses.replace(hw, hbm_bytes=hbm * factor)
    big = smallest_cluster(big_hw, dense(d_model), DURATION_S, SearchOptions(), physics=MEMORY)
    assert big.feasible or not small.feasible


@pytest.mark.parametrize("n_gpu", [1024, 4096])
def test_recompute_auto_never_slower_than_none(n_gpu: int) -> None:
    """Choosing recomputation per layout only adds layouts that fit: the best time never grows."""
    hw = preset("h100_sxm")
    none = optimal_layout(
        hw,
        dense(),
        n_gpu,
        SearchOptions(),
        physics=dataclasses.replace(MEMORY, recompute=Recompute.NONE),
    )
    auto = optimal_layout(hw, dense(), n_gpu, SearchOptions(), physics=MEMORY)
    assert auto is not None
    assert none is None or auto[1].training_time_s <= none[1].training_time_s


def test_realistic_linear_end_is_measured_from_the_peak() -> None:
    """Under realistic physics the linear end lies at or after the size of best utilization."""
    scenario = load_scenario(compose_config(["physics=realistic", "physics.tensor_parallel=2d"]))
    out = evaluate_series(scenario)
    feasible = [p for p in out.points if p.feasible and p.cost is not None]
    peak = max(feasible, key=lambda p: p.cost.utilization if p.cost else 0.0)
    assert out.limits.linear_end_flop is not None
    assert out.limits.linear_end_flop >= peak.shape.training_flop
