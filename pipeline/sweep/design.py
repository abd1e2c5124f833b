"""The uncertainty design as series: each point of `forecast.uncertainty` is one sweep point.

The design varies the run's own config (before its sweep choices: by default H100 SXM, dense,
critical batch). Every input is a sweep axis key (`pipeline.sweep.axes`) set to the point's
value, all inputs together (zipped, not a product), so the sweep engine evaluates the points as
it evaluates any sweep (joblib locally, Dask on a cluster).
"""

from __future__ import annotations

from typing import Any, cast

from omegaconf import DictConfig, OmegaConf

from pipeline.forecast.uncertainty import UncertaintySettings, design_values
from pipeline.identity import canonical_json, series_id
from pipeline.schema import load_scenario
from pipeline.schema.errors import ConfigError
from pipeline.sweep.axes import AXIS_ROOTS, parse_axis
from pipeline.sweep.expand import SweepSeries


def design_series(
    cfg: DictConfig, settings: UncertaintySettings
) -> tuple[SweepSeries, list[SweepSeries]]:
    """The series the design varies (the run's own config), and one series per design point,
    in design order; ConfigError names a bad input key or a point the schema refuses."""
    template = cast(dict[str, Any], OmegaConf.to_container(cfg, resolve=True))
    sections = {k: template[k] for k in AXIS_ROOTS if k in template}
    base_scenario = load_scenario(sections)
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
