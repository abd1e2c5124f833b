"""Hardware for an accelerator without a preset, from its catalog values. Pure.

A catalog entry without a preset (P100, the AMD parts in accelerators.csv; the TPU pods in
pods.csv) holds the numbers a datasheet gives: dense FLOP/s, HBM bandwidth and capacity, L2,
network bandwidth and domain size. The model also needs what no datasheet gives (SMs and
FLOP per clock per thread, registers, L2 bandwidth, u_eff, per-matmul and per-hop latency).
`derived_hardware` takes those from a template preset, `template_entry`'s: the preset GPU
released last at or before the entry (else the earliest), so a part is modelled on the GPU
architecture of its time (docs/sources.md, "The reality check"):

- F_peak: the template's clock scaled by F_entry / F_template (SMs and FLOP/clock/thread kept,
  as `pipeline.trends.project` moves FLOP/s), the L2 bandwidth by the same factor;
- HBM bandwidth and capacity, L2 size, level-0 bandwidth and size (a power of two: clusters
  of S · 2^i GPUs must tile, docs/model.md §9), top-level bandwidth, per-hop latency (every
  level): the entry's value where it has one, else the template's;
- the FP8 peak: the entry's, else none (a template's FP8 is not the part's), and with it the
  template's FP8 utilization ratio (`fp8_u_eff_ratio`), as u_eff is the template's;
- the driver's count of the HBM (`hbm_device_ratio`): none, the template's being of its own
  device, whatever the entry's capacity (`physics.hbm_capacity=device` then reads the entry's
  datasheet capacity);
- the 2025 software's GEMM speedup (`matmul_speedup_2025`): none, the template's being
  fitted on the template's own runs (the part then runs at `efficiency.matmul` under either
  `physics.stack`);
- everything else: the template's.
"""

from __future__ import annotations

from dataclasses import replace

from pipeline.catalog.load import Catalog, Entry
from pipeline.model.records.hardware import HardwareSpec, peak_flop_per_s


def template_entry(entry: Entry, catalog: Catalog) -> Entry:
    """The catalog's preset entry released last at or before `entry`, else its earliest preset
    entry; ValueError when the catalog has no preset."""
    presets = [e for e in catalog.entries if e.preset is not None]
    if not presets:
        raise ValueError("the catalog has no entry with a hardware preset")
    before = [e for e in presets if e.release_date <= entry.release_date]
    if before:
        return max(before, key=lambda e: e.release_date)
    return min(presets, key=lambda e: e.release_date)


def _value(entry: Entry, metric: str, default: float) -> float:
    held = entry.values.get(metric)
    return default if held is None else held.value


def derived_hardware(entry: Entry, template: HardwareSpec, name: str) -> HardwareSpec:
    """The template preset with the entry's catalog values (module docstring), named `name`."""
    if not template.level_sizes:
        raise ValueError("a template needs an intra-node network level")
    peak = peak_flop_per_s(template)
    flop = _value(entry, "dense_16bit_flop_per_s", peak) / peak
    bandwidths = list(template.net_bandwidth_bytes_per_s)
    bandwidths[0] = _value(entry, "intra_node_bandwidth_bytes_per_s", bandwidths[0])
    bandwidths[-1] = _value(entry, "inter_node_bandwidth_bytes_per_s", bandwidths[-1])
    fp8 = entry.values.get("dense_fp8_flop_per_s")
    latency = entry.values.get("network_latency_s")
    domain = int(_value(entry, "intra_node_gpus", float(template.level_sizes[0])))
    if domain < 1 or domain & (domain - 1):
        raise ValueError(f"{entry.gpu}: a domain of {domain} GPUs is not a power of two")
    return replace(
        template,
        name=name,
        max_clock_hz=template.max_clock_hz * flop,
        l2_bandwidth_bytes_per_s=template.l2_bandwidth_bytes_per_s * flop,
        hbm_bandwidth_bytes_per_s=_value(
            entry, "hbm_bandwidth_bytes_per_s", template.hbm_bandwidth_bytes_per_s
        ),
        hbm_bytes=_value(entry, "hbm_bytes", template.hbm_bytes),
        l2_bytes=_value(entry, "l2_bytes", template.l2_bytes),
        net_bandwidth_bytes_per_s=tuple(bandwidths),
        net_latency_s=(
            template.net_latency_s
            if latency is None
            else tuple(latency.value for _ in template.net_latency_s)
        ),
        level_sizes=(domain, *template.level_sizes[1:]),
        fp8_flop_per_s=None if fp8 is None else fp8.value,
        fp8_u_eff_ratio=None if fp8 is None else template.fp8_u_eff_ratio,
        hbm_device_ratio=None,  # the template's driver count is of its own device
        matmul_speedup_2025=None,  # fitted on the template's own runs, not the part's
    )
