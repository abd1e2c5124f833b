"""Hardware presets for tests, composed from `conf/hardware/` (their one source of truth)."""

from __future__ import annotations

from functools import lru_cache

from pipeline.model.records.hardware import HardwareSpec
from pipeline.schema import compose_config, load_scenario


@lru_cache(maxsize=64)
def preset(name: str) -> HardwareSpec:
    """The named preset in SI units, as the pipeline loads it."""
    return load_scenario(compose_config([f"hardware={name}"])).hardware
