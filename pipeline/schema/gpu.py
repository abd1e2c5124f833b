"""conf/hardware/<gpu>.yaml -> HardwareSpec: one GPU and its network, in SI units (spec §3).

A GPU's hardware node holds human units in its key names. `gpu_from_config` checks every
field and converts it once through `pipeline.units`. A projected node (with a ``base``) is
`pipeline.schema.projected`'s, which reads its base GPU through this module; the one entry
for any hardware node is `pipeline.schema.hardware.hardware_from_config`.
"""

from __future__ import annotations

from pipeline import units
from pipeline.model.records.hardware import THREADS_PER_SM, HardwareSpec
from pipeline.schema import bounds
from pipeline.schema.errors import ConfigError
from pipeline.schema.plausible import warn_implausible
from pipeline.schema.section import Section, check_si, plain

HARDWARE_KEYS = frozenset(
    {
        "name",
        "flop_per_clock_per_thread",
        "sms",
        "max_clock_mhz",
        "u_eff",
        "hbm_bandwidth_gb_per_s",
        "l2_bandwidth_gb_per_s",
        "l2_mib",
        "register_kib_per_block",
        "dsmem",
        "hbm_gb",
        "hbm_device_ratio",
        "matmul_latency_us",
        "tdp_w",
        "dense_fp8_tflop_per_s",
        "fp8_u_eff_ratio",
        "matmul_speedup_2025",
        "network",
    }
)
HBM_DEVICE_RATIO_SPAN = (0.9, 1.1)
"""Where a driver-reported capacity over the datasheet's decimal gigabytes may lie: a GiB is
1.074 GB, and the driver withholds a little (H100: 81,559 of 81,920 MiB, 1.069; docs/model.md
R.12); outside it the value is of something else (a capacity in MiB, a ratio inverted)."""
MAX_SPEEDUP_2025 = 2.0
"""The largest `matmul_speedup_2025` accepted: a GEMM rate twice the 2021-2024 stacks' would put
a GPU's large GEMMs above its peak at `efficiency.matmul` 0.775 and u_eff 0.70 (docs/model.md
R.9); past it the value is of something else (a rate, an efficiency)."""
NETWORK_KEYS = frozenset({"bandwidth_gb_per_s", "latency_us", "level_sizes", "nics_per_node"})


def gpu_from_config(node: object, path: str = "hardware") -> HardwareSpec:
    """The HardwareSpec of one GPU's hardware node (a DictConfig or a plain mapping).

    ``path`` is the node's dotted key, used in error messages. Raises ConfigError on
    an unknown or missing key, a wrong type, a non-positive or non-finite rate,
    capacity or clock, a negative latency, a level size that is not a positive
    integer, or network lists whose lengths are not len(level_sizes) + 1.
    Only network bandwidth may be ``.inf``. A valid value far outside the accelerator catalog
    issues a `PlausibilityWarning` (`pipeline.schema.plausible`).
    """
    hw = Section(plain(node, path), path, HARDWARE_KEYS)
    name = hw.name("name")
    flop_per_clock_per_thread = hw.number(
        "flop_per_clock_per_thread",
        "FLOP per clock per thread",
        maximum=bounds.MAX_FLOP_PER_CLOCK_PER_THREAD,
    )
    sms = hw.integer("sms")
    max_clock_hz = hw.si("max_clock_mhz", "MHz", units.mhz_to_hz, bounds.MAX_CLOCK_HZ, "Hz")
    u_eff = hw.number("u_eff", "fraction of peak", maximum=1.0)
    bandwidth = (units.gb_per_s_to_bytes_per_s, bounds.MAX_BANDWIDTH_BYTES_PER_S, "B/s")
    hbm_bandwidth = hw.si("hbm_bandwidth_gb_per_s", "GB/s", *bandwidth)
    l2_bandwidth = hw.si("l2_bandwidth_gb_per_s", "GB/s", *bandwidth)
    l2_bytes = hw.si("l2_mib", "MiB", units.mib_to_bytes, bounds.MAX_MEMORY_BYTES, "bytes")
    register_bytes = hw.si(
        "register_kib_per_block", "KiB", units.kib_to_bytes, bounds.MAX_MEMORY_BYTES, "bytes"
    )
    dsmem = hw.boolean("dsmem")
    hbm_bytes = hw.si("hbm_gb", "GB", units.gb_to_bytes, bounds.MAX_MEMORY_BYTES, "bytes")
    low, high = HBM_DEVICE_RATIO_SPAN  # optional: without it, hbm_capacity=device reads hbm_gb
    hbm_device = (
        hw.optional_number(
            "hbm_device_ratio", "driver-reported over datasheet bytes", minimum=low, maximum=high
        )
        if hw.has("hbm_device_ratio")
        else None
    )
    latency = (units.us_to_s, bounds.MAX_LATENCY_S, "s")
    matmul_latency = hw.si("matmul_latency_us", "us", *latency, exclusive=False)
    tdp_w = (  # optional: without it, points have no power (docs/model.md §10.1)
        hw.optional_number("tdp_w", "W", maximum=bounds.MAX_POWER_W) if hw.has("tdp_w") else None
    )

    fp8 = (  # optional: without it, the GPU has no FP8 tensor cores (physics.precision)
        hw.si(
            "dense_fp8_tflop_per_s",
            "TFLOP/s",
            units.tflop_per_s_to_flop_per_s,
            bounds.MAX_FLOP_PER_S,
            "FLOP/s",
        )
        if hw.has("dense_fp8_tflop_per_s")
        else None
    )
    fp8_ratio = (  # optional: without it, FP8 matmuls reach u_eff of the FP8 peak
        hw.optional_number("fp8_u_eff_ratio", "ratio of fractions of peak")
        if hw.has("fp8_u_eff_ratio")
        else None
    )

    matmul_2025 = (  # optional: without it, physics.stack 2025 runs efficiency.matmul here
        hw.optional_number("matmul_speedup_2025", "ratio of GEMM rates", maximum=MAX_SPEEDUP_2025)
        if hw.has("matmul_speedup_2025")
        else None
    )

    net = hw.section("network", NETWORK_KEYS)
    level_sizes = net.integer_list("level_sizes", nonempty=False)
    net_bandwidths = net.si_list("bandwidth_gb_per_s", "GB/s", *bandwidth, allow_inf=True)
    net_latencies = net.si_list("latency_us", "us", *latency, exclusive=False)
    nics = None  # optional: NICs of a node, read by physics.nic_striping
    if net.has("nics_per_node") and net.raw("nics_per_node", "") is not None:
        nics = net.integer("nics_per_node")
    n_levels = len(level_sizes) + 1
    for key, values in (("bandwidth_gb_per_s", net_bandwidths), ("latency_us", net_latencies)):
        if len(values) != n_levels:
            raise ConfigError(
                net.key(key),
                net.raw(key, ""),
                f"must have len(level_sizes) + 1 = {n_levels} entries, one per network level",
            )
    peak = flop_per_clock_per_thread * THREADS_PER_SM * sms * max_clock_hz
    check_si(hw.key("sms"), sms, peak, bounds.MAX_FLOP_PER_S, "FLOP/s (peak rate)")
    if fp8_ratio is not None:
        _check_fp8_ratio(hw.key("fp8_u_eff_ratio"), fp8_ratio, fp8, u_eff)
    warn_implausible(hw.values, path)

    return HardwareSpec(
        name=name,
        flop_per_clock_per_thread=flop_per_clock_per_thread,
        sms=sms,
        max_clock_hz=max_clock_hz,
        u_eff=u_eff,
        hbm_bandwidth_bytes_per_s=hbm_bandwidth,
        l2_bandwidth_bytes_per_s=l2_bandwidth,
        l2_bytes=l2_bytes,
        register_bytes_per_block=register_bytes,
        dsmem=dsmem,
        hbm_bytes=hbm_bytes,
        hbm_device_ratio=hbm_device,
        matmul_latency_s=matmul_latency,
        net_bandwidth_bytes_per_s=net_bandwidths,
        net_latency_s=net_latencies,
        level_sizes=level_sizes,
        nics_per_node=nics,
        tdp_w=tdp_w,
        fp8_flop_per_s=fp8,
        fp8_u_eff_ratio=fp8_ratio,
        matmul_speedup_2025=matmul_2025,
    )


def _check_fp8_ratio(key: str, ratio: float, fp8_flop_per_s: float | None, u_eff: float) -> None:
    """Refuse an `fp8_u_eff_ratio` nothing would read (no FP8 peak) or one that puts FP8
    matmuls above their peak (u_eff · ratio > 1; docs/model.md R.11). Whether FP8 is faster
    than 16-bit on the GPU is checked where FP8 is asked for (`schema.scenario.check_fp8_speed`):
    what-ifs that scale the 16-bit rate alone may pass the FP8 one."""
    if fp8_flop_per_s is None:
        reason = (
            "needs hardware.dense_fp8_tflop_per_s: it scales the FP8 peak's utilization "
            "(without an FP8 peak, drop it too: ~hardware.fp8_u_eff_ratio)"
        )
    elif u_eff * ratio > 1.0:
        reason = f"u_eff x ratio = {u_eff * ratio:.3g}: FP8 matmuls above their peak"
    else:
        return
    raise ConfigError(key, ratio, reason)
