"""The root `closed_form:` node -> ClosedFormSettings for Model B (spec §12)."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline import units
from pipeline.schema import bounds
from pipeline.schema.section import Section, check_si, plain

CLOSED_FORM_KEYS = frozenset({"b0_tokens", "l0_layers", "t0_flop", "duration_days", "t_lat_us"})


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


def closed_form_from_config(
    node: object, path: str = "closed_form", default_duration_s: float = 365.25 * 86400 / 4
) -> ClosedFormSettings:
    """Model B's settings of one closed_form node; t_lat_us may be null, and duration_days
    null takes `default_duration_s` (the scenario's budget, `load_scenario`)."""
    cf = Section(plain(node, path), path, CLOSED_FORM_KEYS)
    t_lat_us = cf.optional_number("t_lat_us", "us")
    duration_days = cf.optional_number("duration_days", "days")
    duration_s = default_duration_s
    if duration_days is not None:
        duration_s = check_si(
            cf.key("duration_days"),
            duration_days,
            units.days_to_s(duration_days),
            bounds.MAX_DURATION_S,
            "s",
        )
    t_lat_s = None
    if t_lat_us is not None:
        t_lat_s = check_si(
            cf.key("t_lat_us"), t_lat_us, units.us_to_s(t_lat_us), bounds.MAX_LATENCY_S, "s"
        )
    law = bounds.MAX_LAW_CONSTANT
    return ClosedFormSettings(
        b0_tokens=cf.number("b0_tokens", "tokens", maximum=law),
        l0_layers=cf.number("l0_layers", "layers", maximum=law),
        t0_flop=cf.number("t0_flop", "FLOP", maximum=bounds.MAX_FLOP),
        duration_s=duration_s,
        t_lat_s=t_lat_s,
    )
