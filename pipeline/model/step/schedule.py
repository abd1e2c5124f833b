"""Pipeline schedules: the bubble of interleaved 1F1B and zero-bubble schedules (spec §7)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


def bubble_fraction(
    pp: Array, microbatches: Array, interleave: Array, zb: NDArray[np.bool_]
) -> Array:
    """f = (N_PP − 1) / (N_PP − 1 + v·m) for interleaved 1F1B (m ≥ N_PP), 0 for zero-bubble (spec §7)."""
    idle = pp - 1.0
    return np.where(zb, 0.0, idle / (idle + interleave * microbatches))


def interleave_degrees(
    pp: NDArray[np.float64] | NDArray[np.int64],
    zb: NDArray[np.bool_],
    interleaving: bool,
    n_layers: int,
) -> Array:
    """v of each row: L/N_PP virtual stages per GPU (one layer each) for 1F1B over more than one
    stage when the search interleaves (`SearchOptions.interleaving`), else 1 (zero-bubble, one
    stage, or no interleaving) (spec §7)."""
    out: Array = np.where(zb | (pp == 1) | (not interleaving), 1.0, n_layers // pp).astype(
        np.float64
    )
    return out
