"""Human units to SI (pipeline/units.py)."""

from __future__ import annotations

import math

import pytest

from pipeline import units


@pytest.mark.parametrize(
    ("us", "seconds"),
    [(4.5, 4.5e-6), (0.45, 4.5e-7), (1.125, 1.125e-6), (0.1125, 1.125e-7), (0.5, 5e-7)],
)
def test_us_to_s_gives_the_decimal_literal(us: float, seconds: float) -> None:
    """Microseconds convert to exactly the double one would write as the SI literal."""
    assert units.us_to_s(us) == seconds


def test_gb_per_s_to_bytes_per_s_keeps_infinity() -> None:
    """An infinite bandwidth stays infinite; a finite one scales by 1e9 exactly."""
    assert units.gb_per_s_to_bytes_per_s(math.inf) == math.inf
    assert units.gb_per_s_to_bytes_per_s(12.5) == 1.25e10


def test_binary_capacities_use_powers_of_two() -> None:
    """MiB and KiB are 2^20 and 2^10 bytes; GB is 1e9 bytes."""
    assert units.mib_to_bytes(50) == 52_428_800
    assert units.kib_to_bytes(64) == 65_536
    assert units.gb_to_bytes(80) == 8e10


def test_durations_match_the_two_paper_budgets() -> None:
    """3 months of a 3.154e7 s year is Model A's 7.885e6 s; 91.3125 days is Model B's 7,889,400 s."""
    assert units.months_to_s(3, 3.154e7) == 7.885e6
    assert units.days_to_s(91.3125) == 7_889_400.0


def test_mhz_to_hz_scales_by_a_million() -> None:
    """Clocks in MHz convert to Hz, fractional MHz included."""
    assert units.mhz_to_hz(1830) == 1.83e9
    assert units.mhz_to_hz(1855.8) == 1.8558e9
