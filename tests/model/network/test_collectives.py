"""Collective costs over network levels against the worked example of docs/model.md §6."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.model.network.collectives import (
    Network,
    dp_costs_s,
    dp_traffic,
    higher_level_products,
    highest_active_level,
    pipeline_transfers,
    pp_ep_costs_s,
    tp_costs_s,
    tp_traffic,
)
from tests.model.network.spec_oracle import (
    allreduce_bandwidth_s,
    dp_bandwidth_s,
    dp_latency_s,
    p2p_bandwidth_s,
    tp_bandwidth_s,
    tp_latency_s,
)

REL_TOL = 1e-12
"""The example's values are exact decimals; the float evaluation order costs a few ulps."""
NET = Network((4e11, 1e11), (1e-6, 5e-6))
"""Two levels: 400 and 100 GB/s per GPU (bidirectional), 1 and 5 µs per hop."""
N_GPU = 16.0


def rows(*levels: float) -> np.ndarray:
    """One layout's per-level factors as a (1, K) array."""
    return np.array([levels], dtype=np.float64)


def test_allreduce_and_p2p_bandwidth_times() -> None:
    """An all-reduce over 4 ranks of 1e9 words takes 3.75 ms at 400 GB/s; a p2p of 1e9 words 0.625 ms."""
    ar = allreduce_bandwidth_s(np.array([4.0]), 1e9, 1.0, np.array([1.0]), N_GPU, 4e11)
    assert ar[0] == pytest.approx(3.75e-3, rel=REL_TOL)
    assert p2p_bandwidth_s(1e9, np.array([1.0]), 1.0, N_GPU, 4e11)[0] == pytest.approx(
        6.25e-4, rel=REL_TOL
    )


def test_allreduce_over_one_rank_or_infinite_bandwidth_is_free() -> None:
    """p = 1 moves nothing, and an infinite bandwidth gives exactly 0 s."""
    one = allreduce_bandwidth_s(np.array([1.0]), 1e9, 1.0, np.array([1.0]), N_GPU, 4e11)
    inf = allreduce_bandwidth_s(np.array([4.0]), 1e9, 1.0, np.array([1.0]), N_GPU, np.inf)
    assert one[0] == 0.0
    assert inf[0] == 0.0


def test_higher_level_products_multiply_outer_factors() -> None:
    """Factors (2, 4, 2) repeat level 0 by 4·2 = 8, level 1 by 2 and the top level once."""
    assert higher_level_products(rows(2, 4, 2)).tolist() == [[8.0, 2.0, 1.0]]


def test_dp_costs_take_the_slowest_level_and_add_latencies() -> None:
    """DP = (2, 8) over 1e9 parameters: 0.01 s at level 0, 0.035 s at level 1, max 0.035 s; 12 µs."""
    dp = rows(2, 8)
    assert dp_bandwidth_s(dp, 1e9, N_GPU, NET)[0] == pytest.approx(0.035, rel=REL_TOL)
    assert dp_latency_s(dp, NET)[0] == pytest.approx(12e-6, rel=REL_TOL)


def test_tp_costs_of_a_two_level_split() -> None:
    """TP_m = (2, 1), TP_ff = (1, 2): 1.024e-4 s at each level, max 1.024e-4 s; 4·L·(1 + 5) µs."""
    tpm, tpff = rows(2, 1), rows(1, 2)
    t = tp_bandwidth_s(tpm, tpff, 1024.0, 4096.0, 10.0, 1000.0, N_GPU, NET)
    assert t[0] == pytest.approx(1.024e-4, rel=REL_TOL)
    assert tp_latency_s(tpm, tpff, 10.0, NET)[0] == pytest.approx(240e-6, rel=REL_TOL)


def test_dp_and_tp_costs_equal_the_spec_oracle() -> None:
    """The model's two-part DP and TP times (traffic, then time on a network) equal the spec's
    formulas written out level by level (tests/model/network/spec_oracle.py) on random factors."""
    rng = np.random.default_rng(0)
    dp = rng.choice([1.0, 2.0, 4.0, 8.0], size=(50, 2))
    tpm = rng.choice([1.0, 2.0, 4.0], size=(50, 2))
    tpff = rng.choice([1.0, 2.0, 8.0], size=(50, 2))
    bw, lat = dp_costs_s(dp_traffic(dp, 1e9), N_GPU, NET)
    np.testing.assert_allclose(bw, dp_bandwidth_s(dp, 1e9, N_GPU, NET), rtol=REL_TOL)
    np.testing.assert_allclose(lat, dp_latency_s(dp, NET), rtol=REL_TOL)
    traffic = tp_traffic(tpm, tpff, 1024.0, 4096.0, 10.0, 1000.0)
    bw, lat = tp_costs_s(traffic, 10.0, N_GPU, NET)
    oracle = tp_bandwidth_s(tpm, tpff, 1024.0, 4096.0, 10.0, 1000.0, N_GPU, NET)
    np.testing.assert_allclose(bw, oracle, rtol=REL_TOL)
    np.testing.assert_allclose(lat, tp_latency_s(tpm, tpff, 10.0, NET), rtol=REL_TOL)


def test_pipeline_transfers_count_interfaces_per_level() -> None:
    """PP = (1, 4), v = 1, L = 8: 4 interfaces stay on a GPU, 0 cross level 0, 3 cross level 1."""
    n = pipeline_transfers(rows(1, 4), np.array([1.0]), 8.0)
    assert [float(x[0]) for x in n] == [4.0, 0.0, 3.0]
    assert highest_active_level(rows(1, 4)).tolist() == [1]
    assert highest_active_level(rows(1, 1)).tolist() == [-1]


def test_pp_costs_of_a_cross_node_pipeline() -> None:
    """PP = (1, 4), L = 8: 6 level-1 transfers of 1024·1000 words take 1.536e-5 s and 30 µs."""
    bw, lat = pp_ep_costs_s(
        rows(1, 4), rows(1, 1), np.array([1.0]), 1024.0, 8.0, 1000.0, N_GPU, NET
    )
    assert bw[0] == pytest.approx(1.536e-5, rel=REL_TOL)
    assert lat[0] == pytest.approx(30e-6, rel=REL_TOL)
