"""One concrete training run as frameworks run it: a transformer on a Megatron-style layout.

Layout (Narayanan et al. 2021, arXiv:2104.04473; Korthikanti et al. 2022, arXiv:2205.05198):
1-D tensor parallelism over t GPUs (column- then row-parallel matrices) with optional
sequence parallelism, pipeline parallelism over p stages with the interleaved 1F1B
schedule of v chunks, data parallelism over d replicas with ZeRO stages 0-3, context
parallelism over c GPUs, whole-sequence microbatches of b sequences, and for a mixture of
experts, expert parallelism over e of the data-parallel ranks. Megatron's rank order puts
tensor parallelism innermost, then context, expert, data, then pipeline parallelism.

The step on one GPU (docs/model.md, "Realistic physics"):
  t_mb    = (L/p) · (t_layer + t_tp + t_ep) + t_last    one microbatch on the slowest (last) stage
  t_pipe  = (m + (p − 1)/v) · t_mb + m · t_p2p           1F1B with its bubble (p − 1)/(v·m)
  t_step  = t_pipe + t_dp + t_optimizer                  gradient all-reduce and Adam step exposed
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from pipeline.model.compute.efficiency import BLACKWELL_SMEM_RELIEF, has_tensor_memory
from pipeline.model.compute.flop import (
    attention_core_forward_flop,
    attention_weight_params,
    expert_weight_params,
    hardware_flop_per_step,
    layer_weight_params,
    model_flop_per_step,
    narayanan_flop_per_step,
)
from pipeline.model.compute.matmul import matmul_terms_s
from pipeline.model.compute.memory_ops import (
    MemoryOp,
    OpClass,
    layer_memory_ops,
    layer_tensors,
    op_time_s,
    optimizer_step_time_s,
)
from pipeline.model.memory.gpu_memory import (
    activation_bytes_per_layer,
    in_flight_microbatches,
    logits_bytes,
    model_state_bytes_per_param,
    routed_activation_bytes_per_layer,
)
from pipeline.model.records.hardware import HardwareSpec, effective_flop_per_s, peak_flop_per_s
from pipeline.model.records.run import RunCost, RunLayout, RunSpec
from pipeline.model.records.switches import Fusion, Physics, Recompute
from pipeline.model.records.transformer import TransformerShape

WORD_BYTES = 2.0


def _matmul_pass_s(
    hw: HardwareSpec, physics: Physics, d1: float, d2: float, tokens: float
) -> tuple[float, float, float]:
    """(forward, activation-gradient, weight-gradient) time of a d1 x d2 weight on `tokens`.

    The paper's roofline over HBM, L2, shared memory and FLOP (docs/model.md §5) with the
    per-call overhead of the physics; tensor memory relieves the shared-memory term.
    """
    d1s = np.array([d1, d2, d1], dtype=np.float64)
    d2s = np.array([d2, d1, d2], dtype=np.float64)
    wg = np.array([False, False, True])
    t = matmul_terms_s(hw, d1s, d2s, np.full(3, tokens), wg)
    relief = BLACKWELL_SMEM_RELIEF if physics.tensor_memory and has_tensor_memory(hw) else 1.0
    smem = t.smem_s / relief
    flop = t.flop_s / physics.efficiency.matmul
    roof = np.maximum(np.maximum(t.hbm_s, t.l2_s), np.maximum(smem, flop))
    overhead = physics.efficiency.matmul_overhead_s
    roof = roof + (hw.matmul_latency_s if overhead is None else overhead)
    return float(roof[0]), float(roof[1]), float(roof[2])


def layer_weight_shapes(
    shape: TransformerShape, tp: int, attention: bool = True
) -> list[tuple[float, float]]:
    """(rows, cols) of one layer's weight matrices on one tensor-parallel rank.

    QKV and the MLP's up (and gate) matrices are split by rows (column-parallel), the
    attention output and MLP down matrices by columns (row-parallel) (Shoeybi et al. 2019).
    Without attention, the MLP's matrices only (the paper's workload).
    """
    h, f = float(shape.hidden), float(shape.ffn_hidden)
    up = (shape.mlp_matrices - 1) * f
    mlp = [(up / tp, h), (h, f / tp)]
    if not attention:
        return mlp
    return [((h + 2.0 * shape.kv_width) / tp, h), (h, h / tp), *mlp]


def layer_matmul_time_s(
    hw: HardwareSpec,
    physics: Physics,
    shape: TransformerShape,
    tokens: float,
    tp: int,
    ep: int = 1,
) -> tuple[float, float]:
    """(forward, backward) time of one layer's weight matmuls on one GPU (the projections
    only when `physics.attention` is on).

    With E > 1 experts, the GPU runs its E/e local experts' MLP GEMMs one after the other,
    each on `expert_tokens` tokens (Megatron-Core's sequential or grouped expert GEMMs).
    """
    fwd = bwd = 0.0
    if shape.experts == 1:
        for d1, d2 in layer_weight_shapes(shape, tp, physics.attention):
            f, a, w = _matmul_pass_s(hw, physics, d1, d2, tokens)
            fwd, bwd = fwd + f, bwd + a + w
        return fwd, bwd
    mlp = layer_weight_shapes(shape, tp, attention=False)
    for d1, d2 in layer_weight_shapes(shape, tp, physics.attention)[: -len(mlp)]:
        f, a, w = _matmul_pass_s(hw, physics, d1, d2, tokens)
        fwd, bwd = fwd + f, bwd + a + w
    local = shape.experts / ep
    for d1, d2 in mlp:
        f, a, w = _matmul_pass_s(hw, physics, d1, d2, expert_tokens(shape, tokens, ep))
        fwd, bwd = fwd + local * f, bwd + local * (a + w)
    return fwd, bwd


def expert_tokens(shape: TransformerShape, tokens: float, ep: int) -> float:
    """Tokens each local expert computes per microbatch: k · e · tokens / E.

    The e ranks of an expert-parallel group each route `tokens` tokens to k experts; balanced
    routing (capacity factor 1) spreads the e·k·tokens assignments evenly over the E experts
    (Lepikhin et al. 2020, GShard §2.2; Rajbhandari et al. 2022, DeepSpeed-MoE §4).
    """
    return shape.top_k * ep * tokens / shape.experts


def attention_core_time_s(
    hw: HardwareSpec, physics: Physics, shape: TransformerShape, micro_seqs: float, tp: int, cp: int
) -> tuple[float, float]:
    """(forward, backward) time of QK^T and AV on one GPU for one microbatch.

    FLOP run at F_peak·u_eff·attention_matmul; without flash the s x s scores are written
    by QK^T and read by AV in HBM (backward: twice the traffic), the roofline maximum of
    the two. Flash (Dao et al. 2022) reads Q, K, V and writes O only. Two batched GEMM
    launches forward, four backward, one flash kernel each way.
    """
    eff = physics.efficiency
    tokens = micro_seqs * shape.seq_len / cp
    flop_fwd = attention_core_forward_flop(shape, tokens) / tp
    rate = effective_flop_per_s(hw) * eff.matmul * eff.attention_matmul
    qkvo = WORD_BYTES * tokens * (2.0 * shape.hidden + 2.0 * shape.kv_width) / tp
    overhead = hw.matmul_latency_s if eff.matmul_overhead_s is None else eff.matmul_overhead_s
    if physics.fusion is Fusion.FLASH:
        fwd_bytes, bwd_bytes, launches = qkvo, 2.5 * qkvo, (1, 1)
    else:
        scores = micro_seqs * (shape.heads / tp) * shape.seq_len * (shape.seq_len / cp)
        fwd_bytes = qkvo + 2.0 * WORD_BYTES * scores
        bwd_bytes = 2.0 * fwd_bytes
        launches = (2, 4)
    hbm = hw.hbm_bandwidth_bytes_per_s
    fwd = max(flop_fwd / rate, fwd_bytes / hbm) + launches[0] * overhead
    bwd = max(2.0 * flop_fwd / rate, bwd_bytes / hbm) + launches[1] * overhead
    return fwd, bwd


def class_times_s(
    hw: HardwareSpec, physics: Physics, ops: list[MemoryOp], recompute: Recompute
) -> dict[OpClass, float]:
    """Per-class time of a layer's memory-bound kernels, forward + backward + recomputed forward."""
    out = {OpClass.NORM: 0.0, OpClass.ELEMENTWISE: 0.0}
    for op in ops:
        fwd = op_time_s(hw, physics.efficiency, op, physics.fusion, backward=False)
        bwd = op_time_s(hw, physics.efficiency, op, physics.fusion, backward=True)
        again = recompute is Recompute.FULL or (
            recompute is Recompute.SELECTIVE and op.attention_core
        )
        out[op.op_class] += fwd + bwd + (fwd if again else 0.0)
    return out


def allreduce_time_s(p: int, bytes_: float, bandwidth: float, latency: float, eff: float) -> float:
    """Ring all-reduce: 2(p − 1)/p · bytes / (BW/2 · efficiency) + 2(p − 1)·λ; 0 for p = 1.

    BW is the bidirectional per-GPU bandwidth of the level the ring crosses (Patarasuk &
    Yuan 2009; NCCL's bus bandwidth).
    """
    if p <= 1:
        return 0.0
    return 2.0 * (p - 1) / p * bytes_ / (bandwidth / 2.0 * eff) + 2.0 * (p - 1) * latency


def group_level(hw: HardwareSpec, inner: int, size: int) -> int:
    """Network level a group of `size` GPUs at stride `inner` spans: the first level whose
    cumulative size holds inner · size GPUs (Megatron's rank order, tensor ranks innermost)."""
    span = inner * size
    product = 1
    for level, s in enumerate(hw.level_sizes):
        product *= s
        if span <= product:
            return level
    return len(hw.level_sizes)


def parameters_per_gpu(shape: TransformerShape, layout: RunLayout) -> float:
    """Parameters on one GPU of the first stage: (L/p) layers and the embedding, over t;
    of a mixture of experts, its E/e local experts only (`expert_parameters_per_gpu`)."""
    layers = shape.layers / layout.pp
    if shape.experts == 1:
        dense = layers * layer_weight_params(shape) + float(shape.vocab) * shape.hidden
        return dense / layout.tp
    return dense_parameters_per_gpu(shape, layout) + expert_parameters_per_gpu(shape, layout)


def dense_parameters_per_gpu(shape: TransformerShape, layout: RunLayout) -> float:
    """Parameters replicated over all d data-parallel ranks: of a mixture of experts, the
    attention of its L/p layers and the embedding, over t; of a dense run, all of them."""
    if shape.experts == 1:
        return parameters_per_gpu(shape, layout)
    layers = shape.layers / layout.pp
    return (layers * attention_weight_params(shape) + float(shape.vocab) * shape.hidden) / layout.tp


def expert_parameters_per_gpu(shape: TransformerShape, layout: RunLayout) -> float:
    """Expert parameters on one GPU: (L/p) · (E/e) · k·h·f / t, 0 for a dense run.

    Experts are sharded over the e expert-parallel ranks (each holds E/e whole experts) and
    each expert over the t tensor-parallel ranks (Rajbhandari et al. 2022, DeepSpeed-MoE §4;
    Megatron-Core's expert parallelism with expert tensor parallelism t).
    """
    if shape.experts == 1:
        return 0.0
    local = shape.experts / layout.ep
    return shape.layers / layout.pp * local * expert_weight_params(shape) / layout.tp


def memory_per_gpu_bytes(
    shape: TransformerShape, layout: RunLayout, microbatches: int, fusion: Fusion
) -> float:
    """Model state (ZeRO over dp; expert state over the d/e expert replicas) and in-flight
    activations of the first stage, plus the logits of the last stage: an upper bound on any
    one stage's bytes."""
    state = dense_parameters_per_gpu(shape, layout) * model_state_bytes_per_param(
        layout.zero_stage, layout.dp
    )
    if shape.experts > 1:
        state += expert_parameters_per_gpu(shape, layout) * model_state_bytes_per_param(
            layout.zero_stage, layout.expert_dp
        )
    per_layer = activation_bytes_per_layer(
        shape.seq_len,
        layout.microbatch_seqs,
        shape.hidden,
        shape.heads,
        layout.tp,
        layout.sequence_parallel,
        layout.recompute,
        fusion,
        layout.cp,
    ) + routed_activation_bytes_per_layer(
        shape.seq_len,
        layout.microbatch_seqs,
        shape.hidden,
        shape.top_k,
        layout.tp,
        layout.sequence_parallel,
        layout.recompute,
        layout.cp,
    )
    held = in_flight_microbatches(layout.pp, microbatches, layout.interleave)
    activations = per_layer * (shape.layers / layout.pp) * held
    logits = logits_bytes(shape.seq_len, layout.microbatch_seqs, shape.vocab, layout.tp, layout.cp)
    return state + activations + logits


def tp_comm_per_layer_s(hw: HardwareSpec, physics: Physics, run: RunSpec) -> float:
    """Tensor-parallel collectives of one layer and microbatch on the critical path: 2 forward,
    2 backward and 2 more under full recomputation, each of w·b·s·h bytes (an all-reduce, or
    an all-gather plus a reduce-scatter with sequence parallelism)."""
    lay = run.layout
    level = group_level(hw, 1, lay.tp)
    collectives = 4 + (2 if lay.recompute is Recompute.FULL else 0)
    return collectives * allreduce_time_s(
        lay.tp,
        activation_message_bytes(run),
        hw.net_bandwidth_bytes_per_s[level],
        hw.net_latency_s[level],
        physics.efficiency.network,
    )


def activation_message_bytes(run: RunSpec) -> float:
    """w·b·s·h/c: one microbatch's hidden activations on one context-parallel rank."""
    shape, lay = run.shape, run.layout
    return WORD_BYTES * lay.microbatch_seqs * shape.seq_len / lay.cp * shape.hidden


def cp_kv_exchange_s(hw: HardwareSpec, physics: Physics, run: RunSpec) -> float:
    """Ring attention's forward K/V exchange of one layer and microbatch on one GPU, in s.

    Each of c context-parallel ranks passes its K and V shard around the ring, c − 1 sends of
    b·(s/c)·h_kv/t words each: 2·(c − 1)/c · b·s·h_kv/t · w bytes, h_kv = kv_heads · d_head,
    at the unidirectional link bandwidth, plus (c − 1) hops of latency; 0 for c = 1 (Liu et
    al. 2023, "Ring Attention with Blockwise Transformers", arXiv:2310.01889). The backward
    pass sends K, V and their gradients: twice this.
    """
    shape, lay = run.shape, run.layout
    if lay.cp == 1:
        return 0.0
    level = group_level(hw, lay.tp, lay.cp)
    h_kv = shape.kv_heads * (shape.hidden / shape.heads)
    bytes_ = (
        2.0 * (lay.cp - 1) / lay.cp * lay.microbatch_seqs * shape.seq_len * h_kv / lay.tp
    ) * WORD_BYTES
    bw = hw.net_bandwidth_bytes_per_s[level] / 2.0 * physics.efficiency.network
    return bytes_ / bw + (lay.cp - 1) * hw.net_latency_s[level]


def p2p_per_microbatch_s(hw: HardwareSpec, physics: Physics, run: RunSpec) -> float:
    """Pipeline sends of one microbatch on one GPU: 1/t of the activation per rank
    (scatter/gather) per chunk boundary, forward and backward (Narayanan et al. 2021 §4.1)."""
    lay = run.layout
    if lay.pp == 1:
        return 0.0
    level = group_level(hw, lay.tp * lay.dp, lay.pp)
    bw = hw.net_bandwidth_bytes_per_s[level] / 2.0 * physics.efficiency.network
    one = activation_message_bytes(run) / lay.tp / bw + hw.net_latency_s[level]
    return 2.0 * lay.interleave * one


def dp_allreduce_s(hw: HardwareSpec, physics: Physics, run: RunSpec) -> float:
    """Gradient all-reduce (w bytes per parameter of the GPU) over the data-parallel group,
    after the pipeline (ZeRO's reduce-scatter plus all-gather moves the same bytes).

    A mixture of experts reduces its expert gradients apart, over the d/e replicas of each
    expert shard at stride t·c·e (DeepSpeed-MoE's expert-data-parallel group, Rajbhandari
    et al. 2022 §4; Megatron-Core's rank order tp-cp-ep-dp-pp).
    """
    lay = run.layout
    level = group_level(hw, lay.tp, lay.dp)
    dense = allreduce_time_s(
        lay.dp,
        WORD_BYTES * dense_parameters_per_gpu(run.shape, lay),
        hw.net_bandwidth_bytes_per_s[level],
        hw.net_latency_s[level],
        physics.efficiency.network,
    )
    if run.shape.experts == 1:
        return dense
    level = group_level(hw, lay.tp * lay.cp * lay.ep, lay.expert_dp)
    return dense + allreduce_time_s(
        lay.expert_dp,
        WORD_BYTES * expert_parameters_per_gpu(run.shape, lay),
        hw.net_bandwidth_bytes_per_s[level],
        hw.net_latency_s[level],
        physics.efficiency.network,
    )


def all_to_all_time_s(p: int, bytes_: float, bandwidth: float, latency: float, eff: float) -> float:
    """All-to-all of `bytes_` per GPU over p GPUs: (p − 1)/p · bytes / (BW/2 · efficiency)
    + (p − 1)·λ; 0 for p = 1.

    Each GPU keeps 1/p of its data and sends the rest, one peer per step (pairwise exchange:
    Thakur et al. 2005, "Optimization of collective communication operations in MPICH"),
    at the unidirectional bandwidth of the level the group spans.
    """
    if p <= 1:
        return 0.0
    return (p - 1) / p * bytes_ / (bandwidth / 2.0 * eff) + (p - 1) * latency


def ep_dispatch_bytes(run: RunSpec) -> float:
    """Bytes one GPU sends in one all-to-all of one MoE layer and microbatch: w · h · k per token.

    Each of its b·s/c tokens goes to k experts (Lepikhin et al. 2020, GShard §2.2; top-k
    gating). With sequence parallelism the t tensor-parallel ranks each dispatch 1/t of the
    tokens (Megatron-Core); without it every rank holds and sends all of them.
    """
    lay = run.layout
    split = lay.tp if lay.sequence_parallel else 1
    return run.shape.top_k * activation_message_bytes(run) / split


def ep_comm_per_layer_s(hw: HardwareSpec, physics: Physics, run: RunSpec) -> float:
    """Expert parallelism's all-to-alls of one MoE layer and microbatch on the critical path:
    dispatch and combine forward, their transposes backward, and again forward under full
    recomputation (Rajbhandari et al. 2022, DeepSpeed-MoE §5.1; Lepikhin et al. 2020 §2.2).
    The e ranks sit at stride t·c (Megatron-Core's tp-cp-ep-dp-pp order); 0 for e = 1.
    """
    lay = run.layout
    if lay.ep == 1:
        return 0.0
    level = group_level(hw, lay.tp * lay.cp, lay.ep)
    collectives = 4 + (2 if lay.recompute is Recompute.FULL else 0)
    return collectives * all_to_all_time_s(
        lay.ep,
        ep_dispatch_bytes(run),
        hw.net_bandwidth_bytes_per_s[level],
        hw.net_latency_s[level],
        physics.efficiency.network,
    )


def run_flop_per_step(physics: Physics, run: RunSpec) -> tuple[float, float]:
    """(model, hardware) FLOP of one step; without attention the paper's MLP-only workload."""
    shape, mode, batch = run.shape, run.layout.recompute, run.global_batch_seqs
    if physics.attention:
        return model_flop_per_step(shape, batch), hardware_flop_per_step(shape, batch, mode)
    mlp_params = shape.top_k * shape.mlp_matrices * float(shape.hidden) * shape.ffn_hidden
    model_flop = 6.0 * shape.layers * mlp_params * batch * shape.seq_len
    return model_flop, model_flop * (4.0 / 3.0 if mode is Recompute.FULL else 1.0)


def evaluate_run(hw: HardwareSpec, physics: Physics, run: RunSpec) -> RunCost:
    """Step time, throughput and per-GPU memory of one run (module docstring)."""
    shape, lay = run.shape, run.layout
    micro = float(lay.microbatch_seqs)
    m = run.global_batch_seqs // (lay.dp * lay.microbatch_seqs)
    tokens = micro * shape.seq_len / lay.cp
    layers_per_stage = shape.layers / lay.pp
    mode = lay.recompute

    mm_fwd, mm_bwd = layer_matmul_time_s(hw, physics, shape, tokens, lay.tp, lay.ep)
    t_mm = mm_fwd + mm_bwd + (mm_fwd if mode is Recompute.FULL else 0.0)
    t_attn = t_last = 0.0
    if physics.attention:
        a_fwd, a_bwd = attention_core_time_s(hw, physics, shape, micro, lay.tp, lay.cp)
        # ring attention overlaps the K/V exchange with the blockwise core: exposed past it
        ring = cp_kv_exchange_s(hw, physics, run)
        a_fwd, a_bwd = max(a_fwd, ring), max(a_bwd, 2.0 * ring)
        t_attn = a_fwd + a_bwd + (a_fwd if mode is not Recompute.NONE else 0.0)
        # logits on the last stage: forward, activation and weight gradients
        t_last = sum(_matmul_pass_s(hw, physics, shape.vocab / lay.tp, shape.hidden, tokens))
    classes = {OpClass.NORM: 0.0, OpClass.ELEMENTWISE: 0.0}
    if physics.memory_bound_ops:
        x = layer_tensors(shape, micro, lay.tp, lay.cp, lay.sequence_parallel)
        if shape.top_k > 1:  # each token's MLP activations, once per routed expert
            x = dataclasses.replace(x, ffn=shape.top_k * x.ffn)
        classes = class_times_s(hw, physics, layer_memory_ops(x, physics.fusion), mode)
    t_tp = tp_comm_per_layer_s(hw, physics, run)
    t_ep = ep_comm_per_layer_s(hw, physics, run)
    t_layer = t_mm + t_attn + classes[OpClass.NORM] + classes[OpClass.ELEMENTWISE]
    t_mb = layers_per_stage * (t_layer + t_tp) + t_last
    if t_ep:
        t_mb += layers_per_stage * t_ep

    t_p2p = p2p_per_microbatch_s(hw, physics, run)
    bubble = (lay.pp - 1) / (lay.interleave * m)
    t_pipe = (m + (lay.pp - 1) / lay.interleave) * t_mb + m * t_p2p
    t_dp = dp_allreduce_s(hw, physics, run)
    t_opt = 0.0
    if physics.memory_bound_ops:
        updated = parameters_per_gpu(shape, lay) / (lay.dp if lay.zero_stage >= 1 else 1)
        if shape.experts > 1 and lay.zero_stage >= 1:  # expert state sharded over d/e
            updated = (
                dense_parameters_per_gpu(shape, lay) / lay.dp
                + expert_parameters_per_gpu(shape, lay) / lay.expert_dp
            )
        t_opt = optimizer_step_time_s(hw, physics.efficiency, updated)
    t_step = t_pipe + t_dp + t_opt

    per_step = m * layers_per_stage
    model_flop, hw_flop = run_flop_per_step(physics, run)
    memory = memory_per_gpu_bytes(shape, lay, m, physics.fusion)
    peak = peak_flop_per_s(hw) * lay.n_gpu
    ops = physics.memory_bound_ops
    return RunCost(
        step_time_s=t_step,
        t_matmul_s=m * (layers_per_stage * t_mm + t_last),
        t_attention_s=per_step * t_attn if physics.attention else None,
        t_norm_s=per_step * classes[OpClass.NORM] if ops else None,
        t_elementwise_s=per_step * classes[OpClass.ELEMENTWISE] if ops else None,
        t_optimizer_s=t_opt if ops else None,
        t_tp_comm_s=per_step * t_tp,
        t_pp_comm_s=m * t_p2p,
        t_dp_comm_s=t_dp,
        t_ep_comm_s=per_step * t_ep,
        t_latency_s=0.0,
        bubble_fraction=bubble / (1.0 + bubble),
        model_flop_per_step=model_flop,
        hardware_flop_per_step=hw_flop,
        narayanan_flop_per_step=narayanan_flop_per_step(shape, run.global_batch_seqs),
        memory_per_gpu_bytes=memory,
        fits_memory=memory <= hw.hbm_bytes,
        mfu=model_flop / (peak * t_step),
        hfu=hw_flop / (peak * t_step),
        n_gpu=lay.n_gpu,
    )


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
    """Time of one encoder/decoder layer by operator class (no recompute, no communication)."""
    shape, lay = run.shape, run.layout
    micro = float(lay.microbatch_seqs)
    tokens = micro * shape.seq_len / lay.cp
    mm_fwd, mm_bwd = layer_matmul_time_s(hw, physics, shape, tokens, lay.tp)
    a_fwd, a_bwd = attention_core_time_s(hw, physics, shape, micro, lay.tp, lay.cp)
    x = layer_tensors(shape, micro, lay.tp, lay.cp, lay.sequence_parallel)
    classes = class_times_s(hw, physics, layer_memory_ops(x, physics.fusion), Recompute.NONE)
    return LayerBreakdown(
        mm_fwd + mm_bwd + a_fwd + a_bwd, classes[OpClass.NORM], classes[OpClass.ELEMENTWISE]
    )
