"""Projected hardware: the base at its release, near catalog GPUs at theirs, sweeps, bad input."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pipeline.catalog import METRICS
from pipeline.model.records.hardware import peak_flop_per_s
from pipeline.schema import ConfigError, compose_config, load_scenario
from pipeline.schema.projected import preset_spec, shipped_catalog
from pipeline.sweep import expand_sweep
from pipeline.trends.catalog_fits import catalog_trends
from pipeline.trends.project import PROJECTED_METRICS, power_of_two_floor, project_hardware
from tests.command import dmlimits

NEAR_FACTOR = 2.0
"""Projected and actual values of consecutive generations agree within this factor per metric:
the catalog's generations scatter about their fitted lines by up to about 1.8x (e.g. B200's
inter-node bandwidth is DGX H100's, where the trend expects 1.8x more)."""
PAIRS = (("a100_sxm", "h100_sxm"), ("h100_sxm", "b200"))
"""(base preset, later preset): consecutive NVIDIA generations whose presets share a network."""
BY_NAME = {m.name: m for m in METRICS}


def _growth() -> dict[str, float]:
    fits = catalog_trends(shipped_catalog()).fits
    return {m: fits[m].growth_per_year for m in PROJECTED_METRICS}


def test_projection_at_base_release_year_is_the_base() -> None:
    """Projected to its own release date, a GPU keeps every field (up to rounding of g^0)."""
    entry = shipped_catalog().by_preset("h100_sxm")
    assert entry is not None
    base = preset_spec("h100_sxm")
    projected = project_hardware(base, entry.release_year, entry.release_year, _growth(), "x")
    assert dataclasses.replace(projected, name=base.name) == base


@pytest.mark.parametrize(("base", "later"), PAIRS)
def test_projection_lands_near_the_next_generation(base: str, later: str) -> None:
    """A base projected to a later GPU's release date is within NEAR_FACTOR of it on every metric."""
    catalog = shipped_catalog()
    start, end = catalog.by_preset(base), catalog.by_preset(later)
    assert start is not None
    assert end is not None
    projected = project_hardware(
        preset_spec(base), start.release_year, end.release_year, _growth(), "x"
    )
    actual = preset_spec(later)
    for metric in PROJECTED_METRICS:
        read = BY_NAME[metric].from_preset
        assert read is not None
        ratio = read(projected) / read(actual)
        assert 1 / NEAR_FACTOR <= ratio <= NEAR_FACTOR, (metric, ratio)


def test_projection_scales_clock_and_keeps_domain_a_power_of_two() -> None:
    """FLOP/s growth goes into the clock (SMs fixed); the NVLink domain stays a power of two."""
    base = preset_spec("h100_sxm")
    growth = {**_growth(), "intra_node_gpus": 1.5, "dense_16bit_flop_per_s": 2.0}
    projected = project_hardware(base, 2022.0, 2025.0, growth, "x")
    assert projected.sms == base.sms
    assert (projected.u_eff, projected.fp8_u_eff_ratio) == (base.u_eff, base.fp8_u_eff_ratio)
    assert projected.hbm_device_ratio == base.hbm_device_ratio  # the capacity's own trend moves
    assert peak_flop_per_s(projected) == pytest.approx(8 * peak_flop_per_s(base), rel=1e-12)
    assert projected.level_sizes == (power_of_two_floor(8 * 1.5**3),) == (16,)


def test_projected_config_builds_a_named_spec_with_overrides() -> None:
    """hardware=projected hardware.year=2030 loads; a growth override of 1 keeps a metric flat."""
    cfg = compose_config(
        ["hardware=projected", "hardware.year=2030", "hardware.growth_per_year.hbm_bytes=1.0"]
    )
    scenario = load_scenario(cfg)
    base = preset_spec("h100_sxm")
    assert scenario.hardware_name == "projected_h100_sxm_2030"
    assert scenario.hardware.hbm_bytes == base.hbm_bytes
    assert peak_flop_per_s(scenario.hardware) > 10 * peak_flop_per_s(base)


def test_projected_hardware_sweeps_over_year() -> None:
    """A sweep axis over hardware.year gives one series per year, faster each year."""
    cfg = compose_config(["hardware=projected", "+sweep.axes.hardware.year=[2026,2030]"])
    series = expand_sweep(cfg, overrides=["hardware=projected"])
    rates = [peak_flop_per_s(s.scenario.hardware) for s in series]
    assert len(series) == 2
    assert rates[0] < rates[1]


@pytest.mark.parametrize(
    ("override", "key"),
    [
        ("hardware.year=2010", "hardware.year"),
        ("hardware.growth_per_year.network_latency_s=-0.5", "network_latency_s"),
        ("hardware.base=h100_low_latency", "hardware.base"),
        ("+hardware.growth_per_year.hbm_tb=1.2", "hbm_tb"),
    ],
)
def test_projected_bad_input_is_a_config_error(override: str, key: str) -> None:
    """A year before the catalog, a negative growth, a base outside it, an unknown metric: ConfigError."""
    cfg = compose_config(["hardware=projected", override])
    with pytest.raises(ConfigError, match=key):
        load_scenario(cfg)


def test_projected_metric_without_trend_needs_a_growth(tmp_path: Path) -> None:
    """A catalog giving a metric for one release only has no trend: the error names the metric."""
    csv = tmp_path / "catalog.csv"
    csv.write_text(
        "gpu,metric,value,source\n"
        "h100_sxm,preset,h100_sxm,conf/hardware/h100_sxm.yaml\n"
        "h100_sxm,release_date,2022-09-20,NVIDIA press release\n"
        "p100,release_date,2016-06-01,P100 datasheet\n"
        + "".join(
            f"p100,{name},{value},P100 datasheet\n"
            for name, value in (
                ("dense_16bit_tflop_per_s", 21.2),
                ("hbm_bandwidth_gb_per_s", 732),
                ("hbm_gb", 16),
                ("l2_mib", 4),
                ("intra_node_bandwidth_gb_per_s", 160),
                ("intra_node_gpus", 8),
                ("inter_node_bandwidth_gb_per_s", 12.5),
            )
        )
    )
    cfg = compose_config(["hardware=projected", f"hardware.catalog={csv}"])
    with pytest.raises(ConfigError, match=r"growth_per_year\.network_latency_s"):
        load_scenario(cfg)


@pytest.mark.slow
def test_projected_bad_year_exits_2_with_one_line(tmp_path: Path) -> None:
    """On the command line a year before the catalog is one stderr line, exit 2, nothing written."""
    result = dmlimits(tmp_path, "hardware=projected", "hardware.year=2001")
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert result.stderr.startswith("dmlimits: error: hardware.year = 2001")
    assert not (tmp_path / "outputs" / "dataset").exists()
