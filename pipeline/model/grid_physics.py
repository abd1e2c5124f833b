"""Realistic physics for the scaling-law grid's layouts, vectorized over candidates.

The paper's grid model is L identical MLP blocks (docs/model.md §3). With extensions on,
each candidate layout's per-layer, per-microbatch time gains the attention projections
(4·d² weights: the shapes of one d x 4d MLP matrix), the attention core and the fused
memory-bound operators; its weight matmuls run at the physics' matmul efficiency (and, on
Blackwell, with tensor memory); each GPU must hold its weights, gradients, Adam state
(ZeRO over data parallel) and in-flight activations; and the recomputation mode is chosen
per layout (docs/model.md, "Realistic physics", "On the grid").

Attention heads have d_head = 128 (a = d_model / 128). The logits layer is not on the grid
(the scaling laws have no vocabulary).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.gpu_memory import (
    ADAM_STATE_BYTES_PER_PARAM,
    GRADIENT_BYTES_PER_PARAM,
    WEIGHT_BYTES_PER_PARAM,
)
from pipeline.model.hardware import HardwareSpec, effective_flop_per_s, useful_l2_bytes
from pipeline.model.matmul import matmul_terms_s
from pipeline.model.memory_ops import ADAM_STEP_BYTES_PER_PARAM, MASK_BYTES, WORD_BYTES
from pipeline.model.physics import Fusion, Physics, Recompute, TensorParallel
from pipeline.model.scaling import ModelShape
from pipeline.model.training_run import BLACKWELL_SMEM_RELIEF, has_tensor_memory

Array = NDArray[np.float64]
GRID_HEAD_DIM = 128
"""d_head of the grid's models (a = d_model / 128), as in GPT-3 and Llama models above 6B."""
RECOMPUTE_ORDER = (Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL)
"""Modes tried under recompute=auto, cheapest first: the first that fits is kept."""


def _matmul_calls_s(
    hw: HardwareSpec,
    physics: Physics,
    calls: list[tuple[Array, Array, bool]],
    b: Array,
) -> list[Array]:
    """Time of each (d1, d2, weight-gradient) matmul call on b tokens, per the run model's
    roofline: the paper's terms with the matmul efficiency, Blackwell's shared-memory relief
    and the per-call overhead. One `matmul_terms_s` call for all (the arithmetic is
    element-wise, so batching changes no value)."""
    n = b.size
    d1s = np.concatenate([d1 for d1, _, _ in calls])
    d2s = np.concatenate([d2 for _, d2, _ in calls])
    wg = np.repeat(np.array([g for _, _, g in calls]), n)
    t = matmul_terms_s(hw, d1s, d2s, np.tile(b, len(calls)), wg)
    relief = BLACKWELL_SMEM_RELIEF if physics.tensor_memory and has_tensor_memory(hw) else 1.0
    flop = t.flop_s / physics.efficiency.matmul
    roof = np.maximum(np.maximum(t.hbm_s, t.l2_s), np.maximum(t.smem_s / relief, flop))
    overhead = physics.efficiency.matmul_overhead_s
    roof = roof + (hw.matmul_latency_s if overhead is None else overhead)
    return list(roof.reshape(len(calls), n))


@dataclass(frozen=True, slots=True)
class LayerTimes:
    """Per layer, per microbatch, per expert on one GPU: forward and backward, and the
    forward parts rerun under selective and full recomputation."""

    forward_s: Array
    backward_s: Array
    core_forward_s: Array
    """The attention core's forward time (rerun under selective recomputation)."""
    core_backward_s: Array | None = None
    """The attention core's backward time (what a context-parallel ring hides behind)."""

    def with_recompute_s(self, modes: NDArray[np.int64]) -> Array:
        """Layer time under each row's mode (index into `RECOMPUTE_ORDER`)."""
        again = np.where(modes == 2, self.forward_s, np.where(modes == 1, self.core_forward_s, 0.0))
        out: Array = self.forward_s + self.backward_s + again
        return out


def sequence_parallel_degree(physics: Physics, tp_model: Array, tp_ff: Array) -> Array:
    """Ways a layer's norm, dropout and residual activations are split on a TP group.

    The paper's 2-D layouts split them along d_model over N_TPm. A 1-D layout (N_TPm = 1)
    outside `tensor_parallel=2d` runs Megatron's sequence parallelism: split over tokens
    N_TP ways (Korthikanti et al. 2022 §4.2.2).
    """
    if physics.tensor_parallel is TensorParallel.TWO_D:
        return tp_model
    out: Array = np.where(tp_model == 1.0, tp_model * tp_ff, tp_model)
    return out


def _memory_ops_s(hw: HardwareSpec, physics: Physics, bytes_: list[Array]) -> list[Array]:
    """Fused memory-bound kernels, each moving `bytes_[i]` (per candidate): bytes at the
    (L2 or HBM) bandwidth fraction + a kernel overhead."""
    eff = physics.efficiency
    moved = np.stack(bytes_)
    bw = np.where(
        moved <= useful_l2_bytes(hw), hw.l2_bandwidth_bytes_per_s, hw.hbm_bandwidth_bytes_per_s
    )
    return list(moved / (bw * eff.fused_bandwidth) + eff.kernel_overhead_s)


def grid_layer_times(
    hw: HardwareSpec,
    physics: Physics,
    shape: ModelShape,
    tp_model: Array,
    tp_ff: Array,
    nano: Array,
) -> LayerTimes:
    """Per-layer times of grid candidates (`nano`: tokens per expert per microbatch)."""
    dm = float(shape.d_model)
    dm_shard = np.floor(dm / tp_model)
    df_shard = np.floor(float(shape.d_ff) / tp_ff)
    # W1 (d_ff x d): forward (df, dm), data gradient (dm, df), weight gradient (df, dm);
    # W2 (d x d_ff) runs the same two non-gradient shapes the other way round.
    proj = np.floor(4.0 * dm / tp_ff)  # the four d x d projections: one d x 4d matrix
    own_proj = physics.attention and not np.array_equal(proj, df_shard)
    calls = [
        (df_shard, dm_shard, False),
        (dm_shard, df_shard, False),
        (df_shard, dm_shard, True),
        (dm_shard, df_shard, True),
    ]
    if own_proj:
        calls += [(proj, dm_shard, False), (dm_shard, proj, False), (proj, dm_shard, True)]
    t = _matmul_calls_s(hw, physics, calls, nano)
    w1_f, w1_b = t[0], t[1] + t[2]
    w2_f, w2_b = t[1], t[0] + t[3]
    fwd, bwd = w1_f + w2_f, w1_b + w2_b
    core = np.zeros_like(fwd)
    core_b = np.zeros_like(fwd)
    tp = tp_model * tp_ff
    if physics.attention:
        p_f, p_b = (t[4], t[5] + t[6]) if own_proj else (w1_f, w1_b)
        eff = physics.efficiency
        rate = effective_flop_per_s(hw) * eff.matmul * eff.attention_matmul
        flop = 4.0 * nano * shape.seq_len * dm / tp
        heads = dm / GRID_HEAD_DIM / tp
        scores = nano * heads * shape.seq_len
        qkvo = WORD_BYTES * nano * 4.0 * dm / tp
        flash = physics.fusion is Fusion.FLASH
        traffic = qkvo if flash else qkvo + 2.0 * WORD_BYTES * scores
        overhead = hw.matmul_latency_s if eff.matmul_overhead_s is None else eff.matmul_overhead_s
        hbm = hw.hbm_bandwidth_bytes_per_s
        core = np.maximum(flop / rate, traffic / hbm) + (1 if flash else 2) * overhead
        core_b = np.maximum(2.0 * flop / rate, 2.0 * traffic / hbm) + (1 if flash else 4) * overhead
        if physics.memory_bound_ops and not flash:  # scale-mask-softmax and attention dropout
            softmax_f, dropout, softmax_b = _memory_ops_s(
                hw,
                physics,
                [
                    2 * WORD_BYTES * scores,
                    (2 * WORD_BYTES + MASK_BYTES) * scores,
                    3 * WORD_BYTES * scores,
                ],
            )
            core = core + softmax_f + dropout
            core_b = core_b + softmax_b + dropout
        fwd, bwd = fwd + p_f + core, bwd + p_b + core_b
    if physics.memory_bound_ops:
        sp = sequence_parallel_degree(physics, tp_model, tp_ff)
        hidden = nano * dm / sp
        ffn = nano * shape.d_ff / tp_ff
        norm_f, norm_b, add, act_f, act_b = _memory_ops_s(
            hw,
            physics,
            [
                2 * WORD_BYTES * hidden,
                3 * WORD_BYTES * hidden,
                (3 * WORD_BYTES + MASK_BYTES) * hidden,  # bias + dropout + residual add
                2 * WORD_BYTES * ffn,
                3 * WORD_BYTES * ffn,
            ],
        )
        fwd = fwd + 2 * norm_f + 2 * add + act_f
        bwd = bwd + 2 * norm_b + 2 * add + act_b
    return LayerTimes(fwd, bwd, core, core_b)


def ring_level(level_sizes: tuple[int, ...], tp: Array, cp: Array) -> NDArray[np.int64]:
    """Network level of each context-parallel group: the first whose cumulative size holds its
    t·c GPUs (Megatron's rank order, tensor ranks innermost, then context ranks, as
    `training_run.group_level`)."""
    cumulative = np.cumprod(np.array(level_sizes, dtype=np.float64))
    return np.searchsorted(cumulative, tp * cp, side="left").astype(np.int64)


def ring_exchange_s(
    shape: ModelShape,
    tp: Array,
    cp: Array,
    nano: Array,
    bandwidth_bytes_per_s: Array,
    latency_s: Array,
) -> Array:
    """Ring attention's forward K/V exchange of one layer call on one GPU, in s: c − 1 sends of
    the rank's K and V shards, 2·nano·d/t words each, at the unidirectional rate BW/2 of the
    group's level, plus c − 1 hops; 0 for c = 1 (Liu et al. 2023, "Ring Attention with
    Blockwise Transformers", arXiv:2310.01889; as `training_run.cp_kv_exchange_s`)."""
    sends = cp - 1.0
    bytes_ = sends * (2.0 * nano * float(shape.d_model) / tp) * WORD_BYTES
    return bytes_ / (bandwidth_bytes_per_s / 2.0) + sends * latency_s


def ring_exposed_s(ring_forward_s: Array, times: LayerTimes, reruns: Array) -> Array:
    """What a layer call's ring exchange adds past the attention core it overlaps with: forward
    max(0, ring − core) once plus once per recomputed forward (`reruns`), backward (K, V and
    their gradients) max(0, 2·ring − core_backward)."""
    core_b = times.core_backward_s if times.core_backward_s is not None else 0.0
    forward = np.maximum(ring_forward_s - times.core_forward_s, 0.0) * (1.0 + reruns)
    out: Array = forward + np.maximum(2.0 * ring_forward_s - core_b, 0.0)
    return out


def grid_params_per_gpu(
    physics: Physics, shape: ModelShape, tp: Array, pp: Array, ep: Array
) -> Array:
    """Parameters one GPU holds: its experts' MLP shards plus (with attention) 4·d² per layer."""
    layers = shape.n_layers / pp
    mlp = 2.0 * shape.d_model * shape.d_ff * (shape.sparsity / ep)
    attention = 4.0 * shape.d_model * shape.d_model if physics.attention else 0.0
    out: Array = layers * (mlp + attention) / tp
    return out


def grid_memory_by_mode_bytes(
    physics: Physics,
    shape: ModelShape,
    factors: tuple[Array, Array, Array, Array, Array],
    nano: Array,
    schedule: tuple[Array, Array, NDArray[np.bool_]],
    modes: tuple[Recompute, ...],
) -> list[Array]:
    """Bytes on one GPU under each of `modes`: model state (ZeRO over dp) plus in-flight
    activations (Korthikanti et al. 2022 §4; schedule (m, v, zero-bubble): 1F1B holds
    min(m, p)·(1 + (p−1)/(p·v)), zero-bubble min(m, 2p − 1) microbatches). The model state
    and the microbatches in flight, which no recomputation mode changes, are computed once."""
    dp, tp_model, tp_ff, pp, ep = factors
    microbatches, interleave, zero_bubble = schedule
    tp = tp_model * tp_ff
    stage = physics.zero_stage
    state = ADAM_STATE_BYTES_PER_PARAM / (dp if stage >= 1 else 1.0)
    grads = GRADIENT_BYTES_PER_PARAM / (dp if stage >= 2 else 1.0)
    weights = WEIGHT_BYTES_PER_PARAM / (dp if stage >= 3 else 1.0)
    model_state = grid_params_per_gpu(physics, shape, tp, pp, ep) * (weights + grads + state)
    tokens = nano * shape.sparsity / ep
    sbh = tokens * shape.d_model
    sp = sequence_parallel_degree(physics, tp_model, tp_ff)
    layers = shape.n_layers / pp
    held = np.where(
        zero_bubble,
        np.minimum(microbatches, 2.0 * pp - 1.0),
        np.minimum(microbatches, pp)
        * np.where(interleave > 1, 1.0 + (pp - 1.0) / (pp * interleave), 1.0),
    )
    out: list[Array] = []
    for mode in modes:
        if mode is Recompute.FULL:
            per_layer = 2.0 * sbh / sp
        else:
            per_layer = sbh * (10.0 / sp + 24.0 / tp)
            if physics.attention and mode is Recompute.NONE and physics.fusion is not Fusion.FLASH:
                heads = shape.d_model / GRID_HEAD_DIM
                per_layer = per_layer + 5.0 * heads * shape.seq_len * tokens / tp
        out.append(model_state + per_layer * layers * held)
    return out


def cheapest_fitting_mode(
    physics: Physics,
    shape: ModelShape,
    factors: tuple[Array, Array, Array, Array, Array],
    nano: Array,
    schedule: tuple[Array, Array, NDArray[np.bool_]],
    hbm_bytes: float,
) -> NDArray[np.int64]:
    """Each layout's first recomputation mode (index into `RECOMPUTE_ORDER`) whose bytes
    (`grid_memory_by_mode_bytes`) fit in `hbm_bytes`, −1 where none does."""
    modes = recompute_modes(physics)
    need = grid_memory_by_mode_bytes(physics, shape, factors, nano, schedule, modes)
    out = np.full(nano.shape, -1, dtype=np.int64)
    for mode, bytes_ in zip(reversed(modes), reversed(need), strict=True):
        out = np.where(bytes_ <= hbm_bytes, RECOMPUTE_ORDER.index(mode), out)
    return out


def grid_optimizer_s(hw: HardwareSpec, physics: Physics, params_per_gpu: Array, dp: Array) -> Array:
    """The Adam step on one GPU: 30 B per parameter it updates at the fused HBM bandwidth."""
    updated = params_per_gpu / (dp if physics.zero_stage >= 1 else 1.0)
    bw = hw.hbm_bandwidth_bytes_per_s * physics.efficiency.fused_bandwidth
    out: Array = ADAM_STEP_BYTES_PER_PARAM * updated / bw + physics.efficiency.kernel_overhead_s
    return out


def recompute_modes(physics: Physics) -> tuple[Recompute, ...]:
    """Modes a grid layout may use: the configured one, or all three under auto."""
    if physics.recompute is Recompute.AUTO:
        return RECOMPUTE_ORDER
    return (physics.recompute,)
