"""What the model returns: a layout, its step-time breakdown, one point, one series.

Plain frozen records with SI units in the names; `pipeline.io` flattens them into rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pipeline.model.records.run import RunCost
from pipeline.model.records.scaling import ModelShape


class InfeasibleReason(StrEnum):
    """Why a model size has no result (stored as these strings in the `points` table)."""

    NO_CLUSTER = "no_cluster_within_duration"
    """No cluster of sparsity · 2^i GPUs, i ≤ `max_cluster_doublings` (59 by default), trains the
    model within the duration (spec §11)."""
    EXCEEDS_CLUSTER_CAP = "exceeds_cluster_cap"
    """Training the model within the duration takes more GPUs than the largest cluster the
    search may try, S · 2^`max_cluster_doublings`, even at the physics' peak matmul rate (the
    walk's compute floor, docs/model.md §9.5): a lowered cap, not the physics, makes it
    infeasible."""
    NO_LAYOUT = "no_valid_layout"
    """No layout passes the divisibility rules and the memory check at any cluster size (spec §10.9)."""
    EXCEEDS_DURATION = "training_time_exceeds_duration"
    """A fixed layout evaluated as is does not finish within the duration."""
    EXCEEDS_MEMORY = "exceeds_memory"
    """A fixed layout's weights and optimizer state do not fit in HBM (spec §9)."""
    LAYOUT_DOES_NOT_DIVIDE = "layout_does_not_divide"
    """A fixed layout does not fit this model size: a degree does not divide its dimension,
    the schedule has too few microbatches, or the nanobatch is empty (spec §5.1, §7, §10)."""
    BATCH_TOO_LARGE = "batch_too_large"
    """The batch law gives more than 2^53 tokens per batch, beyond exact integer arithmetic."""
    EXCEEDS_POWER = "exceeds_power_budget"
    """The smallest cluster that trains the model within the duration draws more than the
    site's power budget (`constraints.max_power_mw`, `pipeline.model.power`)."""
    EXCEEDS_GPU_MEMORY = "exceeds_gpu_memory"
    """Weights, gradients, optimizer state and activations do not fit in one GPU's HBM
    (physics.gpu_memory; docs/model.md, "Realistic physics")."""


class Bottleneck(StrEnum):
    """The largest term of the step time of the chosen layout."""

    COMPUTE = "compute"
    """Matmul time through the memory hierarchy (FLOP, HBM/L2/SMEM traffic, matmul latency)."""
    TP_COMM = "tp_comm"
    PP_EP_COMM = "pp_ep_comm"
    DP_COMM = "dp_comm"
    LATENCY = "latency"
    BUBBLE = "bubble"


class MatmulBound(StrEnum):
    """The resource that bounds the layout's slowest matmul call (spec §4)."""

    FLOP = "flop"
    HBM = "hbm"
    L2 = "l2"
    SMEM = "smem"
    LATENCY = "latency"
    """The fixed per-call overhead exceeds the roofline time."""


@dataclass(frozen=True, slots=True)
class Layout:
    """A parallel layout: per-level factors (level 0 first) of each degree, and the schedule.
    The GPUs are the product of every degree: n_gpu = N_DP · N_CP · N_TPm · N_TPff · N_PP · N_EP."""

    n_gpu: int
    dp: tuple[int, ...]
    """N_DP: data-parallel ranks, context ranks not included; with experts, the ranks holding
    the same expert shard (a run's d/e, expert parallelism taken out of its d)."""
    tp_model: tuple[int, ...]
    tp_ff: tuple[int, ...]
    pp: tuple[int, ...]
    ep: tuple[int, ...]
    microbatches: int
    zero_bubble: bool
    pp_interleave: int
    """v: virtual stages per pipeline rank (1 for zero-bubble and for N_PP = 1)."""
    nanobatch_tokens: int
    """b = ⌊B_tok / (N_DP · m · S)⌋ (spec §5.1); with context parallelism the tokens of one
    context rank, b = ⌊B_tok / (N_DP · N_CP · m · S)⌋."""
    cp: tuple[int, ...]
    """N_CP: context-parallel ranks splitting each sequence (docs/model.md R.7), 1 at every
    level where the layout has none (the paper's layouts, fixed layouts)."""


@dataclass(frozen=True, slots=True)
class StepCost:
    """One optimizer step of a layout, per-step seconds unless named otherwise (spec §6-§8)."""

    t_compute_s: float
    """T_mm: matmul time per step on one GPU."""
    t_tp_comm_s: float
    """T_TP^bw: tensor-parallel all-reduce bandwidth time."""
    t_pp_ep_comm_s: float
    """T_PPEP^bw: pipeline and expert point-to-point bandwidth time."""
    t_dp_comm_s: float
    """T_DP^bw: data-parallel gradient all-reduce bandwidth time."""
    t_latency_s: float
    """T_TP^lat + T_PPEP^lat + T_DP^lat, whether paid or not (Q1)."""
    t_latency_paid_s: float
    """The part of the latency the step actually pays."""
    bubble_fraction: float
    step_time_s: float
    training_time_s: float
    utilization: float
    """Model FLOP per second over peak FLOP per second at maximum clock: the paper's A / t_step
    (at most u_eff, spec §8), or under realistic physics the MFU on the FLOP the row counts
    (`ModelCounts`, docs/model.md R.7.1)."""
    bottleneck: Bottleneck
    matmul_bound: MatmulBound | None
    """None for a concrete run: its matmuls come in many shapes and none is singled out."""


@dataclass(frozen=True, slots=True)
class ModelCounts:
    """What a row counts of the model it timed when that is not the paper's N, D and C:
    parameters (attention, MLP and the embedding, docs/model.md R.1), training tokens and
    model FLOP of the whole training (no recomputation)."""

    n_params: float
    n_tokens: float
    training_flop: float


@dataclass(frozen=True, slots=True)
class GridCost:
    """What a realistic grid row reports of the layout the search chose beside its step cost
    (a run row has the same quantities in its `RunCost`), per GPU of the cluster."""

    mfu: float
    """Model FLOP per step (`ModelCounts`, no recomputation) / (peak FLOP/s · N_GPU · t_step)."""
    hfu: float
    """Hardware FLOP per step (model FLOP plus the chosen mode's recomputed forward) over the same."""
    model_flop_per_s_per_gpu: float
    hardware_flop_per_s_per_gpu: float
    memory_per_gpu_bytes: float
    """R.4's bytes on one GPU (first pipeline stage) under the chosen recomputation mode."""
    fits_memory: bool
    """memory_per_gpu_bytes ≤ the GPU's HBM (checked only with the per-GPU memory check)."""


@dataclass(frozen=True, slots=True)
class PointResult:
    """One model size of a series: feasible with a layout and cost, or infeasible with a reason."""

    shape: ModelShape
    feasible: bool
    infeasible_reason: InfeasibleReason | None
    layout: Layout | None
    cost: StepCost | None
    run_name: str | None = None
    """The run's name when the point is one concrete run (conf/run/), else None."""
    run_cost: RunCost | None = None
    """The run's realistic breakdown (throughput, memory, time by operator class), else None."""
    recompute: str | None = None
    """The activation recomputation mode of the run, or of the grid layout the realistic
    search chose; None under paper physics."""
    physics: str = "paper"
    """The name of the physics the point was evaluated with (conf/physics/)."""
    power_w: float | None = None
    """The cluster's power draw (`power.cluster_power_w`); None without a layout or a TDP."""
    energy_j: float | None = None
    """The run's energy, power_w · training_time_s; None where power_w is None."""
    counts: ModelCounts | None = None
    """The counts of the model the point timed; None: the paper's counts of `shape`."""
    grid_cost: GridCost | None = None
    """MFU, HFU and memory per GPU of a realistic grid row's layout; None on run rows (their
    `run_cost` has them), under paper physics and without a layout."""
    q1_latency_hidden_s: float | None = None
    """Latency per step quirk Q1 drops from the row's zero-bubble layout: its step with the
    quirk off minus its step (`step.evaluate.q1_latency_hidden_s`); 0 for a 1F1B layout or
    with Q1 off; None without a cost or off the paper's step path (docs/model.md §11)."""

    @property
    def counted_flop(self) -> float:
        """The model FLOP of the training the point timed: `counts` when set, else the
        paper's C of its shape (spec §1). Series limits are read on it."""
        return self.shape.training_flop if self.counts is None else self.counts.training_flop


@dataclass(frozen=True, slots=True)
class SeriesLimits:
    """Derived metrics of one series (spec §11): None where the series does not reach them.
    C of a point is its `PointResult.counted_flop`: the paper's C under paper physics, the
    FLOP of the model it timed otherwise."""

    linear_end_flop: float | None
    """C of the first point at or below 0.8 · u_eff, or, measured from the series' peak
    utilization (see `linear_end_basis`), of the first point after it from which every later
    point stays at or below 0.8 of it; None if no recorded point qualifies, or for a concrete
    run (`end_reason` `run`: one point, no regime to end)."""
    last_feasible_flop: float | None
    first_infeasible_flop: float | None
    """C of the first size no cluster trains within the duration (or budget); None if every
    recorded size is feasible."""
    max_utilization: float | None
    wall_flop: float | None = None
    """The wall: C of the first size that is infeasible or runs below the utilization floor
    (`limits.series_end`); None only when the series reaches the end of its grid."""
    end_reason: str | None = None
    """How the series ended, a `limits.SeriesEnd` value; None on rows of an older schema."""
    wall_reason: str | None = None
    """Why the wall's size is infeasible (an `InfeasibleReason` value) when the series ended
    at an infeasible size; None otherwise."""
    linear_end_basis: str | None = None
    """The utilization `linear_end_flop` is measured against, a `limits.LinearEndBasis`
    value; None when the series has no feasible point, for a concrete run (nothing measured),
    or on rows of an older schema."""
