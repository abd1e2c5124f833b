"""Model B's settings: the anchors and budget of the closed forms (spec §12), in SI units."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ClosedFormSettings:
    """Anchors and budget of Model B's closed forms T_crit and T_limit (spec §12), SI units."""

    b0_tokens: float
    """Batch-size anchor b0 (4e6 tokens)."""
    l0_layers: float
    """Depth anchor L0 (100 layers)."""
    t0_flop: float
    """Compute anchor T0 (3e23; quirk Q4 raises it against MAC = C/2)."""
    duration_s: float
    """τ_B: `duration_days`, or when that is null the scenario's own budget, its months on
    Model B's 365.25-day year (quirk Q5: 3 months give 365.25 d / 4 = 7,889,400 s)."""
    t_lat_s: float | None
    """Minimum per-layer latency t_lat; None derives it from the hardware (matmul latency
    plus 4 x the slowest network-level latency, 9e-6 s on H100 SXM)."""
