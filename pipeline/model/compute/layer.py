"""Time of one layer on one GPU: the paper's MLP block (spec §7) and, vectorized over grid
candidates, the realistic layer.

The paper's grid model is L identical MLP blocks (docs/model.md §3). With extensions on,
each candidate layout's per-layer, per-microbatch time gains the attention projections
(4·d² weights: the shapes of one d x 4d MLP matrix), the attention core and the fused
memory-bound operators; its weight matmuls run at the physics' matmul efficiency (and, on
Blackwell, with tensor memory) (docs/model.md, "Realistic physics", "On the grid").

Attention heads have d_head = 128 (a = d_model / 128). The logits layer is not on the grid
(the scaling laws have no vocabulary).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.compute.efficiency import BLACKWELL_SMEM_RELIEF, has_tensor_memory
from pipeline.model.compute.matmul import matmul_terms_s, matmul_time_s
from pipeline.model.compute.memory_ops import MASK_BYTES, WORD_BYTES
from pipeline.model.records.hardware import (
    HardwareSpec,
    effective_flop_per_s,
    useful_l2_bytes,
)
from pipeline.model.records.scaling import ModelShape
from pipeline.model.records.switches import Fusion, Physics, TensorParallel

Array = NDArray[np.float64]
GRID_HEAD_DIM = 128
"""d_head of the grid's models (a = d_model / 128), as in GPT-3 and Llama models above 6B."""


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


def layer_matmul_time_s(
    hw: HardwareSpec, d_model_shard: Array, d_ff_shard: Array, nanobatch: Array
) -> Array:
    """t_layer: the six matmuls of one MLP block on one GPU, forward and backward (spec §7).

    W1 (df × dm): forward, activation gradient (transposed), weight gradient; W2 the
    transpose shapes. Summed ((W1f + W1a) + W1w) + ((W2f + W2a) + W2w) (spec §15.1).
    """
    shards = np.stack(np.broadcast_arrays(d_model_shard, d_ff_shard, nanobatch), axis=1)
    unique, inverse = np.unique(shards, axis=0, return_inverse=True)
    dm, df, b = unique[:, 0], unique[:, 1], unique[:, 2]
    d1 = np.concatenate([df, dm, df, dm])
    d2 = np.concatenate([dm, df, dm, df])
    wg = np.repeat(np.array([False, False, True, True]), dm.size)
    t = matmul_time_s(hw, d1, d2, np.tile(b, 4), wg).reshape(4, dm.size)[:, inverse.ravel()]
    ff_by_model, model_by_ff, w1_grad, w2_grad = t
    t_layer: Array = ((ff_by_model + model_by_ff) + w1_grad) + (
        (model_by_ff + ff_by_model) + w2_grad
    )
    return t_layer
