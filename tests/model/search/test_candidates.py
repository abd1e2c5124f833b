"""Realistic candidate sets: the GPU-free rows GPUs share, and what each GPU adds
(pipeline/model/search/candidates.py; docs/model.md §9.2, "Caches")."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from pipeline.model import caches
from pipeline.model.compute.layer import with_rerun_s
from pipeline.model.compute.memory_ops import optimizer_step_time_s
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.scaling import ModelShape, ScalingLaws, model_shape
from pipeline.model.records.switches import Physics
from pipeline.model.search import candidates as cand
from pipeline.model.search import grid
from pipeline.model.search.counts import grid_shape
from pipeline.model.search.enumeration import realistic_layout_rows
from pipeline.model.search.search import physics_hardware
from pipeline.schema import compose_config, load_scenario
from tests.model.search.subsets import take_candidates
from tests.presets import preset

GIB = 2.0**30


def _realistic(*over: str) -> Physics:
    """The shipped realistic physics with overrides."""
    return load_scenario(compose_config(["physics=realistic", *over])).physics


def _gpus(name: str) -> list[HardwareSpec]:
    """The preset at three HBM bandwidths and three capacities, as a memory sweep varies it."""
    hw = preset(name)
    return [
        dataclasses.replace(hw, hbm_bandwidth_bytes_per_s=bw * 1e12, hbm_bytes=gb * GIB)
        for bw in (2.0, 3.35, 8.0)
        for gb in (40.0, 80.0, 192.0)
    ]


def _same(a: cand.Candidates | cand.MemoryBlocked | None, b: object) -> bool:
    """Whether two enumerations are the same, every array bit for bit."""
    if not isinstance(a, cand.Candidates) or not isinstance(b, cand.Candidates):
        return type(a) is type(b)
    for field in cand.Candidates.__slots__:
        x, y = getattr(a, field), getattr(b, field)
        if isinstance(x, tuple) and isinstance(y, tuple):  # the row set's needs, one per mode
            if len(x) != len(y) or not all(map(_same_array, x, y)):
                return False
        elif isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not _same_array(x, y):
                return False
        elif x != y:
            return False
    return True


def _same_array(x: object, y: object) -> bool:
    """Whether two values are arrays of one dtype, equal bit for bit (NaN equal to NaN)."""
    if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)):
        return False
    return x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True)


def _shape(physics: Physics, d_model: int, sparse: bool) -> ModelShape:
    return grid_shape(physics, model_shape(d_model, ScalingLaws(sparse=sparse)))


CASES = [
    ("h100_sxm", (), 12288, False, 2048),
    ("h100_sxm", (), 12288, True, 4096),
    ("b200", ("physics.precision=fp8",), 16384, False, 4096),
    ("h100_sxm", ("physics.memory_check=aggregate", "physics.recompute=none"), 12288, False, 1024),
]


@pytest.mark.parametrize(("name", "over", "d_model", "sparse", "n_gpu"), CASES)
def test_realistic_candidates_equal_built_whole_after_other_gpus(
    name: str, over: tuple[str, ...], d_model: int, sparse: bool, n_gpu: int
) -> None:
    """A GPU's realistic candidates built after other GPUs' (sharing their GPU-free rows and
    layer times) equal those built in a fresh process, bit for bit."""
    physics = _realistic(*over)
    shape = _shape(physics, d_model, sparse)
    opts = load_scenario(compose_config(["physics=realistic"])).options
    gpus = [physics_hardware(hw, physics) for hw in _gpus(name)]
    fresh = []
    for hw in gpus:
        caches.clear_caches()
        fresh.append(cand.enumerate_candidates(hw, shape, n_gpu, opts, physics))
    caches.clear_caches()
    for hw, alone in zip(gpus, fresh, strict=True):
        assert _same(cand.enumerate_candidates(hw, shape, n_gpu, opts, physics), alone)
    assert any(isinstance(c, cand.Candidates) for c in fresh)


def test_realistic_rows_are_shared_by_gpus() -> None:
    """GPUs that differ in HBM bandwidth and capacity build their candidates from one GPU-free
    row set per cluster size, and GPUs that differ only in capacity time each layer shard once
    and share the layer parts of its rows."""
    physics = _realistic()
    shape = _shape(physics, 12288, False)
    opts = load_scenario(compose_config(["physics=realistic"])).options
    caches.clear_caches()
    for hw in _gpus("h100_sxm"):
        cand.enumerate_candidates(physics_hardware(hw, physics), shape, 2048, opts, physics)
    assert cand._realistic_rows.cache_info().misses == 1
    assert grid._shard_times.cache_info().misses == 3  # one shard store per HBM bandwidth
    parts = cand._row_shard_parts.cache_info()
    assert (parts.misses, parts.hits) == (3, 6)  # one per HBM bandwidth


WITHIN_CASES = [
    *CASES,
    ("h100_sxm", ("physics.max_context_parallel=8",), 16384, True, 8192),
]


def _within(
    hw: HardwareSpec,
    shape: ModelShape,
    n_gpu: int,
    opts: SearchOptions,
    physics: Physics,
    wanted: NDArray[np.bool_],
) -> cand.Candidates | cand.MemoryBlocked | cand.NoneWanted | None:
    """The pruned walk's candidates of the `wanted` rows that fit (`realistic_kept_rows`, then
    `kept_candidates`), the ring computed on them."""
    kept = cand.realistic_kept_rows(hw, shape, n_gpu, opts, physics, 0, wanted)
    return cand.kept_candidates(hw, kept) if isinstance(kept, cand.KeptRows) else kept


@pytest.mark.parametrize(("name", "over", "d_model", "sparse", "n_gpu"), WITHIN_CASES)
@pytest.mark.parametrize("every", [1, 3, 11])
def test_kept_candidates_equal_the_whole_sets_rows(
    name: str, over: tuple[str, ...], d_model: int, sparse: bool, n_gpu: int, every: int
) -> None:
    """Candidates built from the wanted rows alone equal the whole set's candidates of those
    rows with their ring exchange on the network, every array bit for bit, and their
    compute-only floor is at least the whole set's."""
    physics = _realistic(*over)
    shape = _shape(physics, d_model, sparse)
    opts = load_scenario(compose_config(["physics=realistic"])).options
    for hw in (physics_hardware(gpu, physics) for gpu in _gpus(name)):
        caches.clear_caches()
        whole = cand.enumerate_candidates(hw, shape, n_gpu, opts, physics)
        rows = realistic_layout_rows(shape, n_gpu, opts, physics, 0)
        assert rows is not None
        wanted = np.arange(rows[0].shape[0]) % every == every - 1
        caches.clear_caches()
        part = _within(hw, shape, n_gpu, opts, physics, wanted)
        if not isinstance(whole, cand.Candidates):
            assert type(part) is type(whole)
            continue
        assert whole.rows is not None
        idx = np.flatnonzero(wanted[whole.rows])
        if idx.size == 0:
            assert isinstance(part, cand.NoneWanted)
            continue
        assert isinstance(part, cand.Candidates)
        ring = cand._with_ring(whole, hw, shape)
        assert part.step_floor_s >= ring.step_floor_s
        taken = dataclasses.replace(take_candidates(ring, idx), step_floor_s=0.0)
        assert _same(dataclasses.replace(part, step_floor_s=0.0), taken)


def test_realistic_kept_rows_none_wanted() -> None:
    """With no row wanted the enumeration says so where candidates fit in memory, and still
    reports a GPU too small for any of them as memory-blocked."""
    physics = _realistic()
    shape = _shape(physics, 12288, False)
    opts = load_scenario(compose_config(["physics=realistic"])).options
    hw = physics_hardware(preset("h100_sxm"), physics)
    rows = realistic_layout_rows(shape, 2048, opts, physics, 0)
    assert rows is not None
    nothing = np.zeros(rows[0].shape[0], dtype=bool)
    assert isinstance(
        _within(hw, shape, 2048, opts, physics, nothing),
        cand.NoneWanted,
    )
    tiny = dataclasses.replace(hw, hbm_bytes=1.0)
    assert isinstance(
        _within(tiny, shape, 2048, opts, physics, ~nothing),
        cand.MemoryBlocked,
    )


@functools.cache
def _sparse_rows() -> tuple[Physics, ModelShape, HardwareSpec, cand.RealisticRows]:
    """A sparse model's realistic rows on 4,096 H100s, with the physics, model and GPU."""
    physics = _realistic()
    shape = _shape(physics, 16384, True)
    opts = load_scenario(compose_config(["physics=realistic"])).options
    hw = grid.timing_gpu(physics_hardware(preset("h100_sxm"), physics))
    rows = cand._realistic_rows(shape, 4096, opts, physics, 0, False)
    assert rows is not None
    return physics, shape, hw, rows


@settings(deadline=None)  # the first example composes the physics and enumerates the rows
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 2)), min_size=1, max_size=60))
def test_shard_parts_equal_parts_of_the_rows_own_times(picks: list[tuple[int, int]]) -> None:
    """A candidate's layer parts read from its shard's `ShardParts` are, bit for bit, those
    computed on its own row's layer times (`grid_layer_times_s` of the candidates' shards in
    their order) under its own recomputation mode, optimizer step included."""
    physics, shape, hw, rows = _sparse_rows()
    assert rows.updated is not None
    n = rows.table.shape[0]
    idx = np.array([i % n for i, _ in picks], dtype=np.intp)
    modes = np.array([m for _, m in picks], dtype=np.int64)
    shard = rows.shard_of[idx]
    parts = cand._shard_parts(hw, physics, shape, rows).take(shard, modes)
    caches.clear_caches()
    own = grid.grid_layer_times_s(hw, physics, shape, rows.shards[shard])
    forward = own.forward_s
    layer = with_rerun_s(modes, forward, own.backward_s, own.core_forward_s)
    gemm = with_rerun_s(modes, own.matmul_forward_s, own.matmul_backward_s, np.zeros_like(forward))
    want = {"t_layer_s": layer, "t_gemm_s": gemm, "t_backward_s": layer - forward}
    want["t_forward_s"] = forward
    for name, value in want.items():
        assert np.array_equal(parts[name], value), name  # type: ignore[literal-required]
    optimizer = cand._shard_parts(hw, physics, shape, rows).optimizer_s
    assert optimizer is not None
    assert np.array_equal(
        optimizer[idx], optimizer_step_time_s(hw, physics.efficiency, rows.updated[idx])
    )
