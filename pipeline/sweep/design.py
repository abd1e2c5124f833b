"""The uncertainty design as series: each point of `forecast.uncertainty` is one sweep point.

The design varies the run's own config (before its sweep choices: by default H100 SXM, dense,
critical batch). Every input is a sweep axis key (`pipeline.sweep.axes`) set to the point's
value, all inputs together (zipped, not a product), so the sweep engine evaluates the points as
it evaluates any sweep (joblib locally, Dask on a cluster).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

from omegaconf import DictConfig, OmegaConf

from pipeline.forecast.uncertainty import UncertaintySettings, design_values
from pipeline.identity import canonical_json, series_id
from pipeline.model.records.switches import Physics
from pipeline.schema import load_scenario
from pipeline.schema.errors import ConfigError
from pipeline.sweep.axes import AXIS_ROOTS, parse_axis
from pipeline.sweep.expand import SweepSeries

MATMUL_CALL_INPUT = "hardware.matmul_latency_us"
"""The input of a matmul call's fixed cost: the hardware's latency, which a physics that sets
its own overhead does not read (`compute.efficiency.matmul_overhead_s`; physics=realistic's
5 us)."""
MATMUL_OVERHEAD_KEY = "physics.efficiency.matmul_overhead_us"
"""What such a physics reads in its place, and the design varies instead."""


def inputs_read(settings: UncertaintySettings, physics: Physics) -> UncertaintySettings:
    """`settings` with the matmul call's cost keyed as `physics` reads it: the hardware's
    latency (`MATMUL_CALL_INPUT`), or the physics' own overhead (`MATMUL_OVERHEAD_KEY`) where it
    sets one, so the design varies what moves the years and the budget names it
    (docs/sources.md §10). Other inputs as given."""
    keys = {i.key for i in settings.inputs}
    if MATMUL_CALL_INPUT not in keys or physics.efficiency.matmul_overhead_s is None:
        return settings
    if MATMUL_OVERHEAD_KEY in keys:
        raise ConfigError(
            f"forecast.uncertainty.inputs.{MATMUL_CALL_INPUT}",
            MATMUL_CALL_INPUT,
            f"the physics reads {MATMUL_OVERHEAD_KEY} in its place, which is an input too: "
            "keep one of the two",
        )
    inputs = tuple(
        replace(i, key=MATMUL_OVERHEAD_KEY) if i.key == MATMUL_CALL_INPUT else i
        for i in settings.inputs
    )
    return replace(settings, inputs=inputs)


def _sections(cfg: DictConfig) -> dict[str, Any]:
    """The config sections a sweep axis may set (`AXIS_ROOTS`), as plain containers."""
    template = cast(dict[str, Any], OmegaConf.to_container(cfg, resolve=True))
    return {k: template[k] for k in AXIS_ROOTS if k in template}


def design_series(
    cfg: DictConfig, settings: UncertaintySettings
) -> tuple[SweepSeries, list[SweepSeries]]:
    """The series the design varies (the run's own config), and one series per design point,
    in design order, the inputs keyed as the config's physics reads them (`inputs_read`);
    ConfigError names a bad input key or a point the schema refuses."""
    sections = _sections(cfg)
    base_scenario = load_scenario(sections)
    settings = inputs_read(settings, base_scenario.physics)
    base = SweepSeries(base_scenario, series_id(base_scenario, False), canonical_json({}))
    axes = []
    config_inputs = [i for i, inp in enumerate(settings.inputs) if inp.trend_metric is None]
    for inp in (settings.inputs[i] for i in config_inputs):  # trend inputs: the moving frontier's
        axis = parse_axis(inp.key, [inp.low, inp.high])
        try:
            axis.check_target(sections)
        except ConfigError as err:
            raise ConfigError(
                f"forecast.uncertainty.inputs.{inp.key}", inp.describe(), err.allowed
            ) from None
        axes.append(axis)
    values = design_values(settings)
    out = []
    for row in values:
        point: dict[str, Any] = {}
        config = sections
        for axis, value in zip(axes, row[config_inputs], strict=True):
            config = axis.applied(config, float(value))
            point[axis.key] = float(value)
        text = canonical_json(point)
        try:
            scenario = load_scenario(config)
        except ConfigError as err:
            raise ConfigError(err.key, err.value, f"{err.allowed} (design point {text})") from err
        out.append(SweepSeries(scenario, series_id(scenario, False), text))
    return base, out
