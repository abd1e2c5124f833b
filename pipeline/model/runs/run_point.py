"""One concrete run as a point of the `points` table: its shape, Megatron layout and cost.

The run's layout is written in the paper's per-level form: 1-D tensor parallelism splits
the MLP's d_ff (tp_ff = t, tp_model = 1); ranks fill the network levels in Megatron's
order, tensor innermost, then context, expert and data, then pipeline (Narayanan et al. 2021
§3; Megatron-Core's tp-cp-ep-dp-pp). Context parallelism c is the row's `cp`; expert
parallelism e takes e of the d data-parallel ranks: the row's `ep` is e and its `dp` is d/e
(the ranks holding the same expert shard), so that n_gpu = t·c·(d/e)·e·p.
"""

from __future__ import annotations

import math

import numpy as np

from pipeline.model.compute.flop import flop_per_step, model_params
from pipeline.model.network.levels import level_factors
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.results import (
    Bottleneck,
    InfeasibleReason,
    Layout,
    ModelCounts,
    PointResult,
    StepCost,
)
from pipeline.model.records.run import RunCost, RunSpec
from pipeline.model.records.scaling import ModelShape
from pipeline.model.records.switches import Physics
from pipeline.model.runs.run_search import searched_run_layout
from pipeline.model.runs.training_run import evaluate_run
from pipeline.model.step.pipeline import bubble_time_s, step_bottleneck
from pipeline.model.step.schedule import nanobatch_tokens


def run_layout(run: RunSpec, hw: HardwareSpec) -> Layout:
    """The run's layout in the paper's per-level form: context parallelism as `cp`, expert
    parallelism as `ep`, taken out of the data-parallel ranks (`dp` is d/e)."""
    lay = run.layout
    tp, cp, ep, dp, pp = level_factors(
        (lay.tp, lay.cp, lay.ep, lay.expert_dp, lay.pp), hw.level_sizes
    )
    ones = tuple(1 for _ in tp)
    microbatches = run.microbatches
    return Layout(
        n_gpu=lay.n_gpu,
        dp=tuple(dp),
        tp_model=ones,
        tp_ff=tuple(tp),
        pp=tuple(pp),
        ep=tuple(ep),
        microbatches=microbatches,
        zero_bubble=False,
        pp_interleave=lay.interleave,
        nanobatch_tokens=run_nanobatch_tokens(run, microbatches),
        cp=tuple(cp),
    )


def run_nanobatch_tokens(run: RunSpec, microbatches: int) -> int:
    """The run's nanobatch in tokens, b = ⌊B_tok / (N_DP · N_CP · m · S)⌋ (spec §5.1;
    docs/schema.md, `nanobatch_tokens`) with N_DP = d/e (the replicas of each expert shard),
    N_CP = c, its m microbatches and S = E experts. For micro-batches of n sequences it is
    (n·s/c) · e/E: the GPU's micro-batch holds n·s/c tokens, E/e nanobatches, one for each
    local expert under the paper's top-1 routing (docs/model.md R.2, a grid layout as a run).
    A top-k run's experts each compute k times it (`training_run.expert_tokens`, which the
    step reads; this count is the row's alone); a dense run's (E = e = 1) is its micro-batch's
    tokens on a GPU."""
    lay = run.layout
    batch_tokens = run.global_batch_seqs * run.shape.seq_len
    return nanobatch_tokens(batch_tokens, lay.expert_dp * lay.cp, microbatches, run.shape.experts)


def run_shape(run: RunSpec, tokens_per_param: float) -> ModelShape:
    """The run's model in the paper's shape record (its n_params counts the MLP blocks only,
    every expert's; sparsity is the run's experts per layer)."""
    s = run.shape
    return ModelShape(
        s.hidden,
        s.ffn_hidden,
        s.layers,
        s.experts,
        s.seq_len,
        run.global_batch_seqs,
        tokens_per_param,
    )


def run_bottleneck(cost: RunCost) -> Bottleneck:
    """The largest part of the run's step: compute, a communication, or the bubble
    (`step.pipeline.step_bottleneck`)."""
    return step_bottleneck(
        cost.t_compute_s,
        cost.t_tp_comm_s,
        cost.t_pp_comm_s + cost.t_ep_comm_s,
        cost.t_dp_comm_s,
        float(
            bubble_time_s(
                cost.bubble_fraction, cost.step_time_s, cost.t_dp_comm_s, cost.t_optimizer_s
            )
        ),
    )


def run_counts(physics: Physics, run: RunSpec, tokens_per_param: float) -> ModelCounts:
    """The run's parameters, its tokens (`run.tokens`, or tokens_per_param times its
    parameters) and the model FLOP of its whole training: model FLOP per step (R.1, no
    recomputation) times the steps, tokens / (B · s)."""
    params = model_params(physics, run.shape)
    tokens = tokens_per_param * params if run.tokens is None else run.tokens
    none = np.zeros(1, dtype=np.int64)  # the model count has no recomputation
    per_step, _ = flop_per_step(physics, run.shape, run.global_batch_seqs, none)
    steps = tokens / (run.global_batch_seqs * run.shape.seq_len)
    return ModelCounts(params, tokens, per_step * steps)


def run_step_cost(cost: RunCost, counts: ModelCounts, shape: ModelShape) -> StepCost:
    """The run's cost in the paper's StepCost record. Its latencies are inside its
    communication terms and its matmuls come in many shapes: `t_latency_s`,
    `t_latency_paid_s` are NaN (null in the table) and `matmul_bound` None."""
    steps = counts.n_tokens / shape.batch_tokens
    return StepCost(
        t_compute_s=cost.t_compute_s,
        t_tp_comm_s=cost.t_tp_comm_s,
        t_pp_ep_comm_s=cost.t_pp_comm_s + cost.t_ep_comm_s,
        t_dp_comm_s=cost.t_dp_comm_s,
        t_latency_s=math.nan,
        t_latency_paid_s=math.nan,
        bubble_fraction=cost.bubble_fraction,
        step_time_s=cost.step_time_s,
        training_time_s=steps * cost.step_time_s,
        utilization=cost.mfu,
        bottleneck=run_bottleneck(cost),
        matmul_bound=None,
    )


def run_point(
    hw: HardwareSpec,
    physics: Physics,
    run: RunSpec,
    search: bool,
    tokens_per_param: float,
    duration_s: float = math.inf,
) -> PointResult:
    """The run evaluated as given, or with the best layout at its GPU count (`search`);
    infeasible when it does not fit one GPU's memory (with the per-GPU check) or does not
    finish within `duration_s` (its cost kept, so the row shows by how much)."""
    shape = run_shape(run, tokens_per_param)
    counts = run_counts(physics, run, tokens_per_param)
    if search:
        found = searched_run_layout(hw, physics, run)
        if found is None:  # no layout of the model and batch on its GPUs at all
            return PointResult(
                shape,
                False,
                InfeasibleReason.NO_LAYOUT,
                None,
                None,
                run_name=run.name,
                physics=physics.name,
                counts=counts,
            )
        run, cost = found  # over memory when none fits: the closest, kept
    else:
        cost = evaluate_run(hw, physics, run)
    step = run_step_cost(cost, counts, shape)
    reason = None
    if physics.gpu_memory and not cost.fits_memory:
        reason = InfeasibleReason.EXCEEDS_GPU_MEMORY
    elif not step.training_time_s < duration_s:
        reason = InfeasibleReason.EXCEEDS_DURATION
    return PointResult(
        shape,
        reason is None,
        reason,
        run_layout(run, hw),
        step,
        run_name=run.name,
        run_cost=cost,
        recompute=run.layout.recompute.value,
        physics=physics.name,
        counts=counts,
    )
