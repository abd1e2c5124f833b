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
