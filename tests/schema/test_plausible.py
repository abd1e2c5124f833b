"""Plausibility warnings: ranges derived from the catalog, one line per implausible hardware value."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

from pipeline.model.records.hardware import HardwareSpec
from pipeline.schema import compose_config, load_scenario
from pipeline.schema.plausible import (
    CATALOG_SPANS,
    FACTOR,
    PlausibilityWarning,
    Span,
    implausible,
    warning_lines,
)
from pipeline.schema.projected import preset_spec, shipped_catalog

FROM_PRESET: dict[str, Callable[[HardwareSpec], list[float]]] = {
    "flop_per_clock_per_thread": lambda hw: [hw.flop_per_clock_per_thread],
    "sms": lambda hw: [float(hw.sms)],
    "max_clock_mhz": lambda hw: [hw.max_clock_hz / 1e6],
    "hbm_bandwidth_gb_per_s": lambda hw: [hw.hbm_bandwidth_bytes_per_s / 1e9],
    "l2_bandwidth_gb_per_s": lambda hw: [hw.l2_bandwidth_bytes_per_s / 1e9],
    "l2_mib": lambda hw: [hw.l2_bytes / 2**20],
    "register_kib_per_block": lambda hw: [hw.register_bytes_per_block / 2**10],
    "hbm_gb": lambda hw: [hw.hbm_bytes / 1e9],
    "matmul_latency_us": lambda hw: [hw.matmul_latency_s * 1e6],
    "network.bandwidth_gb_per_s": lambda hw: [b / 1e9 for b in hw.net_bandwidth_bytes_per_s],
    "network.latency_us": lambda hw: [t * 1e6 for t in hw.net_latency_s],
    "network.level_sizes": lambda hw: [float(n) for n in hw.level_sizes],
}
"""Each checked key's values in a preset, in the key's unit."""
FROM_CSV: dict[str, tuple[str, float]] = {
    "hbm_bandwidth_bytes_per_s": ("hbm_bandwidth_gb_per_s", 1e9),
    "hbm_bytes": ("hbm_gb", 1e9),
    "l2_bytes": ("l2_mib", 2**20),
    "intra_node_bandwidth_bytes_per_s": ("network.bandwidth_gb_per_s", 1e9),
    "inter_node_bandwidth_bytes_per_s": ("network.bandwidth_gb_per_s", 1e9),
    "intra_node_gpus": ("network.level_sizes", 1.0),
    "network_latency_s": ("network.latency_us", 1e-6),
}
"""Catalog metric (SI) -> the checked key it is a value of, and the key's unit in SI."""


def catalog_values() -> dict[str, list[float]]:
    """Every checked key's values over the shipped catalog (presets, else the CSV's numbers)."""
    values: dict[str, list[float]] = {key: [] for key in CATALOG_SPANS}
    for entry in shipped_catalog().entries:
        if entry.preset is not None:
            spec = preset_spec(entry.preset)
            for key, read in FROM_PRESET.items():
                values[key] += read(spec)
            continue
        for metric, value in entry.values.items():
            if metric in FROM_CSV:
                key, unit = FROM_CSV[metric]
                values[key].append(value.value / unit)
    return values


def test_catalog_spans_are_the_catalogs() -> None:
    """Each key's span is the smallest and largest value the catalog holds for it."""
    for key, found in catalog_values().items():
        span = CATALOG_SPANS[key]
        assert (span.catalog_min, span.catalog_max) == pytest.approx(
            (min(found), max(found)), rel=1e-9
        ), key


@pytest.mark.parametrize("key", sorted(FROM_PRESET))
def test_catalog_spans_cover_every_checked_key(key: str) -> None:
    """Every checked key is derived from the catalog (and nothing else is checked)."""
    assert set(FROM_PRESET) == set(CATALOG_SPANS)
    assert CATALOG_SPANS[key].low == CATALOG_SPANS[key].catalog_min / FACTOR


def scenario_warnings(overrides: list[str]) -> list[str]:
    """The plausibility warnings loading the scenario of `overrides` issues."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        load_scenario(compose_config(overrides))
    return [str(w.message) for w in caught if issubclass(w.category, PlausibilityWarning)]


def test_unit_slip_warns_in_one_line_naming_key_value_range_and_slip() -> None:
    """TB/s typed into the GB/s key warns once, naming the key, value, range and likely slip."""
    [message] = scenario_warnings(["hardware.hbm_bandwidth_gb_per_s=3.35"])
    assert "\n" not in message
    assert message.startswith("hardware.hbm_bandwidth_gb_per_s = 3.35 is outside")
    assert "7.32 to 800000 GB/s" in message
    assert "TB/s typed into a GB/s key? (3.35 TB/s = 3350 GB/s)" in message


@pytest.mark.parametrize(
    ("override", "fragment"),
    [
        pytest.param("hardware.max_clock_mhz=1.83", "GHz typed into a MHz key", id="ghz_as_mhz"),
        pytest.param("hardware.hbm_gb=0.08", "TB typed into a GB key", id="tb_as_gb"),
        pytest.param("hardware.l2_mib=51200", "KiB typed into a MiB key", id="kib_as_mib"),
        pytest.param(
            "hardware.network.latency_us=[1125,1.125]", "ns typed into a us key", id="ns_as_us"
        ),
        pytest.param(
            "hardware.network.bandwidth_gb_per_s=[900,0.1]", "bandwidth_gb_per_s[1] = 0.1", id="tb"
        ),
        pytest.param("hardware.sms=100000", "hardware.sms = 100000", id="count_without_unit"),
    ],
)
def test_implausible_value_warns_naming_it(override: str, fragment: str) -> None:
    """A value far outside the catalog warns once, naming the key (and the slip when one fits)."""
    [message] = scenario_warnings([override])
    assert fragment in message


@pytest.mark.parametrize(
    "overrides",
    [
        pytest.param([], id="default"),
        pytest.param(["hardware=h100_infinite_network_low_latency"], id="infinite_network"),
        pytest.param(["hardware.matmul_latency_us=0", "hardware.network.latency_us=[0,0]"],
                     id="zero_latency"),
        pytest.param(["hardware=h100_scaled_10x"], id="what_if_ten_times"),
        pytest.param(["hardware=projected", "hardware.year=2060"], id="projected"),
        *[pytest.param([f"hardware={p}"], id=p) for p in ("v100_sxm", "b200", "gb200_nvl72")],
    ],
)  # fmt: skip
def test_shipped_presets_and_idealizations_do_not_warn(overrides: list[str]) -> None:
    """Shipped presets, zero latency, infinite bandwidth and projections are not warned about."""
    assert scenario_warnings(overrides) == []


def test_implausible_leaves_values_inside_the_range_alone() -> None:
    """The range's own ends are plausible; just beyond them is not."""
    span = Span("GB/s", 10.0, 20.0)
    assert implausible("k", 0.1, span) is None
    assert implausible("k", 2000.0, span) is None
    assert implausible("k", 0.0999, span) is not None
    assert implausible("k", 2001.0, span) is not None


def test_warning_lines_show_each_warning_once_on_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A command shows a slip as one `dmlimits: warning:` line, once however often it is loaded."""
    cfg = compose_config(["hardware.hbm_bandwidth_gb_per_s=3.35"])
    with warning_lines("dmlimits"):
        load_scenario(cfg)
        load_scenario(cfg)
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("dmlimits: warning: hardware.hbm_bandwidth_gb_per_s = 3.35 is")


def test_docs_list_every_plausible_range() -> None:
    """docs/model.md's table gives each checked key's catalog span and plausible range."""
    text = (Path(__file__).parents[2] / "docs" / "model.md").read_text("utf-8")
    text = text[text.index("| key | catalog span | plausible range |") :]
    for key, span in CATALOG_SPANS.items():
        [row] = [line for line in text.splitlines() if line.startswith(f"| `{key}`")]
        assert f"{span.low:g} to {span.high:g}" in row, row
