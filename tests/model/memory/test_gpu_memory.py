"""Bytes one GPU holds (pipeline/model/memory/gpu_memory.py; docs/model.md R.4)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.model.memory.gpu_memory import (
    activation_bytes_per_layer,
    in_flight_microbatches,
    megatron_group_microbatches,
    megatron_groups,
    model_state_bytes_per_param,
)
from pipeline.model.records.switches import Recompute


def test_adam_model_state_bytes_per_param_by_zero_stage() -> None:
    """Mixed-precision Adam holds 2 + 2 + 12 = 16 B per parameter; ZeRO shards it over dp = 4."""
    dp = np.array([4.0])
    assert model_state_bytes_per_param(0, dp)[0] == 16.0
    assert model_state_bytes_per_param(1, dp)[0] == 2.0 + 2.0 + 3.0
    assert model_state_bytes_per_param(2, dp)[0] == 2.0 + 0.5 + 3.0
    assert model_state_bytes_per_param(3, dp)[0] == 4.0


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (Recompute.NONE, 32 * (10 + 24 + 5 * 2 * 4 / 8)),
        (Recompute.SELECTIVE, 32 * 34),
        (Recompute.FULL, 2 * 32),
    ],
)
def test_activation_bytes_per_layer_by_recompute(mode: Recompute, expected: float) -> None:
    """Korthikanti et al. 2022 Table 2 at s=4, b=1, h=8, a=2, t=1 (s·b·h = 32)."""
    one = np.ones(1)
    got = activation_bytes_per_layer(4.0 * one, 8.0, 2.0, 4.0, (one, one), mode, True)
    assert got[0] == expected


def test_activation_bytes_sequence_parallel_divides_by_tp() -> None:
    """With sequence parallelism every stored term is divided by t (Korthikanti 2022 eq. 5)."""
    two = np.full(1, 2.0)
    got = activation_bytes_per_layer(
        4.0 * np.ones(1), 8.0, 2.0, 4.0, (two, two), Recompute.SELECTIVE, True
    )
    assert got[0] == 32 * 34 / 2


def test_in_flight_microbatches_interleaved_at_most_the_step() -> None:
    """Interleaved 1F1B with m = p = 16 and v = 7 holds the step's 16 microbatches at most, and
    with m = 64 Korthikanti's p·(1 + (p − 1)/(p·v)) = 16 + 15/7 (Korthikanti et al. 2022 §4.2.3)."""
    p, v = np.full(2, 16.0), np.full(2, 7.0)
    held = in_flight_microbatches(p, np.array([16.0, 64.0]), v, np.zeros(2, dtype=bool))
    assert held[0] == 16.0
    assert held[1] == pytest.approx(16.0 + 15.0 / 7.0, rel=1e-15)


def _accepted(pp: int, m: int, n: int) -> bool:
    """Megatron-Core's interleaved schedule runs m microbatches over p stages in groups of n:
    p ≤ n ≤ m, and a last group of m mod n that is empty or at least p."""
    return pp <= n <= m and (m % n == 0 or m % n >= pp)


def test_megatron_group_is_the_smallest_the_interleaved_schedule_accepts() -> None:
    """p where m is a multiple of p (Megatron-Core's default); else the smallest accepted N:
    56 microbatches over 12 stages run in groups of 14, 5 over 4 in one group of 5, 5 over 2 in
    groups of 3 (a last group of 2 ≥ p)."""
    assert megatron_group_microbatches(12, 56) == 14
    assert megatron_group_microbatches(4, 5) == 5
    assert megatron_group_microbatches(2, 5) == 3
    assert megatron_group_microbatches(8, 64) == 8
    for pp in range(1, 21):
        for m in range(pp, 90):
            n = megatron_group_microbatches(pp, m)
            assert _accepted(pp, m, n), (pp, m, n)
            assert not any(_accepted(pp, m, k) for k in range(pp, n)), (pp, m, n)


def test_in_flight_microbatches_of_an_odd_m_use_the_larger_group() -> None:
    """The warm-up holds (v − 1)·N chunk-microbatches: at m = 56 over 12 stages and 16 chunks,
    N = 14 holds more in flight than N = p = 12 would; a multiple of p, and plain 1F1B, keep
    N = p; rows vectorize."""
    pp = np.array([12.0, 12.0, 12.0])
    m = np.array([56.0, 48.0, 56.0])
    v = np.array([16.0, 16.0, 1.0])
    assert megatron_groups(pp, m, v).tolist() == [14.0, 12.0, 12.0]
    huge = np.array([2.0**33 + 7.0])  # a batch law's m past 2^32 is keyed exactly
    assert megatron_groups(np.array([5.0]), huge, np.array([2.0]))[0] == 8.0
    past = np.array([float(2**62)])  # past 62 bits of key: found as pairs
    assert megatron_groups(np.array([3.0]), past + 1.0, np.array([2.0]))[0] == 4.0
    held = in_flight_microbatches(pp, m, v, np.zeros(3, dtype=bool))
    assert held[0] == pytest.approx((2 * 11 + 15 * 14 + 1) / 16)
    assert held[1] == pytest.approx((2 * 11 + 15 * 12 + 1) / 16)
    assert held[2] == 12.0
