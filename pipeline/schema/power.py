"""The root `power:` and `constraints:` nodes -> PowerSpec (docs/model.md §10.1)."""

from __future__ import annotations

from pipeline import units
from pipeline.model.records.power import PowerSpec
from pipeline.schema import bounds
from pipeline.schema.section import Section, check_si, plain

POWER_KEYS = frozenset({"server_overhead", "pue"})
CONSTRAINTS_KEYS = frozenset({"max_power_mw"})


def power_from_config(
    power: object, constraints: object, path: tuple[str, str] = ("power", "constraints")
) -> PowerSpec:
    """How power is estimated (`power.server_overhead`, `power.pue`, each at least 1) and the
    site's budget (`constraints.max_power_mw`, null for none), in SI units."""
    node = Section(plain(power, path[0]), path[0], POWER_KEYS)
    limits = Section(plain(constraints, path[1]), path[1], CONSTRAINTS_KEYS)
    max_mw = limits.optional_number("max_power_mw", "MW")
    max_w = None
    if max_mw is not None:
        key = limits.key("max_power_mw")
        max_w = check_si(key, max_mw, units.mw_to_w(max_mw), bounds.MAX_POWER_W, "W")
    return PowerSpec(
        server_overhead=_factor(node, "server_overhead"),
        pue=_factor(node, "pue"),
        max_power_w=max_w,
    )


def _factor(node: Section, key: str) -> float:
    """An overhead factor: at least 1 (nothing draws less than the GPUs)."""
    return node.number(key, minimum=1.0, exclusive=False, maximum=bounds.MAX_LAW_CONSTANT)
