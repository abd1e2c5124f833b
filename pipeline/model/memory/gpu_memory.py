"""Bytes one GPU holds during training: weights, gradients, optimizer state, activations,
vectorized over rows (grid candidates and concrete runs alike).

Sources: Rajbhandari et al. 2020, "ZeRO" (arXiv:1910.02054) §3.1 for mixed-precision Adam
(2 + 2 + 12 bytes per parameter) and stages 1-3; Korthikanti et al. 2022, "Reducing
Activation Recomputation in Large Transformer Models" (arXiv:2205.05198) §4 for the
activations per layer and §4.2.3 for the microbatches a 1F1B schedule keeps in flight.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from pipeline.model.caches import cached
from pipeline.model.records.switches import Recompute

Array = NDArray[np.float64]
Width = Array | float
"""A model width per row, or one for every row."""
Stage = NDArray[np.int64] | int
"""A ZeRO stage per row, or one for every row."""

WEIGHT_BYTES_PER_PARAM = 2.0
"""16-bit model weights."""
GRADIENT_BYTES_PER_PARAM = 2.0
"""16-bit gradients."""
FP32_GRADIENT_BYTES_PER_PARAM = 4.0
"""Gradients accumulated and reduced in FP32 (a run's `grad_reduce_fp32`, docs/model.md R.5)."""
ADAM_STATE_BYTES_PER_PARAM = 12.0
"""fp32 master weights, momentum and variance: K = 12 (ZeRO §3.1)."""
LOGITS_BYTES_PER_ELEMENT = 4.0
"""fp32 logits kept for the cross-entropy (Korthikanti et al. 2022 §4.3)."""
FP8_WEIGHT_COPY_BYTES_PER_PARAM = 2.0
"""Under FP8 (docs/model.md R.11), Transformer Engine keeps beside each 16-bit layer weight an
FP8 copy (1 byte) and, as Hopper's FP8 GEMMs take one operand layout only, its transpose for
the backward pass (1 byte)."""


def model_state_bytes_per_param(
    zero_stage: Stage, dp: Array, gradient_bytes: Array | float = GRADIENT_BYTES_PER_PARAM
) -> Array:
    """Bytes per parameter of weights, gradients and Adam state under ZeRO over dp replicas.

    Stage 0: 2 + 2 + 12 = 16; stage 1 shards the 12 optimizer bytes over dp; stage 2 also
    the gradients; stage 3 also the weights (Rajbhandari et al. 2020, Figure 1). Gradients
    held in FP32 (`gradient_bytes` 4, docs/model.md R.5: Megatron-LM's FP32 gradient buffer
    when it reduces in FP32) take 4 bytes in place of 2.
    """
    stage = np.asarray(zero_stage)
    weights = np.where(stage >= 3, WEIGHT_BYTES_PER_PARAM / dp, WEIGHT_BYTES_PER_PARAM)
    grads = np.where(stage >= 2, gradient_bytes / dp, gradient_bytes)
    state = np.where(stage >= 1, ADAM_STATE_BYTES_PER_PARAM / dp, ADAM_STATE_BYTES_PER_PARAM)
    out: Array = weights + grads + state
    return out


@dataclass(frozen=True, slots=True)
class ParamsPerGpu:
    """Parameters one GPU holds, per row, by the group that replicates them."""

    replicated: Array
    """Replicated over all d data-parallel ranks: attention, embedding, a dense MLP."""
    expert: Array
    """The local experts' MLPs, replicated over the d/e ranks holding the same experts
    (DeepSpeed-MoE's expert-data-parallel group, Rajbhandari et al. 2022 §4)."""

    @property
    def total(self) -> Array:
        """Every parameter on the GPU."""
        out: Array = self.replicated + self.expert
        return out


def state_bytes(
    params: ParamsPerGpu,
    zero_stage: Stage,
    dp: Array,
    expert_dp: Array,
    gradient_bytes: Array | float = GRADIENT_BYTES_PER_PARAM,
) -> Array:
    """Weights, gradients (`gradient_bytes` each) and Adam state on one GPU: each group's
    parameters at its ZeRO sharding (`model_state_bytes_per_param`)."""
    out: Array = params.replicated * model_state_bytes_per_param(
        zero_stage, dp, gradient_bytes
    ) + params.expert * model_state_bytes_per_param(zero_stage, expert_dp, gradient_bytes)
    return out


def updated_params(params: ParamsPerGpu, zero_stage: Stage, dp: Array, expert_dp: Array) -> Array:
    """Parameters one GPU's optimizer step updates: all it holds, or under ZeRO ≥ 1 its 1/d
    share of the replicated ones and 1/(d/e) of its experts' (Rajbhandari et al. 2020 §5.1)."""
    sharded = params.replicated / dp + params.expert / expert_dp
    out: Array = np.where(np.asarray(zero_stage) >= 1, sharded, params.total)
    return out


def gradient_bytes_per_param(fp32: NDArray[np.bool_] | bool | None) -> Array | float:
    """Bytes a gradient takes per parameter, held and reduced: `FP32_GRADIENT_BYTES_PER_PARAM`
    where `fp32` (Megatron-LM's and NeMo's default for BF16, docs/model.md R.5), else
    `GRADIENT_BYTES_PER_PARAM`; None (no such switch): 16-bit."""
    if fp32 is None or fp32 is False:
        return GRADIENT_BYTES_PER_PARAM
    if fp32 is True:
        return FP32_GRADIENT_BYTES_PER_PARAM
    out: Array = np.where(fp32, FP32_GRADIENT_BYTES_PER_PARAM, GRADIENT_BYTES_PER_PARAM)
    return out


def activation_bytes_per_layer(
    tokens: Array,
    hidden: Width,
    heads: Width,
    seq_len: Width,
    split: tuple[Array, Array],
    recompute: Recompute,
    scores_stored: bool,
    layer: LayerShape | None = None,
) -> Array:
    """Activation bytes one layer stores for one microbatch of `tokens` tokens on one GPU
    (after context parallelism), split = (sp, t) (Korthikanti et al. 2022 §4.1, Table 2).

    none: b·s·(R/sp + T/t) + (2 + 3·drop)·a·s·(b·s)/t with, per token, T = 4h + 4·kv
    (Q, K, V, the projection input) + 4f (GeLU: its input and output) or 6f (SwiGLU: gate, up
    and their product) split over t, and R = 8h (two norm inputs, the QKV and MLP inputs)
    + 2h·drop (two hidden dropout masks) replicated unless sequence parallelism splits it;
    the scores term (softmax output, and with dropout its mask and output) only when the
    scores are stored (`scores_stored`: attention on, not flash). For a GPT layer (kv = h,
    f = 4h, GeLU, dropout; `layer` None) this is s·b·h·(10/sp + 24/t) + 5·a·s·(b·s)/t, i.e.
    Korthikanti's 34/t with sequence parallelism. selective drops the scores term; full keeps
    only the layer input, 2·s·b·h/sp.
    """
    sp, tp = split
    sbh = tokens * hidden
    if recompute is Recompute.FULL:
        full: Array = 2.0 * sbh / sp
        return full
    if layer is None:
        out: Array = sbh * (10.0 / sp + 24.0 / tp)
        per_score = 5.0
    else:
        drop = 1.0 if layer.dropout else 0.0
        replicated = (8.0 + 2.0 * drop) * hidden
        mlp = (6.0 if layer.mlp_matrices == 3 else 4.0) * layer.ffn
        split_over_t = 4.0 * hidden + 4.0 * layer.kv_width + mlp
        out = tokens * (replicated / sp + split_over_t / tp)
        per_score = 2.0 + 3.0 * drop
    if scores_stored and recompute is Recompute.NONE:
        out = out + per_score * heads * seq_len * tokens / tp
    return out


def fp8_input_savings_bytes_per_layer(
    tokens: Array, hidden: Width, ffn: Width, split: tuple[Array, Array], recompute: Recompute
) -> Array:
    """Activation bytes a layer saves when Transformer Engine stores its FP8 GEMMs' inputs at
    1 byte instead of 2 (docs/model.md R.11): the QKV and first-MLP inputs (the two norm
    outputs, h each, split as the norms over sp), the output projection's input (h) and the
    last MLP GEMM's input (f: the activation's output), split over t: tokens · (2h/sp +
    (h + f)/t). Full recomputation stores only the layer input, in 16 bits: no saving."""
    sp, tp = split
    out: Array = tokens * (2.0 * hidden / sp + (hidden + ffn) / tp)
    if recompute is Recompute.FULL:
        return np.zeros_like(out)
    return out


def fp8_weight_copy_bytes(layer_params: Array) -> Array:
    """Bytes of the FP8 weights Transformer Engine keeps beside a GPU's transformer-layer
    weights under FP8 (docs/model.md R.11): 2 · N_layer (`FP8_WEIGHT_COPY_BYTES_PER_PARAM`, the
    copy and its transpose). The 16-bit weights and gradients and the FP32 master weights and
    Adam moments stay as under BF16 (`model_state_bytes_per_param`): the FP8 recipe casts the
    weights for its GEMMs and trains the higher-precision ones (NVIDIA Transformer Engine user
    guide, "Using FP8 with Transformer Engine"; Micikevicius et al. 2022 §4)."""
    out: Array = FP8_WEIGHT_COPY_BYTES_PER_PARAM * layer_params
    return out


def stored_activation_bytes_per_layer(
    tokens: Array,
    hidden: Width,
    heads: Width,
    seq_len: Width,
    split: tuple[Array, Array],
    recompute: Recompute,
    scores_stored: bool,
    layer: LayerShape | None,
    top_k: int,
    fp8: bool,
) -> Array:
    """Activation bytes one layer stores for one microbatch on one GPU, for grid candidates and
    concrete runs alike: a dense layer's (`activation_bytes_per_layer`), the k − 1 further
    copies of the MLP's under top-k routing (`routed_activation_bytes_per_layer`) and, with
    `fp8` (FP8 GEMMs, docs/model.md R.11), less the bytes saved by storing the GEMMs' inputs
    at 1 byte (`fp8_input_savings_bytes_per_layer`; f = 4h for a GPT layer, `layer` None)."""
    dense = activation_bytes_per_layer(
        tokens, hidden, heads, seq_len, split, recompute, scores_stored, layer
    )
    out: Array = dense + routed_activation_bytes_per_layer(
        tokens, hidden, top_k, split, recompute, layer
    )
    if fp8:
        ffn = 4.0 * hidden if layer is None else layer.ffn
        out = out - fp8_input_savings_bytes_per_layer(tokens, hidden, ffn, split, recompute)
    return out


@dataclass(frozen=True, slots=True)
class LayerShape:
    """What a layer's stored activations depend on beyond h, a and s (a run's transformer, or
    a grid layer that is not a GPT layer, `activation_bytes_per_layer` with None:
    `search.grid._grid_layer_shape`)."""

    kv_width: float
    """kv_heads · d_head: the width of K and of V (grouped-query attention, Ainslie et al. 2023)."""
    ffn: float
    mlp_matrices: int
    """2 (GeLU) or 3 (SwiGLU, Shazeer 2020)."""
    dropout: bool


def routed_activation_bytes_per_layer(
    tokens: Array,
    hidden: Width,
    top_k: int,
    split: tuple[Array, Array],
    recompute: Recompute,
    layer: LayerShape | None = None,
) -> Array:
    """Activation bytes a MoE layer stores beyond a dense layer's for top-k routing: 0 for k = 1.

    Each token's MLP runs once per routed expert, so the MLP's stored tensors come k times:
    its input (2·s·b·h/sp) and its d_ff-wide tensors (4f of GeLU, 6f of SwiGLU per token over
    t; 16·s·b·h/t for f = 4h, Korthikanti et al. 2022 §4.1); (k − 1) more copies (Lepikhin et
    al. 2020 §2.2). Full recomputation keeps only the layer input: 0.
    """
    sp, tp = split
    if top_k == 1 or recompute is Recompute.FULL:
        return np.zeros_like(tokens * hidden / tp)
    if layer is None:
        out: Array = (top_k - 1) * (tokens * hidden) * (2.0 / sp + 16.0 / tp)
        return out
    mlp = (6.0 if layer.mlp_matrices == 3 else 4.0) * layer.ffn
    out = (top_k - 1) * tokens * (2.0 * hidden / sp + mlp / tp)
    return out


@cached(maxsize=4096)
def megatron_group_microbatches(pp: int, microbatches: int) -> int:
    """N, the microbatches each virtual stage runs back to back, that Megatron-Core's
    interleaved schedule runs m microbatches over p stages with: its default N = p where m is
    a multiple of p; else the smallest N it accepts, which a user sets there
    (`microbatch_group_size_per_vp_stage`: at the default it refuses such an m) (Megatron-Core,
    `forward_backward_pipelining_with_interleaving`: p ≤ N ≤ m, and the last group,
    m mod N, is 0 or at least p, "otherwise, it introduces dependency bubbles"). N = m always
    qualifies for m ≥ p; p for m < p, where the schedule does not interleave."""
    if microbatches < pp or microbatches % pp == 0:
        return pp
    return next(
        n
        for n in range(pp + 1, microbatches + 1)
        if microbatches % n == 0 or microbatches % n >= pp
    )


def megatron_groups(pp: Array, microbatches: Array, interleave: Array) -> Array:
    """`megatron_group_microbatches` per row, for rows that interleave (p elsewhere)."""
    p, m, v = np.broadcast_arrays(pp, microbatches, interleave)
    rows = np.flatnonzero((v > 1) & (m >= p))
    rows = rows[np.mod(m.flat[rows], p.flat[rows]) != 0]
    if rows.size == 0:  # every interleaved row's m a multiple of its p: Megatron's default
        return np.asarray(p, dtype=np.float64)
    # few distinct (p, m) pairs, each found once: keyed as one integer, p·(max m + 1) + m
    # where that fits in 62 bits, else as rows of two (slower, exact)
    stages, counts = p.flat[rows].astype(np.int64), m.flat[rows].astype(np.int64)
    width = int(counts.max()) + 1
    if int(stages.max()) * width < 2**62:
        keys, where = np.unique(stages * width + counts, return_inverse=True)
        found = [megatron_group_microbatches(*divmod(int(k), width)) for k in keys]
    else:
        pairs, where = np.unique(np.stack([stages, counts], 1), axis=0, return_inverse=True)
        found = [megatron_group_microbatches(int(a), int(b)) for a, b in pairs]
        where = where.ravel()
    group: Array = np.array(p, dtype=np.float64)
    group.flat[rows] = np.asarray(found, dtype=np.float64)[where]
    return group


def stage_in_flight_microbatches(
    pp: Array, microbatches: Array, interleave: Array, stage: Array, group: Array
) -> Array:
    """Microbatches (in whole-stage equivalents) whose activations stage `stage` holds at
    once under 1F1B: min(m, p − i); interleaved with v chunks, Megatron-LM's warm-up of
    2·(p − i − 1) + (v − 1)·N chunk-microbatches plus the one in flight, over v, at most m,
    N the microbatches a virtual stage runs back to back (N = p: Narayanan et al. 2021
    §2.2.2, for the first stage p·(1 + (p − 1)/(p·v)) as Korthikanti et al. 2022 §4.2.3, when
    m is at least that; a stage never holds more than the step's m)."""
    plain = np.minimum(microbatches, pp - stage)
    chunks = 2.0 * (pp - stage - 1.0) + (interleave - 1.0) * group + 1.0
    interleaved = np.minimum(microbatches * interleave, chunks) / interleave
    out: Array = np.where(interleave > 1, interleaved, plain)
    return out


def in_flight_microbatches(
    pp: Array, microbatches: Array, interleave: Array, zero_bubble: NDArray[np.bool_]
) -> Array:
    """Microbatches whose activations the first pipeline stage holds at once.

    1F1B: the first stage's `stage_in_flight_microbatches`, min(m, p) and interleaved with
    v > 1 chunks, at Megatron-Core's N (`megatron_groups`), min(m, p·(1 + (p − 1)/(p·v))) where
    N = p (Korthikanti et al. 2022 §4.2.3, Narayanan et al. 2021 §2.2.2); zero-bubble ZB-H2:
    min(m, 2p − 1) (Qi et al. 2023, arXiv:2401.10241 §3).
    """
    group = megatron_groups(pp, microbatches, interleave)
    first = stage_in_flight_microbatches(pp, microbatches, interleave, np.zeros_like(pp), group)
    out: Array = np.where(zero_bubble, np.minimum(microbatches, 2.0 * pp - 1.0), first)
    return out


def logits_bytes(tokens: Array, vocab: Width, tp: Array) -> Array:
    """fp32 logits of one microbatch on the last stage: 4·(b·s/cp)·V/t (Korthikanti et al. 2022 §4.3)."""
    out: Array = LOGITS_BYTES_PER_ELEMENT * tokens * vocab / tp
    return out
