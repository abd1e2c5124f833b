"""The matmul roofline under realistic physics: the paper's terms (docs/model.md §5) with a
framework's achieved matmul rate, its per-call overhead, and Blackwell's tensor memory
(docs/model.md, "Realistic physics", R.2 and R.8)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pipeline.model.compute.matmul import matmul_terms_s
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.switches import Efficiency, Physics

Array = NDArray[np.float64]

BLACKWELL_SMEM_RELIEF = 2.0
"""Tensor memory and 2-SM MMA halve the shared-memory traffic per FLOP of a large tile
(accumulators live in TMEM; each SM of a CTA pair loads half of the B operand): NVIDIA
Blackwell architecture technical brief (2024), "fifth-generation Tensor Cores"."""


TENSOR_MEMORY_MIN_FLOP_PER_CLOCK_PER_THREAD = 64.0
"""Blackwell's fifth-generation tensor cores (64 FLOP per clock per thread in conf/hardware/b200.yaml)
come with tensor memory; earlier generations (at most 32) do not."""


def has_tensor_memory(hw: HardwareSpec) -> bool:
    """True for Blackwell-class hardware: tensor memory and 2-SM MMA instructions."""
    return hw.flop_per_clock_per_thread >= TENSOR_MEMORY_MIN_FLOP_PER_CLOCK_PER_THREAD


def matmul_overhead_s(hw: HardwareSpec, eff: Efficiency) -> float:
    """Fixed time of one matmul kernel call: `efficiency.matmul_overhead_s`, or the hardware's
    `matmul_latency_s` (the paper's 4.5 µs) when the physics leaves it unset."""
    return hw.matmul_latency_s if eff.matmul_overhead_s is None else eff.matmul_overhead_s


def matmul_calls_s(
    hw: HardwareSpec, physics: Physics, d1: Array, d2: Array, b: Array, wg: NDArray[np.bool_]
) -> Array:
    """Time of each matmul call (a d1 x d2 weight on b tokens; `wg`: weight gradient) on one GPU:
    t = max(HBM, L2, SMEM / relief, FLOP / efficiency.matmul) + overhead.

    The terms are the paper's roofline (spec §4, `matmul_terms_s`); relief = 2 with tensor
    memory on Blackwell-class hardware (`BLACKWELL_SMEM_RELIEF`), else 1 (docs/model.md R.2).
    """
    t = matmul_terms_s(hw, d1, d2, b, wg)
    relief = BLACKWELL_SMEM_RELIEF if physics.tensor_memory and has_tensor_memory(hw) else 1.0
    flop = t.flop_s / physics.efficiency.matmul
    roof = np.maximum(np.maximum(t.hbm_s, t.l2_s), np.maximum(t.smem_s / relief, flop))
    out: Array = roof + matmul_overhead_s(hw, physics.efficiency)
    return out
