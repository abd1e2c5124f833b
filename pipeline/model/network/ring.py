"""Ring attention's K/V exchange of context-parallel groups, vectorized over grid candidates
(Liu et al. 2023, "Ring Attention with Blockwise Transformers", arXiv:2310.01889)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pipeline.model.compute.layer import LayerTimes
from pipeline.model.compute.memory_ops import WORD_BYTES
from pipeline.model.records.scaling import ModelShape

Array = NDArray[np.float64]


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
