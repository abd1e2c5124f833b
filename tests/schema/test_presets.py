"""Hardware presets against the spec's tables (spec §3.2-§3.3)."""

from __future__ import annotations

import math
from dataclasses import fields
from pathlib import Path

import pytest

from pipeline.model.records.hardware import (
    HardwareSpec,
    effective_flop_per_s,
    peak_flop_per_s,
    smem_bandwidth_bytes_per_s,
    useful_l2_bytes,
    useful_register_bytes,
)
from pipeline.model.records.scaling import ScalingLaws, model_shape
from pipeline.model.search.search import smallest_cluster
from pipeline.schema import compose_config, hardware_from_config

CHECK_REL = 1e-6
"""The spec's derived-value table (spec §3.2) gives 7 significant digits."""
HARDWARE_PRESETS = sorted(
    p.stem for p in (Path(__file__).parents[2] / "conf" / "hardware").glob("*.yaml")
)
"""Every config of conf/hardware/, by name."""

DERIVED_RATES = {
    # preset: (F_peak FLOP/s, F_eff FLOP/s, BW_smem B/s, L2_u B), spec §3.2 check table
    "v100_sxm": (1.255834e14, 1.130250e14, 1.412813e13, 4_718_592),
    "a100_sxm": (3.118694e14, 2.650890e14, 1.656806e13, 31_457_280),
    "h100_sxm": (9.894298e14, 6.926008e14, 2.164378e13, 39_321_600),
    "h100_pcie": (7.564493e14, 4.160471e14, 1.300147e13, 39_321_600),
}

SPEC_PRESET_FIELDS = {
    # preset: SI fields of the spec §3.2 table that the YAML converts from human units
    "v100_sxm": (900e9, 2155e9, 6 * 2**20, 3.2e10, (3e11, 1.25e10)),
    "a100_sxm": (1555e9, 5603e9, 40 * 2**20, 4.0e10, (6e11, 5e10)),
    "h100_sxm": (3352e9, 6441e9, 50 * 2**20, 8.0e10, (9e11, 1e11)),
    "h100_pcie": (2039e9, 5563e9, 50 * 2**20, 8.0e10, (9e11, 1e11)),
}

WHAT_IF_CHANGES: dict[str, dict[str, object]] = {
    # preset: every field that differs from h100_sxm besides its name (spec §3.3)
    "h100_low_latency": {"matmul_latency_s": 4.5e-7, "net_latency_s": (1.125e-7, 1.125e-7)},
    "h100_global_nvlink": {
        "net_bandwidth_bytes_per_s": (9e11,),
        "net_latency_s": (1.125e-6,),
        "level_sizes": (),
    },
    "h100_global_nvlink_low_latency": {
        "matmul_latency_s": 4.5e-7,
        "net_bandwidth_bytes_per_s": (9e11,),
        "net_latency_s": (1.125e-7,),
        "level_sizes": (),
    },
    "h100_infinite_network_low_latency": {
        "matmul_latency_s": 4.5e-7,
        "net_bandwidth_bytes_per_s": (math.inf,),
        "net_latency_s": (1.125e-7,),
        "level_sizes": (),
    },
    "h100_superpod": {
        "net_bandwidth_bytes_per_s": (9e11, 4.5e11, 1e11),
        "net_latency_s": (1.125e-6, 1.125e-6, 1.125e-6),
        "level_sizes": (8, 32),
    },
    "h100_scaled_10x": {  # quirk Q6: network latency 0.5 us
        "hbm_bandwidth_bytes_per_s": 3.352e13,
        "l2_bandwidth_bytes_per_s": 6.441e13,
        "matmul_latency_s": 4.5e-7,
        "net_bandwidth_bytes_per_s": (9e12, 1e12),
        "net_latency_s": (5e-7, 5e-7),
    },
    "h100_scaled_10x_fixed_latency": {  # Q6 alternative: a tenth of 1.125 us
        "hbm_bandwidth_bytes_per_s": 3.352e13,
        "l2_bandwidth_bytes_per_s": 6.441e13,
        "matmul_latency_s": 4.5e-7,
        "net_bandwidth_bytes_per_s": (9e12, 1e12),
        "net_latency_s": (1.125e-7, 1.125e-7),
    },
    "h200_sxm": {
        "hbm_bandwidth_bytes_per_s": 4.8e12,
        "hbm_bytes": 1.41e11,
        "fp8_u_eff_ratio": 0.914,
        "hbm_device_ratio": 1.06918,
    },
}

DATASHEET_REL = 5e-4
"""Datasheets round FLOP rates to 3-4 significant digits (e.g. 1,979 TFLOP/s)."""
DATASHEET_DENSE_FP16 = {
    # preset: dense FP16 tensor FLOP/s on its datasheet (half the "with sparsity" figure)
    "h200_sxm": 1979e12 / 2,
    "b200": 2.25e15,
    "gb200_nvl72": 2.5e15,
}


def preset(name: str) -> HardwareSpec:
    """The HardwareSpec of conf/hardware/<name>.yaml."""
    return hardware_from_config(compose_config([f"hardware={name}"]).hardware)


@pytest.mark.parametrize("name", sorted(DERIVED_RATES))
def test_base_preset_derived_rates_match_spec_table(name: str) -> None:
    """F_peak, F_eff, BW_smem and L2_u of a base preset equal the spec §3.2 check table."""
    hw = preset(name)
    f_peak, f_eff, bw_smem, l2_u = DERIVED_RATES[name]
    assert peak_flop_per_s(hw) == pytest.approx(f_peak, rel=CHECK_REL)
    assert effective_flop_per_s(hw) == pytest.approx(f_eff, rel=CHECK_REL)
    assert smem_bandwidth_bytes_per_s(hw) == pytest.approx(bw_smem, rel=CHECK_REL)
    assert useful_l2_bytes(hw) == pytest.approx(l2_u, rel=CHECK_REL)
    assert useful_register_bytes(hw) == 49_152


@pytest.mark.parametrize("name", sorted(SPEC_PRESET_FIELDS))
def test_base_preset_converts_to_spec_si_values(name: str) -> None:
    """A base preset's converted bandwidths, capacities and latencies equal the spec's literals."""
    hw = preset(name)
    hbm_bw, l2_bw, l2_bytes, hbm_bytes, net_bw = SPEC_PRESET_FIELDS[name]
    assert hw.hbm_bandwidth_bytes_per_s == hbm_bw
    assert hw.l2_bandwidth_bytes_per_s == l2_bw
    assert hw.l2_bytes == l2_bytes
    assert hw.hbm_bytes == hbm_bytes
    assert hw.net_bandwidth_bytes_per_s == net_bw
    assert hw.net_latency_s == (1.125e-6, 1.125e-6)
    assert hw.matmul_latency_s == 4.5e-6
    assert hw.level_sizes == (8,)
    assert hw.register_bytes_per_block == 64 * 2**10


@pytest.mark.parametrize("name", sorted(WHAT_IF_CHANGES))
def test_what_if_preset_differs_from_h100_only_where_listed(name: str) -> None:
    """A what-if preset equals h100_sxm except in the fields spec §3.3 lists (and its name)."""
    base, variant = preset("h100_sxm"), preset(name)
    differences = {
        f.name: getattr(variant, f.name)
        for f in fields(HardwareSpec)
        if getattr(variant, f.name) != getattr(base, f.name)
    }
    assert differences == {"name": name, **WHAT_IF_CHANGES[name]}


@pytest.mark.parametrize("name", sorted(DATASHEET_DENSE_FP16))
def test_new_preset_peak_matches_datasheet(name: str) -> None:
    """A post-paper preset's F_peak matches its datasheet's (rounded) dense FP16 rate."""
    expected = DATASHEET_DENSE_FP16[name]
    assert peak_flop_per_s(preset(name)) == pytest.approx(expected, rel=DATASHEET_REL)


def test_gb200_nvl72_uses_64_gpus_of_each_nvlink_domain() -> None:
    """GB200 NVL72's innermost level is 64 GPUs of the rack's NVLink domain at 1.8 TB/s per GPU."""
    hw = preset("gb200_nvl72")
    assert hw.level_sizes == (64,)
    assert hw.net_bandwidth_bytes_per_s[0] == 1.8e12


def test_gb200_nvl72_series_is_feasible_beyond_one_rack() -> None:
    """Power-of-two clusters tile 64-GPU domains, so the first paper size finds a cluster (spec §5.2, §11)."""
    point = smallest_cluster(
        preset("gb200_nvl72"), model_shape(12288, ScalingLaws()), 0.25 * 3.154e7
    )
    assert point.feasible
    assert point.layout is not None
    assert point.layout.n_gpu > 64


def test_hardware_from_config_accepts_plain_mapping() -> None:
    """hardware_from_config reads a plain dict as well as a DictConfig."""
    node = {
        "name": "toy",
        "flop_per_clock_per_thread": 32,
        "sms": 132,
        "max_clock_mhz": 1830,
        "u_eff": 0.7,
        "hbm_bandwidth_gb_per_s": 3352,
        "l2_bandwidth_gb_per_s": 6441,
        "l2_mib": 50,
        "register_kib_per_block": 64,
        "dsmem": True,
        "hbm_gb": 80,
        "matmul_latency_us": 4.5,
        "network": {"bandwidth_gb_per_s": [900], "latency_us": [1.125], "level_sizes": []},
    }
    assert hardware_from_config(node) == HardwareSpec(
        "toy", 32.0, 132, 1.83e9, 0.7, 3.352e12, 6.441e12, 50 * 2**20, 65536.0, True, 8e10,
        4.5e-6, (9e11,), (1.125e-6,), (),
    )  # fmt: skip


@pytest.mark.parametrize("name", HARDWARE_PRESETS)
def test_preset_composed_alone_equals_the_root_configs_node(name: str) -> None:
    """Each shipped hardware preset composed alone (`compose_group_options`, what
    `projected.preset_specs` reads) is the node the root config holds under `hardware`."""
    from pipeline.schema.compose import compose_group_options

    assert compose_group_options("hardware", [name])[name] == (
        compose_config([f"hardware={name}"]).hardware
    )


def test_presets_composed_together_equal_each_composed_alone() -> None:
    """Composing several presets in one composition (the catalog's) gives each the node it has
    composed alone: no preset's defaults list leaks into another's package."""
    from pipeline.schema.compose import compose_group_options

    together = compose_group_options("hardware", HARDWARE_PRESETS)
    assert list(together) == HARDWARE_PRESETS
    for name in HARDWARE_PRESETS:
        assert together[name] == compose_group_options("hardware", [name])[name], name
