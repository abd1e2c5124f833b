"""Human units in config files to SI units in the model, converted here and nowhere else.

Config keys carry their unit (``hbm_bandwidth_gb_per_s``, ``matmul_latency_us``); the
schema calls these functions once at load. Decimal factors are applied in exact decimal
arithmetic and rounded once to the nearest double, so the value written in YAML maps to
the SI literal one would write by hand: 0.45 us is exactly the double ``4.5e-7``, and
4.5 us is ``4.5e-6`` (a float product ``0.45 * 1e-6`` would be off by one ulp).
GB = 1e9 bytes; MiB = 2^20 and KiB = 2^10 bytes.
"""

from __future__ import annotations

import math
from decimal import Decimal

GIGA = Decimal(10) ** 9
MEGA = Decimal(10) ** 6
MICRO = Decimal(10) ** -6
SECONDS_PER_DAY = Decimal(86400)
SECONDS_PER_HOUR = Decimal(3600)
MONTHS_PER_YEAR = 12.0
MIB_BYTES = 2**20
KIB_BYTES = 2**10


def _decimal_product(value: float, factor: Decimal) -> float:
    """value · factor as the double nearest the exact decimal product; ±inf stays ±inf."""
    as_float = float(value)
    if not math.isfinite(as_float):
        return as_float * float(factor)
    return float(Decimal(repr(as_float)) * factor)


def gb_per_s_to_bytes_per_s(gb_per_s: float) -> float:
    """Bandwidth: GB/s (1e9 bytes per second) to B/s; ``inf`` stays ``inf``."""
    return _decimal_product(gb_per_s, GIGA)


def gb_to_bytes(gb: float) -> float:
    """Capacity: GB (1e9 bytes) to bytes."""
    return _decimal_product(gb, GIGA)


def mib_to_bytes(mib: float) -> float:
    """Capacity: MiB (2^20 bytes) to bytes; exact in binary."""
    return float(mib) * MIB_BYTES


def kib_to_bytes(kib: float) -> float:
    """Capacity: KiB (2^10 bytes) to bytes; exact in binary."""
    return float(kib) * KIB_BYTES


def tflop_per_s_to_flop_per_s(tflop_per_s: float) -> float:
    """Rate: teraFLOP/s (1e12 FLOP per second) to FLOP/s."""
    return _decimal_product(tflop_per_s, GIGA * 1000)


def us_to_s(us: float) -> float:
    """Time: microseconds to seconds."""
    return _decimal_product(us, MICRO)


def mhz_to_hz(mhz: float) -> float:
    """Frequency: MHz to Hz."""
    return _decimal_product(mhz, MEGA)


def mw_to_w(mw: float) -> float:
    """Power: megawatts to watts (a 1 GW site: 1000 MW -> 1e9 W)."""
    return _decimal_product(mw, MEGA)


def days_to_s(days: float) -> float:
    """Time: days of 86,400 s to seconds (Model B: 91.3125 d -> 7,889,400 s, spec §12)."""
    return _decimal_product(days, SECONDS_PER_DAY)


def hours_to_s(hours: float) -> float:
    """Time: hours of 3,600 s to seconds (exact in decimal: 1.5 h -> 5,400 s)."""
    return _decimal_product(hours, SECONDS_PER_HOUR)


def months_to_s(months: float, year_s: float) -> float:
    """Time: months to seconds, a month being year_s / 12 (spec §0; quirk Q5: Model A's
    year is 3.154e7 s). Evaluated (months · year_s) / 12, so 3 months is 7.885e6 s exactly."""
    return float(months) * float(year_s) / MONTHS_PER_YEAR
