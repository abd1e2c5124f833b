"""The uncertainty design as series: one per point, the inputs set together in config units."""

from __future__ import annotations

import pytest

from pipeline.forecast.uncertainty import (
    Distribution,
    UncertainInput,
    UncertaintySettings,
    design_values,
)
from pipeline.model.records.switches import Physics
from pipeline.schema import ConfigError, compose_config, load_scenario
from pipeline.sweep.design import design_series, inputs_read

U_EFF = UncertainInput("hardware.u_eff", Distribution.UNIFORM, 0.6, 0.8)
LATENCY = UncertainInput("hardware.network.latency_us[*]", Distribution.LOGUNIFORM, 0.5, 2.0)
SETTINGS = UncertaintySettings(8, 3, (U_EFF, LATENCY))


def test_design_series_set_every_input_of_each_point() -> None:
    """Point k's series has u_eff and every level's latency at the design's row k (zipped, not
    a product), distinct series ids, and the base is the config as composed."""
    base, series = design_series(compose_config(), SETTINGS)
    values = design_values(SETTINGS)
    assert len(series) == 8 == len({s.series_id for s in series})
    for row, s in zip(values, series, strict=True):
        assert s.scenario.hardware.u_eff == pytest.approx(row[0])
        assert s.scenario.hardware.net_latency_s == pytest.approx((row[1] * 1e-6,) * 2)
    assert base.scenario.hardware.u_eff == pytest.approx(0.70)
    assert base.series_id not in {s.series_id for s in series}


def test_design_series_unknown_key_names_the_input() -> None:
    """An input that is not a config field is a ConfigError under forecast.uncertainty.inputs."""
    bad = UncertainInput("hardware.u_effective", Distribution.UNIFORM, 0.6, 0.8)
    with pytest.raises(ConfigError) as err:
        design_series(compose_config(), UncertaintySettings(8, 3, (bad,)))
    assert err.value.key == "forecast.uncertainty.inputs.hardware.u_effective"


def _physics(*overrides: str) -> Physics:
    """The physics of the default config with `overrides`."""
    return load_scenario(compose_config(list(overrides))).physics


MATMUL = UncertainInput("hardware.matmul_latency_us", Distribution.LOGUNIFORM, 2.0, 10.0)


def test_matmul_call_cost_is_varied_where_the_physics_reads_it() -> None:
    """The paper's physics times a matmul call at the hardware's latency; physics=realistic at
    its own overhead (`efficiency.matmul_overhead_us`), which the design then varies in its
    place, under its key, so its points differ in what the model reads."""
    paper = inputs_read(UncertaintySettings(8, 3, (MATMUL,)), _physics())
    assert paper.inputs == (MATMUL,)
    realistic_cfg = compose_config(["physics=realistic"])
    realistic = inputs_read(UncertaintySettings(8, 3, (MATMUL,)), _physics("physics=realistic"))
    (moved,) = realistic.inputs
    assert moved.key == "physics.efficiency.matmul_overhead_us"
    assert (moved.distribution, moved.low, moved.high) == (MATMUL.distribution, 2.0, 10.0)
    _, series = design_series(realistic_cfg, UncertaintySettings(8, 3, (MATMUL,)))
    overheads = [s.scenario.physics.efficiency.matmul_overhead_s for s in series]
    assert len(set(overheads)) == 8
    assert all(2e-6 <= o <= 10e-6 for o in overheads if o is not None)


def test_matmul_call_cost_given_twice_is_refused() -> None:
    """Under physics=realistic the hardware's latency input is varied as the physics' own
    overhead; both given, the design would set one key twice: refused, naming the input."""
    overhead = UncertainInput(
        "physics.efficiency.matmul_overhead_us", Distribution.LOGUNIFORM, 2.0, 10.0
    )
    both = UncertaintySettings(8, 3, (MATMUL, overhead))
    with pytest.raises(ConfigError) as err:
        inputs_read(both, _physics("physics=realistic"))
    assert err.value.key == "forecast.uncertainty.inputs.hardware.matmul_latency_us"
