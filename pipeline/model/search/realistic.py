"""Realistic physics on the grid: every candidate timed as the concrete run of its layout
(docs/model.md R.7), vectorized over candidates, one row each.

A candidate's layer, memory, optimizer step and ring exchange come from its rows in
`search.candidates` (`search.grid`); its collectives and step from `step.assembly.step_parts`,
the one assembly `runs.training_run.run_costs` calls, with the candidate's layout in a run's
terms (dense gradients over the N_DP·N_EP ranks holding the same attention weights, expert
gradients over the N_DP holding the same expert shard, top-1 routing). The ranks follow Megatron-Core's order, N_TPff innermost,
then N_TPm, context (c, inside N_DP), expert and data ranks, then the pipeline
(`network.groups`); the placement is fixed by the totals, so a candidate has no per-level split
to search. The grid's model has no vocabulary (`search.counts.grid_transformer`): no logits,
stages of L/N_PP layers. A grid size's S experts: a GPU's microbatch holds S/N_EP nanobatches
of tokens; it runs the attention once on them and its S/N_EP experts one after another on a
nanobatch each, as a run's E/e experts on k·e/E of its tokens (`search.grid.grid_layer_work`); N_DP·N_EP
ranks hold the same attention weights, N_DP the same expert shard.

The paper's schedule options mean, under realistic physics: `overlap_tp`, Transformer
Engine's TP communication overlap (the collectives past the layer's weight GEMMs are exposed,
`step.pipeline.exposed_tensor_parallel_s`); `overlap_pp_ep`, asynchronous pipeline sends (a
run's `overlap_p2p`; the expert all-to-alls stay on the critical path); `overlap_dp`, the
gradient all-reduce overlapped with the first stage's last backward (a run's `overlap_dp`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.caches import register
from pipeline.model.compute.efficiency import fp8_weights_only
from pipeline.model.memory.gpu_memory import ParamsPerGpu
from pipeline.model.network.groups import Levels
from pipeline.model.network.levels import adjusted_level_sizes, level_factors
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.results import Layout, MatmulBound, StepCost
from pipeline.model.records.scaling import ModelShape
from pipeline.model.records.switches import RECOMPUTE_ORDER, Physics
from pipeline.model.search.candidates import Candidates, RowFrame, rows_ring_s
from pipeline.model.search.enumeration import realistic_layout_rows
from pipeline.model.search.floors import floor_hardware
from pipeline.model.search.grid import (
    GRID_TOP_K,
    grid_kv_width,
    grid_matmul_bound,
    grid_params_per_gpu,
    sequence_parallel_degree,
)
from pipeline.model.search.memo import ByteBoundedMemo, arrays_nbytes, read_only
from pipeline.model.step.assembly import (
    LayerParts,
    Schedule,
    StepComm,
    StepGroups,
    StepParts,
    step_comm,
    step_from_comm,
)
from pipeline.model.step.pipeline import StageLayers, step_bottleneck
from pipeline.model.step.schedule import interleave_degrees

Array = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class RealisticSteps:
    """Per-candidate step parts (s per step, on one GPU) as a run reports them."""

    t_step_s: Array
    t_train_s: Array
    """Steps (D / B_tok) times the step."""
    t_compute_s: Array
    """Layers' compute on the slowest stage: m · L/N_PP layers."""
    t_tp_comm_s: Array
    """Tensor-parallel collectives on the critical path (past the GEMMs with `overlap_tp`)."""
    t_pp_ep_comm_s: Array
    """Exposed pipeline sends plus the expert all-to-alls."""
    t_dp_comm_s: Array
    """The exposed gradient all-reduce."""
    bubble_fraction: Array
    usable: NDArray[np.bool_]
    """False where a rule of the physics rejects the candidate (`tp_in_domain`)."""
    parts: StepParts
    """The step and its parts as the assembly gives them (what a run reports, `step.assembly`)."""


def realistic_steps(
    hw: HardwareSpec,
    physics: Physics,
    shape: ModelShape,
    n_gpu: int,
    c: Candidates,
    opts: SearchOptions,
    comm: StepComm | None = None,
    tokens_schedule: tuple[Array, Schedule] | None = None,
) -> RealisticSteps:
    """Every candidate's step on the preset's network (its bandwidths already at the
    physics' achieved fraction, `search.physics_hardware`): its layer calls, groups and
    schedule in a run's terms, through the one assembly a run goes through
    (`step.assembly.step_parts`). `comm`: the candidates' collectives when known
    (`realistic_comm`), else computed here (`step.assembly.step_comm`); `tokens_schedule`:
    their tokens and schedule when known (`frame_tokens_and_schedule`), else computed here."""
    if c.recompute is None or c.t_gemm_s is None or c.t_backward_s is None or c.t_forward_s is None:
        raise ValueError("candidates without realistic layer parts: not a realistic search")
    if tokens_schedule is None:
        tokens_schedule = _tokens_and_schedule(
            physics,
            shape,
            opts,
            c.degrees,
            c.nanobatch,
            c.microbatches,
            c.interleave,
            c.zero_bubble,
        )
    tokens, schedule = tokens_schedule
    layer = LayerParts(
        t_layer_s=c.t_layer_s,
        t_gemm_s=c.t_gemm_s,
        t_backward_s=c.t_backward_s,
        t_forward_s=c.t_forward_s,
        tokens=tokens,
        recompute=c.recompute,
        t_last_s=np.zeros_like(tokens),  # no vocabulary: no logits
    )
    if comm is None:
        groups, params = _groups_and_params(physics, shape, n_gpu, c.degrees, c.cp)
        comm = step_comm(
            Levels.as_given(hw, physics.nic_striping),
            physics.attention,
            tokens,
            c.recompute,
            groups,
            _gathered(hw, physics, schedule),
            params,
            shape.sparsity > 1,
        )
    parts = step_from_comm(comm, layer, schedule, c.t_step_extra_s)
    tp = (c.degrees[:, 1] * c.degrees[:, 2]).astype(np.float64)  # `StepGroups.tp`
    usable = np.ones(tp.shape, dtype=bool)
    if c.tp_in_domain and hw.level_sizes:  # the group inside the fastest level
        level0 = adjusted_level_sizes(hw.level_sizes, n_gpu)[0]
        usable = (tp <= level0) & (np.mod(level0, tp) == 0.0)  # aligned: never straddling
    t_step = np.where(usable, parts.t_step_s, np.inf)
    return RealisticSteps(
        t_step_s=t_step,
        t_train_s=(shape.n_tokens / float(shape.batch_tokens)) * t_step,
        t_compute_s=parts.t_compute_s,
        t_tp_comm_s=parts.t_tp_comm_s,
        t_pp_ep_comm_s=parts.t_pp_comm_s + parts.t_ep_comm_s,
        t_dp_comm_s=parts.t_dp_comm_s,
        bubble_fraction=parts.bubble_fraction,
        usable=usable,
        parts=parts,
    )


def frame_tokens_and_schedule(
    physics: Physics, shape: ModelShape, opts: SearchOptions, frame: RowFrame
) -> tuple[Array, Schedule]:
    """The tokens and schedule (`_tokens_and_schedule`) of the candidates of a `RowFrame`."""
    f = frame
    return _tokens_and_schedule(
        physics, shape, opts, f.degrees, f.nanobatch, f.microbatches, f.interleave, f.zero_bubble
    )


def _tokens_and_schedule(
    physics: Physics,
    shape: ModelShape,
    opts: SearchOptions,
    degrees: NDArray[np.int64],
    nanobatch: NDArray[np.int64],
    microbatches: Array,
    interleave: Array,
    zero_bubble: NDArray[np.bool_],
) -> tuple[Array, Schedule]:
    """Rows' tokens on one GPU per microbatch and schedule in a run's terms (`step.assembly`),
    from their degrees (n, 5), nanobatch and schedule: what a step reads beside its
    collectives (`_groups_and_params`)."""
    pp = degrees[:, 3].astype(np.float64)
    local = float(shape.sparsity) // degrees[:, 4].astype(np.float64)  # the GPU's local experts
    tokens = nanobatch.astype(np.float64) * local  # a microbatch's tokens on one GPU
    layers = shape.n_layers / pp
    flags = np.ones(pp.shape, dtype=bool)
    schedule = Schedule(
        pp=pp,
        stages=StageLayers(layers, layers, float(shape.n_layers)),
        first_layers=layers,
        microbatches=microbatches,
        interleave=interleave,
        zero_bubble=zero_bubble,
        overlap_tp=flags & opts.overlap_tp,
        overlap_p2p=flags & opts.overlap_pp_ep,
        overlap_dp=flags & opts.overlap_dp,
        dp_overlap=flags & physics.dp_overlap,
        sharded=flags & (physics.zero_stage >= 1),
        tp_overlap_in_domain=flags & physics.tp_overlap_in_domain,
        grad_reduce_fp32=flags if physics.grad_reduce_fp32 else None,
    )
    return tokens, schedule


def _gathered(hw: HardwareSpec, physics: Physics, schedule: Schedule) -> Schedule:
    """`schedule` with its parameter all-gather at 1 byte a weight where grid layouts hold their
    weights in FP8 only (`compute.efficiency.fp8_weights_only`; the grid's models have no
    vocabulary, so every parameter is a layer's: half a 16-bit word each), else as given."""
    if not fp8_weights_only(hw, physics):
        return schedule
    return dataclasses.replace(schedule, gather_width=(0.5, 0.5))


def _groups_and_params(
    physics: Physics,
    shape: ModelShape,
    n_gpu: int,
    degrees: NDArray[np.int64],
    cp_: NDArray[np.int64] | None,
) -> tuple[StepGroups, ParamsPerGpu]:
    """Rows' groups and parameters per GPU in a run's terms (`step.assembly`), from their
    degrees (n, 5) and context-parallel degree c (None: 1): what their collectives read
    (`step.assembly.step_comm`)."""
    dp, tpm, tpff, pp, ep = (degrees[:, k].astype(np.float64) for k in range(5))
    tp = tpm * tpff
    cp = np.ones(degrees.shape[0]) if cp_ is None else cp_.astype(np.float64)
    d = float(shape.d_model)
    groups = StepGroups(
        tp_model=tpm,
        tp_ff=tpff,
        sp=sequence_parallel_degree(physics, tpm, tpff),
        cp=cp,
        ep=ep,
        dense_dp=dp * ep,
        expert_dp=dp,
        n_gpu=np.full(tp.shape, float(n_gpu)),
        hidden=d,
        ffn=float(shape.d_ff),
        qkv=d + 2.0 * grid_kv_width(shape),  # h + 2·kv, kv by the grid's K/V heads (`search.grid`)
        top_k=GRID_TOP_K,
    )
    return groups, grid_params_per_gpu(physics, shape, tp, pp, ep)


REALISTIC_COMM_CACHE_BYTES = 16 * 2**20
"""Bytes of `realistic_comm` a process keeps, least recently used out: a cluster size's rows'
collectives on a network, shared by the series whose GPUs differ only in HBM (docs/model.md
§9.2). A block of 36 million_realistic series (one network) walks about 50 sizes of about
65 kB; a larger bound only grows a worker towards `execute.runner.WORKER_GROWTH_BYTES`, past
which it forgets every cache after each task (64 MiB did, 32 times in that sweep's sample)."""


def realistic_comm(
    hw: HardwareSpec,
    physics: Physics,
    opts: SearchOptions,
    shape: ModelShape,
    n_gpu: int,
    tp_unit: int,
) -> StepComm | None:
    """The collectives (`step.assembly.step_comm`) of every row of `realistic_layout_rows`
    at n_gpu on `hw`'s network (bandwidths at the physics' achieved fraction), under each mode
    of `RECOMPUTE_ORDER` (`StepComm.rows` picks a candidate's); None without rows. They read
    neither the GPU nor the layer times, and every one is computed row by row, so a
    candidate's are its row's: the same values as computed on the candidates alone
    (`realistic_steps`). Kept per hardware without its HBM (`floors.floor_hardware`),
    physics, options, model, cluster size and N_TP unit, read only."""
    return _realistic_comm(floor_hardware(hw), physics, opts, shape, n_gpu, tp_unit)


def _realistic_comm_set(
    hw: HardwareSpec,
    physics: Physics,
    opts: SearchOptions,
    shape: ModelShape,
    n_gpu: int,
    tp_unit: int,
) -> StepComm | None:
    """`realistic_comm` uncached."""
    rows = realistic_layout_rows(shape, n_gpu, opts, physics, tp_unit)
    if rows is None:
        return None
    table, cps = rows
    pp, m = table[:, 3].astype(np.float64), table[:, 5].astype(np.float64)
    zero_bubble = table[:, 6].astype(bool)
    interleave = interleave_degrees(pp, zero_bubble, opts.interleaving, shape.n_layers, m)
    ring = cps is not None and physics.attention  # as the candidates' (`search.candidates`)
    modes = np.arange(len(RECOMPUTE_ORDER), dtype=np.int64)[:, None]
    tokens, schedule = _tokens_and_schedule(
        physics, shape, opts, table[:, :5], table[:, 7], m, interleave, zero_bubble
    )
    return read_only(
        _step_comm(
            hw, physics, shape, n_gpu, table[:, :5], cps if ring else None, tokens, schedule, modes
        )
    )


def frame_comm(
    hw: HardwareSpec,
    physics: Physics,
    shape: ModelShape,
    n_gpu: int,
    frame: RowFrame,
    tokens_schedule: tuple[Array, Schedule],
) -> StepComm:
    """The collectives of a `RowFrame`'s candidates at n_gpu on `hw`'s network, each under its
    own mode, from their tokens and schedule (`frame_tokens_and_schedule`): computed on them
    alone, row by row, so each is its row's in `realistic_comm` (`StepComm.rows` at the
    frame's rows and modes), bit for bit."""
    tokens, schedule = tokens_schedule
    return _step_comm(
        floor_hardware(hw),
        physics,
        shape,
        n_gpu,
        frame.degrees,
        frame.cp,
        tokens,
        schedule,
        frame.recompute,
    )


def _step_comm(
    hw: HardwareSpec,
    physics: Physics,
    shape: ModelShape,
    n_gpu: int,
    degrees: NDArray[np.int64],
    cp: NDArray[np.int64] | None,
    tokens: Array,
    schedule: Schedule,
    modes: NDArray[np.int64],
) -> StepComm:
    """`step.assembly.step_comm` of rows of `degrees` (n, 5), context-parallel degree `cp`
    where they have a K/V ring (None: none), tokens and schedule (`_tokens_and_schedule`),
    under `modes` (each row's, or a column of modes), on `hw`'s network."""
    groups, params = _groups_and_params(physics, shape, n_gpu, degrees, cp)
    levels = Levels.as_given(hw, physics.nic_striping)
    schedule = _gathered(hw, physics, schedule)
    return step_comm(
        levels, physics.attention, tokens, modes, groups, schedule, params, shape.sparsity > 1
    )


_realistic_comm = ByteBoundedMemo(_realistic_comm_set, REALISTIC_COMM_CACHE_BYTES, arrays_nbytes)
register(f"{__name__}._realistic_comm", _realistic_comm, f"{REALISTIC_COMM_CACHE_BYTES} bytes")


RING_CACHE_BYTES = 8 * 2**20
"""Bytes of `realistic_ring_s` a process keeps, least recently used out: a cluster size's
rows' K/V exchange on a network, shared by the series whose GPUs differ only in HBM (8 bytes a
row, beside `REALISTIC_COMM_CACHE_BYTES`' collectives of the same rows)."""


def realistic_ring_s(
    hw: HardwareSpec,
    physics: Physics,
    opts: SearchOptions,
    shape: ModelShape,
    n_gpu: int,
    tp_unit: int,
) -> Array | None:
    """Each row of `realistic_layout_rows`' forward K/V exchange at n_gpu on `hw`'s network
    (`candidates.rows_ring_s`, bandwidths at the physics' achieved fraction); None without a
    ring (no context-parallel degree, or no attention) or without rows. Row by row, so a
    candidate's is its row's: the same values as computed on the candidates alone
    (`candidates._with_ring`). Kept per hardware without its HBM (`floors.floor_hardware`),
    physics, options, model, cluster size and N_TP unit, read only."""
    return _realistic_ring(floor_hardware(hw), physics, opts, shape, n_gpu, tp_unit)


def _realistic_ring_set(
    hw: HardwareSpec,
    physics: Physics,
    opts: SearchOptions,
    shape: ModelShape,
    n_gpu: int,
    tp_unit: int,
) -> Array | None:
    """`realistic_ring_s` uncached, read only."""
    rows = realistic_layout_rows(shape, n_gpu, opts, physics, tp_unit)
    if rows is None or rows[1] is None or not physics.attention:
        return None
    table, cps = rows
    out = rows_ring_s(
        hw, shape, table[:, :5], cps, table[:, 7], physics.nic_striping, physics.cp_all_gather
    )
    out.setflags(write=False)
    return out


def _ring_nbytes(ring: Array | None) -> int:
    """Bytes of a ring array."""
    return 0 if ring is None else ring.nbytes


_realistic_ring = ByteBoundedMemo(_realistic_ring_set, RING_CACHE_BYTES, _ring_nbytes)
register(f"{__name__}._realistic_ring", _realistic_ring, f"{RING_CACHE_BYTES} bytes")


def realistic_layout(hw: HardwareSpec, c: Candidates, row: int, n_gpu: int) -> Layout:
    """Candidate `row` in the paper's per-level form, its ranks placed in the order of
    `network.groups` (N_TPff, N_TPm, context, expert, data, pipeline) over the levels
    (`network.levels.level_factors`). The candidate's N_DP holds context and data ranks; the
    layout's `dp` holds the data ranks alone and `cp` the context ranks."""
    dp, tpm, tpff, pp, ep = (int(v) for v in c.degrees[row])
    cp = 1 if c.cp is None else int(c.cp[row])
    ff, m, ctx, ex, data, pipe = level_factors((tpff, tpm, cp, ep, dp // cp, pp), hw.level_sizes)
    return Layout(
        n_gpu=n_gpu,
        dp=tuple(data),
        cp=tuple(ctx),
        tp_model=tuple(m),
        tp_ff=tuple(ff),
        pp=tuple(pipe),
        ep=tuple(ex),
        microbatches=int(c.microbatches[row]),
        zero_bubble=bool(c.zero_bubble[row]),
        pp_interleave=int(c.interleave[row]),
        nanobatch_tokens=int(c.nanobatch[row]),
    )


def realistic_matmul_bound(
    hw: HardwareSpec, physics: Physics, shape: ModelShape, layout: Layout
) -> MatmulBound:
    """The resource bounding the slowest weight-matmul call of the layout's layer as its step
    times it (`search.grid.grid_matmul_bound` of its shard: the projections on the GPU's
    tokens, each of its S/N_EP experts on its own nanobatch; docs/model.md R.2). Rows of the
    paper's physics take Part I's `step.evaluate.matmul_bound` instead."""
    shard = (
        math.prod(layout.tp_model),
        math.prod(layout.tp_ff),
        layout.nanobatch_tokens,
        shape.sparsity // math.prod(layout.ep),
    )
    return grid_matmul_bound(hw, physics, shape, shard)


def realistic_step_cost(
    hw: HardwareSpec,
    physics: Physics,
    shape: ModelShape,
    layout: Layout,
    steps: RealisticSteps,
    row: int,
) -> StepCost:
    """Row `row` of `steps` as the layout's StepCost. Its latencies are inside its
    communication terms, as a run's: `t_latency_s` and `t_latency_paid_s` are NaN (null in
    the table); `utilization` is set from the FLOP the row counts by the caller
    (`search.counts.grid_cost`), NaN until then; `matmul_bound` is `realistic_matmul_bound`."""
    t_step = float(steps.t_step_s[row])
    bubble = float(steps.bubble_fraction[row])
    compute = float(steps.t_compute_s[row])
    tp, pp_ep = float(steps.t_tp_comm_s[row]), float(steps.t_pp_ep_comm_s[row])
    dp = float(steps.t_dp_comm_s[row])
    return StepCost(
        t_compute_s=compute,
        t_tp_comm_s=tp,
        t_pp_ep_comm_s=pp_ep,
        t_dp_comm_s=dp,
        t_latency_s=math.nan,
        t_latency_paid_s=math.nan,
        bubble_fraction=bubble,
        step_time_s=t_step,
        training_time_s=float(steps.t_train_s[row]),
        utilization=math.nan,
        bottleneck=step_bottleneck(compute, tp, pp_ep, dp, float(steps.parts.t_bubble_s[row])),
        matmul_bound=realistic_matmul_bound(hw, physics, shape, layout),
    )
