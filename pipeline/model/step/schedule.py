"""Pipeline schedules: the bubble of interleaved 1F1B and zero-bubble schedules (spec §7)."""

from __future__ import annotations

from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]
Counts = TypeVar("Counts", int, NDArray[np.int64])


def bubble_fraction(
    pp: Array, microbatches: Array, interleave: Array, zb: NDArray[np.bool_]
) -> Array:
    """f = (N_PP − 1) / (N_PP − 1 + v·m) for interleaved 1F1B (m ≥ N_PP; plain 1F1B, v = 1,
    any m), 0 for zero-bubble (spec §7)."""
    idle = pp - 1.0
    return np.where(zb, 0.0, idle / (idle + interleave * microbatches))


def interleave_degrees(
    pp: NDArray[np.float64] | NDArray[np.int64],
    zb: NDArray[np.bool_],
    interleaving: bool,
    n_layers: int,
    microbatches: NDArray[np.float64] | NDArray[np.int64],
) -> Array:
    """v of each row: L/N_PP virtual stages per GPU (one layer each) for 1F1B over more than one
    stage when the search interleaves (`SearchOptions.interleaving`) and m ≥ N_PP, else 1
    (zero-bubble, one stage, no interleaving, or plain 1F1B with fewer microbatches than
    stages, `Physics.few_microbatches`: the interleaved schedule needs m ≥ N_PP, Narayanan et
    al. 2021 §2.2.2) (spec §7)."""
    plain = zb | (pp == 1) | (not interleaving) | (microbatches < pp)
    out: Array = np.where(plain, 1.0, n_layers // pp).astype(np.float64)
    return out


def nanobatch_tokens(
    batch_tokens: int, replicas: Counts, microbatches: Counts, experts: int
) -> Counts:
    """b = ⌊B_tok / (N_DP · N_CP · m · S)⌋, tokens: the batch over its data-parallel replicas
    (N_DP · N_CP, `replicas`; the replicas of each expert shard where experts are split), the m
    microbatches of each and the S experts of a layer (spec §5.1; docs/schema.md,
    `nanobatch_tokens`). Zero where the batch holds fewer tokens than its shares."""
    return batch_tokens // (replicas * microbatches * experts)
