"""The paper's GPU-free layouts: shared by the GPUs of one model and cluster size, and every
GPU's candidate set bit for bit the one enumerated for that GPU alone (docs/model.md §9.2)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pipeline.model import caches
from pipeline.model.compute.layer import layer_matmul_time_s
from pipeline.model.compute.matmul import on_chip_key
from pipeline.model.memory.aggregate import memory_required_bytes
from pipeline.model.network.comm_table import (
    CandidateKeys,
    candidate_keys,
    keys_within,
    unique_rows,
)
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.scaling import ModelShape, ScalingLaws, model_shape
from pipeline.model.records.switches import TensorParallel
from pipeline.model.search.candidates import Candidates, _batch, enumerate_candidates
from pipeline.model.search.enumeration import layout_table
from pipeline.model.search.layouts import paper_layouts, shard_times_s
from pipeline.model.step.schedule import interleave_degrees
from pipeline.model.step.step_time import compute_and_bubble, step_floor_s
from tests.presets import preset

HBM_SCALES = (1.0, 1e-4, 0.003, 0.02, 0.1, 0.3, 3.0)
"""HBM of the GPUs compared, as fractions of the H100's: from most layouts cut to none."""


def _alone(
    hw: HardwareSpec, shape: ModelShape, n_gpu: int, opts: SearchOptions
) -> Candidates | None:
    """A paper candidate set enumerated for its GPU alone: the table's rows that fit the
    cluster's HBM, their distinct shards timed on the GPU, then their step inputs."""
    table = layout_table(shape, n_gpu, opts)
    assert table is not None
    dp_, tpm, tpff, pp_, ep_, m, zb_i, nano = table.T
    zb = zb_i.astype(bool)
    if opts.memory_check:
        f = np.float64
        need = memory_required_bytes(shape, dp_.astype(f), pp_.astype(f), nano.astype(f), zb, opts)
        keep = n_gpu * hw.hbm_bytes >= need
        if not keep.any():
            return None
        table, zb = table[keep], zb[keep]
        dp_, tpm, tpff, pp_, ep_, m, _, nano = table.T
    interleave = interleave_degrees(pp_, zb, opts.interleaving, shape.n_layers, m)
    shards, which = unique_rows(np.stack([tpm, tpff, nano], axis=1))
    t_layer = layer_matmul_time_s(
        hw,
        (shape.d_model // shards[:, 0]).astype(np.float64),
        (shape.d_ff // shards[:, 1]).astype(np.float64),
        shards[:, 2].astype(np.float64),
    )[which]
    repeats = ((shape.n_layers // pp_) * (shape.sparsity // ep_) * m).astype(np.float64)
    c = Candidates(
        degrees=np.stack([dp_, tpm, tpff, pp_, ep_], axis=1),
        microbatches=m.astype(np.float64),
        zero_bubble=zb,
        interleave=interleave,
        t_layer_s=t_layer,
        compute_repeats=repeats,
        nanobatch=nano,
        keys=None,
    )
    t_mm, bubble = compute_and_bubble(_batch(c, slice(None), c.degrees[:, None, :]), opts)
    floor = float(step_floor_s(t_mm, bubble, zb).min())
    return dataclasses.replace(c, t_compute_s=t_mm, bubble=bubble, step_floor_s=floor)


@pytest.mark.parametrize("opts", [SearchOptions(), SearchOptions(activation_recompute=True)])
def test_paper_candidates_equal_their_gpus_own_bit_for_bit(opts: SearchOptions) -> None:
    """Enumerated one GPU after another (sharing the GPU-free layouts), each GPU's paper
    candidates equal, array by array and bit by bit, the set enumerated for it alone."""
    h100 = preset("h100_sxm")
    slower = dataclasses.replace(h100, hbm_bandwidth_bytes_per_s=h100.hbm_bandwidth_bytes_per_s / 3)
    for sparse, d_model, n_gpu in ((False, 12288, 2048), (True, 24576, 16384)):
        shape = model_shape(d_model, ScalingLaws(sparse=sparse))
        seen_none = seen_cut = False
        for gpu in (h100, slower):
            for scale in HBM_SCALES:
                hw = dataclasses.replace(gpu, hbm_bytes=gpu.hbm_bytes * scale)
                got = enumerate_candidates(hw, shape, n_gpu, opts)
                want = _alone(hw, shape, n_gpu, opts)
                if want is None:
                    seen_none = True
                    assert got is None
                    continue
                assert isinstance(got, Candidates)
                full = layout_table(shape, n_gpu, opts)
                seen_cut = seen_cut or (full is not None and want.degrees.shape[0] < full.shape[0])
                for field in Candidates.__slots__:
                    value = getattr(want, field)
                    if isinstance(value, np.ndarray):
                        np.testing.assert_array_equal(getattr(got, field), value, field)
                assert got.step_floor_s == want.step_floor_s
                assert got.keys is not None
                _assert_same_keys(got.keys, candidate_keys(want.degrees, want.interleave))
        assert seen_none  # the memory check cut every row of a GPU
        assert seen_cut  # ... and some rows of another


def _assert_same_keys(got: CandidateKeys, want: CandidateKeys) -> None:
    """Each degree group's distinct totals and each candidate's index among them are equal."""
    for group in ("tp", "pp_ep", "dp"):
        g, w = getattr(got, group), getattr(want, group)
        np.testing.assert_array_equal(g.distinct, w.distinct, group)
        np.testing.assert_array_equal(g.key_of, w.key_of, group)
        assert g.distinct.dtype == w.distinct.dtype
        assert g.key_of.dtype == w.key_of.dtype


def test_keys_within_equal_the_keys_of_the_rows() -> None:
    """The group keys of some candidates, taken from their set's keys, equal the keys made
    from those candidates' own degrees (distinct totals in the same order, same indices)."""
    rng = np.random.default_rng(7)
    degrees = rng.choice([1, 2, 4, 8, 16], size=(300, 5))
    interleave = rng.choice([1.0, 2.0, 3.0], size=300)
    whole = candidate_keys(degrees, interleave)
    for share in (0.02, 0.3, 0.9):
        rows = np.flatnonzero(rng.random(300) < share)
        expected = candidate_keys(degrees[rows], interleave[rows])
        _assert_same_keys(keys_within(whole, rows), expected)


def test_paper_layouts_are_made_once_for_every_gpu() -> None:
    """A second and third GPU of the same model and cluster size (other HBM size and speed)
    reuse the first one's GPU-free layouts: no new layout set is made."""
    caches.clear_caches()
    h100 = preset("h100_sxm")
    shape = model_shape(12288, ScalingLaws())
    enumerate_candidates(h100, shape, 2048, SearchOptions())
    made = paper_layouts.cache_info().misses
    for hbm, rate in ((0.5, 1.0), (1.0, 2.0)):
        hw = dataclasses.replace(
            h100,
            hbm_bytes=h100.hbm_bytes * hbm,
            hbm_bandwidth_bytes_per_s=h100.hbm_bandwidth_bytes_per_s * rate,
        )
        assert isinstance(enumerate_candidates(hw, shape, 2048, SearchOptions()), Candidates)
    assert paper_layouts.cache_info().misses == made == 1


def test_shard_times_equal_each_projected_gpus_own_bit_for_bit() -> None:
    """The GPU projected to later years (faster clocks and bandwidths, a larger L2 and HBM)
    times a layout set's shards from the on-chip traffic the first one computed, bit for bit
    as each GPU's own `layer_matmul_time_s`, and the set keeps that traffic once."""
    caches.clear_caches()
    h100 = preset("h100_sxm")
    shape = model_shape(12288, ScalingLaws())
    layouts = paper_layouts(shape, 2048, SearchOptions(), False, TensorParallel.TWO_D)
    assert layouts is not None
    for growth in (1.0, 1.5, 2.25, 40.0):
        hw = dataclasses.replace(
            h100,
            max_clock_hz=h100.max_clock_hz * growth,
            l2_bandwidth_bytes_per_s=h100.l2_bandwidth_bytes_per_s * growth,
            hbm_bandwidth_bytes_per_s=h100.hbm_bandwidth_bytes_per_s * growth**0.5,
            l2_bytes=h100.l2_bytes * growth,
            hbm_bytes=h100.hbm_bytes * growth,
        )
        alone = layer_matmul_time_s(hw, *layouts.shard_widths(shape))
        np.testing.assert_array_equal(shard_times_s(hw, shape, layouts), alone)
    assert list(layouts.on_chip) == [on_chip_key(h100)]
