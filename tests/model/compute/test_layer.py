"""A layer's fixed launch time bounds its real time from below (docs/model.md R.2, §9.4)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from pipeline.model.compute.layer import (
    LayerWork,
    layer_launch_times,
    layer_times_s,
    with_rerun_s,
)
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.scaling import ModelShape, ScalingLaws, model_shape
from pipeline.model.records.switches import Fusion, Physics, Precision
from pipeline.model.search.grid import (
    grid_layer_launch_s,
    grid_layer_work,
    grid_non_gemm_launch_s,
)
from pipeline.schema import compose_config, load_scenario
from tests.presets import preset
from tests.strategies import hardware, models

REALISTIC = load_scenario(compose_config(["physics=realistic"])).physics


def launch_time_s(hw: HardwareSpec, physics: Physics, work: LayerWork) -> NDArray[np.float64]:
    """The layer's launches, forward and backward (`layer_launch_times`)."""
    t = layer_launch_times(hw, physics, work)
    out: NDArray[np.float64] = t.forward_s + t.backward_s
    return out


RealisticRows = tuple[Physics, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]


@st.composite
def realistic_rows(draw: st.DrawFn) -> RealisticRows:
    """Realistic physics with any fusion, attention and memory-bound switch, and four grid
    rows (N_TPm, N_TPff, nanobatch): trivial, drawn powers of two, and two fixed extremes."""
    physics = dataclasses.replace(
        REALISTIC,
        fusion=draw(st.sampled_from(list(Fusion))),
        attention=draw(st.booleans()),
        memory_bound_ops=draw(st.booleans()),
    )
    logs = draw(st.lists(st.integers(0, 12), min_size=3, max_size=3))
    tp_m = np.array([1.0, 2.0 ** logs[0], 8.0, 1.0])
    tp_ff = np.array([1.0, 2.0 ** logs[1], 2.0, 64.0])
    nano = np.array([1.0, 2.0 ** logs[2], 2048.0, 3.0])
    return physics, tp_m, tp_ff, nano


@settings(max_examples=30, deadline=None)
@given(hardware(), models(), realistic_rows())
def test_layer_launch_time_bounds_every_grid_row(
    hw: HardwareSpec, shape: ModelShape, case: RealisticRows
) -> None:
    """On any GPU and grid row, forward + backward is at least the launch time, which is the
    same for every row of any model (`grid_layer_launch_s`, what `search.floors.step_floor_terms_s`
    charges each call)."""
    physics, tp_m, tp_ff, nano = case
    work = grid_layer_work(physics, shape, tp_m, tp_ff, nano)
    times = layer_times_s(hw, physics, work)
    launch = launch_time_s(hw, physics, work)
    assert np.all(times.forward_s + times.backward_s >= launch)
    assert np.all(launch == grid_layer_launch_s(hw, physics, shape))
    assert launch[0] > 0.0


@settings(max_examples=30, deadline=None)
@given(hardware(), models(), realistic_rows())
def test_non_gemm_launch_time_bounds_every_grid_row_less_its_gemms(
    hw: HardwareSpec, shape: ModelShape, case: RealisticRows
) -> None:
    """On any GPU and grid row, under every recomputation mode, the layer less its weight
    GEMMs (what TP overlap leaves beside the exposed collectives) is at least the launches of
    its other kernels (`grid_non_gemm_launch_s`, what `search.floors.layout_step_floors_s`
    adds to them), which are at most the whole layer's launches."""
    physics, tp_m, tp_ff, nano = case
    times = layer_times_s(hw, physics, grid_layer_work(physics, shape, tp_m, tp_ff, nano))
    non_gemm = grid_non_gemm_launch_s(hw, physics, shape)
    assert 0.0 <= non_gemm <= grid_layer_launch_s(hw, physics, shape)
    zero = np.zeros_like(nano)
    for mode in range(3):
        modes = np.full(nano.shape, mode, dtype=np.int64)
        layer = times.with_recompute_s(modes)
        gemm = with_rerun_s(modes, times.matmul_forward_s, times.matmul_backward_s, zero)
        assert np.all(layer - gemm >= non_gemm * (1.0 - 1e-12))


def test_layer_launch_time_of_an_mlp_is_six_matmul_overheads() -> None:
    """Without attention or memory-bound kernels a layer is its MLP's two matrices, three
    calls each: six matmul overheads."""
    physics = dataclasses.replace(REALISTIC, attention=False, memory_bound_ops=False)
    one = np.ones(1)
    work = grid_layer_work(physics, model_shape(12288, ScalingLaws()), one, one, one)
    overhead = physics.efficiency.matmul_overhead_s
    assert overhead is not None
    launch = launch_time_s(preset("h100_sxm"), physics, work)
    assert launch[0] == pytest.approx(6 * overhead, rel=1e-12)


def test_layer_launch_times_do_not_depend_on_precision() -> None:
    """Under FP8 a layer's launches are its BF16 launches, every part finite: the unbounded
    GPU computes every FLOP in no time at either precision (docs/model.md R.11)."""
    hw = preset("h100_sxm")
    fp8 = dataclasses.replace(REALISTIC, precision=Precision.FP8)
    one = np.array([1.0, 8.0])
    work = grid_layer_work(REALISTIC, model_shape(12288, ScalingLaws()), one, one, one, one)
    bf16_times = layer_launch_times(hw, REALISTIC, work)
    fp8_times = layer_launch_times(hw, fp8, work)
    for field in ("forward_s", "backward_s", "matmul_forward_s", "matmul_backward_s"):
        assert np.all(np.isfinite(getattr(fp8_times, field)))
        assert np.array_equal(getattr(fp8_times, field), getattr(bf16_times, field))
