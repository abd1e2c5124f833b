"""physics.gemm_waves (docs/model.md R.2): a weight GEMM's arithmetic in whole waves of 256 x 128
output tiles, one per SM per wave (NVIDIA's Matrix Multiplication Background guide, §3.2)."""

from __future__ import annotations

import dataclasses

import numpy as np

from pipeline.model.compute.efficiency import matmul_calls_s, wave_quantization
from pipeline.schema import compose_config, load_scenario


def _scenario(*overrides: str):  # type: ignore[no-untyped-def]
    s = load_scenario(compose_config(["physics=realistic", "hardware=a100_sxm_80gb", *overrides]))
    return s.hardware, s.physics


def test_gemm_waves_full_waves_cost_nothing() -> None:
    """An output of exactly one wave of whole tiles (108 A100 SMs: 12 x 9 tiles) needs no more."""
    hw, _ = _scenario()
    assert hw.sms == 108
    rows, cols = np.array([12.0 * 256.0]), np.array([9.0 * 128.0])
    assert wave_quantization(hw, rows, cols)[0] == 1.0


def test_gemm_waves_a_partial_wave_takes_a_full_one() -> None:
    """One tile past a full wave costs a second whole wave: 109 tiles take 216 tiles' time."""
    hw, _ = _scenario()
    rows, cols = np.array([109.0 * 256.0]), np.array([128.0])
    assert wave_quantization(hw, rows, cols)[0] == 216.0 / 109.0


def test_gemm_waves_turn_the_tile_the_cheaper_way() -> None:
    """A 128-row output is one tile high when the tile is turned to 128 x 256, not half-empty."""
    hw, _ = _scenario()
    rows, cols = np.array([128.0]), np.array([108.0 * 256.0])
    assert wave_quantization(hw, rows, cols)[0] == 1.0


def test_gemm_waves_slow_only_the_arithmetic_of_a_call() -> None:
    """With the switch a compute-bound call takes its FLOP time times the wave factor; without, not."""
    hw, on = _scenario("physics.gemm_waves=true")
    off = dataclasses.replace(on, gemm_waves=False)
    d1, d2, b = np.array([2304.0]), np.array([2304.0]), np.array([2048.0])
    wg = np.array([False])
    slow = matmul_calls_s(hw, on, d1, d2, b, wg)[0]
    fast = matmul_calls_s(hw, off, d1, d2, b, wg)[0]
    overhead = on.efficiency.matmul_overhead_s
    assert overhead is not None
    factor = wave_quantization(hw, d1, b)[0]
    assert factor > 1.0
    assert abs((slow - overhead) / (fast - overhead) - factor) < 1e-9
