"""The `series` table: each series' whole scenario and sweep point, so sweep series tell apart."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime

import pytest

from pipeline.io.columns import SERIES_SCHEMA
from pipeline.io.rows import Provenance, SeriesKey, number_text
from pipeline.model.records.closed_form import ClosedFormSettings
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.options import Quirks, SearchOptions
from pipeline.model.records.scaling import BatchLaw, ScalingLaws
from pipeline.schema import compose_config
from pipeline.sweep import SweepSeries, expand_sweep
from tests.io.helpers import series_row

PROVENANCE = Provenance(run_id="test", created_at=datetime(2025, 1, 1, tzinfo=UTC))
LIST_FIELDS = {"net_bandwidth_bytes_per_s", "net_latency_s", "level_sizes"}


def row(item: SweepSeries, whole_grid: bool = False) -> dict[str, object]:
    """The series row of an expanded series, as a dict."""
    s = item.scenario
    key = SeriesKey(
        s.hardware_name, s.scaling_name, s.batch_law_name, s.duration_s, item.series_id, s.year_s
    )
    table = series_row(
        s, key, whole_grid=whole_grid, sweep_point=item.sweep_point, provenance=PROVENANCE
    )
    assert table.schema.equals(SERIES_SCHEMA)
    return table.to_pylist()[0]


def expand(*overrides: str) -> list[SweepSeries]:
    """The series of the root config with these overrides."""
    return expand_sweep(compose_config(list(overrides)), overrides=list(overrides))


def test_series_schema_covers_every_scenario_field() -> None:
    """Every field of the hardware, laws, options, quirks and Model B settings has a column."""
    names = set(SERIES_SCHEMA.names)
    expected = {f.name for f in dataclasses.fields(HardwareSpec)} - {"name"}
    expected |= {f.name for f in dataclasses.fields(ScalingLaws)} - {"batch"}
    expected |= {f"batch_{f.name}" for f in dataclasses.fields(BatchLaw)}
    expected |= {f"option_{f.name}" for f in dataclasses.fields(SearchOptions)} - {"option_quirks"}
    expected |= {f"quirk_{f.name}" for f in dataclasses.fields(Quirks)}
    expected |= {f"closed_form_{f.name}" for f in dataclasses.fields(ClosedFormSettings)}
    assert expected <= names, sorted(expected - names)


def test_series_row_shows_the_sweep_point_and_si_values() -> None:
    """A smoke-sweep series row holds its axis values and the SI scenario they produced."""
    item = expand("sweep=smoke")[0]
    got = row(item)
    assert json.loads(str(got["sweep_point"])) == {
        "batch": "critical",
        "hardware.hbm_bandwidth_gb_per_s": 2000,
        "hardware.network.latency_us[*]": 0.5,
    }
    assert got["hbm_bandwidth_bytes_per_s"] == 2e12
    assert got["net_latency_s"] == "5e-7x5e-7"
    assert got["net_latency_l0_s"] == got["net_latency_top_s"] == 5e-7
    assert got["net_bandwidth_bytes_per_s"] == "9e11x1e11"
    assert got["level_sizes"] == "8"
    assert got["level_size_l0"] == 8
    assert got["batch_kind"] == "critical"
    assert got["batch_coefficient"] is None  # the critical law has none
    assert got["config_hash"] == got["series_id"] == item.series_id
    assert got["fixed_n_gpu"] is None


@pytest.mark.parametrize(
    "hardware", ["h100_superpod", "h100_global_nvlink", "h100_infinite_network_low_latency"]
)
def test_series_row_level_strings_parse_back(hardware: str) -> None:
    """The per-level strings parse back to the exact HardwareSpec values, whatever the depth."""
    (item,) = expand(f"hardware={hardware}")
    got, hw = row(item), item.scenario.hardware
    bandwidths = tuple(float(x) for x in str(got["net_bandwidth_bytes_per_s"]).split("x"))
    latencies = tuple(float(x) for x in str(got["net_latency_s"]).split("x"))
    assert bandwidths == hw.net_bandwidth_bytes_per_s
    assert latencies == hw.net_latency_s
    assert got["n_net_levels"] == hw.n_levels
    assert got["level_size_l0"] == (hw.level_sizes[0] if hw.level_sizes else None)


def test_series_row_of_a_fixed_layout() -> None:
    """parallelism=fixed fills the fixed-layout columns."""
    (item,) = expand("parallelism=fixed")
    got = row(item, whole_grid=True)
    assert got["fixed_n_gpu"] == 2048.0
    assert got["fixed_pp_levels"] == "1x64"
    assert got["fixed_zero_bubble"] is True
    assert got["whole_grid"] is True


@pytest.mark.parametrize(
    ("x", "text"), [(9e11, "9e11"), (1.125e-6, "1.125e-6"), (0.0, "0"), (float("inf"), "inf")]
)
def test_number_text_is_short_and_exact(x: float, text: str) -> None:
    """Numbers in level strings are in their shortest exact form."""
    assert number_text(x) == text
    assert float(text) == x


def test_series_row_records_the_whole_physics_record() -> None:
    """A physics override is told from its preset in `physics_json`; `physics` keeps the name."""
    (preset,) = expand("physics=realistic")
    (changed,) = expand("physics=realistic", "physics.tensor_parallel=both")
    a, b = row(preset), row(changed)
    assert a["physics"] == b["physics"] == "realistic"
    assert json.loads(str(a["physics_json"]))["tensor_parallel"] == "1d"
    assert json.loads(str(b["physics_json"]))["tensor_parallel"] == "both"
    assert a["run_json"] is None


def test_series_row_records_the_run_and_whether_its_layout_was_searched() -> None:
    """`run_json` holds the concrete run, with layout_search as the planning layer set it."""
    (given,) = expand("run=gpt_1p7b")
    (searched,) = expand("run=gpt_1p7b", "run.layout_search=true")
    assert json.loads(str(row(given)["run_json"]))["layout_search"] is False
    assert json.loads(str(row(searched)["run_json"]))["layout_search"] is True
