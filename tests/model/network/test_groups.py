"""A layout's collectives at the level its groups span (pipeline/model/network/groups.py;
docs/model.md R.5, R.7)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.model.network.groups import Levels, TensorGroups, tensor_parallel_s
from pipeline.model.network.ring import ring_allreduce_s
from pipeline.model.records.switches import RECOMPUTE_ORDER, Recompute

LEVELS = Levels(np.array([800e9, 100e9]), np.array([1e-6, 5e-6]), (8,))
"""An 8-GPU domain at 800 GB/s and 1 µs per hop, 100 GB/s and 5 µs above it."""
NONE = np.array([RECOMPUTE_ORDER.index(Recompute.NONE)])
FULL = np.array([RECOMPUTE_ORDER.index(Recompute.FULL)])


def test_one_d_tensor_parallelism_is_megatrons_four_all_reduces() -> None:
    """N_TPm = 1: four all-reduces of w·tokens·h bytes over the t ranks per layer (six under
    full recomputation), at the level of the t ranks (Shoeybi et al. 2019)."""
    one, t, tokens = np.ones(1), np.array([4.0]), np.array([2048.0])
    g = TensorGroups(one, t, tokens, 1024.0, 4096.0, 3072.0)
    ring = ring_allreduce_s(t, 2.0 * 2048 * 1024 * one, 800e9 * one, 1e-6 * one)
    assert tensor_parallel_s(LEVELS, g, NONE, attention=True)[0] == 4.0 * ring[0]
    assert tensor_parallel_s(LEVELS, g, FULL, attention=True)[0] == 6.0 * ring[0]
    assert tensor_parallel_s(LEVELS, g, NONE, attention=False)[0] == 2.0 * ring[0]


def test_two_d_tensor_parallelism_check_value() -> None:
    """N_TPff = 8 in the domain, N_TPm = 2 at stride 8 above it, 1024 tokens, h = 1024, f =
    4096, QKV 3072 wide: 4 all-reduces of h/2 words over 8 ranks at 800 GB/s, and over 2
    ranks at 100 GB/s 2 of f/8 words, one of 3072/8 and one of 1024/8, 2 B a word."""
    tokens = np.array([1024.0])
    g = TensorGroups(np.array([2.0]), np.array([8.0]), tokens, 1024.0, 4096.0, 3072.0)

    def ring(p: float, words: float, bw: float, lat: float) -> float:
        return 2 * (p - 1) / p * 2.0 * 1024 * words / (bw / 2) + 2 * (p - 1) * lat

    ff = 4 * ring(8, 512, 800e9, 1e-6)
    m = 2 * ring(2, 512, 100e9, 5e-6) + ring(2, 384, 100e9, 5e-6) + ring(2, 128, 100e9, 5e-6)
    got = tensor_parallel_s(LEVELS, g, NONE, attention=True)[0]
    assert got == pytest.approx(ff + m, rel=1e-12)


def test_tensor_parallelism_of_one_rank_is_free() -> None:
    """A layer on one GPU moves nothing."""
    one = np.ones(1)
    g = TensorGroups(one, one, 512 * one, 1024.0, 4096.0, 3072.0)
    assert tensor_parallel_s(LEVELS, g, FULL, attention=True)[0] == 0.0


def test_striped_ring_crosses_nodes_on_its_ranks_nics() -> None:
    """Striped over NICs, a ring of 32 contiguous ranks (8 a node) crosses at 8 · 100 = 800
    GB/s (at most the node's 800), a ring at stride 8 (one rank a node) at 100, one of 4 ranks
    at stride 4 (2 a node) at 200, and a ring inside the node keeps 800; unstriped, 100."""
    striped = Levels(LEVELS.bandwidth, LEVELS.latency, LEVELS.sizes, striped=True)
    ring, span = np.array([32.0, 32.0, 4.0, 8.0]), np.array([32.0, 256.0, 16.0, 8.0])
    bw, lat = striped.at(span, ring)
    assert bw.tolist() == [800e9, 100e9, 200e9, 800e9]
    assert lat.tolist() == [5e-6, 5e-6, 5e-6, 1e-6]
    assert LEVELS.at(span, ring)[0].tolist() == [100e9, 100e9, 100e9, 800e9]
    assert striped.at(span)[0].tolist() == [100e9, 100e9, 100e9, 800e9]  # not a ring: unstriped


def test_nic_striping_needs_the_presets_nics() -> None:
    """`physics.nic_striping` stripes the levels of a preset that gives its NICs per node (DGX
    H100: 8, DGX-1: 4) and leaves those of one that gives none as they are."""
    import dataclasses

    from pipeline.model.records.switches import Physics
    from tests.presets import preset

    on = Physics(nic_striping=True)
    assert preset("h100_sxm").nics_per_node == 8
    assert preset("v100_sxm").nics_per_node == 4
    assert Levels.of(preset("h100_sxm"), on).striped
    assert not Levels.of(preset("h100_sxm"), Physics()).striped
    assert not Levels.of(dataclasses.replace(preset("h100_sxm"), nics_per_node=None), on).striped


def _fewest_ranks_in_a_crossed_node(ring: int, stride: int, node: int, n_gpu: int) -> int:
    """Over every group of `ring` ranks at `stride` (Megatron's order: aligned blocks of
    ring·stride ranks) that spans nodes of `node` GPUs, the fewest ranks it has in a node."""
    span, fewest = ring * stride, ring
    for rank in range(n_gpu):
        block, offset = divmod(rank, span)
        if offset >= stride:
            continue
        nodes = [(block * span + offset + i * stride) // node for i in range(ring)]
        counts = [nodes.count(x) for x in set(nodes)]
        if len(counts) > 1:
            fewest = min(fewest, *counts)
    return fewest


def test_striped_ring_takes_its_fewest_ranks_in_a_node() -> None:
    """A striped ring crosses at k · BW_L for k the fewest of its ranks in any node it crosses,
    counted rank by rank on 8-GPU nodes, not the average 8 · g / span: 3 ranks at stride 4 (2
    in one node, 1 in the next) cross at 100 GB/s, 6 contiguous ranks straddling two nodes at
    2 · 100, 8 ranks at stride 6 at 100."""
    striped = Levels(LEVELS.bandwidth, LEVELS.latency, LEVELS.sizes, striped=True)
    ring, span = np.array([3.0, 6.0, 8.0]), np.array([12.0, 6.0, 48.0])
    assert striped.at(span, ring)[0].tolist() == [100e9, 200e9, 100e9]
    cases = [(g, r) for g in range(2, 13) for r in range(1, 13) if 8 % (g * r)]
    ring, stride = np.array(cases, dtype=float).T
    bw = striped.at(ring * stride, ring)[0]
    fewest = [_fewest_ranks_in_a_crossed_node(g, r, 8, 8 * g * r) for g, r in cases]
    assert (bw / 100e9).tolist() == [float(k) for k in fewest]


def test_ring_attention_is_not_striped_but_its_all_gather_is() -> None:
    """Ring attention's K/V sends go one GPU to one GPU, so a context-parallel ring of 4 ranks
    at stride 4 (2 a node) pays the same on striped and unstriped levels; Transformer Engine's
    all-gather variant is an NCCL ring and crosses at 2 · 100 GB/s, half the time."""
    from pipeline.model.network.groups import ring_attention_exposed_s

    striped = Levels(LEVELS.bandwidth, LEVELS.latency, LEVELS.sizes, striped=True)
    hop_free = Levels(LEVELS.bandwidth, np.zeros(2), LEVELS.sizes)
    striped_hop_free = Levels(hop_free.bandwidth, hop_free.latency, hop_free.sizes, striped=True)
    one, zero = np.ones(1), np.zeros(1)

    def exposed(levels: Levels, all_gather: bool) -> float:
        t = ring_attention_exposed_s(
            levels, 4096 * one, 1024.0, 4 * one, 4 * one, zero, zero, NONE, all_gather
        )
        return float(t[0])

    assert exposed(striped, False) == exposed(LEVELS, False) > 0.0
    assert exposed(striped_hop_free, True) == pytest.approx(0.5 * exposed(hop_free, True))
