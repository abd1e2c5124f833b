"""Hypothesis strategies shared by the property tests: hardware, models, layouts."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.options import Quirks, SearchOptions
from pipeline.model.records.scaling import ModelShape, ScalingLaws, model_shape
from tests.presets import preset

BASE_PRESETS = ("v100_sxm", "a100_sxm", "h100_sxm", "h100_superpod", "h100_global_nvlink")
SMALL_WIDTHS = (12288, 14336, 16384, 20480, 24576)


@st.composite
def hardware(draw: st.DrawFn) -> HardwareSpec:
    """A preset with its network bandwidths and latencies scaled by random factors."""
    hw = preset(draw(st.sampled_from(BASE_PRESETS)))
    k = hw.n_levels
    bw_scale = draw(st.lists(st.floats(0.1, 10.0), min_size=k, max_size=k))
    lat_scale = draw(st.lists(st.floats(0.01, 10.0), min_size=k, max_size=k))
    return replace(
        hw,
        net_bandwidth_bytes_per_s=tuple(
            b * s for b, s in zip(hw.net_bandwidth_bytes_per_s, bw_scale, strict=True)
        ),
        net_latency_s=tuple(t * s for t, s in zip(hw.net_latency_s, lat_scale, strict=True)),
        matmul_latency_s=hw.matmul_latency_s * draw(st.floats(0.01, 10.0)),
        hbm_bandwidth_bytes_per_s=hw.hbm_bandwidth_bytes_per_s * draw(st.floats(0.1, 10.0)),
    )


@st.composite
def models(draw: st.DrawFn) -> ModelShape:
    """A small paper-grid model, dense or sparse, with or without dropout (realistic physics)."""
    laws = ScalingLaws(
        sparse=draw(st.booleans()),
        kv_heads=draw(st.sampled_from([None, 8])),
        dropout=draw(st.booleans()),
    )
    return model_shape(draw(st.sampled_from(SMALL_WIDTHS)), laws)


def scale_network(hw: HardwareSpec, bandwidth: float, latency: float) -> HardwareSpec:
    """Multiply every level's bandwidth and every latency (network and matmul) by factors."""
    return replace(
        hw,
        net_bandwidth_bytes_per_s=tuple(b * bandwidth for b in hw.net_bandwidth_bytes_per_s),
        net_latency_s=tuple(t * latency for t in hw.net_latency_s),
        matmul_latency_s=hw.matmul_latency_s * latency,
    )


NETWORK_BANDWIDTHS_GB_PER_S = st.one_of(st.floats(1.0, 1e5), st.just(float("inf")))
"""Per-level network bandwidth in GB/s, unbounded (.inf) included."""
LATENCIES_US = st.one_of(st.just(0.0), st.floats(1e-6, 100.0))
"""A latency in microseconds: zero or anything from a picosecond to 100 us."""


@st.composite
def hardware_configs(draw: st.DrawFn) -> dict[str, object]:
    """A conf/hardware node in config units: any valid GPU on a network of 1 to 3 levels."""
    levels = draw(st.lists(st.integers(1, 64), max_size=2))
    return {
        "name": "random",
        "flop_per_clock_per_thread": draw(st.floats(1.0, 128.0)),
        "sms": draw(st.integers(1, 256)),
        "max_clock_mhz": draw(st.floats(100.0, 3000.0)),
        "u_eff": draw(st.floats(0.01, 1.0)),
        "hbm_bandwidth_gb_per_s": draw(st.floats(10.0, 1e5)),
        "l2_bandwidth_gb_per_s": draw(st.floats(10.0, 1e5)),
        "l2_mib": draw(st.floats(1.0, 512.0)),
        "register_kib_per_block": draw(st.floats(4.0, 512.0)),
        "dsmem": draw(st.booleans()),
        "hbm_gb": draw(st.floats(1.0, 1000.0)),
        "matmul_latency_us": draw(LATENCIES_US),
        "network": {
            "bandwidth_gb_per_s": draw(
                st.lists(
                    NETWORK_BANDWIDTHS_GB_PER_S, min_size=len(levels) + 1, max_size=len(levels) + 1
                )
            ),
            "latency_us": draw(
                st.lists(LATENCIES_US, min_size=len(levels) + 1, max_size=len(levels) + 1)
            ),
            "level_sizes": levels,
        },
    }


@st.composite
def search_options(draw: st.DrawFn) -> SearchOptions:
    """Search and step-time switches, quirk flags included, at random (at least one schedule)."""
    one_f_one_b = draw(st.booleans())
    return SearchOptions(
        one_f_one_b=one_f_one_b,
        zero_bubble=draw(st.booleans()) if one_f_one_b else True,
        interleaving=draw(st.booleans()),
        max_1f1b_microbatch_candidates=draw(st.integers(1, 6)),
        max_zb_microbatch_candidates=draw(st.integers(1, 3)),
        tp_ff_window=draw(st.integers(1, 8)),
        overlap_tp=draw(st.booleans()),
        overlap_pp_ep=draw(st.booleans()),
        overlap_dp=draw(st.booleans()),
        activation_recompute=draw(st.booleans()),
        memory_check=draw(st.booleans()),
        quirks=Quirks(
            zb_hides_latency_correctly=draw(st.booleans()),
            tie_tolerance=draw(st.sampled_from((0.0, 1e-9, 1e-3))),
            whole_sequences=draw(st.booleans()),
            reject_non_divisible=draw(st.booleans()),
        ),
    )
