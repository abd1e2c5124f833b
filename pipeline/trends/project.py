"""Projected hardware: a base GPU moved to another year along each metric's own trend. Pure.

Each projected metric m of `PROJECTED_METRICS` is extrapolated from the base GPU's value at its
release year y_b to year y: m(y) = m_base · g_m^(y − y_b), g_m its growth per year (the catalog
trend or an override). The HardwareSpec fields follow (docs/trends.md):

- dense FLOP/s: the clock carries the factor; SMs and FLOP per clock per thread stay the base's,
  so shared-memory bandwidth (∝ SMs · clock, docs/model.md §4) grows with FLOP/s, and the L2
  bandwidth is scaled by the same factor (as the Blackwell presets scale H100's by SMs · clock);
- HBM bandwidth and capacity, L2 size: their own trends (the driver's count of the capacity,
  `hbm_device_ratio`, staying the base's ratio to it);
- network level 0 bandwidth: the intra-node trend; every higher level: the inter-node trend;
- network latency, every level: the latency trend (flat on the shipped catalog);
- NVLink domain size (level 0): the trend, rounded down to a power of two so that clusters of
  S · 2^i GPUs still tile (spec §11), never below 1;
- u_eff (and the FP8 ratio, `fp8_u_eff_ratio`, and the 2025 software's GEMM speedup,
  `matmul_speedup_2025`: the base's architecture, so its kernels), registers, distributed
  shared memory and the per-matmul latency stay the base's (no catalog metric holds them).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from pipeline.model.records.hardware import HardwareSpec

PROJECTED_METRICS = (
    "dense_16bit_flop_per_s",
    "hbm_bandwidth_bytes_per_s",
    "hbm_bytes",
    "l2_bytes",
    "intra_node_bandwidth_bytes_per_s",
    "intra_node_gpus",
    "inter_node_bandwidth_bytes_per_s",
    "network_latency_s",
)
"""The catalog metrics a projection moves; each needs a growth factor."""


def metric_factor(growth_per_year: float, years: float) -> float:
    """g^Δy: how much a metric growing g per year changes over Δy years (Δy may be negative)."""
    return float(growth_per_year**years)


def power_of_two_floor(x: float) -> int:
    """The largest power of two ≤ x, and at least 1."""
    return 1 if x < 2.0 else 2 ** math.floor(math.log2(x) + 1e-12)


def project_hardware(
    base: HardwareSpec,
    base_year: float,
    year: float,
    growth_per_year: Mapping[str, float],
    name: str,
) -> HardwareSpec:
    """`base` (released in fractional `base_year`) as it would be in `year`, named `name`.

    `growth_per_year` holds a positive factor for every metric of `PROJECTED_METRICS`; a
    KeyError names the first one missing. The base must have at least two network levels.
    """
    dy = year - base_year
    f = {m: metric_factor(growth_per_year[m], dy) for m in PROJECTED_METRICS}
    if not base.level_sizes:
        raise ValueError("a projection needs a base with an intra-node network level")
    flop = f["dense_16bit_flop_per_s"]
    bandwidths = tuple(
        b
        * (
            f["intra_node_bandwidth_bytes_per_s"]
            if i == 0
            else f["inter_node_bandwidth_bytes_per_s"]
        )
        for i, b in enumerate(base.net_bandwidth_bytes_per_s)
    )
    domain = power_of_two_floor(base.level_sizes[0] * f["intra_node_gpus"])
    return replace(
        base,
        name=name,
        max_clock_hz=base.max_clock_hz * flop,
        fp8_flop_per_s=None if base.fp8_flop_per_s is None else base.fp8_flop_per_s * flop,
        l2_bandwidth_bytes_per_s=base.l2_bandwidth_bytes_per_s * flop,
        hbm_bandwidth_bytes_per_s=base.hbm_bandwidth_bytes_per_s * f["hbm_bandwidth_bytes_per_s"],
        hbm_bytes=base.hbm_bytes * f["hbm_bytes"],
        l2_bytes=base.l2_bytes * f["l2_bytes"],
        net_bandwidth_bytes_per_s=bandwidths,
        net_latency_s=tuple(t * f["network_latency_s"] for t in base.net_latency_s),
        level_sizes=(domain, *base.level_sizes[1:]),
    )
