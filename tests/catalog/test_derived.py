"""Hardware built from catalog values on a template preset (pipeline/catalog/derived.py)."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest

from pipeline.catalog import Value
from pipeline.catalog.derived import derived_hardware, template_entry
from pipeline.catalog.load import parse_catalog, pods_text
from pipeline.model.records.hardware import peak_flop_per_s
from pipeline.schema.projected import preset_spec, shipped_catalog


def test_derived_hardware_of_a_preset_entry_is_the_preset() -> None:
    """H100's catalog values (read from its preset) on the H100 preset give the preset back:
    the same peak, memory and network, every other field untouched but the driver's count of
    the memory and the 2025 software's matmul efficiency, which a catalog part never takes
    from its template (docs/model.md R.12, R.9)."""
    entry = shipped_catalog().entry("h100_sxm")
    preset = preset_spec("h100_sxm")
    hw = derived_hardware(entry, preset, "h100_sxm")
    assert peak_flop_per_s(hw) == pytest.approx(peak_flop_per_s(preset), rel=1e-15)
    assert preset.hbm_device_ratio is not None
    assert hw.hbm_device_ratio is None
    assert preset.matmul_speedup_2025 is not None
    assert hw.matmul_speedup_2025 is None
    assert replace(hw, max_clock_hz=preset.max_clock_hz, hbm_device_ratio=preset.hbm_device_ratio,
                   l2_bandwidth_bytes_per_s=preset.l2_bandwidth_bytes_per_s,
                   matmul_speedup_2025=preset.matmul_speedup_2025) == preset  # fmt: skip


def test_derived_hardware_takes_each_catalog_value() -> None:
    """A TPU pod's entry sets the peak, HBM, the ICI domain and its bandwidth; what it does not
    give (latency, the scale-out network, FP8) is the template's or none."""
    entry = parse_catalog(pods_text(), {}).entry("tpu_v4")
    template = preset_spec("a100_sxm_80gb")
    hw = derived_hardware(entry, template, "tpu_v4")
    assert peak_flop_per_s(hw) == pytest.approx(275e12, rel=1e-12)
    assert (hw.hbm_bandwidth_bytes_per_s, hw.hbm_bytes) == (1200e9, 32 * 2**30)
    assert hw.level_sizes == (4096, *template.level_sizes[1:])
    assert hw.net_bandwidth_bytes_per_s[0] == pytest.approx(1.1e15 / 4096)
    assert hw.net_bandwidth_bytes_per_s[-1] == template.net_bandwidth_bytes_per_s[-1]
    assert hw.net_latency_s == template.net_latency_s
    assert hw.fp8_flop_per_s is None
    assert template.hbm_device_ratio is not None
    assert hw.hbm_device_ratio is None  # another memory than the template's: its datasheet's


def test_derived_hardware_takes_the_fp8_ratio_only_with_an_fp8_peak() -> None:
    """On an FP8 template, an entry without an FP8 peak has no FP8 utilization ratio either (a
    null that means one thing: no FP8); one with an FP8 peak takes the template's ratio, as it
    takes u_eff (docs/model.md R.11)."""
    template = preset_spec("h100_sxm")
    assert template.fp8_u_eff_ratio is not None
    tpu = derived_hardware(parse_catalog(pods_text(), {}).entry("tpu_v4"), template, "tpu_v4")
    assert (tpu.fp8_flop_per_s, tpu.fp8_u_eff_ratio) == (None, None)
    mi300x = derived_hardware(shipped_catalog().entry("mi300x"), template, "mi300x")
    assert mi300x.fp8_flop_per_s is not None
    assert mi300x.fp8_u_eff_ratio == template.fp8_u_eff_ratio


def test_derived_hardware_refuses_a_domain_that_does_not_tile() -> None:
    """A domain that is not a power of two cannot hold clusters of S · 2^i GPUs: ValueError."""
    entry = shipped_catalog().entry("mi300x")
    odd = replace(entry, values={**entry.values, "intra_node_gpus": Value(72.0, "test")})
    with pytest.raises(ValueError, match="power of two"):
        derived_hardware(odd, preset_spec("h100_sxm"), "odd")


def test_template_entry_is_the_preset_released_last_before() -> None:
    """MI300X (2023-12) takes the H100 (2022), P100 (2016) the earliest preset (V100, 2018), and
    an entry released after every preset the newest."""
    catalog = shipped_catalog()
    assert template_entry(catalog.entry("mi300x"), catalog).gpu == "h100_sxm"
    assert template_entry(catalog.entry("p100_sxm2"), catalog).gpu == "v100_sxm"
    late = replace(catalog.entry("mi300x"), release_date=dt.date(2040, 1, 1))
    newest = max((e for e in catalog.entries if e.preset), key=lambda e: e.release_date)
    assert template_entry(late, catalog) == newest
