"""Bytes one GPU holds during training: weights, gradients, optimizer state, activations.

Sources: Rajbhandari et al. 2020, "ZeRO" (arXiv:1910.02054) §3.1 for mixed-precision Adam
(2 + 2 + 12 bytes per parameter) and stages 1-3; Korthikanti et al. 2022, "Reducing
Activation Recomputation in Large Transformer Models" (arXiv:2205.05198) §4 for the
activations per layer and §4.2.3 for the microbatches a 1F1B schedule keeps in flight.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pipeline.model.compute.layer import GRID_HEAD_DIM, sequence_parallel_degree
from pipeline.model.records.scaling import ModelShape
from pipeline.model.records.switches import Fusion, Physics, Recompute

Array = NDArray[np.float64]

WEIGHT_BYTES_PER_PARAM = 2.0
"""16-bit model weights."""
GRADIENT_BYTES_PER_PARAM = 2.0
"""16-bit gradients."""
ADAM_STATE_BYTES_PER_PARAM = 12.0
"""fp32 master weights, momentum and variance: K = 12 (ZeRO §3.1)."""
LOGITS_BYTES_PER_ELEMENT = 4.0
"""fp32 logits kept for the cross-entropy (Korthikanti et al. 2022 §4.3)."""


def model_state_bytes_per_param(zero_stage: int, dp: int) -> float:
    """Bytes per parameter of weights, gradients and Adam state under ZeRO over dp replicas.

    Stage 0: 2 + 2 + 12 = 16; stage 1 shards the 12 optimizer bytes over dp; stage 2 also
    the gradients; stage 3 also the weights (Rajbhandari et al. 2020, Figure 1).
    """
    weights, grads, state = (
        WEIGHT_BYTES_PER_PARAM,
        GRADIENT_BYTES_PER_PARAM,
        ADAM_STATE_BYTES_PER_PARAM,
    )
    if zero_stage >= 1:
        state /= dp
    if zero_stage >= 2:
        grads /= dp
    if zero_stage >= 3:
        weights /= dp
    return weights + grads + state


def activation_bytes_per_layer(
    seq_len: float,
    micro_seqs: float,
    hidden: float,
    heads: float,
    tp: int,
    sequence_parallel: bool,
    recompute: Recompute,
    fusion: Fusion,
    cp: int = 1,
) -> float:
    """Activation bytes one layer stores for one microbatch (Korthikanti et al. 2022 §4).

    none: s·b·h·(34/t + 5·a·s/(h·t)) with sequence parallelism, s·b·h·(10 + 24/t + 5·a·s/(h·t))
    without (Table 2); selective drops the 5·a·s/h attention-core term; full keeps only the
    layer input, 2·s·b·h (/t with sequence parallelism). Flash attention stores no s x s
    tensor, so its core term is 0 as under selective. Context parallelism divides s.
    """
    s = seq_len / cp
    sbh = s * micro_seqs * hidden
    if recompute is Recompute.FULL:
        return 2.0 * sbh / (tp if sequence_parallel else 1)
    linear = 34.0 / tp if sequence_parallel else 10.0 + 24.0 / tp
    core = 5.0 * heads * seq_len / (hidden * tp)
    if recompute is Recompute.SELECTIVE or fusion is Fusion.FLASH:
        core = 0.0
    return sbh * (linear + core)


def routed_activation_bytes_per_layer(
    seq_len: float,
    micro_seqs: float,
    hidden: float,
    top_k: int,
    tp: int,
    sequence_parallel: bool,
    recompute: Recompute,
    cp: int = 1,
) -> float:
    """Activation bytes a MoE layer stores beyond a dense layer's for top-k routing: 0 for k = 1.

    Each token's MLP runs once per routed expert, so the MLP's stored tensors come k times:
    its input (2·s·b·h, /t with sequence parallelism) and the two d_ff-wide tensors
    Korthikanti et al. 2022 §4.1 count for f = 4h (16·s·b·h/t); (k − 1) more copies
    (Lepikhin et al. 2020 §2.2). Full recomputation keeps only the layer input: 0.
    """
    if top_k == 1 or recompute is Recompute.FULL:
        return 0.0
    sbh = seq_len / cp * micro_seqs * hidden
    per_copy = 2.0 / (tp if sequence_parallel else 1) + 16.0 / tp
    return (top_k - 1) * sbh * per_copy


def in_flight_microbatches(pp: int, microbatches: int, interleave: int) -> float:
    """Microbatches whose activations the first pipeline stage holds at once under 1F1B.

    min(m, p) for the plain schedule; interleaving with v chunks holds 1 + (p − 1)/(p·v)
    times more (Korthikanti et al. 2022 §4.2.3, Narayanan et al. 2021 §2.2.2).
    """
    held = float(min(microbatches, pp))
    if interleave > 1 and pp > 1:
        held *= 1.0 + (pp - 1.0) / (pp * interleave)
    return held


def logits_bytes(seq_len: float, micro_seqs: float, vocab: float, tp: int, cp: int = 1) -> float:
    """fp32 logits of one microbatch on the last stage: 4·s·b·V/t (Korthikanti et al. 2022 §4.3)."""
    return LOGITS_BYTES_PER_ELEMENT * seq_len / cp * micro_seqs * vocab / tp


RECOMPUTE_ORDER = (Recompute.NONE, Recompute.SELECTIVE, Recompute.FULL)
"""Modes tried under recompute=auto, cheapest first: the first that fits is kept."""


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


def recompute_modes(physics: Physics) -> tuple[Recompute, ...]:
    """Modes a grid layout may use: the configured one, or all three under auto."""
    if physics.recompute is Recompute.AUTO:
        return RECOMPUTE_ORDER
    return (physics.recompute,)
