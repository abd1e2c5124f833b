"""Step time, training time and utilization of many layouts at once (spec §7-§9).

A layout batch holds one row per (layout, network split). The pipeline schedule sets
the bubble; TP and PP/EP bandwidth overlap with compute, DP does not (the published
policy); network latency acts as extra bubble for 1F1B, charged once per step.

Source: Erdil & Schneider-Joseph (2024), arXiv:2411.01137; spec §7-§9, order spec §15.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.network.collectives import (
    Network,
)
from pipeline.model.network.times import CommTimes, dp_times_s, pp_ep_times_s, tp_times_s
from pipeline.model.records.hardware import HardwareSpec, peak_flop_per_s
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.scaling import ModelShape
from pipeline.model.step.schedule import bubble_fraction

Array = NDArray[np.float64]
RECOMPUTE_COMPUTE_FACTOR = 4.0 / 3.0
RECOMPUTE_COMM_FACTOR = 1.5


@dataclass(frozen=True, slots=True)
class LayoutBatch:
    """Rows of layouts: per-level factors (n, K) per degree, and per-row schedule data."""

    dp: Array
    tp_model: Array
    tp_ff: Array
    pp: Array
    ep: Array
    microbatches: Array
    zero_bubble: NDArray[np.bool_]
    interleave: Array
    t_layer_s: Array
    """Matmul time of one layer, one expert, one microbatch (spec §7, order spec §15.1)."""
    compute_repeats: Array
    """Exact integer (L/N_PP)·(S/N_EP)·m."""
    t_step_extra_s: Array | None = None
    """Per-step time outside the pipeline (the optimizer step under realistic physics); None
    in the paper's model."""

    @classmethod
    def from_factors(
        cls,
        factors: NDArray[np.int64] | Array,
        microbatches: Array,
        zero_bubble: NDArray[np.bool_],
        interleave: Array,
        t_layer_s: Array,
        compute_repeats: Array,
        t_step_extra_s: Array | None = None,
    ) -> LayoutBatch:
        """Rows from per-level factors of shape (n, K, 5) in degree order (DP, TPm, TPff, PP, EP)."""
        f = np.asarray(factors, dtype=np.float64)
        return cls(
            f[:, :, 0],
            f[:, :, 1],
            f[:, :, 2],
            f[:, :, 3],
            f[:, :, 4],
            microbatches,
            zero_bubble,
            interleave,
            t_layer_s,
            compute_repeats,
            t_step_extra_s,
        )


@dataclass(frozen=True, slots=True)
class StepArrays:
    """Per-row step-time parts (s) and derived totals (spec §7-§8)."""

    t_compute_s: Array
    t_tp_bw_s: Array
    t_pp_ep_bw_s: Array
    t_dp_bw_s: Array
    t_tp_lat_s: Array
    t_pp_ep_lat_s: Array
    t_dp_lat_s: Array
    bubble_fraction: Array
    t_latency_paid_s: Array
    t_step_s: Array
    t_train_s: Array


def comm_times_s(shape: ModelShape, n_gpu: int, rows: LayoutBatch, net: Network) -> CommTimes:
    """Every row's TP, PP/EP and DP bandwidth and latency times (spec §6.2)."""
    t_tp, t_tp_lat = tp_times_s(shape, n_gpu, rows.tp_model, rows.tp_ff, net)
    t_ppep, t_ppep_lat = pp_ep_times_s(shape, n_gpu, rows.pp, rows.ep, rows.interleave, net)
    t_dp, t_dp_lat = dp_times_s(shape, n_gpu, rows.dp, net)
    return CommTimes(t_tp, t_tp_lat, t_ppep, t_ppep_lat, t_dp, t_dp_lat)


def step_arrays(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    rows: LayoutBatch,
    net: Network,
    opts: SearchOptions,
) -> StepArrays:
    """Step time and training time of every row (spec §6-§8), in the original's evaluation order."""
    return step_from_comm(shape, rows, comm_times_s(shape, n_gpu, rows, net), opts)


def compute_and_bubble(rows: LayoutBatch, opts: SearchOptions) -> tuple[Array, Array]:
    """(t_compute, f) of rows: matmul time on the critical path (×4/3 with recomputation) and
    the bubble fraction at the rows' N_PP (spec §7). They depend on the layout, not the network."""
    t_mm = critical_matmul_s(rows.compute_repeats, rows.t_layer_s, opts)
    pp_total = np.prod(rows.pp, axis=1)
    return t_mm, bubble_fraction(pp_total, rows.microbatches, rows.interleave, rows.zero_bubble)


def critical_matmul_s(compute_repeats: Array, t_layer_s: Array, opts: SearchOptions) -> Array:
    """t_compute: the critical path's matmul time per step, repeats · t_layer, ×4/3 with
    activation recomputation (the forward run again, spec §7)."""
    t_mm = compute_repeats * t_layer_s
    if opts.activation_recompute:
        t_mm = t_mm * RECOMPUTE_COMPUTE_FACTOR
    return t_mm


def step_from_comm(
    shape: ModelShape, rows: LayoutBatch, comm: CommTimes, opts: SearchOptions
) -> StepArrays:
    """Step time and training time of rows from their network times (spec §7-§8).

    Non-decreasing in every network time (sums, maxima and positive factors only, each
    rounded monotonically): the search bounds a layout from below with its smallest times.
    Only the totals of the per-level factors in `rows` are read (N_PP for the bubble).
    """
    t_mm, f = compute_and_bubble(rows, opts)
    return step_from_parts(shape, t_mm, f, rows.zero_bubble, rows.t_step_extra_s, comm, opts)


def step_from_parts(
    shape: ModelShape,
    t_mm: Array,
    f: Array,
    zero_bubble: NDArray[np.bool_],
    t_step_extra_s: Array | None,
    comm: CommTimes,
    opts: SearchOptions,
) -> StepArrays:
    """`step_from_comm` from the rows' `compute_and_bubble` (spec §7-§8, order spec §15)."""
    b_tok = float(shape.batch_tokens)
    t_tp, t_tp_lat = comm.t_tp_bw_s, comm.t_tp_lat_s
    t_ppep, t_ppep_lat = comm.t_pp_ep_bw_s, comm.t_pp_ep_lat_s
    t_dp, t_dp_lat = comm.t_dp_bw_s, comm.t_dp_lat_s
    if opts.activation_recompute:
        t_tp, t_tp_lat = t_tp * RECOMPUTE_COMM_FACTOR, t_tp_lat * RECOMPUTE_COMM_FACTOR
        t_ppep, t_ppep_lat = t_ppep * RECOMPUTE_COMM_FACTOR, t_ppep_lat * RECOMPUTE_COMM_FACTOR
    o_pp, o_tp = float(opts.overlap_pp_ep), float(opts.overlap_tp)
    overlapped = o_pp * t_ppep + o_tp * t_tp
    exposed = (1.0 - o_pp) * t_ppep + (1.0 - o_tp) * t_tp
    busy = np.maximum(t_mm, overlapped) + exposed
    latency = t_tp_lat + t_ppep_lat
    if opts.quirks.zb_hides_latency_correctly:
        zb_pipe = np.maximum(busy, latency)  # Q1 off: latency hidden behind compute, not dropped
        zb_paid = np.maximum(latency - busy, 0.0)
    else:
        zb_pipe = busy  # Q1: the max with latency is taken too late, so it drops out
        zb_paid = np.zeros_like(busy)
    t_pipe = np.where(zero_bubble, zb_pipe, busy / (1.0 - f) + latency)
    if opts.overlap_dp:
        t_step = np.maximum(t_pipe, t_dp) + t_dp_lat
    else:
        t_step = (t_pipe + t_dp) + t_dp_lat
    if t_step_extra_s is not None:
        t_step = t_step + t_step_extra_s
    paid = np.where(zero_bubble, zb_paid, latency) + t_dp_lat
    steps = shape.n_tokens / b_tok
    return StepArrays(
        t_compute_s=t_mm,
        t_tp_bw_s=t_tp,
        t_pp_ep_bw_s=t_ppep,
        t_dp_bw_s=t_dp,
        t_tp_lat_s=t_tp_lat,
        t_pp_ep_lat_s=t_ppep_lat,
        t_dp_lat_s=t_dp_lat,
        bubble_fraction=f,
        t_latency_paid_s=paid,
        t_step_s=t_step,
        t_train_s=steps * t_step,
    )


def step_floor_s(t_mm: Array, f: Array, zero_bubble: NDArray[np.bool_]) -> Array:
    """A lower bound on each row's step time from compute alone: t_compute/(1 − f) for 1F1B,
    t_compute for zero-bubble. `step_from_parts` only adds non-negative times, takes maxima
    with it and divides it by 1 − f ≤ 1, each rounded monotonically, so no row's step is
    shorter whatever its network (spec §7)."""
    return np.where(zero_bubble, t_mm, t_mm / (1.0 - f))


def utilization(hw: HardwareSpec, shape: ModelShape, n_gpu: int, t_step_s: Array) -> Array:
    """Model FLOP/s over peak FLOP/s: A / t_step, A = (((6·(N/S))·B_seq)·seq_len)/(F_peak·N_GPU) (spec §8)."""
    active = shape.n_params / shape.sparsity
    work = ((6.0 * active) * shape.batch_seqs) * shape.seq_len
    return work / (peak_flop_per_s(hw) * n_gpu) / t_step_s
