"""The realistic step of a layout from its layer parts, groups and schedule, vectorized over
layouts: the one assembly a realistic grid candidate (`search.realistic`) and a concrete run
(`runs.training_run`) are timed by (docs/model.md R.6, R.7). A run is a batch of one.

Per layer and microbatch on one GPU (`network.groups`, each group at the level its ranks span):
  t_tp   = the N_TPff and N_TPm collectives, with TP overlap only their part past the GEMMs
           (with `tp_overlap_in_domain` only for a group inside the fastest level)
  t_ep   = the expert all-to-alls of k · w · T · h / sp bytes (top-k routing)
  t_full = t_layer + t_tp + t_ep
per microbatch t_p2p (the pipeline sends), per step t_dp (dense gradients over the ranks holding
the same dense weights, expert gradients over the expert-data-parallel group), exposed past the
first stage's backward when overlapped (`overlap_dp`) or as Megatron-Core's distributed
optimizer exposes it (`dp_overlap`, `distributed_optimizer_exposed_s`), and the step of
`step.pipeline.pipeline_step_s`.
The step never decreases in any network time (`step.pipeline`'s module docstring).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.compute.memory_ops import WORD_BYTES
from pipeline.model.memory.gpu_memory import FP32_GRADIENT_BYTES_PER_PARAM, ParamsPerGpu
from pipeline.model.network.groups import (
    GradientGroups,
    Levels,
    TensorGroups,
    expert_all_to_all_s,
    gradient_allreduce_s,
    pipeline_send_s,
    tensor_parallel_s,
)
from pipeline.model.network.levels import group_level
from pipeline.model.step.pipeline import (
    StageLayers,
    exposed_gradient_s,
    exposed_tensor_parallel_s,
    pipeline_step_s,
)

Array = NDArray[np.float64]
Flags = NDArray[np.bool_]


DP_BUCKET_MIN_PARAMS = 40_000_000
"""Megatron-Core's smallest default gradient bucket: max(4e7, 1e6 · d) parameters, d the data-
parallel size (Megatron Core developer guide, `DistributedDataParallelConfig.bucket_size`)."""
DP_BUCKET_PARAMS_PER_RANK = 1_000_000


def dp_bucket_params(dense_dp: Array) -> Array:
    """Parameters in one of Megatron-Core's default gradient buckets: max(4e7, 1e6 · d), d the
    ranks of the data-parallel group (Megatron Core developer guide,
    `core.distributed.distributed_data_parallel_config.DistributedDataParallelConfig.bucket_size`)."""
    out: Array = np.maximum(float(DP_BUCKET_MIN_PARAMS), DP_BUCKET_PARAMS_PER_RANK * dense_dp)
    return out


def distributed_optimizer_exposed_s(
    t_reduce_s: Array,
    t_bucket_s: Array,
    t_backward_s: Array,
    t_forward_s: Array,
    sharded: Flags,
    t_gather_s: Array | None = None,
    t_gather_bucket_s: Array | None = None,
) -> Array:
    """The gradient reduction's part on the critical path under Megatron-Core's distributed
    optimizer with `overlap_grad_reduce` and `overlap_param_gather` (Megatron Core developer
    guide, `DistributedDataParallelConfig`; NeMo Framework user guide, "Communication Overlap":
    the reduction runs in chunks beside compute and exposes one chunk).

    Sharded (ZeRO ≥ 1), the all-reduce `t_reduce_s` is a reduce-scatter and an all-gather of
    half its time each (a ring all-reduce is exactly both): each bucket's reduce-scatter starts
    once the first stage's last backward `t_backward_s` has produced its gradients, so what
    outlasts that backward is exposed, and at least the last bucket's (`t_bucket_s` / 2, the
    first layers' gradients come last); the all-gather of the updated parameters runs beside
    the next step's first forward `t_forward_s` bucket by bucket, at least the first bucket's
    exposed. Unsharded, the all-reduce overlaps the backward alike:
      sharded:   max(t/2 − t_bwd, t_b/2) + max(t'/2 − t_fwd, t'_b/2)
      unsharded: max(t − t_bwd, t_b)
    t' and t'_b (`t_gather_s`, `t_gather_bucket_s`): the all-reduce of the parameters at the
    width they are gathered at (16-bit, or FP8 layer weights: `Schedule.gather_width`) whose half
    the all-gather is, when it differs from the gradients' (`FP32_GRADIENT_BYTES_PER_PARAM`);
    None: t and t_b.
    """
    gather_all = t_reduce_s if t_gather_s is None else t_gather_s
    gather_bucket = t_bucket_s if t_gather_bucket_s is None else t_gather_bucket_s
    reduce = np.where(sharded, 0.5 * t_reduce_s, t_reduce_s)
    last = np.where(sharded, 0.5 * t_bucket_s, t_bucket_s)
    gather = np.where(sharded, np.maximum(0.5 * gather_all - t_forward_s, 0.5 * gather_bucket), 0.0)
    out: Array = np.maximum(reduce - t_backward_s, last) + gather
    return out


def gradient_reduction_s(
    levels: Levels,
    gradient: GradientGroups,
    params: ParamsPerGpu,
    expert: Array | None,
    fp32: Flags,
) -> Array:
    """The all-reduce of one step's gradients at the width they are reduced at: w bytes per
    parameter, or `FP32_GRADIENT_BYTES_PER_PARAM` where `fp32` (Megatron-LM reduces BF16 gradients in FP32,
    `--accumulate-allreduce-grads-in-fp32`, unless `--grad-reduce-in-bf16`; NeMo Framework user
    guide, "Communication Overlap": `grad_sync_dtype` FP32 by default; Llama Team 2024 §3.3.2):
    `network.groups.gradient_allreduce_s` of FP32_GRADIENT_BYTES_PER_PARAM / w times the parameters. Half of
    it is the reduce-scatter of a sharded optimizer."""
    widen = np.where(fp32, FP32_GRADIENT_BYTES_PER_PARAM / WORD_BYTES, 1.0)
    wide_expert = None if expert is None else widen * expert
    out: Array = gradient_allreduce_s(levels, gradient, widen * params.replicated, wide_expert)
    return out


def reduction_total_s(t_grad_s: Array, t_param_s: Array, sharded: Flags) -> Array:
    """A step's whole gradient reduction, none of it overlapped: sharded, the reduce-scatter
    (half of `t_grad_s`, the all-reduce at the gradients' width) and the all-gather of the
    parameters at their width (half of `t_param_s`: the all-reduce of the 16-bit parameters, or
    of the FP8 layer weights, `Schedule.gather_width`); unsharded, the all-reduce `t_grad_s`."""
    out: Array = np.where(sharded, 0.5 * t_grad_s + 0.5 * t_param_s, t_grad_s)
    return out


@dataclass(frozen=True, slots=True)
class LayerParts:
    """One layer and one microbatch on one GPU, per row (s): what compute and recomputation
    take, with the exposed part of a context-parallel ring exchange (`network.groups.
    ring_attention_exposed_s`) inside `t_layer_s`."""

    t_layer_s: Array
    """Forward, backward and rerun of every kernel of the layer (its local experts' included)."""
    t_gemm_s: Array
    """Its weight GEMMs, forward, backward and rerun: what TP communication overlap hides behind."""
    t_backward_s: Array
    """Its backward and rerun: what an overlapped gradient reduction hides behind."""
    t_forward_s: Array
    """Its forward: what an overlapped parameter all-gather hides behind."""
    tokens: Array
    """Tokens of the microbatch on this GPU (after context parallelism)."""
    recompute: NDArray[np.int64]
    """Its recomputation mode (index into `RECOMPUTE_ORDER`): full reruns the forward's
    collectives too (`network.groups.collectives_per_layer`)."""
    t_last_s: Array
    """The logits on the last stage, per microbatch (0 without a vocabulary)."""


@dataclass(frozen=True, slots=True)
class StepGroups:
    """Each row's parallel groups in Megatron-Core's rank order (tensor ranks innermost, N_TPff
    before N_TPm, then context, expert, data, pipeline) and the widths they carry."""

    tp_model: Array
    """N_TPm: ranks splitting d_model (1 under Megatron's 1-D tensor parallelism)."""
    tp_ff: Array
    """N_TPff: ranks splitting d_ff, the QKV columns and the heads."""
    sp: Array
    """Ways a layer's tokens (or columns) are split outside the GEMMs: the all-to-alls' divisor."""
    cp: Array
    ep: Array
    dense_dp: Array
    """Ranks holding the same dense weights: Megatron-Core's data-parallel group with context
    parallelism, the expert ranks folded in (d·c of a run, N_DP·N_EP of a grid candidate)."""
    expert_dp: Array
    """Ranks holding the same expert shard: the expert-data-parallel group (d·c/e, N_DP)."""
    n_gpu: Array
    hidden: float
    ffn: float
    """f of the MLP (one expert's)."""
    qkv: float
    """Output width of the QKV projection, h + 2·kv."""
    top_k: float
    """Experts each token is routed to."""

    @property
    def tp(self) -> Array:
        """N_TP = N_TPm · N_TPff."""
        out: Array = self.tp_model * self.tp_ff
        return out


@dataclass(frozen=True, slots=True)
class Schedule:
    """Each row's pipeline schedule and what its communication overlaps."""

    pp: Array
    stages: StageLayers
    first_layers: Array
    """Layers of the first stage, whose last backward an overlapped gradient reduction hides behind."""
    microbatches: Array
    interleave: Array
    zero_bubble: Flags
    overlap_tp: Flags
    """Transformer Engine's TP communication overlap (Wang et al. 2023)."""
    overlap_p2p: Flags
    """Asynchronous pipeline sends (Llama Team 2024 §3.3.2)."""
    overlap_dp: Flags
    """Gradient reduction overlapped with the first stage's last backward (FSDP, Zhao et al. 2023)."""
    dp_overlap: Flags
    """Megatron-Core's distributed optimizer overlap (`distributed_optimizer_exposed_s`); it
    takes the place of `overlap_dp` where set."""
    sharded: Flags
    """The optimizer state is sharded (ZeRO ≥ 1: a reduce-scatter and an all-gather instead of
    an all-reduce)."""
    tp_overlap_in_domain: Flags
    """TP overlap only where the whole tensor-parallel group lies on the fastest level."""
    grad_reduce_fp32: Flags | None = None
    """Gradients reduced in FP32 (`FP32_GRADIENT_BYTES_PER_PARAM` per parameter: the reduce-scatter, or the
    all-reduce when unsharded), the parameter all-gather at the weights' width (`gather_width`;
    `gradient_reduction_s`);
    None: every reduction at w, the paper's."""
    gather_width: tuple[Array | float, Array | float] | None = None
    """A sharded optimizer's parameter all-gather, in bytes per parameter over w, of the
    replicated and of the expert parameters: below 1 where FP8 layer weights are gathered at 1
    byte (a run's `fp8_params`, a grid row's `physics.fp8_params`: Megatron-Core's
    `fp8_param_gather`); None: every parameter at w."""


@dataclass(frozen=True, slots=True)
class StepParts:
    """A step and its parts on one GPU of the slowest stage, per row (s per step)."""

    t_step_s: Array
    t_compute_s: Array
    """m · L_s · t_layer (+ m · t_last when the slowest stage is the last): the slowest
    stage's layers (`PipelineStep.slowest_layers`, ⌈L/p⌉ or the last stage's), recomputation
    and exposed ring included, and its logits."""
    t_tp_comm_s: Array
    """m · L_s · t_tp: the tensor-parallel collectives on the critical path."""
    t_ep_comm_s: Array
    """m · L_s · t_ep: the expert all-to-alls (on the critical path: they wait on the router)."""
    t_pp_comm_s: Array
    """m · t_p2p: the exposed pipeline sends."""
    t_dp_comm_s: Array
    """The exposed gradient reduction."""
    t_bubble_s: Array
    """Fill and drain (`step.pipeline.PipelineStep`)."""
    bubble_fraction: Array
    t_optimizer_s: Array | None
    slowest_layers: Array
    """L_s: the layers of the stage whose time the parts above count (`PipelineStep`)."""
    slowest_has_logits: NDArray[np.bool_]
    """That stage is the last and runs the logits."""


@dataclass(frozen=True, slots=True)
class StepComm:
    """A step's collectives per row before any is overlapped with compute (s): what the
    network, the layout and the recomputation mode set, which no layer time changes."""

    t_tp_s: Array
    """The tensor-parallel collectives of a layer and microbatch (`tensor_parallel_s`)."""
    tp_in_domain: Flags
    """The tensor-parallel group lies on the fastest level."""
    t_ep_s: Array
    """The expert all-to-alls of a layer and microbatch."""
    t_p2p_s: Array
    """The pipeline sends of a microbatch, 0 where they overlap compute."""
    t_reduce_s: Array
    """The gradient all-reduce of a step at w bytes per parameter."""
    t_grad_s: Array
    """The same at the width the gradients are reduced at (`gradient_reduction_s`)."""
    t_total_s: Array
    """The whole reduction, none of it overlapped (`reduction_total_s`)."""
    t_bucket_s: Array | None
    """The all-reduce of a default gradient bucket (`dp_bucket_params`), where some row
    overlaps as the distributed optimizer does (`Schedule.dp_overlap`), else None."""
    t_grad_bucket_s: Array | None
    """The same at the gradients' width."""
    t_gather_s: Array
    """The all-reduce of the parameters at the width they are all-gathered at, whose half the
    all-gather is (`Schedule.gather_width`): `t_reduce_s` where every parameter is w bytes."""
    t_gather_bucket_s: Array | None
    """The same of a bucket (`t_bucket_s` where every parameter is w bytes)."""

    def rows(self, at: NDArray[np.intp], modes: NDArray[np.int64] | None = None) -> StepComm:
        """These collectives of rows `at`; with `modes`, of collectives computed for a column
        of modes (rows of the mode-dependent arrays, `StepComm.of_modes`) under each row's."""

        def pick(a: Array) -> Array:
            out: Array = a[at] if modes is None else a[modes, at]
            return out

        return StepComm(
            t_tp_s=pick(self.t_tp_s),
            tp_in_domain=self.tp_in_domain[at],
            t_ep_s=pick(self.t_ep_s),
            t_p2p_s=self.t_p2p_s[at],
            t_reduce_s=self.t_reduce_s[at],
            t_grad_s=self.t_grad_s[at],
            t_total_s=self.t_total_s[at],
            t_bucket_s=None if self.t_bucket_s is None else self.t_bucket_s[at],
            t_grad_bucket_s=None if self.t_grad_bucket_s is None else self.t_grad_bucket_s[at],
            t_gather_s=self.t_gather_s[at],
            t_gather_bucket_s=None
            if self.t_gather_bucket_s is None
            else self.t_gather_bucket_s[at],
        )


def step_comm(
    levels: Levels,
    attention: bool,
    tokens: Array,
    recompute: NDArray[np.int64],
    groups: StepGroups,
    schedule: Schedule,
    params: ParamsPerGpu,
    experts: bool,
) -> StepComm:
    """Every row's collectives (`step_parts`): `tokens` on one GPU per microbatch, `recompute`
    each row's mode (or a column of modes, broadcast against the rows: the tensor-parallel and
    expert times then hold a row per mode)."""
    tp = groups.tp
    tensor = TensorGroups(
        groups.tp_model, groups.tp_ff, tokens, groups.hidden, groups.ffn, groups.qkv
    )
    message = WORD_BYTES * tokens * groups.hidden  # one microbatch's hidden activations
    dispatch = groups.top_k * message / groups.sp
    t_ep = expert_all_to_all_s(levels, recompute, groups.ep, tp * groups.cp * groups.ep, dispatch)
    t_p2p = pipeline_send_s(
        levels,
        message,
        tp,
        groups.n_gpu,
        schedule.pp,
        schedule.interleave,
        schedule.overlap_p2p,
    )
    span = tp * groups.dense_dp  # the data-parallel group's ranks sit at stride N_TP
    gradient = GradientGroups(groups.dense_dp, span, groups.expert_dp, span)
    expert = params.expert if experts else None
    t_reduce = gradient_allreduce_s(levels, gradient, params.replicated, expert)
    wide = schedule.grad_reduce_fp32
    t_grad = (
        t_reduce if wide is None else gradient_reduction_s(levels, gradient, params, expert, wide)
    )
    narrow = schedule.gather_width
    t_gather = t_reduce if narrow is None else _gather_s(levels, gradient, params, experts, narrow)
    t_bucket = t_grad_bucket = t_gather_bucket = None
    if np.any(schedule.dp_overlap):
        bucket = dp_bucket_params(groups.dense_dp)
        bucketed = ParamsPerGpu(
            np.minimum(params.replicated, bucket), np.minimum(params.expert, bucket)
        )
        expert_bucket = bucketed.expert if experts else None
        t_bucket = gradient_allreduce_s(levels, gradient, bucketed.replicated, expert_bucket)
        t_grad_bucket = (
            t_bucket
            if wide is None
            else gradient_reduction_s(levels, gradient, bucketed, expert_bucket, wide)
        )
        t_gather_bucket = (
            t_bucket if narrow is None else _gather_s(levels, gradient, bucketed, experts, narrow)
        )
    return StepComm(
        t_tp_s=tensor_parallel_s(levels, tensor, recompute, attention),
        tp_in_domain=group_level(levels.sizes, tp) == 0,
        t_ep_s=t_ep,
        t_p2p_s=t_p2p,
        t_reduce_s=t_reduce,
        t_grad_s=t_grad,
        t_total_s=t_reduce
        if wide is None and narrow is None
        else reduction_total_s(t_grad, t_gather, schedule.sharded),
        t_bucket_s=t_bucket,
        t_grad_bucket_s=t_grad_bucket,
        t_gather_s=t_gather,
        t_gather_bucket_s=t_gather_bucket,
    )


def _gather_s(
    levels: Levels,
    gradient: GradientGroups,
    params: ParamsPerGpu,
    experts: bool,
    width: tuple[Array | float, Array | float],
) -> Array:
    """The all-reduce of `params` (all a GPU holds, or a bucket: Megatron-Core's buckets count
    parameters, each at the GPU's mean width) at `width` words a parameter, whose half a
    sharded optimizer's parameter all-gather is (`Schedule.gather_width`)."""
    expert = width[1] * params.expert if experts else None
    out: Array = gradient_allreduce_s(levels, gradient, width[0] * params.replicated, expert)
    return out


def step_parts(
    levels: Levels,
    attention: bool,
    layer: LayerParts,
    groups: StepGroups,
    schedule: Schedule,
    params: ParamsPerGpu,
    experts: bool,
    t_optimizer_s: Array | None,
) -> StepParts:
    """Every row's step (module docstring). `params`: the parameters a GPU of the first stage
    holds, dense (replicated) and expert; `experts` False for a dense model, whose expert
    gradients do not exist; `attention` False: a layer is its MLP (`tensor_parallel_s`).
    `step_from_comm` of the rows' `step_comm`."""
    comm = step_comm(
        levels, attention, layer.tokens, layer.recompute, groups, schedule, params, experts
    )
    return step_from_comm(comm, layer, schedule, t_optimizer_s)


def step_from_comm(
    comm: StepComm, layer: LayerParts, schedule: Schedule, t_optimizer_s: Array | None
) -> StepParts:
    """Every row's step from its collectives (`step_comm`) and its layer: what of each is
    exposed past compute, and the step of `step.pipeline.pipeline_step_s`."""
    overlap_tp = schedule.overlap_tp & (comm.tp_in_domain | ~schedule.tp_overlap_in_domain)
    t_tp = exposed_tensor_parallel_s(comm.t_tp_s, layer.t_gemm_s, overlap_tp)
    t_full = layer.t_layer_s + t_tp + comm.t_ep_s
    backward = schedule.first_layers * layer.t_backward_s
    t_dp = exposed_gradient_s(comm.t_total_s, backward, schedule.overlap_dp)
    if comm.t_bucket_s is not None and comm.t_grad_bucket_s is not None:
        overlapped = distributed_optimizer_exposed_s(
            comm.t_grad_s,
            comm.t_grad_bucket_s,
            backward,
            schedule.first_layers * layer.t_forward_s,
            schedule.sharded,
            comm.t_gather_s,
            comm.t_gather_bucket_s,
        )
        t_dp = np.where(schedule.dp_overlap, overlapped, t_dp)
    step = pipeline_step_s(
        schedule.stages,
        t_full,
        layer.t_last_s,
        schedule.microbatches,
        schedule.interleave,
        schedule.zero_bubble,
        comm.t_p2p_s,
        t_dp,
        t_optimizer_s,
    )
    per_step = schedule.microbatches * step.slowest_layers
    logits = np.where(step.slowest_has_logits, schedule.microbatches * layer.t_last_s, 0.0)
    return StepParts(
        t_step_s=step.t_step_s,
        t_compute_s=per_step * layer.t_layer_s + logits,
        t_tp_comm_s=per_step * t_tp,
        t_ep_comm_s=per_step * comm.t_ep_s,
        t_pp_comm_s=schedule.microbatches * comm.t_p2p_s,
        t_dp_comm_s=t_dp,
        t_bubble_s=step.t_bubble_s,
        bubble_fraction=step.bubble_fraction,
        t_optimizer_s=t_optimizer_s,
        slowest_layers=step.slowest_layers,
        slowest_has_logits=step.slowest_has_logits,
    )
