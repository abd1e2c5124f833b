"""FLOP of a decoder transformer layer: projections with grouped-query attention, the
attention core, a GeLU or SwiGLU MLP, and the logits layer (docs/model.md, "Realistic physics").

One multiply-add is 2 FLOP. Counts are per sequence-batch of `tokens = b · s` tokens on one
GPU unless named otherwise. Sources: Narayanan et al. 2021 (arXiv:2104.04473) §5.1 and
appendix for the GPT counts; Korthikanti et al. 2022 (arXiv:2205.05198) for recomputation;
Shazeer 2020 (arXiv:2002.05202) for SwiGLU; Ainslie et al. 2023 (arXiv:2305.13245) for GQA.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pipeline.model.compute.attention import attention_core_flop
from pipeline.model.records.switches import RECOMPUTE_ORDER, Physics, Recompute
from pipeline.model.records.transformer import TransformerShape


def attention_weight_params(shape: TransformerShape) -> float:
    """Matrix parameters of one layer's attention: h·(h + 2·kv) (QKV) + h² (output).

    kv = kv_heads · d_head (GQA, Ainslie et al. 2023).
    """
    h = float(shape.hidden)
    return h * (h + 2.0 * shape.kv_width) + h * h


def expert_weight_params(shape: TransformerShape) -> float:
    """Matrix parameters of one MLP (one expert): k·h·f, k = 2 for GeLU, 3 for SwiGLU."""
    return shape.mlp_matrices * float(shape.hidden) * float(shape.ffn_hidden)


def layer_weight_params(shape: TransformerShape) -> float:
    """Matrix parameters of one layer: h·(h + 2·kv) (QKV) + h² (output) + E·k·h·f (E MLPs).

    E experts (1 for a dense layer); k = 2 for GeLU, 3 for SwiGLU; kv = kv_heads · d_head.
    Biases, norm gains (≈ 13h) and a MoE router (h·E) are left out, as in Narayanan et al.
    2021 eq. (2).
    """
    return attention_weight_params(shape) + shape.experts * expert_weight_params(shape)


def active_weight_params(shape: TransformerShape) -> float:
    """Matrix parameters one token meets in a layer: attention + top_k experts' MLPs
    (a dense layer: all of them; Lepikhin et al. 2020 §2: FLOP per token ∝ k, not E)."""
    return attention_weight_params(shape) + shape.top_k * expert_weight_params(shape)


def linear_forward_flop(shape: TransformerShape, tokens: float) -> float:
    """Forward FLOP of one layer's weight matmuls: 2 · tokens · active_weight_params."""
    return 2.0 * tokens * active_weight_params(shape)


def attention_core_forward_flop(shape: TransformerShape, tokens: float) -> float:
    """Forward FLOP of QK^T and AV on `tokens` tokens: `attention.attention_core_flop` on one
    rank (4 · tokens · s · h; Narayanan et al. 2021 appendix)."""
    one = np.ones(1)
    return float(attention_core_flop(tokens * one, shape.seq_len * one, shape.hidden * one, one)[0])


def logits_forward_flop(shape: TransformerShape, tokens: float) -> float:
    """Forward FLOP of the logits layer: 2 · tokens · h · V (Narayanan et al. 2021 appendix)."""
    return 2.0 * tokens * shape.hidden * shape.vocab


def layer_forward_flop(shape: TransformerShape, tokens: float) -> float:
    """Forward FLOP of one layer: weight matmuls plus the attention core."""
    return linear_forward_flop(shape, tokens) + attention_core_forward_flop(shape, tokens)


def recompute_forward_flop(shape: TransformerShape, tokens: float, mode: Recompute) -> float:
    """Forward FLOP run again in the backward pass of one layer (Korthikanti et al. 2022 §5).

    full: the whole forward pass; selective: the attention core only; none: nothing.
    """
    if mode is Recompute.FULL:
        return layer_forward_flop(shape, tokens)
    if mode is Recompute.SELECTIVE:
        return attention_core_forward_flop(shape, tokens)
    return 0.0


def model_flop_per_step(shape: TransformerShape, batch_seqs: float) -> float:
    """Model FLOP of one step: 3 · (L · layer forward + logits forward), no recompute (for MFU).

    Backward costs twice the forward (activation and weight gradients).
    """
    tokens = batch_seqs * shape.seq_len
    forward = shape.layers * layer_forward_flop(shape, tokens) + logits_forward_flop(shape, tokens)
    return 3.0 * forward


def hardware_flop_per_step(shape: TransformerShape, batch_seqs: float, mode: Recompute) -> float:
    """Hardware FLOP of one step: model FLOP plus the recomputed forward FLOP (for HFU)."""
    tokens = batch_seqs * shape.seq_len
    again = shape.layers * recompute_forward_flop(shape, tokens, mode)
    return model_flop_per_step(shape, batch_seqs) + again


def model_params(physics: Physics, shape: TransformerShape) -> float:
    """Parameters of the model the step times: L · layer weights + e · V·h (e = 1 tied
    embedding, 2 separate input and output matrices; docs/model.md R.1) with
    `physics.attention`; without it the paper's workload, the E MLPs of each layer alone
    (L · E · k·h·f)."""
    if physics.attention:
        embeddings = shape.embedding_matrices * float(shape.vocab) * shape.hidden
        return shape.layers * layer_weight_params(shape) + embeddings
    return shape.layers * shape.experts * expert_weight_params(shape)


def flop_per_step(
    physics: Physics, shape: TransformerShape, batch_seqs: float, modes: NDArray[np.int64]
) -> tuple[float, NDArray[np.float64]]:
    """(model, hardware per row) FLOP of one step, `modes` indexing `RECOMPUTE_ORDER`: with
    `physics.attention` `model_flop_per_step` and `hardware_flop_per_step`; without it the
    paper's MLP-only workload, 6 · L · (top_k MLPs) · B·s (full recomputation adds a third
    forward: 4/3)."""
    if physics.attention:
        per_mode = [hardware_flop_per_step(shape, batch_seqs, mode) for mode in RECOMPUTE_ORDER]
        return model_flop_per_step(shape, batch_seqs), np.array(per_mode)[modes]
    mlp_params = shape.top_k * shape.mlp_matrices * float(shape.hidden) * shape.ffn_hidden
    model_flop = 6.0 * shape.layers * mlp_params * batch_seqs * shape.seq_len
    full = RECOMPUTE_ORDER.index(Recompute.FULL)
    return model_flop, np.where(modes == full, model_flop * (4.0 / 3.0), model_flop)


def narayanan_flop_per_step(shape: TransformerShape, batch_seqs: float) -> float:
    """F = 96 · B · s · l · h² · (1 + s/(6h) + V/(16·l·h)): Narayanan et al. 2021, eq. (3).

    Their count for a GPT with ffn = 4h and full recomputation (four forward passes of the
    layers, three of the logits). Kept apart to compare with their Table 1 as they count it.
    """
    b, s, layers = float(batch_seqs), float(shape.seq_len), float(shape.layers)
    h, v = float(shape.hidden), float(shape.vocab)
    return 96.0 * b * s * layers * h * h * (1.0 + s / (6.0 * h) + v / (16.0 * layers * h))
