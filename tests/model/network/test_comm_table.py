"""Tabulated network times, the search's lower bound and caches against direct evaluation."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from numpy.typing import NDArray

from pipeline.model import caches
from pipeline.model.network.comm_table import (
    GroupTable,
    Pairs,
    candidate_keys,
    comm_table,
    keys_within,
    unique_rows,
)
from pipeline.model.network.levels import adjusted_level_sizes
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.scaling import ModelShape, ScalingLaws, model_shape
from pipeline.model.search.candidates import Candidates, _batch, enumerate_candidates
from pipeline.model.search.search import (
    candidate_comm_table,
    hardware_network,
    optimal_layout,
    resolve_ties,
    row_step_arrays,
    separable_train_time_s,
    split_rows,
)
from pipeline.model.step.step_time import StepArrays, step_arrays
from tests.presets import preset

Ints = NDArray[np.int64]
CASES = [
    ("h100_sxm", False, 12288, 2048),
    ("h100_sxm", False, 49152, 65536),
    ("h100_superpod", False, 24576, 16384),
    ("h100_sxm", True, 12288, 4096),
    ("v100_sxm", False, 12288, 1024),
    ("h100_sxm", False, 2048, 8),
]
"""(preset, sparse, d_model, n_gpu): two- and three-level networks, dense and MoE, one node."""


def _every_row(
    name: str, sparse: bool, d_model: int, n_gpu: int
) -> tuple[ModelShape, Candidates, Ints, Ints, Ints]:
    hw = preset(name)
    shape = model_shape(d_model, ScalingLaws(sparse=sparse))
    c = enumerate_candidates(hw, shape, n_gpu, SearchOptions())
    assert c is not None
    all_idx = np.arange(c.degrees.shape[0], dtype=np.int64)
    idx, split, factors = split_rows(c, all_idx, adjusted_level_sizes(hw.level_sizes, n_gpu))
    return shape, c, idx, split, factors


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[2]}-{c[3]}")
def test_comm_table_rows_equal_step_arrays_bit_for_bit(case: tuple[str, bool, int, int]) -> None:
    """Every field of every row gathered from the tables equals step_arrays of its factors."""
    name, _, _, n_gpu = case
    hw, opts = preset(name), SearchOptions()
    shape, c, idx, split, factors = _every_row(*case)
    direct = step_arrays(hw, shape, n_gpu, _batch(c, idx, factors), hardware_network(hw), opts)
    table = candidate_comm_table(hw, shape, n_gpu, c)
    gathered = row_step_arrays(shape, c, idx, split, table, opts)
    for field in StepArrays.__slots__:
        np.testing.assert_array_equal(getattr(gathered, field), getattr(direct, field), field)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[2]}-{c[3]}")
def test_separable_bound_never_exceeds_a_row(case: tuple[str, bool, int, int]) -> None:
    """Each candidate's lower bound is at most the training time of each of its rows, exactly."""
    name, _, _, n_gpu = case
    hw, opts = preset(name), SearchOptions()
    shape, c, idx, _, factors = _every_row(*case)
    rows = step_arrays(hw, shape, n_gpu, _batch(c, idx, factors), hardware_network(hw), opts)
    bound = separable_train_time_s(shape, c, candidate_comm_table(hw, shape, n_gpu, c), opts)
    assert np.all(bound[idx] <= rows.t_train_s)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[2]}-{c[3]}")
def test_optimal_layout_equals_exhaustive_search(case: tuple[str, bool, int, int]) -> None:
    """The pruned search accepts the row the tie rule picks among all rows, evaluated directly."""
    name, _, _, n_gpu = case
    hw, opts = preset(name), SearchOptions()
    shape, c, idx, _, factors = _every_row(*case)
    rows = step_arrays(hw, shape, n_gpu, _batch(c, idx, factors), hardware_network(hw), opts)
    row = resolve_ties(rows, shape.n_tokens / shape.batch_tokens, 0.0)
    found = optimal_layout(hw, shape, n_gpu, opts)
    assert found is not None
    layout, cost = found
    f = factors[row]
    assert (layout.dp, layout.tp_model, layout.tp_ff, layout.pp, layout.ep) == tuple(
        tuple(int(v) for v in f[:, k]) for k in range(5)
    )
    assert layout.microbatches == int(c.microbatches[idx[row]])
    assert cost.training_time_s == float(rows.t_train_s[row])


@pytest.mark.parametrize(("low", "high"), [(1, 5), (0, 2**40), (-3, 5)])
def test_unique_rows_matches_numpy_unique(low: int, high: int) -> None:
    """Distinct rows and inverse indices are those of np.unique(axis=0): small non-negative
    rows (one-key path), rows too wide for one int64 key, and negative rows (lexsort path)."""
    rng = np.random.default_rng(0)
    a = rng.integers(low, high, size=(200, 3)).astype(np.int64)
    distinct, inverse = unique_rows(a)
    expected, expected_inverse = np.unique(a, axis=0, return_inverse=True)
    np.testing.assert_array_equal(distinct, expected)
    np.testing.assert_array_equal(inverse, expected_inverse.ravel())
    np.testing.assert_array_equal(distinct[inverse], a)


def test_candidates_are_shared_across_networks_but_not_gpus() -> None:
    """Another network reuses the cached candidates; another HBM capacity does not."""
    hw = preset("h100_sxm")
    shape, opts = model_shape(12288, ScalingLaws()), SearchOptions()
    slow = dataclasses.replace(hw, net_latency_s=(1e-3, 1e-3), level_sizes=(64,))
    smaller = dataclasses.replace(hw, hbm_bytes=hw.hbm_bytes / 4)
    first = enumerate_candidates(hw, shape, 2048, opts)
    assert enumerate_candidates(slow, shape, 2048, opts) is first
    assert enumerate_candidates(smaller, shape, 2048, opts) is not first


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[2]}-{c[3]}")
def test_step_floor_never_exceeds_a_row(case: tuple[str, bool, int, int]) -> None:
    """The compute-only step floor is at most the step time of every row, on any network."""
    name, _, _, n_gpu = case
    hw, opts = preset(name), SearchOptions()
    shape, c, idx, _, factors = _every_row(*case)
    fast = dataclasses.replace(
        hw,
        net_bandwidth_bytes_per_s=tuple(np.inf for _ in hw.net_bandwidth_bytes_per_s),
        net_latency_s=tuple(0.0 for _ in hw.net_latency_s),
    )
    for net_hw in (hw, fast):
        rows = step_arrays(
            hw, shape, n_gpu, _batch(c, idx, factors), hardware_network(net_hw), opts
        )
        assert c.step_floor_s <= rows.t_step_s.min()
    assert c.step_floor_s > 0.0


def test_gpus_differing_in_speed_share_keys_and_tables() -> None:
    """A GPU with another HBM bandwidth gets its own candidates but the same keys and tables."""
    caches.clear_caches()  # a candidate set kept from earlier tests may outlive its keys' entry
    hw = preset("h100_sxm")
    shape, opts = model_shape(12288, ScalingLaws()), SearchOptions()
    slower = dataclasses.replace(hw, hbm_bandwidth_bytes_per_s=hw.hbm_bandwidth_bytes_per_s / 100)
    a = enumerate_candidates(hw, shape, 2048, opts)
    b = enumerate_candidates(slower, shape, 2048, opts)
    assert isinstance(a, Candidates)
    assert isinstance(b, Candidates)
    assert a is not b
    assert a.keys is b.keys
    assert candidate_comm_table(hw, shape, 2048, a) is candidate_comm_table(slower, shape, 2048, b)
    assert not np.array_equal(a.t_compute_s, b.t_compute_s)


def test_results_do_not_depend_on_the_caches() -> None:
    """A search with every model cache emptied first gives the same layout and cost."""
    hw = preset("h100_superpod")
    shape, opts = model_shape(24576, ScalingLaws()), SearchOptions()
    warm = optimal_layout(hw, shape, 16384, opts)
    caches.clear_caches()
    assert optimal_layout(hw, shape, 16384, opts) == warm


@pytest.mark.parametrize("case", CASES[:4], ids=lambda c: f"{c[0]}-{c[2]}-{c[3]}")
def test_tables_of_a_subset_equal_its_own_bit_for_bit(case: tuple[str, bool, int, int]) -> None:
    """The pairs and network tables of candidates taken from a set (`keys_within`, nested
    too) equal, array by array, those made from the candidates' own keys; the traffic is
    computed on the set's keys only, once."""
    name, _, _, n_gpu = case
    hw = preset(name)
    shape, c, _, _, _ = _every_row(*case)
    assert c.keys is not None
    levels, net = adjusted_level_sizes(hw.level_sizes, n_gpu), hardware_network(hw)
    rng = np.random.default_rng(11)
    n = c.degrees.shape[0]
    half = np.flatnonzero(rng.random(n) < 0.5)
    quarter = half[rng.random(half.size) < 0.5]
    outer = keys_within(c.keys, half)
    for rows, keys in (
        (half, outer),
        (quarter, keys_within(outer, np.searchsorted(half, quarter))),
    ):
        own = candidate_keys(c.degrees[rows], c.interleave[rows])
        got, want = (
            comm_table(shape, n_gpu, keys, levels, net),
            comm_table(shape, n_gpu, own, levels, net),
        )
        for group, (lo, hi) in (("tp", (1, 3)), ("pp_ep", (3, 5)), ("dp", (0, 1))):
            for field in GroupTable.__slots__:
                got_a, want_a = (
                    getattr(getattr(got, group), field),
                    getattr(getattr(want, group), field),
                )
                np.testing.assert_array_equal(got_a, want_a, f"{group}.{field}")
            mine = getattr(keys, group).valid_pairs(levels, lo, hi)
            theirs = getattr(own, group).valid_pairs(levels, lo, hi)
            for field in Pairs.__slots__:
                np.testing.assert_array_equal(getattr(mine, field), getattr(theirs, field), field)
            assert not getattr(keys, group).traffic  # the set's keys hold it
