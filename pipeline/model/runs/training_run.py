"""One concrete training run as frameworks run it: a transformer on a Megatron-style layout,
evaluated for a batch of layouts at once; a single run is a batch of one.

Layout (Narayanan et al. 2021, arXiv:2104.04473; Korthikanti et al. 2022, arXiv:2205.05198):
1-D tensor parallelism over t GPUs (column- then row-parallel matrices) with optional
sequence parallelism, pipeline parallelism over p stages with the interleaved 1F1B
schedule of v chunks, data parallelism over d replicas with ZeRO stages 0-3, context
parallelism over c GPUs, whole-sequence microbatches of b sequences, and for a mixture of
experts, expert parallelism over e of the data-parallel ranks. Megatron's rank order puts
tensor parallelism innermost, then context, expert, data, then pipeline parallelism.

Every physical quantity comes from the functions the grid search uses too: the layer's
compute (`compute.layer.layer_times_s`), the bytes a GPU holds (`memory.gpu_memory`), the
optimizer step (`compute.memory_ops`), the ring attention exchange (`network.groups`), and
the step's assembly from the layer's parts, the groups and the schedule (`step.assembly.step_parts`,
the one a grid candidate goes through, docs/model.md R.6):
  t_i     = L_i · (t_layer + t_tp + t_ep) (+ t_last on the last stage)   stage i, one microbatch
  t_pipe  = m · max_i t_i + (Σ_i t_i − max_i t_i)/v + m · t_p2p     1F1B: steady state at the
            slowest stage, fill and drain through the others; sends exposed unless overlapped
  t_step  = t_pipe + t_dp + t_optimizer                  gradient all-reduce (its part past the
            last backward when overlapped) and Adam step exposed
L_i: `records.run.stage_layers` (⌈L/p⌉, one fewer on the outer stages, Llama 3's placement).
This module says what a run's rows are: its layer work, stages, groups and memory.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.compute.efficiency import fp8_gemms, matmul_calls_s
from pipeline.model.compute.experts import busiest_rank_expert_tokens
from pipeline.model.compute.flop import (
    attention_weight_params,
    expert_weight_params,
    flop_per_step,
    layer_weight_params,
    narayanan_flop_per_step,
)
from pipeline.model.compute.layer import LayerTimes, LayerWork, layer_times_s, with_rerun_s
from pipeline.model.compute.memory_ops import optimizer_step_time_s
from pipeline.model.memory.capacity import memory_capacity_bytes
from pipeline.model.memory.gpu_memory import (
    LayerShape,
    ParamsPerGpu,
    fp8_weight_copy_bytes,
    gradient_bytes_per_param,
    logits_bytes,
    megatron_groups,
    stage_in_flight_microbatches,
    state_bytes,
    stored_activation_bytes_per_layer,
    updated_params,
)
from pipeline.model.network.groups import Levels, ring_attention_exposed_s
from pipeline.model.records.hardware import HardwareSpec, peak_flop_per_s
from pipeline.model.records.run import RunCost, RunLayout, RunSpec
from pipeline.model.records.switches import RECOMPUTE_ORDER, Fusion, Physics
from pipeline.model.records.transformer import TransformerShape
from pipeline.model.step.assembly import LayerParts, Schedule, StepGroups, StepParts, step_parts
from pipeline.model.step.pipeline import StageLayers

Array = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class RunLayouts:
    """Layouts of one run, one row each: `RunLayout` as arrays."""

    tp: Array
    pp: Array
    dp: Array
    microbatch_seqs: Array
    cp: Array
    ep: Array
    interleave: Array
    sequence_parallel: NDArray[np.bool_]
    recompute: NDArray[np.int64]
    """Index into `RECOMPUTE_ORDER`."""
    zero_stage: NDArray[np.int64]
    microbatch_group: Array
    """N, microbatches per virtual stage run back to back; 0 where the layout leaves it to
    Megatron-Core (`gpu_memory.megatron_groups`: pp, or the smallest N it accepts)."""
    overlap_p2p: NDArray[np.bool_]
    overlap_dp: NDArray[np.bool_]
    cp_all_gather: NDArray[np.bool_]
    tp_model: Array | None = None
    """N_TPm of the paper's 2-D tensor parallelism, t = N_TPm · N_TPff (norms split over
    N_TPm, no sequence parallelism: `search.grid.sequence_parallel_degree`); None: Megatron's
    1-D, N_TPm = 1. Runs are 1-D; a grid candidate's 2-D layout is a run's with it."""
    zero_bubble: NDArray[np.bool_] | None = None
    """A zero-bubble schedule (Qi et al. 2024, ZB-H2) instead of 1F1B; None: 1F1B. Runs use
    1F1B; a grid candidate's zero-bubble layout is a run's with it."""
    overlap_tp: NDArray[np.bool_] | None = None
    """Transformer Engine's TP communication overlap (`step.assembly.Schedule.overlap_tp`);
    None: none; a run's `tp_comm_overlap`, a grid candidate's with it."""
    dp_overlap: NDArray[np.bool_] | None = None
    """Megatron-Core's distributed optimizer overlap (`step.assembly.Schedule.dp_overlap`) in
    place of `overlap_dp`; None: none; a run's `dp_overlap`, a grid row's with it."""
    tp_overlap_in_domain: NDArray[np.bool_] | None = None
    """TP overlap only inside the fastest level (`step.assembly.Schedule`); None: anywhere
    (a run's `tp_comm_overlap` sets both)."""
    grad_reduce_fp32: NDArray[np.bool_] | None = None
    """Gradients reduced in FP32 (`step.assembly.Schedule.grad_reduce_fp32`); None: at w (a
    run's `grad_reduce_fp32`, a grid row's with `physics.grad_reduce_fp32`)."""
    fp8_params: NDArray[np.bool_] | None = None
    """Weights held in FP8 only under FP8 GEMMs (a run's `fp8_params`); None: a 16-bit weight
    and its FP8 copies, as every grid row."""
    expert_imbalance: Array | None = None
    """The busiest expert rank's excess of routed tokens (a run's `expert_imbalance`, a grid
    row's `physics.expert_imbalance`); None: balanced routing."""

    @property
    def fp8_weights_only(self) -> NDArray[np.bool_] | None:
        """The rows whose weights are held and gathered in FP8 only: `fp8_params` where the
        optimizer is sharded (ZeRO ≥ 1: Megatron-LM allows `--fp8-param-gather` only with the
        distributed optimizer or FSDP; the schema refuses it otherwise); None: none."""
        if self.fp8_params is None:
            return None
        out: NDArray[np.bool_] = self.fp8_params & (self.zero_stage >= 1)
        return out

    @classmethod
    def of(cls, layouts: Sequence[RunLayout]) -> RunLayouts:
        """The rows of `layouts`, in order."""

        def col(name: str) -> Array:
            return np.array([float(getattr(lay, name)) for lay in layouts])

        # a run's TP overlap is Transformer Engine's, effective inside the NVLink domain only
        tp_overlap = np.array([lay.tp_comm_overlap for lay in layouts], dtype=bool)

        return cls(
            tp=col("tp"),
            pp=col("pp"),
            dp=col("dp"),
            microbatch_seqs=col("microbatch_seqs"),
            cp=col("cp"),
            ep=col("ep"),
            interleave=col("interleave"),
            sequence_parallel=np.array([lay.sequence_parallel for lay in layouts], dtype=bool),
            recompute=np.array([RECOMPUTE_ORDER.index(lay.recompute) for lay in layouts]),
            zero_stage=np.array([lay.zero_stage for lay in layouts], dtype=np.int64),
            microbatch_group=np.array([float(lay.microbatch_group) for lay in layouts]),
            overlap_p2p=np.array([lay.overlap_p2p for lay in layouts], dtype=bool),
            overlap_dp=np.array([lay.overlap_dp for lay in layouts], dtype=bool),
            cp_all_gather=np.array([lay.cp_all_gather for lay in layouts], dtype=bool),
            overlap_tp=tp_overlap,
            dp_overlap=np.array([lay.dp_overlap for lay in layouts], dtype=bool),
            tp_overlap_in_domain=tp_overlap,
            grad_reduce_fp32=np.array([lay.grad_reduce_fp32 for lay in layouts], dtype=bool),
            fp8_params=np.array([lay.fp8_params for lay in layouts], dtype=bool),
            expert_imbalance=col("expert_imbalance"),
        )

    @property
    def n_gpu(self) -> Array:
        """t · p · d · c GPUs (experts share the data-parallel ranks)."""
        out: Array = self.tp * self.pp * self.dp * self.cp
        return out

    @property
    def expert_dp(self) -> Array:
        """c·d/e: replicas of each expert shard (the expert-data-parallel group). Context-
        parallel ranks hold the same weights and reduce their gradients together, as the data-
        parallel ranks do (`zero_dp`), and Megatron-Core folds the expert ranks into them."""
        out: Array = self.zero_dp // self.ep
        return out

    @property
    def zero_dp(self) -> Array:
        """c·d: the ranks holding the same dense weights, over which their gradients are reduced
        and ZeRO shards their state (Megatron-Core's data-parallel group with context
        parallelism), as the grid's N_DP = d·c (docs/model.md R.4, R.7)."""
        out: Array = self.dp * self.cp
        return out

    @property
    def tp_m(self) -> Array:
        """N_TPm: 1 under 1-D tensor parallelism."""
        return np.ones_like(self.tp) if self.tp_model is None else self.tp_model

    @property
    def sp(self) -> Array:
        """Ways norms and dropouts are split: t with sequence parallelism, else 1 (replicated);
        N_TPm under 2-D tensor parallelism (the paper's split along d_model)."""
        out: Array = np.where(self.sequence_parallel, self.tp, 1.0)
        if self.tp_model is not None:
            out = np.where(self.tp_model > 1.0, self.tp_model, out)
        return out


@dataclass(frozen=True, slots=True)
class RunCosts:
    """`RunCost` of each row, as arrays (None where a part is switched off)."""

    step_time_s: Array
    t_layer_s: Array
    """One layer and one microbatch on one GPU: compute, recomputation and the exposed ring
    exchange (what a grid candidate's `t_layer_s` is)."""
    t_matmul_s: Array
    t_attention_s: Array | None
    t_norm_s: Array | None
    t_elementwise_s: Array | None
    t_optimizer_s: Array | None
    t_tp_comm_s: Array
    t_pp_comm_s: Array
    t_dp_comm_s: Array
    t_ep_comm_s: Array
    bubble_fraction: Array
    model_flop_per_step: float
    hardware_flop_per_step: Array
    narayanan_flop_per_step: float
    memory_per_gpu_bytes: Array
    memory_capacity_bytes: float
    """What `memory_per_gpu_bytes` must not exceed to fit (`memory.capacity`)."""
    mfu: Array
    hfu: Array
    n_gpu: Array
    step: StepParts
    """The step and its parts as the assembly gives them (`step.assembly`, as a grid row's)."""

    def row(self, i: int) -> RunCost:
        """Row i as a `RunCost`."""

        def opt(a: Array | None) -> float | None:
            return None if a is None else float(a[i])

        return RunCost(
            step_time_s=float(self.step_time_s[i]),
            t_matmul_s=float(self.t_matmul_s[i]),
            t_attention_s=opt(self.t_attention_s),
            t_norm_s=opt(self.t_norm_s),
            t_elementwise_s=opt(self.t_elementwise_s),
            t_optimizer_s=opt(self.t_optimizer_s),
            t_tp_comm_s=float(self.t_tp_comm_s[i]),
            t_pp_comm_s=float(self.t_pp_comm_s[i]),
            t_dp_comm_s=float(self.t_dp_comm_s[i]),
            t_ep_comm_s=float(self.t_ep_comm_s[i]),
            t_latency_s=0.0,
            bubble_fraction=float(self.bubble_fraction[i]),
            model_flop_per_step=self.model_flop_per_step,
            hardware_flop_per_step=float(self.hardware_flop_per_step[i]),
            narayanan_flop_per_step=self.narayanan_flop_per_step,
            memory_per_gpu_bytes=float(self.memory_per_gpu_bytes[i]),
            memory_capacity_bytes=self.memory_capacity_bytes,
            fits_memory=bool(self.memory_per_gpu_bytes[i] <= self.memory_capacity_bytes),
            mfu=float(self.mfu[i]),
            hfu=float(self.hfu[i]),
            n_gpu=round(float(self.n_gpu[i])),
        )


@dataclass(frozen=True, slots=True)
class Stages:
    """Each row's pipeline stages by layer count (`records.run.stage_layers`, vectorized):
    ⌈L/p⌉ layers, one fewer on the first, then the last, then the second ... stage."""

    full: Array
    """⌈L/p⌉: the layers of the fullest stage."""
    first: Array
    """Layers of the first stage (it holds the embedding and the most microbatches)."""
    last: Array
    """Layers of the last stage (it runs the logits)."""
    front_full: Array
    """Index of the first stage from the front that has ⌈L/p⌉ layers."""

    @classmethod
    def of(cls, layers: int, pp: Array) -> Stages:
        full = np.ceil(layers / pp)
        short = full * pp - layers  # stages with one layer fewer
        return cls(
            full=full,
            first=full - (short >= 1),
            last=np.where(pp > 1, full - (short >= 2), full - (short >= 1)),
            front_full=np.ceil(short / 2.0),
        )


def run_layer_work(shape: TransformerShape, lay: RunLayouts) -> LayerWork:
    """One layer and microbatch of each row on one GPU: 1-D tensor parallelism (t_m = 1,
    t_ff = t; 2-D: t_m = N_TPm, t_ff = t/N_TPm), b·s/c tokens, of a mixture of experts its E/e local experts one after another,
    each on `expert_tokens` tokens (Megatron-Core's sequential or grouped expert GEMMs), those of
    the busiest expert rank (`compute.experts.busiest_rank_expert_tokens`). Without dropout
    (`shape.dropout` false) it runs no dropout kernels and moves no masks, as a grid row of a
    model without dropout; the key sets its stored activations too (`run_memory_bytes`)."""
    tokens = lay.microbatch_seqs * shape.seq_len / lay.cp
    one = np.ones_like(tokens)
    return LayerWork(
        hidden=float(shape.hidden) * one,
        ffn=float(shape.ffn_hidden) * one,
        kv_width=float(shape.kv_width) * one,
        heads=float(shape.heads) * one,
        seq_len=float(shape.seq_len) * one,
        tp_model=lay.tp_m,
        tp_ff=lay.tp / lay.tp_m,
        sp=lay.sp,
        tokens=tokens,
        expert_tokens=busiest_rank_expert_tokens(
            expert_tokens(shape, tokens, lay.ep),
            lay.ep,
            0.0 if lay.expert_imbalance is None else lay.expert_imbalance,
        ),
        local_experts=shape.experts / lay.ep,
        mlp_matrices=shape.mlp_matrices,
        top_k=float(shape.top_k),
        dropout=shape.dropout,
    )


def expert_tokens(shape: TransformerShape, tokens: Array, ep: Array) -> Array:
    """Tokens each local expert computes per microbatch: k · e · tokens / E.

    The e ranks of an expert-parallel group each route `tokens` tokens to k experts; balanced
    routing (capacity factor 1) spreads the e·k·tokens assignments evenly over the E experts
    (Lepikhin et al. 2020, GShard §2.2; Rajbhandari et al. 2022, DeepSpeed-MoE §4).
    """
    out: Array = shape.top_k * ep * tokens / shape.experts
    return out


def run_params_per_gpu(
    shape: TransformerShape, lay: RunLayouts, layers: Array | None = None
) -> ParamsPerGpu:
    """Parameters on one GPU of a stage of `layers` layers (default: the first stage's) and
    the embedding, over t; of a mixture of experts, the attention and embedding replicated
    over d and its E/e local experts' MLPs over the d/e expert replicas (Rajbhandari et al.
    2022, DeepSpeed-MoE §4). The first stage holds the embedding and the last the output
    layer (a copy of the embedding when tied), one V·h each; a single stage with separate
    matrices holds both."""
    if layers is None:
        layers = Stages.of(shape.layers, lay.pp).first
    embedding = embedding_params(shape, lay)
    if shape.experts == 1:
        dense: Array = (layers * layer_weight_params(shape) + embedding) / lay.tp
        return ParamsPerGpu(replicated=dense, expert=np.zeros_like(dense))
    replicated = (layers * attention_weight_params(shape) + embedding) / lay.tp
    local = shape.experts / lay.ep
    return ParamsPerGpu(
        replicated=replicated, expert=layers * local * expert_weight_params(shape) / lay.tp
    )


def embedding_params(shape: TransformerShape, lay: RunLayouts) -> Array:
    """The embedding parameters an outer stage holds, over all t of its ranks: V·h, both
    matrices on a single stage with separate ones (`run_params_per_gpu`)."""
    out: Array = (
        np.where(lay.pp == 1, shape.embedding_matrices, 1) * float(shape.vocab) * shape.hidden
    )
    return out


def fp8_gather_width(
    shape: TransformerShape, lay: RunLayouts, params: ParamsPerGpu
) -> tuple[Array, Array] | None:
    """The parameter all-gather's bytes per parameter over w, (replicated, expert), of a GPU
    holding `params` where a row holds its layer weights in FP8 only (`RunLayouts.
    fp8_weights_only`: Megatron-Core's `fp8_param_gather` all-gathers them in FP8): its layers'
    weights, dense and expert, at half a word each, the embedding's at one
    (`step.assembly.Schedule.gather_width`); None where no row does."""
    only = lay.fp8_weights_only
    if only is None or not only.any():
        return None
    half = np.where(only, 0.5, 1.0)
    embedding = embedding_params(shape, lay) / lay.tp
    replicated = (embedding + half * (params.replicated - embedding)) / params.replicated
    return replicated, half


def _by_mode(modes: NDArray[np.int64], values: list[Array]) -> Array:
    """values[i] where the row's mode is `RECOMPUTE_ORDER[i]`."""
    out: Array = np.choose(modes, values)
    return out


def run_memory_bytes(
    shape: TransformerShape,
    lay: RunLayouts,
    microbatches: Array,
    fusion: Fusion,
    fp8: bool = False,
) -> Array:
    """The largest bytes of any stage: model state (ZeRO over d; expert state over the d/e
    expert replicas) and in-flight activations of the first stage (with the embedding), of
    the first stage from the front with ⌈L/p⌉ layers, and of the last stage (with the
    logits) (`memory.gpu_memory`). With `fp8` (FP8 GEMMs, docs/model.md R.11) each stage also
    holds the FP8 copies of its layers' weights, unless the row holds them in FP8 only
    (`RunLayouts.fp8_weights_only`: the FP8 weight and its transpose in the 16-bit weight's place),
    and stores its GEMM inputs in FP8."""
    stages = Stages.of(shape.layers, lay.pp)
    given = lay.microbatch_group
    group = np.where(given > 0, given, megatron_groups(lay.pp, microbatches, lay.interleave))
    tokens = lay.microbatch_seqs * shape.seq_len / lay.cp
    split = (lay.sp, lay.tp)
    h, a, s = float(shape.hidden), float(shape.heads), float(shape.seq_len)
    stored = fusion is not Fusion.FLASH
    layer = LayerShape(
        float(shape.kv_width), float(shape.ffn_hidden), shape.mlp_matrices, shape.dropout
    )
    per_mode = [
        stored_activation_bytes_per_layer(
            tokens, h, a, s, split, mode, stored, layer, shape.top_k, fp8
        )
        for mode in RECOMPUTE_ORDER
    ]
    per_layer = _by_mode(lay.recompute, per_mode)

    gradient_bytes = gradient_bytes_per_param(lay.grad_reduce_fp32)

    def stage_bytes(layers: Array, index: Array, embedding: bool) -> Array:
        params = run_params_per_gpu(shape, lay, layers)
        if not embedding:  # the embedding's share: a stage without it holds L_i layers only
            params = dataclasses.replace(
                params, replicated=params.replicated - float(shape.vocab) * h / lay.tp
            )
        state = state_bytes(params, lay.zero_stage, lay.zero_dp, lay.expert_dp, gradient_bytes)
        if fp8:  # the layers' weights, the embedding's V·h/t (held by an outer stage) aside
            layer_params = params.total - embedding * embedding_params(shape, lay) / lay.tp
            copies = fp8_weight_copy_bytes(layer_params)
            only = lay.fp8_weights_only
            if only is not None:  # FP8 weight and transpose: the 16-bit one's bytes
                copies = np.where(only, 0.0, copies)
            state = state + copies
        held = stage_in_flight_microbatches(lay.pp, microbatches, lay.interleave, index, group)
        out: Array = state + per_layer * layers * held
        return out

    first = stage_bytes(stages.first, np.zeros_like(lay.pp), True)
    full = stage_bytes(stages.full, stages.front_full, False)
    last = stage_bytes(stages.last, lay.pp - 1.0, True) + logits_bytes(
        tokens, float(shape.vocab), lay.tp
    )
    out: Array = np.maximum(
        np.maximum(first, np.where(stages.front_full < lay.pp, full, 0.0)), last
    )
    return out


def run_microbatches(batch_seqs: int, lay: RunLayouts) -> Array:
    """Each row's microbatches per step: ⌊B_seqs/(d·b)⌋ for d data-parallel ranks of
    micro-batches of b sequences."""
    out: Array = np.floor_divide(float(batch_seqs), lay.dp * lay.microbatch_seqs)
    return out


def run_costs(
    hw: HardwareSpec, physics: Physics, shape: TransformerShape, batch_seqs: int, lay: RunLayouts
) -> RunCosts:
    """Step time, throughput and per-GPU memory of each row (module docstring)."""
    m = run_microbatches(batch_seqs, lay)
    work = run_layer_work(shape, lay)
    tokens = work.tokens
    stages = Stages.of(shape.layers, lay.pp)
    modes = lay.recompute
    net = Levels.of(hw, physics)

    times = layer_times_s(hw, physics, work)
    t_layer = times.with_recompute_s(modes)
    t_mm = with_rerun_s(
        modes, times.matmul_forward_s, times.matmul_backward_s, np.zeros_like(t_layer)
    )
    a_f = times.attention_forward_s
    t_attn = with_rerun_s(modes, a_f, times.attention_backward_s, a_f)
    t_last = np.zeros_like(t_layer)
    if physics.attention:
        # ring attention overlaps the K/V exchange with the blockwise core: exposed past it;
        # all-gather based context parallelism overlaps nothing (an all-gather moves the
        # ring's bytes in as many steps)
        overlapped = np.where(lay.cp_all_gather, 0.0, 1.0)
        exposed = ring_attention_exposed_s(
            net,
            tokens,
            work.kv_width,
            lay.tp,
            lay.cp,
            overlapped * times.attention_forward_s,
            overlapped * times.attention_backward_s,
            modes,
            lay.cp_all_gather,
        )
        t_layer, t_attn = t_layer + exposed, t_attn + exposed
        t_last = _logits_matmul_s(hw, physics, shape, tokens, lay.tp)

    params = run_params_per_gpu(shape, lay)
    t_opt = None
    if physics.memory_bound_ops:
        updated = updated_params(params, lay.zero_stage, lay.zero_dp, lay.expert_dp)
        t_opt = optimizer_step_time_s(hw, physics.efficiency, updated)
    parts = LayerParts(
        t_layer_s=t_layer,
        t_gemm_s=t_mm,
        # each layer's gradients reduce while the first stage runs the backward of the layers
        # before it in its last microbatch
        t_backward_s=times.with_recompute_s(modes) - times.forward_s,
        t_forward_s=times.forward_s,
        tokens=tokens,
        recompute=modes,
        t_last_s=t_last,
    )
    tp_m = lay.tp_m
    groups = StepGroups(
        tp_model=tp_m,
        tp_ff=lay.tp / tp_m,
        sp=lay.sp,
        cp=lay.cp,
        ep=lay.ep,
        dense_dp=lay.zero_dp,
        expert_dp=lay.expert_dp,
        n_gpu=lay.n_gpu,
        hidden=float(shape.hidden),
        ffn=float(shape.ffn_hidden),
        qkv=float(shape.hidden + 2 * shape.kv_width),
        top_k=float(shape.top_k),
    )
    never = np.zeros(lay.tp.shape, dtype=bool)
    schedule = Schedule(
        pp=lay.pp,
        stages=StageLayers(stages.full, stages.last, float(shape.layers)),
        first_layers=stages.first,
        microbatches=m,
        interleave=lay.interleave,
        zero_bubble=never if lay.zero_bubble is None else lay.zero_bubble,
        overlap_tp=never if lay.overlap_tp is None else lay.overlap_tp,
        overlap_p2p=lay.overlap_p2p,
        overlap_dp=lay.overlap_dp,
        dp_overlap=never if lay.dp_overlap is None else lay.dp_overlap,
        sharded=lay.zero_stage >= 1,
        tp_overlap_in_domain=never
        if lay.tp_overlap_in_domain is None
        else lay.tp_overlap_in_domain,
        grad_reduce_fp32=lay.grad_reduce_fp32,
        gather_width=fp8_gather_width(shape, lay, params) if fp8_gemms(hw, physics) else None,
    )
    step = step_parts(
        net, physics.attention, parts, groups, schedule, params, shape.experts > 1, t_opt
    )
    t_step = step.t_step_s

    # the parts of the stage the step times: ⌈L/p⌉ layers, or the last stage's with the logits
    per_step = m * step.slowest_layers
    t_logits = np.where(step.slowest_has_logits, t_last, 0.0)
    model_flop, hw_flop = flop_per_step(physics, shape, batch_seqs, modes)
    peak = peak_flop_per_s(hw) * lay.n_gpu
    ops = times.ops if physics.memory_bound_ops else None
    return RunCosts(
        step_time_s=t_step,
        t_layer_s=t_layer,
        t_matmul_s=per_step * t_mm + m * t_logits,
        t_attention_s=per_step * t_attn if physics.attention else None,
        t_norm_s=None
        if ops is None
        else per_step
        * with_rerun_s(modes, ops.norm_forward_s, ops.norm_backward_s, ops.core_norm_forward_s),
        t_elementwise_s=None
        if ops is None
        else per_step
        * with_rerun_s(
            modes,
            ops.elementwise_forward_s,
            ops.elementwise_backward_s,
            ops.core_elementwise_forward_s,
        ),
        t_optimizer_s=t_opt,
        t_tp_comm_s=step.t_tp_comm_s,
        t_pp_comm_s=step.t_pp_comm_s,
        t_dp_comm_s=step.t_dp_comm_s,
        t_ep_comm_s=step.t_ep_comm_s,
        bubble_fraction=step.bubble_fraction,
        model_flop_per_step=model_flop,
        hardware_flop_per_step=hw_flop,
        narayanan_flop_per_step=narayanan_flop_per_step(shape, batch_seqs),
        memory_per_gpu_bytes=run_memory_bytes(
            shape, lay, m, physics.fusion, fp8_gemms(hw, physics)
        ),
        memory_capacity_bytes=memory_capacity_bytes(hw, physics),
        mfu=model_flop / (peak * t_step),
        hfu=hw_flop / (peak * t_step),
        n_gpu=lay.n_gpu,
        step=step,
    )


def _logits_matmul_s(
    hw: HardwareSpec, physics: Physics, shape: TransformerShape, tokens: Array, tp: Array
) -> Array:
    """The logits layer on the last stage (V/t x h on the microbatch's tokens): forward,
    activation and weight gradients; 0 for a model without a vocabulary (the grid's)."""
    if shape.vocab == 0:
        return np.zeros_like(tokens)
    d1, d2 = shape.vocab / tp, np.full_like(tp, float(shape.hidden))
    n = tp.size
    t = matmul_calls_s(
        hw,
        physics,
        np.concatenate([d1, d2, d1]),
        np.concatenate([d2, d1, d2]),
        np.tile(tokens, 3),
        np.repeat(np.array([False, False, True]), n),
        in_layer=False,
    ).reshape(3, n)
    out: Array = t[0] + t[1] + t[2]
    return out


def evaluate_run(hw: HardwareSpec, physics: Physics, run: RunSpec) -> RunCost:
    """Step time, throughput and per-GPU memory of one run: a batch of one (`run_costs`)."""
    lay = RunLayouts.of([run.layout])
    return run_costs(hw, physics, run.shape, run.global_batch_seqs, lay).row(0)


@dataclass(frozen=True, slots=True)
class LayerBreakdown:
    """One layer, one microbatch, forward and backward on one GPU, by Ivanov et al.'s classes."""

    tensor_contraction_s: float
    """Weight matmuls and the attention core's batched GEMMs."""
    normalization_s: float
    elementwise_s: float

    @property
    def total_s(self) -> float:
        """Sum of the three classes."""
        return self.tensor_contraction_s + self.normalization_s + self.elementwise_s


def layer_breakdown(hw: HardwareSpec, physics: Physics, run: RunSpec) -> LayerBreakdown:
    """Time of one encoder/decoder layer by operator class (no recompute, no communication),
    every part of the layer on (attention and memory-bound operators)."""
    every = dataclasses.replace(physics, attention=True, memory_bound_ops=True)
    lay = RunLayouts.of([dataclasses.replace(run.layout, ep=1)])
    t: LayerTimes = layer_times_s(hw, every, run_layer_work(run.shape, lay))
    ops = t.ops
    return LayerBreakdown(
        float(
            (
                t.matmul_forward_s
                + t.matmul_backward_s
                + t.attention_forward_s
                + t.attention_backward_s
            )[0]
        ),
        float((ops.norm_forward_s + ops.norm_backward_s)[0]),
        float((ops.elementwise_forward_s + ops.elementwise_backward_s)[0]),
    )
