"""The catalog's metrics: the CSV name (human unit in the name), the SI name, and the conversion.

One record per metric, so the loader, the trend fits, projected hardware and the config keys
of `hardware=projected` (its `growth_per_year` node) all follow this one list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pipeline import units
from pipeline.model.records.hardware import HardwareSpec, peak_flop_per_s


@dataclass(frozen=True, slots=True)
class Metric:
    """One measured quantity of an accelerator generation."""

    name: str
    """The trend's name (SI unit in it), e.g. "hbm_bandwidth_bytes_per_s"; `trends.metric`."""
    csv_name: str
    """Its name in accelerators.csv, in the unit people write, e.g. "hbm_bandwidth_gb_per_s"."""
    to_si: Callable[[float], float]
    """CSV value -> SI value (exact where `pipeline.units` is)."""
    from_preset: Callable[[HardwareSpec], float | None] | None
    """The value a hardware preset holds (SI), or None if presets do not hold it; the callable
    returns None for a preset without that metric (an A100 has no FP8 peak)."""
    description: str


def _same(x: float) -> float:
    return float(x)


def _preset_tdp_w(hw: HardwareSpec) -> float:
    """A preset's board power; a preset that is a catalog entry must state it."""
    if hw.tdp_w is None:
        raise ValueError(f"hardware preset {hw.name} is a catalog entry and has no tdp_w")
    return hw.tdp_w


def _tflop_per_s_to_flop_per_s(x: float) -> float:
    return float(x) * 1e12


METRICS: tuple[Metric, ...] = (
    Metric(
        "dense_16bit_flop_per_s",
        "dense_16bit_tflop_per_s",
        _tflop_per_s_to_flop_per_s,
        peak_flop_per_s,
        "dense FP16/BF16 tensor FLOP/s (F_peak of a preset)",
    ),
    Metric(
        "dense_fp8_flop_per_s",
        "dense_fp8_tflop_per_s",
        _tflop_per_s_to_flop_per_s,
        lambda hw: hw.fp8_flop_per_s,
        "dense FP8 tensor FLOP/s (physics.precision: fp8); none before Hopper",
    ),
    Metric(
        "hbm_bandwidth_bytes_per_s",
        "hbm_bandwidth_gb_per_s",
        units.gb_per_s_to_bytes_per_s,
        lambda hw: hw.hbm_bandwidth_bytes_per_s,
        "HBM (DRAM) bandwidth",
    ),
    Metric(
        "hbm_bytes",
        "hbm_gb",
        units.gb_to_bytes,
        lambda hw: hw.hbm_bytes,
        "HBM (DRAM) capacity",
    ),
    Metric("l2_bytes", "l2_mib", units.mib_to_bytes, lambda hw: hw.l2_bytes, "L2 cache size"),
    Metric(
        "intra_node_bandwidth_bytes_per_s",
        "intra_node_bandwidth_gb_per_s",
        units.gb_per_s_to_bytes_per_s,
        lambda hw: hw.net_bandwidth_bytes_per_s[0],
        "NVLink / Infinity Fabric bandwidth per GPU, bidirectional (network level 0)",
    ),
    Metric(
        "intra_node_gpus",
        "intra_node_gpus",
        _same,
        lambda hw: float(hw.level_sizes[0]),
        "GPUs in one NVLink / Infinity Fabric domain (level_sizes[0])",
    ),
    Metric(
        "inter_node_bandwidth_bytes_per_s",
        "inter_node_bandwidth_gb_per_s",
        units.gb_per_s_to_bytes_per_s,
        lambda hw: hw.net_bandwidth_bytes_per_s[-1],
        "scale-out network bandwidth per GPU, bidirectional (top network level)",
    ),
    Metric(
        "network_latency_s",
        "network_latency_us",
        units.us_to_s,
        lambda hw: hw.net_latency_s[-1],
        "per-hop network latency (top level), where measured",
    ),
    Metric("tdp_w", "tdp_w", _same, _preset_tdp_w, "board power (TDP)"),
)
"""Every numeric metric, in table order."""

BY_NAME = {m.name: m for m in METRICS}
BY_CSV_NAME = {m.csv_name: m for m in METRICS}
RELEASE_DATE = "release_date"
"""The CSV metric holding a GPU's release date, YYYY-MM-DD."""
PRESET = "preset"
"""The CSV metric naming the conf/hardware/ preset that holds a GPU's other metrics."""
EPOCH_NAME = "epoch_name"
"""The CSV metric naming the same accelerator's row in Epoch AI's hardware data (its `Hardware
name`), so the merge with that source (`pipeline.sources.hardware`) lets the catalog win."""
