"""The attention core (QKᵀ and AV) of one layer on one GPU, vectorized (docs/model.md R.2).

Its FLOP run at F_peak·u_eff·`matmul`·`attention_matmul` (batched GEMMs with inner dimension
d_head). Without flash attention QKᵀ writes and AV reads the s x s scores in HBM; with it
(Dao et al. 2022, FlashAttention, arXiv:2205.14135) only Q, K, V, O and their gradients do.
The time of each pass is the roofline maximum of its FLOP time and its HBM time, plus one
kernel overhead per launch.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pipeline.model.compute.efficiency import matmul_efficiency, matmul_overhead_s
from pipeline.model.compute.memory_ops import WORD_BYTES
from pipeline.model.records.hardware import HardwareSpec, effective_flop_per_s, row_hbm_bytes_per_s
from pipeline.model.records.switches import Fusion, Physics

Array = NDArray[np.float64]

FLASH_BACKWARD_TRAFFIC = 2.0
"""HBM bytes of flash attention's backward pass over its forward's (Q, K, V read, O written):
the backward reads Q, K, V, O and dO and writes dQ, dK and dV (Dao et al. 2022, Algorithm 4;
Dao 2023, FlashAttention-2, arXiv:2307.08691, §3.2), 4h + 4kv words per token against the
forward's 2h + 2kv: twice. The s x s scores are recomputed on chip, never stored; the row
statistics (logsumexp) are O(s) per head and left out. Both counts are the one-pass minimum,
as the forward's is."""


def attention_core_flop(tokens: Array, seq_len: Array, hidden: Array, tp: Array) -> Array:
    """Forward FLOP of QKᵀ and AV on one tensor-parallel rank: 4 · tokens · s · h / t (no
    causal saving, as Megatron counts it; Narayanan et al. 2021 appendix)."""
    out: Array = 4.0 * tokens * seq_len * hidden / tp
    return out


def attention_core_s(
    hw: HardwareSpec,
    physics: Physics,
    tokens: Array,
    seq_len: Array,
    hidden: Array,
    kv_width: Array,
    heads: Array,
    tp: Array,
    hbm: Array | None = None,
) -> tuple[Array, Array]:
    """(forward, backward) time of the attention core for `tokens` queries per GPU (already
    divided by context parallelism) against keys of the whole sequence `seq_len`.

    qkvo = w · tokens · (2h + 2kv) / t bytes; scores = tokens · (a/t) · s elements.
    Flash: forward qkvo, backward 2 · qkvo (`FLASH_BACKWARD_TRAFFIC`), one launch each way.
    Otherwise: forward qkvo + 2·w·scores (QKᵀ writes them, AV reads them), backward twice the
    forward bytes, two launches forward and four backward. Backward FLOP = 2 · forward.
    `hbm`: each row's HBM bandwidth (`records.hardware.row_hbm_bytes_per_s`).
    """
    eff = physics.efficiency
    flop_fwd = attention_core_flop(tokens, seq_len, hidden, tp)
    rate = effective_flop_per_s(hw) * matmul_efficiency(hw, physics) * eff.attention_matmul
    qkvo = WORD_BYTES * tokens * (2.0 * hidden + 2.0 * kv_width) / tp
    overhead = matmul_overhead_s(hw, eff)
    if physics.fusion is Fusion.FLASH:
        fwd_bytes, bwd_bytes, launches = qkvo, FLASH_BACKWARD_TRAFFIC * qkvo, (1, 1)
    else:
        scores = tokens * (heads / tp) * seq_len
        fwd_bytes = qkvo + 2.0 * WORD_BYTES * scores
        bwd_bytes = 2.0 * fwd_bytes
        launches = (2, 4)
    bandwidth = row_hbm_bytes_per_s(hw, hbm)
    fwd: Array = np.maximum(flop_fwd / rate, fwd_bytes / bandwidth) + launches[0] * overhead
    bwd: Array = np.maximum(2.0 * flop_fwd / rate, bwd_bytes / bandwidth) + launches[1] * overhead
    return fwd, bwd
