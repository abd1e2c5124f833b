"""What a GPU generation changes in the matmul roofline beyond the paper's terms: Blackwell's
tensor memory (docs/model.md, "Realistic physics")."""

from __future__ import annotations

from pipeline.model.records.hardware import HardwareSpec

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
