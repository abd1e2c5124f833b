"""Realistic candidate sets: the GPU-free rows GPUs share, and what each GPU adds
(pipeline/model/search/candidates.py; docs/model.md §9.2, "Caches")."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pipeline.model import caches
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.scaling import ModelShape, ScalingLaws, model_shape
from pipeline.model.records.switches import Physics
from pipeline.model.search import candidates as cand
from pipeline.model.search import grid
from pipeline.model.search.counts import grid_shape
from pipeline.model.search.search import network_physics
from pipeline.schema import compose_config, load_scenario
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
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)):
                return False
            if x.dtype != y.dtype or not np.array_equal(x, y, equal_nan=True):
                return False
        elif x != y:
            return False
    return True


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
    gpus = [network_physics(hw, physics) for hw in _gpus(name)]
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
    row set per cluster size, and GPUs that differ only in capacity time each layer shard once."""
    physics = _realistic()
    shape = _shape(physics, 12288, False)
    opts = load_scenario(compose_config(["physics=realistic"])).options
    caches.clear_caches()
    for hw in _gpus("h100_sxm"):
        cand.enumerate_candidates(network_physics(hw, physics), shape, 2048, opts, physics)
    info = cand._realistic_rows.cache_info()
    assert (info.misses, info.hits) == (1, 8)
    assert grid._shard_times.cache_info().misses == 3  # one shard store per HBM bandwidth
