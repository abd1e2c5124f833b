"""Single-GPU matmul time against the spec's check values (spec §16.2)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pipeline.model.compute.matmul import (
    OnChipTraffic,
    matmul_flop,
    matmul_time_s,
    on_chip_key,
    on_chip_traffic,
    tile_counts,
)
from tests.presets import preset

MATMUL_REL_TOL = 1e-6
"""Spec §16.2 prints five to eight significant digits; 1e-6 relative covers that rounding."""

# preset, d1, d2, b, forward/act-grad seconds, weight-grad seconds (spec §16.2)
CHECK_VALUES = [
    ("h100_sxm", 3072, 6144, 57344, 3.1299128e-3, 3.1299128e-3),
    ("h100_sxm", 6656, 3328, 768, 5.362526e-5, 5.362526e-5),
    ("h100_sxm", 3328, 6656, 768, 5.422392e-5, 5.362526e-5),
    ("h100_sxm", 256, 1024, 64, 4.550874e-6, 4.550874e-6),
    ("h100_sxm", 8192, 8192, 8, 4.6406990e-5, 8.8033197e-5),
    ("h100_sxm", 64, 64, 8, 4.500636e-6, 4.500636e-6),
    ("h100_sxm", 1536, 6144, 1024, 3.2405472e-5, 3.2405472e-5),
    ("h100_sxm", 49152, 12288, 2048, 3.5764004e-3, 3.5764004e-3),
    ("a100_sxm", 3072, 6144, 57344, 8.1702984e-3, 8.1702984e-3),
    ("a100_sxm", 8192, 8192, 8, 9.1294800e-5, 1.7750426e-4),
    ("a100_sxm", 1536, 6144, 1024, 7.7408914e-5, 7.7408914e-5),
    ("v100_sxm", 3072, 6144, 57344, 1.9156573e-2, 1.9156573e-2),
    ("v100_sxm", 8192, 8192, 8, 1.5583799e-4, 3.0433016e-4),
    ("v100_sxm", 49152, 12288, 2048, 2.1892583e-2, 2.1892583e-2),
    ("h100_pcie", 3072, 6144, 57344, 5.2074289e-3, 5.2074289e-3),
    ("h100_pcie", 8192, 8192, 8, 7.0646684e-5, 1.3640767e-4),
]


@pytest.mark.parametrize(("name", "d1", "d2", "b", "t_fwd", "t_wg"), CHECK_VALUES)
def test_matmul_time_matches_spec_table(
    name: str, d1: int, d2: int, b: int, t_fwd: float, t_wg: float
) -> None:
    """Forward and weight-gradient matmul times equal spec §16.2 to 1e-6 relative."""
    hw = preset(name)
    args = (np.float64(d1), np.float64(d2), np.float64(b))
    assert float(matmul_time_s(hw, *args, np.bool_(False))) == pytest.approx(
        t_fwd, rel=MATMUL_REL_TOL
    )
    assert float(matmul_time_s(hw, *args, np.bool_(True))) == pytest.approx(
        t_wg, rel=MATMUL_REL_TOL
    )


def test_matmul_flop_pads_to_tensor_core_chunks() -> None:
    """A 9 × 9 × 9 call costs as much arithmetic as 16 × 16 × 16."""
    small = matmul_flop(np.float64(9), np.float64(9), np.float64(9))
    assert small == matmul_flop(np.float64(16), np.float64(16), np.float64(16)) == 2 * 16**3


def test_tile_counts_single_tile_when_matrix_fits() -> None:
    """A matrix smaller than the tile capacity is one tile: one row and one column pass."""
    rows, cols = tile_counts(np.float64(64), np.float64(64), 1e9)
    assert (float(rows), float(cols)) == (1.0, 1.0)


def test_matmul_time_never_below_latency() -> None:
    """Even a tiny matmul pays the fixed per-call latency."""
    hw = preset("h100_sxm")
    t = matmul_time_s(hw, np.float64(8), np.float64(8), np.float64(8), np.bool_(False))
    assert float(t) > hw.matmul_latency_s


def test_on_chip_traffic_reads_only_its_key() -> None:
    """A GPU differing from the H100 in every field but `on_chip_key` (rates, L2, HBM, latency)
    moves the same on-chip bytes and FLOP, and its matmul times from the H100's traffic equal
    its own bit for bit."""
    h100 = preset("h100_sxm")
    other = dataclasses.replace(
        h100,
        name="other",
        flop_per_clock_per_thread=h100.flop_per_clock_per_thread * 3,
        max_clock_hz=h100.max_clock_hz * 1.7,
        u_eff=0.55,
        hbm_bandwidth_bytes_per_s=h100.hbm_bandwidth_bytes_per_s * 2.3,
        l2_bandwidth_bytes_per_s=h100.l2_bandwidth_bytes_per_s * 1.9,
        l2_bytes=h100.l2_bytes * 5.5,
        hbm_bytes=h100.hbm_bytes * 4,
        matmul_latency_s=2e-6,
    )
    assert on_chip_key(other) == on_chip_key(h100)
    rng = np.random.default_rng(3)
    d1, d2, b = (2.0 ** rng.integers(3, 16, size=200) for _ in range(3))
    wg = rng.random(200) < 0.5
    mine, theirs = on_chip_traffic(other, d1, d2, b, wg), on_chip_traffic(h100, d1, d2, b, wg)
    for name in OnChipTraffic.__slots__:
        np.testing.assert_array_equal(getattr(mine, name), getattr(theirs, name), name)
    np.testing.assert_array_equal(
        matmul_time_s(other, d1, d2, b, wg, theirs), matmul_time_s(other, d1, d2, b, wg)
    )
