"""Single-GPU matmul time through the memory hierarchy (spec §4).

A call multiplies a d1 × d2 weight-like matrix by a d2 × b activation matrix (b: the
nanobatch in tokens). The kernel is tiled by the weight dimensions at every level
(HBM ↔ L2 ↔ SM ↔ registers); weights stay resident at the lowest level that holds
them and their gradients. Time is the roofline maximum over HBM, L2, shared memory
and arithmetic, plus a fixed per-call latency.

Source: Erdil & Schneider-Joseph (2024), arXiv:2411.01137, appendix on matmul
modelling; spec §4. Every function takes numpy arrays and
broadcasts, so the search evaluates all candidate shards at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.records.hardware import (
    PROCESSING_BLOCKS_PER_SM,
    HardwareSpec,
    effective_flop_per_s,
    row_hbm_bytes_per_s,
    smem_bandwidth_bytes_per_s,
    useful_l2_bytes,
    useful_register_bytes,
)
from pipeline.model.records.results import MatmulBound

Array = NDArray[np.float64]
WORD_BYTES = 2.0
"""16-bit words (spec §0)."""
TENSOR_CORE_WIDTH = 8.0
"""Arithmetic is padded to 8-wide chunks in each dimension (spec §4)."""


def tile_counts(m: Array, n: Array, capacity_bytes: float) -> tuple[Array, Array]:
    """Real-valued (rows, cols) tile counts of an m × n matrix in tiles of capacity c (spec §4).

    k = ⌈2mn/c⌉ tiles of q = mn/k words; t_m = max(min(m, √q), q/n), t_n = q/t_m;
    rows = m/t_m and cols = n/t_n, not rounded.
    """
    k = np.ceil(2.0 * m * n / capacity_bytes)
    q = m * n / k
    t_m = np.maximum(np.minimum(m, np.sqrt(q)), q / n)
    t_n = q / t_m
    return m / t_m, n / t_n


@dataclass(frozen=True, slots=True)
class Traffic:
    """Bytes moved across one memory boundary: between levels (x) and over the SM network (y)."""

    x_bytes: Array
    y_bytes: Array


def boundary_traffic_bytes(
    d1: Array,
    d2: Array,
    b: Array,
    wg: NDArray[np.bool_],
    capacity_bytes: float,
    units: int,
    distributed: bool,
) -> Traffic:
    """Traffic across a boundary with `units` caches of `capacity_bytes` each (spec §4, traffic()).

    Weight bytes load once unless weights and gradients fit below the boundary; input
    activations stream once per tile row; outputs once per tile column, accumulating
    partial sums (store every pass, load all but the first) unless this is a weight
    gradient. With distributed memory (DSMEM), small tiles multicast inputs and
    reduce-scatter outputs over the SM network instead.
    """
    weight = 2.0 * d1 * d2
    a_out = 2.0 * d1 * b
    a_in = 2.0 * d2 * b
    zeros = np.zeros(np.broadcast(d1, d2, b, wg).shape)
    resident = 2.0 * weight <= capacity_bytes * units
    x = np.where(resident, 0.0, np.where(wg, 2.0 * weight, weight))
    if not distributed:  # one small tile each way: nothing crosses the SM network, y = 0
        big_r, big_c = tile_counts(d1, d2, capacity_bytes)
        x = x + big_r * a_in
        x_wg = x + big_c * a_out
        x_fwd = x + (2.0 * big_c - 1.0) * a_out
        return Traffic(np.where(wg, x_wg, x_fwd), zeros)
    big_r, big_c = tile_counts(d1, d2, capacity_bytes * units)
    small_r, small_c = tile_counts(d1, d2, capacity_bytes)
    y = zeros
    x = x + big_r * a_in
    y = y + np.where(small_r > 1.0, small_r * a_in, 0.0)
    x_wg = x + big_c * a_out
    y_wg = y + np.where(small_c > 1.0, small_c * a_out, 0.0)
    y_fwd = y + 2.0 * (small_c - 1.0) * a_out
    x_fwd = x + (2.0 * big_c - 1.0) * a_out
    return Traffic(np.where(wg, x_wg, x_fwd), np.where(wg, y_wg, y_fwd))


@dataclass(frozen=True, slots=True)
class MatmulTerms:
    """Roofline terms of one matmul call, in seconds, before the fixed latency (spec §4)."""

    hbm_s: Array
    l2_s: Array
    smem_s: Array
    flop_s: Array


def matmul_flop(d1: Array, d2: Array, b: Array) -> Array:
    """FLOP = 2 · ⌈d1/8⌉ · ⌈d2/8⌉ · ⌈b/8⌉ · 512, padded to tensor-core chunks (spec §4)."""
    w = TENSOR_CORE_WIDTH
    return 2.0 * np.ceil(d1 / w) * np.ceil(d2 / w) * np.ceil(b / w) * w**3


@dataclass(frozen=True, slots=True)
class OnChipTraffic:
    """What matmul calls move below the L2 and compute, which reads of the GPU only its
    `on_chip_key` (no rate, no L2 or HBM size): the moving frontier's GPUs of every year,
    which scale the rates and the L2, share it (`search.layouts.shard_times_s`)."""

    l2_x_bytes: Array
    """Bytes between the L2 and the SMs' shared memories (the L2 boundary's x)."""
    smem_bytes: Array
    """Bytes through shared memory: the L2 boundary's x and y, then the register boundary's x,
    summed in that order."""
    flop: Array
    """`matmul_flop` of each call."""


def on_chip_key(hw: HardwareSpec) -> tuple[float, int, bool]:
    """All `on_chip_traffic` reads of the GPU: registers per processing block, SMs, DSMEM."""
    return (hw.register_bytes_per_block, hw.sms, hw.dsmem)


def on_chip_traffic(
    hw: HardwareSpec, d1: Array, d2: Array, b: Array, wg: NDArray[np.bool_]
) -> OnChipTraffic:
    """The L2 and register boundaries' traffic and the FLOP of matmul calls (spec §4, the two
    inner boundaries of `matmul_terms_s`)."""
    reg_u = useful_register_bytes(hw)
    sm_u = PROCESSING_BLOCKS_PER_SM * reg_u
    l2 = boundary_traffic_bytes(d1, d2, b, wg, sm_u, hw.sms, hw.dsmem)
    reg = boundary_traffic_bytes(d1, d2, b, wg, reg_u, PROCESSING_BLOCKS_PER_SM * hw.sms, False)
    return OnChipTraffic(
        l2_x_bytes=l2.x_bytes,
        smem_bytes=l2.x_bytes + l2.y_bytes + reg.x_bytes,
        flop=matmul_flop(d1, d2, b),
    )


def matmul_terms_s(
    hw: HardwareSpec,
    d1: Array,
    d2: Array,
    b: Array,
    wg: NDArray[np.bool_],
    on_chip: OnChipTraffic | None = None,
) -> MatmulTerms:
    """HBM, L2, shared-memory and arithmetic times of a matmul call (spec §4, three boundaries).

    `on_chip`, given, is `on_chip_traffic` of these calls on a GPU of the same `on_chip_key`
    (computed here otherwise): the same values, so the same times bit for bit.
    """
    chip = on_chip_traffic(hw, d1, d2, b, wg) if on_chip is None else on_chip
    return traffic_terms_s(hw, hbm_traffic_bytes(hw, d1, d2, b, wg), chip)


def hbm_traffic_bytes(
    hw: HardwareSpec, d1: Array, d2: Array, b: Array, wg: NDArray[np.bool_]
) -> Array:
    """Bytes matmul calls move across the HBM boundary (spec §4, the outer boundary of
    `matmul_terms_s`): they read of the GPU its L2 and register sizes, no rate."""
    sm_u = PROCESSING_BLOCKS_PER_SM * useful_register_bytes(hw)
    return boundary_traffic_bytes(d1, d2, b, wg, max(useful_l2_bytes(hw), sm_u), 1, False).x_bytes


def traffic_terms_s(
    hw: HardwareSpec, hbm_x_bytes: Array, chip: OnChipTraffic, hbm: Array | None = None
) -> MatmulTerms:
    """`matmul_terms_s` of calls whose HBM bytes (`hbm_traffic_bytes`) and on-chip traffic
    (`on_chip_traffic`) are known: each over the GPU's rate (spec §4). `hbm`: the HBM bandwidth
    of each row (the last axis) when the rows are timed on GPUs that differ only in it
    (`records.hardware.row_hbm_bytes_per_s`); None: `hw`'s."""
    return MatmulTerms(
        hbm_s=hbm_x_bytes / row_hbm_bytes_per_s(hw, hbm),
        l2_s=(hbm_x_bytes + chip.l2_x_bytes) / hw.l2_bandwidth_bytes_per_s,
        smem_s=chip.smem_bytes / smem_bandwidth_bytes_per_s(hw),
        flop_s=chip.flop / effective_flop_per_s(hw),
    )


def roofline_s(t: MatmulTerms) -> Array:
    """A call's roofline time before its fixed latency: max(HBM, L2, shared-memory, FLOP
    time) (spec §4)."""
    out: Array = np.maximum(np.maximum(t.hbm_s, t.l2_s), np.maximum(t.smem_s, t.flop_s))
    return out


def matmul_time_s(
    hw: HardwareSpec,
    d1: Array,
    d2: Array,
    b: Array,
    wg: NDArray[np.bool_],
    on_chip: OnChipTraffic | None = None,
) -> Array:
    """t_mm = max(HBM, L2, shared-memory, FLOP time) + matmul latency (spec §4); `on_chip` as
    `matmul_terms_s` takes it."""
    return roofline_s(matmul_terms_s(hw, d1, d2, b, wg, on_chip)) + hw.matmul_latency_s


def slowest_call_bound(t: MatmulTerms, latency_s: float) -> MatmulBound:
    """The resource bounding the slowest of some matmul calls whose terms are `t` (any shape,
    one entry a call) and whose fixed time per call is `latency_s` (docs/model.md §5, R.2):
    the call with the largest roofline (`roofline_s`; ties: the first), `latency` when
    `latency_s` exceeds that roofline, else the largest of its terms (`flop`, `hbm`, `l2`,
    `smem`, ties to the first in that order). A fixed latency adds the same to every call, so
    the slowest call by roofline is the slowest by time."""
    parts = np.broadcast_arrays(t.flop_s, t.hbm_s, t.l2_s, t.smem_s)
    terms = np.stack([np.ravel(a) for a in parts])
    slowest = int(np.argmax(terms.max(axis=0)))
    if latency_s > float(terms[:, slowest].max()):
        return MatmulBound.LATENCY
    bounds = (MatmulBound.FLOP, MatmulBound.HBM, MatmulBound.L2, MatmulBound.SMEM)
    return bounds[int(np.argmax(terms[:, slowest]))]
