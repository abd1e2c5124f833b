"""Collectives as NCCL runs them on one group at the network level it spans, vectorized:
ring all-reduce, pairwise all-to-all, and ring attention's K/V exchange (docs/model.md R.5).

Unlike the paper's collectives (`collectives.py`, spec §6), which charge every byte against the
aggregate bandwidth of all GPUs, these charge one group's bytes against one link of the level
its ranks span (`levels.group_level`). Bandwidths are bidirectional per GPU; a ring or a
pairwise exchange sends one way at a time, at BW/2.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pipeline.model.compute.memory_ops import WORD_BYTES

Array = NDArray[np.float64]


def ring_allreduce_s(p: Array, bytes_: Array, bandwidth: Array, latency: Array) -> Array:
    """Ring all-reduce of `bytes_` per GPU over p GPUs: 2(p − 1)/p · bytes / (BW/2) + 2(p − 1)·λ;
    0 for p = 1 (Patarasuk & Yuan 2009; NCCL's bus bandwidth)."""
    steps = p - 1.0
    out: Array = np.where(
        p > 1, 2.0 * steps / p * bytes_ / (bandwidth / 2.0) + 2.0 * steps * latency, 0.0
    )
    return out


def all_to_all_s(p: Array, bytes_: Array, bandwidth: Array, latency: Array) -> Array:
    """All-to-all of `bytes_` per GPU over p GPUs: (p − 1)/p · bytes / (BW/2) + (p − 1)·λ; 0 for
    p = 1. Each GPU keeps 1/p of its data and sends the rest, one peer per step (pairwise
    exchange: Thakur et al. 2005, "Optimization of collective communication operations in MPICH")."""
    steps = p - 1.0
    out: Array = np.where(p > 1, steps / p * bytes_ / (bandwidth / 2.0) + steps * latency, 0.0)
    return out


def ring_exchange_s(
    tokens: Array, kv_width: Array | float, tp: Array, cp: Array, bandwidth: Array, latency: Array
) -> Array:
    """Ring attention's forward K/V exchange of one layer and microbatch on one GPU, in s: c − 1
    sends of the rank's K and V shards, 2·tokens·kv/t words each (tokens: the rank's s/c share),
    at BW/2 of the group's level, plus c − 1 hops; 0 for c = 1 (Liu et al. 2023, "Ring Attention
    with Blockwise Transformers", arXiv:2310.01889). The backward pass sends K, V and their
    gradients: twice this."""
    sends = cp - 1.0
    bytes_ = sends * (2.0 * tokens * kv_width / tp) * WORD_BYTES
    out: Array = bytes_ / (bandwidth / 2.0) + sends * latency
    return out


def ring_exposed_s(
    ring_forward_s: Array, attention_forward_s: Array, attention_backward_s: Array, reruns: Array
) -> Array:
    """What a layer's ring exchange adds past the attention core it overlaps with: forward
    max(0, ring − core) once plus once per recomputed forward (`reruns`), backward (K, V and
    their gradients) max(0, 2·ring − core backward)."""
    forward = np.maximum(ring_forward_s - attention_forward_s, 0.0) * (1.0 + reruns)
    out: Array = forward + np.maximum(2.0 * ring_forward_s - attention_backward_s, 0.0)
    return out
