"""The paper's memory check: the cluster as a whole holds the weights per data-parallel
replica and the sharded optimizer state (spec §9)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from pipeline.model.records.options import SearchOptions
from pipeline.model.records.scaling import ModelShape

Array = NDArray[np.float64]


OPTIMIZER_BYTES_PER_PARAM = 2.0 * 4.0
"""Optimizer state per parameter, sharded over all GPUs: the 2·N·4 of spec §9."""


PARAM_BYTES = 2.0
"""16-bit weights, one copy per DP replica: the 2·N·N_DP of spec §9."""


def memory_required_bytes(
    shape: ModelShape,
    dp: Array,
    pp: Array,
    nanobatch: Array,
    zb: NDArray[np.bool_],
    opts: SearchOptions,
) -> Array:
    """Cluster-wide bytes: 16-bit weights per DP replica plus sharded optimizer state (spec §9).

    With activation recomputation, add d_model·N_PP·2·b·k·N_DP·S for the stashed
    layer inputs, k = 2·N_PP − 1 (zero-bubble) or N_PP (1F1B).
    """
    n = shape.held_params
    need = PARAM_BYTES * n * dp + OPTIMIZER_BYTES_PER_PARAM * n  # 8·n == (2·n)·4 exactly
    if opts.activation_recompute:
        k = np.where(zb, 2.0 * pp - 1.0, pp)
        need = need + shape.d_model * pp * 2.0 * nanobatch * k * dp * shape.sparsity
    return need
