"""A GPU and its network as one frozen record in SI units, and the rates derived from it.

Source: Erdil & Schneider-Joseph (2024), arXiv:2411.01137; spec §3.
The presets themselves live in `conf/hardware/*.yaml` (one source of truth) and reach
this module through `pipeline.schema`, which converts their human units once.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.caches import cached
from pipeline.model.records.kept_hash import KeepsHash, first_equal, keeps_hash

Array = NDArray[np.float64]

THREADS_PER_SM = 128
"""CUDA threads per streaming multiprocessor (spec §3.1: threads = 128 · sms)."""

SMEM_BANKS = 32
SMEM_BANK_BYTES = 4
PROCESSING_BLOCKS_PER_SM = 4
USEFUL_FRACTION = 0.75
"""Share of registers and of L2 a kernel can use for tiles (spec §3.1)."""


@keeps_hash
@dataclass(frozen=True, slots=True)
class HardwareSpec(KeepsHash):
    """One GPU type and its network hierarchy, every field in SI units (spec §3.1).

    Network lists are indexed by level, 0 innermost. ``level_sizes`` holds the group
    size of every level except the unbounded top one, so it is one shorter than the
    bandwidth and latency tuples. Bandwidths are bidirectional per GPU and may be
    ``inf`` (the "infinite network" what-if).
    """

    name: str
    flop_per_clock_per_thread: float
    sms: int
    max_clock_hz: float
    u_eff: float
    hbm_bandwidth_bytes_per_s: float
    l2_bandwidth_bytes_per_s: float
    l2_bytes: float
    register_bytes_per_block: float
    dsmem: bool
    hbm_bytes: float
    """HBM capacity: the datasheet's round gigabytes as 10⁹ bytes, as the paper reads them; on
    `search.search.physics_hardware`'s copy, the capacity its physics checks memory against
    (`memory.capacity.memory_capacity_bytes`, the ratio then cleared)."""
    matmul_latency_s: float
    net_bandwidth_bytes_per_s: tuple[float, ...]
    net_latency_s: tuple[float, ...]
    level_sizes: tuple[int, ...]
    nics_per_node: int | None = None
    """Network cards of one level-0 domain (a node) that reach the levels above it, one per GPU
    in DGX-class nodes; None: not given (the levels above are not reached through NICs NCCL
    can stripe over). Only `physics.nic_striping` reads it (`network.groups.Levels`)."""
    tdp_w: float | None = None
    """Board power (thermal design power) in W, for `power.cluster_power_w`; None if unknown.
    No time the model computes depends on it."""
    fp8_flop_per_s: float | None = None
    """Dense FP8 tensor FLOP/s (the datasheet's, in the accelerator catalog), read only under
    `physics.precision: fp8`; None for a GPU without FP8 tensor cores (before Hopper)."""
    fp8_u_eff_ratio: float | None = None
    """The fraction of its FP8 peak the GPU's FP8 matmuls sustain over the fraction of the
    16-bit peak its 16-bit ones do (FP8 matmuls then reach u_eff · ratio of the FP8 peak);
    None: 1 (the same fraction). Read only under `physics.precision: fp8`
    (`compute.efficiency.precision_speedup`); None without an FP8 peak."""
    matmul_speedup_2025: float | None = None
    """How much faster the GPU's weight GEMMs and attention core run under NVIDIA's 2025
    software (NeMo 25.x containers) than at `efficiency.matmul`, the 2021-2024 stacks' fit: the
    factor `compute.efficiency.matmul_efficiency` applies under `physics.stack: 2025`; None: not
    fitted for this GPU, which then runs at `efficiency.matmul` under either stack
    (docs/model.md R.9)."""
    hbm_device_ratio: float | None = None
    """The GPU memory the NVIDIA driver reports (NVML's memory total) over `hbm_bytes`, the
    datasheet's round gigabytes read as 10⁹ bytes: 1.069 on an "80 GB" H100 (81,559 MiB). Read
    only under `physics.hbm_capacity: device` (`memory.capacity`); None: not given, the memory
    checks then read `hbm_bytes`."""

    @property
    def n_levels(self) -> int:
        """Number of network levels, the unbounded top level included."""
        return len(self.net_bandwidth_bytes_per_s)


@cached(maxsize=256)
def gpu_only(hw: HardwareSpec) -> HardwareSpec:
    """The preset without its name and network: all that per-GPU quantities may read.

    Sweeps over network parameters share one GPU, so what depends on the GPU alone (candidate
    layouts, matmul times) is cached per `gpu_only(hw)`. A network field read by mistake would
    be an empty tuple here and fail loudly rather than return another network's values.
    """
    return first_equal(
        dataclasses.replace(
            hw,
            name="",
            net_bandwidth_bytes_per_s=(),
            net_latency_s=(),
            level_sizes=(),
            nics_per_node=None,
            tdp_w=None,
        )
    )


def peak_flop_per_s(hw: HardwareSpec) -> float:
    """F_peak = (flop/clock/thread · (128 · sms)) · max_clock (spec §3.1, evaluation order spec §15.5)."""
    return (hw.flop_per_clock_per_thread * (THREADS_PER_SM * hw.sms)) * hw.max_clock_hz


def effective_flop_per_s(hw: HardwareSpec) -> float:
    """F_eff = (flop/clock/thread · (128 · sms)) · (max_clock · u_eff): the rate arithmetic runs at."""
    return (hw.flop_per_clock_per_thread * (THREADS_PER_SM * hw.sms)) * (hw.max_clock_hz * hw.u_eff)


def smem_bandwidth_bytes_per_s(hw: HardwareSpec) -> float:
    """BW_smem = ((32 banks · 4 B) · sms) · (max_clock · u_eff), at the effective clock (spec §3.1)."""
    return ((SMEM_BANKS * SMEM_BANK_BYTES) * hw.sms) * (hw.max_clock_hz * hw.u_eff)


def useful_register_bytes(hw: HardwareSpec) -> float:
    """R_u = 0.75 · registers per processing block (spec §3.1)."""
    return USEFUL_FRACTION * hw.register_bytes_per_block


def useful_l2_bytes(hw: HardwareSpec) -> float:
    """L2_u = 0.75 · L2 capacity (spec §3.1)."""
    return USEFUL_FRACTION * hw.l2_bytes


def row_hbm_bytes_per_s(hw: HardwareSpec, hbm: Array | None) -> Array | float:
    """The HBM bandwidth (bytes/s) the rates of a layer's rows read: `hbm`, one per row, when
    given (rows timed together on GPUs that differ only in it, `search.grid`), else `hw`'s.
    Every time divides by it element by element, so a row's time is the same bit for bit
    either way."""
    return hw.hbm_bandwidth_bytes_per_s if hbm is None else hbm
