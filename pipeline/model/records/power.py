"""How a cluster's power is estimated, and a site's budget (docs/model.md §10.1)."""

from __future__ import annotations

from dataclasses import dataclass

SERVER_OVERHEAD = 10.2e3 / (8 * 700.0)
"""1.82: a DGX H100's 10.2 kW maximum system power over its eight 700 W GPUs (NVIDIA DGX
H100 user guide, power specifications; the 10.2 kW rating as cited by Newkirk et al. 2025,
arXiv:2506.14551)."""
PUE = 1.1
"""Power usage effectiveness of a hyperscale site, where frontier runs train: Google reported
1.10 for its fleet (Q2 2021); the Uptime Institute's surveys give industry averages of 1.57
(2021) and 1.58 (2023)."""


@dataclass(frozen=True, slots=True)
class PowerSpec:
    """How a cluster's power is estimated, and the site's budget (SI units)."""

    server_overhead: float = SERVER_OVERHEAD
    """Server power over the GPUs' board power: host, memory, NICs, switches, fans."""
    pue: float = PUE
    """Facility power over IT power: cooling and power conversion."""
    max_power_w: float | None = None
    """The site's power budget in W; None: unbounded."""
