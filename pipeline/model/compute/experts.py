"""The tokens a mixture-of-experts layer's busiest expert-parallel rank computes (docs/model.md
R.5.1).

Routing without token dropping (Megatron-Core's default: no `moe_expert_capacity_factor`)
sends each rank the tokens its experts are chosen for, and the combine all-to-all waits for the
rank that received the most: its expert GEMMs set the layer's time. Where the e ranks each
hold part of the experts (e > 1) that rank computes 1 + x times the balanced share, x the
routing's excess over the mean (a grid row's `Physics.expert_imbalance`, a run's
`RunLayout.expert_imbalance`); where one GPU holds every expert
(e = 1) its experts' tokens add to the same k·tokens whatever the routing, and no rank waits
for another.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.float64]


def busiest_rank_expert_tokens(
    mean_tokens: Array, expert_parallel: Array, imbalance: Array | float
) -> Array:
    """Tokens each local expert of the busiest expert-parallel rank computes per microbatch:
    `mean_tokens` (balanced routing, GShard §2.2) times 1 + `imbalance` where the experts are
    split over more than one rank (`expert_parallel` > 1), `mean_tokens` elsewhere.

    `imbalance` x is the busiest rank's routed tokens over the mean, less 1, measured as the
    slowdown of dropless routing against forced balance (docs/validation.md, "Expert load
    imbalance"); 0 is balanced routing, as the paper's model and capacity-factor-1 routing."""
    if not np.any(imbalance):
        return mean_tokens
    out: Array = mean_tokens * np.where(np.asarray(expert_parallel) > 1.0, 1.0 + imbalance, 1.0)
    return out
