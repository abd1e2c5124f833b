"""Check values of the realistic-physics extensions on small hand-computed cases
(docs/model.md, "Realistic physics"), and their properties."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.model.compute.flop import (
    attention_core_forward_flop,
    hardware_flop_per_step,
    linear_forward_flop,
    narayanan_flop_per_step,
)
from pipeline.model.compute.memory_ops import layer_tensors, layernorm_ops, optimizer_step_bytes
from pipeline.model.memory.gpu_memory import activation_bytes_per_layer, model_state_bytes_per_param
from pipeline.model.network.ring import ring_exchange_s
from pipeline.model.records.run import RunLayout, RunSpec
from pipeline.model.records.switches import Physics, Recompute
from pipeline.model.records.transformer import Mlp, TransformerShape
from pipeline.model.runs.training_run import evaluate_run
from pipeline.schema import compose_config, load_scenario
from tests.presets import preset

TINY = TransformerShape(layers=2, hidden=4, ffn_hidden=16, heads=2, kv_heads=2, vocab=10, seq_len=8)


def test_linear_forward_flop_tiny_layer() -> None:
    """h=4, f=16: QKV 4·12 + out 16 + MLP 2·4·16 = 192 weights; 8 tokens give 2·8·192 FLOP."""
    assert linear_forward_flop(TINY, 8.0) == 2 * 8 * (4 * 12 + 16 + 2 * 4 * 16)


def test_linear_forward_flop_grouped_query_and_swiglu() -> None:
    """One K/V head of width 2 and SwiGLU: QKV 4·(4+4) + out 16 + MLP 3·4·16 = 240 weights."""
    shape = dataclasses.replace(TINY, kv_heads=1, mlp=Mlp.SWIGLU)
    assert linear_forward_flop(shape, 1.0) == 2 * (4 * 8 + 16 + 3 * 4 * 16)


def test_attention_core_forward_flop_tiny_layer() -> None:
    """QK^T and AV on 8 tokens of a length-8 sequence, h=4: 2 · 2 · 8 · 8 · 4 FLOP."""
    assert attention_core_forward_flop(TINY, 8.0) == 4 * 8 * 8 * 4


def test_narayanan_eq3_equals_full_recompute_hardware_flop() -> None:
    """For ffn = 4h, eq. (3) of Narayanan et al. 2021 is the hardware count under full recompute."""
    shape = TransformerShape(24, 2304, 4 * 2304, 24, 24, 51200, 2048)
    ours = hardware_flop_per_step(shape, 512, Recompute.FULL)
    assert ours == pytest.approx(narayanan_flop_per_step(shape, 512), rel=1e-12)


def test_layernorm_bytes_tiny_microbatch() -> None:
    """A LayerNorm over 8 tokens x 4: forward reads and writes 32 16-bit values (128 B), backward 192 B."""
    one = np.ones(1)
    x = layer_tensors(8.0 * one, 4.0, 16.0, 4.0, 2.0, 8.0, (one, one, one))
    norm = layernorm_ops(x)[0]
    assert (norm.forward_bytes[0], norm.backward_bytes[0]) == (128.0, 192.0)


def test_adam_model_state_bytes_per_param_by_zero_stage() -> None:
    """Mixed-precision Adam holds 2 + 2 + 12 = 16 B per parameter; ZeRO shards it over dp = 4."""
    dp = np.array([4.0])
    assert model_state_bytes_per_param(0, dp)[0] == 16.0
    assert model_state_bytes_per_param(1, dp)[0] == 2.0 + 2.0 + 3.0
    assert model_state_bytes_per_param(2, dp)[0] == 2.0 + 0.5 + 3.0
    assert model_state_bytes_per_param(3, dp)[0] == 4.0


def test_optimizer_step_bytes_per_param() -> None:
    """The Adam step moves 30 B per parameter (16 read, 12 + 2 written)."""
    assert optimizer_step_bytes(np.ones(1))[0] == 30.0


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (Recompute.NONE, 32 * (10 + 24 + 5 * 2 * 4 / 8)),
        (Recompute.SELECTIVE, 32 * 34),
        (Recompute.FULL, 2 * 32),
    ],
)
def test_activation_bytes_per_layer_by_recompute(mode: Recompute, expected: float) -> None:
    """Korthikanti et al. 2022 Table 2 at s=4, b=1, h=8, a=2, t=1 (s·b·h = 32)."""
    one = np.ones(1)
    got = activation_bytes_per_layer(4.0 * one, 8.0, 2.0, 4.0, (one, one), mode, True)
    assert got[0] == expected


def test_activation_bytes_sequence_parallel_divides_by_tp() -> None:
    """With sequence parallelism every stored term is divided by t (Korthikanti 2022 eq. 5)."""
    two = np.full(1, 2.0)
    got = activation_bytes_per_layer(
        4.0 * np.ones(1), 8.0, 2.0, 4.0, (two, two), Recompute.SELECTIVE, True
    )
    assert got[0] == 32 * 34 / 2


shapes = st.builds(
    TransformerShape,
    layers=st.integers(1, 64),
    hidden=st.sampled_from([512, 1024, 4096]),
    ffn_hidden=st.sampled_from([2048, 4096, 16384]),
    heads=st.sampled_from([8, 16]),
    kv_heads=st.sampled_from([1, 8]),
    vocab=st.integers(1000, 200_000),
    seq_len=st.sampled_from([512, 2048, 8192]),
    mlp=st.sampled_from(list(Mlp)),
)


@given(shapes, st.integers(1, 4096))
def test_recompute_never_lowers_hardware_flop(shape: TransformerShape, batch: int) -> None:
    """Hardware FLOP grow from none to selective to full recomputation."""
    none, sel, full = (hardware_flop_per_step(shape, batch, m) for m in SEARCH_MODES)
    assert none <= sel <= full


SEARCH_MODES = (Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(list(Recompute)[:3]),
    st.sampled_from([1, 2, 4, 8]),
    st.floats(1.0, 4.0),
)
def test_more_hbm_never_makes_a_feasible_run_infeasible(
    mode: Recompute, micro: int, scale: float
) -> None:
    """A run that fits in a GPU's HBM still fits when the HBM grows."""
    hw = preset("a100_sxm")
    physics = load_scenario(compose_config(["run=gpt_7p5b", "physics=realistic"])).physics
    shape = TransformerShape(36, 4096, 16384, 32, 32, 51200, 2048)
    run = RunSpec("r", shape, 512, RunLayout(4, 1, 32, micro, recompute=mode))
    small = evaluate_run(hw, physics, run).fits_memory
    large = evaluate_run(dataclasses.replace(hw, hbm_bytes=hw.hbm_bytes * scale), physics, run)
    assert large.fits_memory or not small


def test_paper_physics_is_the_default() -> None:
    """Without overrides the scenario runs the paper's physics on the grid."""
    scenario = load_scenario(compose_config([]))
    assert scenario.physics == Physics()
    assert scenario.physics.is_paper
    assert scenario.run is None


def test_ring_attention_kv_exchange_tiny_run() -> None:
    """c = 4, t = 1, b = 2, s = 8, h_kv = 1·2 (d_head 2): 2·(3/4)·2·8·2 words of 2 B = 96 B,
    at half the level's bidirectional bandwidth, plus 3 hops (Liu et al. 2023)."""
    hw = preset("h100_sxm")
    shape = dataclasses.replace(TINY, kv_heads=1)
    level = 0  # 4 GPUs fit in the 8-GPU node
    bw = hw.net_bandwidth_bytes_per_s[level] / 2.0
    expected = 96.0 / bw + 3 * hw.net_latency_s[level]
    one = np.ones(1)
    link = (hw.net_bandwidth_bytes_per_s[level] * one, hw.net_latency_s[level] * one)
    tokens = 2 * 8 / 4 * one  # b·s/c
    got = ring_exchange_s(tokens, float(shape.kv_width), one, 4 * one, *link)
    assert got[0] == pytest.approx(expected, rel=1e-12)
    assert ring_exchange_s(tokens, float(shape.kv_width), one, one, *link)[0] == 0.0


def test_ring_attention_exchange_is_exposed_past_the_attention_core() -> None:
    """On a slow network the K/V ring, not the core, sets a context-parallel run's attention time."""
    physics = load_scenario(compose_config(["physics=realistic"])).physics
    hw = preset("h100_sxm")
    slow = dataclasses.replace(hw, net_bandwidth_bytes_per_s=(1e6, 1e6))
    shape = TransformerShape(4, 4096, 16384, 32, 8, 51200, 8192)
    run = RunSpec("r", shape, 8, RunLayout(1, 1, 2, 1, cp=4))
    fast_t = evaluate_run(hw, physics, run).t_attention_s
    slow_t = evaluate_run(slow, physics, run).t_attention_s
    assert fast_t is not None
    assert slow_t is not None
    one = np.ones(1)
    link = (1e6 * physics.efficiency.network * one, slow.net_latency_s[0] * one)
    ring = ring_exchange_s(1 * 8192 / 4 * one, float(shape.kv_width), one, 4 * one, *link)[0]
    assert slow_t > fast_t
    assert slow_t >= 3.0 * ring * 4 * 4  # (forward + 2 x forward) x 4 layers x 4 microbatches
