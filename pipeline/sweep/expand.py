"""Scenario expansion: the composed config, times the numeric sweep axes of `sweep.axes`.

Each axis names a dotted config key (e.g. `hardware.network.latency_us`) and a list of
values; the run evaluates the Cartesian product, one series per combination.
"""

from __future__ import annotations

import itertools
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf

from pipeline.schema import Scenario, load_scenario
from pipeline.schema.errors import ConfigError


def sweep_axes(cfg: DictConfig) -> dict[str, list[Any]]:
    """The `sweep.axes` mapping of dotted key -> list of values (empty without a sweep)."""
    sweep = cfg.get("sweep")
    if sweep is None:
        return {}
    axes = sweep.get("axes") or {}
    out: dict[str, list[Any]] = {}
    for key, values in axes.items():
        if not isinstance(values, ListConfig) or len(values) == 0:
            raise ConfigError(f"sweep.axes.{key}", values, "a non-empty list of values")
        if OmegaConf.select(cfg, str(key), default=None) is None:
            raise ConfigError(
                f"sweep.axes.{key}", list(values), "the key of an existing config field"
            )
        out[str(key)] = list(OmegaConf.to_container(values, resolve=True))  # type: ignore[arg-type]
    return out


def expand_scenarios(cfg: DictConfig) -> list[Scenario]:
    """Every scenario of the run, in a fixed order: the product of the sweep axes."""
    axes = sweep_axes(cfg)
    if not axes:
        return [load_scenario(cfg)]
    scenarios = []
    keys = list(axes)
    for values in itertools.product(*(axes[k] for k in keys)):
        point = cfg.copy()
        for key, value in zip(keys, values, strict=True):
            OmegaConf.update(point, key, value, merge=False)
        scenarios.append(load_scenario(point))
    return scenarios
