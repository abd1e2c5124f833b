"""The collectives and K/V ring exchange of a cluster size's kept rows (`search.kept`): the first
time a size is asked for on a network, computed on the kept rows alone; from the second, taken
from every row's, computed once (docs/model.md §9.2). Both are the rows' own values."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from numpy.typing import NDArray

from pipeline.model import caches
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.scaling import model_shape
from pipeline.model.search import kept, realistic, search
from pipeline.model.search.candidates import KeptRows, kept_row_frame, realistic_kept_rows
from pipeline.model.search.counts import grid_shape
from pipeline.model.search.enumeration import realistic_layout_rows
from pipeline.model.search.floors import floor_hardware
from pipeline.model.search.search import physics_hardware
from pipeline.model.step.assembly import StepComm
from pipeline.schema import compose_config, load_scenario

SIZES = {"dense": (16384, 2**13), "sparse": (16384, 163840)}
"""Per scaling law: a width and a cluster size whose kept rows have a K/V ring (c > 1)."""


def _kept(scaling: str, hbm_gb: float) -> tuple[HardwareSpec, KeptRows]:
    """The network (as the kept inputs are keyed) and the kept rows of every row of the size
    on an H100 with `hbm_gb` GiB of HBM, all of them wanted."""
    s = load_scenario(compose_config(["physics=realistic", f"scaling={scaling}"]))
    width, n_gpu = SIZES[scaling]
    shape = grid_shape(s.physics, model_shape(width, s.laws, s.options.quirks))
    hw = dataclasses.replace(physics_hardware(s.hardware, s.physics), hbm_bytes=hbm_gb * 2**30)
    unit = search.domain_tp_unit(hw, s.physics, n_gpu)
    rows = realistic_layout_rows(shape, n_gpu, s.options, s.physics, unit)
    assert rows is not None
    wanted = np.ones(rows[0].shape[0], dtype=bool)
    k = realistic_kept_rows(hw, shape, n_gpu, s.options, s.physics, unit, wanted)
    assert isinstance(k, KeptRows)
    return floor_hardware(hw), k


def _every_rows(net: HardwareSpec, k: KeptRows) -> tuple[StepComm, NDArray[np.float64] | None]:
    """The kept rows' collectives and ring exchange taken from every row's."""
    shape, n_gpu, opts, physics, unit = k.key[:5]
    frame = kept_row_frame(k)
    comm = realistic.realistic_comm(net, physics, opts, shape, n_gpu, unit)
    ring = realistic.realistic_ring_s(net, physics, opts, shape, n_gpu, unit)
    assert comm is not None
    return comm.rows(frame.rows, frame.recompute), None if ring is None else ring[frame.rows]


def _assert_same(a: StepComm | None, b: StepComm) -> None:
    assert a is not None
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        assert (x is None) == (y is None), f.name
        if x is not None:
            assert np.shape(x) == np.shape(y), f.name
            assert np.array_equal(x, y), f.name


@pytest.mark.parametrize("scaling", ["dense", "sparse"])
def test_first_ask_computes_the_kept_rows_alone_and_the_second_every_rows(scaling: str) -> None:
    """On an empty process the kept rows' collectives and ring exchange are computed on them
    alone (no row set's `realistic_comm` or `realistic_ring_s` is computed) and equal those
    rows' in every row's, bit for bit; a second set of kept rows of the size on the network (a
    GPU with less HBM, keeping fewer rows) reads every row's, computed once."""
    caches.clear_caches()
    net, first = _kept(scaling, 192.0)
    inputs = kept.kept_step_inputs(net, first)
    frame = kept.kept_frame(net, first)
    assert frame.exchange_s is not None  # a ring to check
    assert realistic._realistic_comm.cache_info().misses == 0
    assert realistic._realistic_ring.cache_info().misses == 0
    comm, ring = _every_rows(net, first)
    _assert_same(inputs.comm, comm)
    assert ring is not None
    assert np.array_equal(frame.exchange_s, ring)

    caches.clear_caches()
    net, small = _kept(scaling, 40.0)
    _, big = _kept(scaling, 192.0)
    assert small != big
    for k in (big, small):
        kept.kept_frame(net, k)
        kept.kept_step_inputs(net, k)
    assert realistic._realistic_comm.cache_info().misses == 1
    assert realistic._realistic_ring.cache_info().misses == 1
    comm, ring = _every_rows(net, small)
    _assert_same(kept.kept_step_inputs(net, small).comm, comm)
    exchange = kept.kept_frame(net, small).exchange_s
    assert exchange is not None
    assert ring is not None
    assert np.array_equal(exchange, ring)
