"""The root `closed_form:` node -> ClosedFormSettings for Model B (spec §12)."""

from __future__ import annotations

from pipeline import units
from pipeline.model.records.closed_form import ClosedFormSettings
from pipeline.schema import bounds
from pipeline.schema.section import Section, check_si, plain

CLOSED_FORM_KEYS = frozenset({"b0_tokens", "l0_layers", "t0_flop", "duration_days", "t_lat_us"})


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
