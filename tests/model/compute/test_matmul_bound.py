"""The resource bounding a layer's slowest matmul call (the `matmul_bound` column): Part I's
roofline on the paper's four MLP calls, and the realistic layer's calls as its step times them
(pipeline/model/compute/layer.py, `layer_matmul_bound`; docs/model.md §5, R.2)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pipeline.model.compute.efficiency import call_terms_s, matmul_overhead_s, traffic_calls_s
from pipeline.model.compute.layer import LayerWork, layer_call_traffic, layer_matmul_bound
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.results import Layout, MatmulBound
from pipeline.model.records.scaling import ModelShape, ScalingLaws, model_shape
from pipeline.model.records.switches import PAPER, Physics, Precision
from pipeline.model.search.grid import grid_layer_work
from pipeline.model.step.evaluate import matmul_bound
from pipeline.schema import compose_config, load_scenario
from tests.presets import preset
from tests.strategies import hardware, models

REALISTIC = load_scenario(compose_config(["physics=realistic"])).physics


def _work(physics: Physics, d_model: int, tp_model: int, tp_ff: int, nano: int) -> LayerWork:
    """One grid row of the model of width `d_model`: its shards and nanobatch, one expert."""
    one = np.ones(1)
    shape = model_shape(d_model, ScalingLaws())
    return grid_layer_work(physics, shape, one * tp_model, one * tp_ff, one * nano)


def _paper_bound(
    hw: HardwareSpec, shape: ModelShape, tp_model: int, tp_ff: int, nano: int
) -> MatmulBound:
    """Part I's `matmul_bound` of a layout with these shards and nanobatch."""
    layout = Layout(
        n_gpu=tp_model * tp_ff,
        dp=(1,),
        tp_model=(tp_model,),
        tp_ff=(tp_ff,),
        pp=(1,),
        ep=(1,),
        microbatches=1,
        zero_bubble=False,
        pp_interleave=1,
        nanobatch_tokens=nano,
        cp=(1,),
    )
    return matmul_bound(hw, shape, layout)


@settings(max_examples=40, deadline=None)
@given(hardware(), models(), st.integers(0, 6), st.integers(0, 6), st.integers(1, 8192))
def test_matmul_bound_of_an_mlp_under_the_papers_physics_is_part_ones(
    hw: HardwareSpec, shape: ModelShape, log_tp_model: int, log_tp_ff: int, nano: int
) -> None:
    """With no extension and ideal efficiencies a layer is its MLP, whose three calls per
    matrix are the paper's four distinct calls: the realistic rule gives Part I's label."""
    tp_model, tp_ff = 2**log_tp_model, 2**log_tp_ff
    assume(shape.d_model % tp_model == 0 and shape.d_ff % tp_ff == 0)
    one = np.ones(1)
    work = grid_layer_work(PAPER, shape, one * tp_model, one * tp_ff, one * nano)
    expected = _paper_bound(hw, shape, tp_model, tp_ff, nano)
    assert layer_matmul_bound(hw, PAPER, work) is expected


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["h100_sxm", "a100_sxm", "b200"]),
    st.sampled_from(list(Precision)),
    st.booleans(),
    st.sampled_from([12288, 16384, 24576]),
    st.integers(0, 6),
    st.integers(0, 8),
    st.integers(1, 8192),
)
def test_matmul_bound_names_the_term_that_times_the_slowest_call(
    name: str,
    precision: Precision,
    attention: bool,
    d_model: int,
    log_tp_model: int,
    log_tp_ff: int,
    nano: int,
) -> None:
    """Under realistic physics the label is `latency` exactly when the per-call overhead
    outlasts the roofline of the call the step times slowest (`traffic_calls_s`); otherwise
    the named term, as that time counts it, is what the call takes beside its overhead."""
    hw = preset(name)
    physics = dataclasses.replace(REALISTIC, precision=precision, attention=attention)
    work = _work(physics, d_model, 2**log_tp_model, 2**log_tp_ff, nano)
    calls = layer_call_traffic(hw, physics, work)
    times = traffic_calls_s(hw, physics, calls)
    slowest = np.unravel_index(int(np.argmax(times)), times.shape)
    overhead = matmul_overhead_s(hw, physics.efficiency)
    roof = float(times[slowest]) - overhead
    bound = layer_matmul_bound(hw, physics, work)
    if bound is MatmulBound.LATENCY:
        assert overhead > roof * (1.0 - 1e-9)
        return
    terms = call_terms_s(hw, physics, calls)
    named = {
        MatmulBound.FLOP: terms.flop_s,
        MatmulBound.HBM: terms.hbm_s,
        MatmulBound.L2: terms.l2_s,
        MatmulBound.SMEM: terms.smem_s,
    }
    assert float(named[bound][slowest]) == pytest.approx(roof, rel=1e-9)
    assert overhead <= roof * (1.0 + 1e-9)


def test_matmul_bound_realistic_h100_shard_is_flop_where_the_paper_says_smem() -> None:
    """The H100 dense row of d_model 16,384 (N_TPff = 2, 512 tokens) takes 918 µs of FLOP and
    844 µs of shared memory per slowest call as its realistic step times it (the matmul
    efficiency and waves slow the arithmetic): FLOP-bound, where the paper's roofline, at the
    full rate, labels it `smem`."""
    hw = preset("h100_sxm")
    work = _work(REALISTIC, 16384, 1, 2, 512)
    assert layer_matmul_bound(hw, REALISTIC, work) is MatmulBound.FLOP
    shape = model_shape(16384, ScalingLaws())
    assert _paper_bound(hw, shape, 1, 2, 512) is MatmulBound.SMEM


def test_matmul_bound_fp8_narrows_the_bytes_more_than_it_speeds_the_arithmetic() -> None:
    """An H100 shard L2-bound in BF16 (d_model 12,288, N_TPff = 4, 128 tokens) is FLOP-bound in
    FP8: its bytes halve, its arithmetic runs only 1.77 times faster (docs/model.md R.11)."""
    hw = preset("h100_sxm")
    fp8 = dataclasses.replace(REALISTIC, precision=Precision.FP8)
    work = _work(REALISTIC, 12288, 1, 4, 128)
    assert layer_matmul_bound(hw, REALISTIC, work) is MatmulBound.L2
    assert layer_matmul_bound(hw, fp8, work) is MatmulBound.FLOP


def test_matmul_bound_blackwell_tensor_memory_relieves_shared_memory() -> None:
    """On B200 the realistic physics' tensor memory halves the shared-memory term: the shard
    of its realistic series' d_model 16,384 row (N_TPff = 8, 4,096 tokens) is FLOP-bound,
    `smem` without the relief and by the paper's roofline (docs/model.md R.8)."""
    hw = preset("b200")
    work = _work(REALISTIC, 16384, 1, 8, 4096)
    assert layer_matmul_bound(hw, REALISTIC, work) is MatmulBound.FLOP
    no_relief = dataclasses.replace(REALISTIC, tensor_memory=False)
    assert layer_matmul_bound(hw, no_relief, work) is MatmulBound.SMEM
    shape = model_shape(16384, ScalingLaws())
    assert _paper_bound(hw, shape, 1, 8, 4096) is MatmulBound.SMEM


def test_matmul_bound_latency_is_the_realistic_overhead_not_the_papers_latency() -> None:
    """A shard whose slowest call takes 2.7 µs (d_model 12,288 over N_TPm = 64, N_TPff = 256)
    is `latency` under the realistic 5 µs overhead and not without it; a 21.5 µs call is
    `flop` however long the hardware's own matmul latency, which realistic physics replaces."""
    hw = preset("h100_sxm")
    tiny = _work(REALISTIC, 12288, 64, 256, 8)
    assert layer_matmul_bound(hw, REALISTIC, tiny) is MatmulBound.LATENCY
    free = dataclasses.replace(
        REALISTIC, efficiency=dataclasses.replace(REALISTIC.efficiency, matmul_overhead_s=0.0)
    )
    assert layer_matmul_bound(hw, free, tiny) is not MatmulBound.LATENCY
    slow_latency = dataclasses.replace(hw, matmul_latency_s=1.0)
    small = _work(REALISTIC, 12288, 8, 64, 8)
    assert layer_matmul_bound(slow_latency, REALISTIC, small) is MatmulBound.FLOP
