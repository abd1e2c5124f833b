"""Cluster sizes at node granularity (`physics.cluster_sizes`, docs/model.md §9.4): the walk's
S·2^i answer refined to whole nodes, and the paper's sizes kept by the other value."""

from __future__ import annotations

import dataclasses
import math
from functools import cache
from typing import Any

import pytest

from pipeline.model.records.results import InfeasibleReason
from pipeline.model.records.scaling import ModelShape, model_shape
from pipeline.model.records.switches import STACK_2024, ClusterSizes
from pipeline.model.search import search
from pipeline.model.search.counts import series_shape
from pipeline.model.search.search import optimal_layout, smallest_cluster
from pipeline.schema import ConfigError, Scenario, compose_config, load_scenario

WIDTHS = (6144, 8192, 12288, 14336, 16384, 18432)
"""Dense H100 grid widths whose smallest clusters span one to several thousand nodes."""
NODE = 8
"""GPUs per DGX H100 node, conf/hardware/h100_sxm.yaml's level_sizes."""


@cache
def realistic(sizes: ClusterSizes) -> Scenario:
    """The default realistic H100 dense scenario with the given cluster sizes."""
    s = load_scenario(compose_config(["physics=realistic"]))
    return dataclasses.replace(s, physics=dataclasses.replace(s.physics, cluster_sizes=sizes))


def shape_of(s: Scenario, d_model: int) -> ModelShape:
    """The grid model of width `d_model`."""
    return model_shape(d_model, s.laws, s.options.quirks)


@cache
def smallest(sizes: ClusterSizes, d_model: int) -> int:
    """GPUs of the smallest sufficient cluster of the width (the point must be feasible)."""
    s = realistic(sizes)
    point = smallest_cluster(
        s.hardware, shape_of(s, d_model), s.duration_s, s.options, physics=s.physics
    )
    assert point.feasible
    assert point.layout is not None
    return point.layout.n_gpu


def test_cluster_sizes_realistic_default_is_nodes() -> None:
    """physics=realistic searches node multiples; physics=paper keeps S·2^i."""
    assert load_scenario(compose_config(["physics=realistic"])).physics.cluster_sizes is (
        ClusterSizes.NODES
    )
    assert load_scenario(compose_config([])).physics.cluster_sizes is ClusterSizes.POWERS_OF_TWO


def test_cluster_sizes_bad_value_is_refused() -> None:
    """An unknown cluster_sizes value is refused in one line naming the key."""
    with pytest.raises(ConfigError, match=r"^physics\.cluster_sizes"):
        load_scenario(compose_config(["physics.cluster_sizes=primes"]))


@pytest.mark.parametrize("d_model", WIDTHS)
def test_cluster_sizes_powers_of_two_are_the_walks(d_model: int) -> None:
    """With powers_of_two every answer is S·2^i, the paper's walk (spec §11)."""
    n_gpu = smallest(ClusterSizes.POWERS_OF_TWO, d_model)
    assert n_gpu & (n_gpu - 1) == 0


@pytest.mark.parametrize("d_model", WIDTHS)
def test_cluster_sizes_nodes_refine_the_power_of_two_bracket(d_model: int) -> None:
    """The node answer is a whole number of nodes in (N/2, N], N the power-of-two answer."""
    n_gpu, power = (
        smallest(ClusterSizes.NODES, d_model),
        smallest(ClusterSizes.POWERS_OF_TWO, d_model),
    )
    assert n_gpu % NODE == 0
    assert power // 2 < n_gpu <= power


def test_cluster_sizes_nodes_find_sizes_between_powers_of_two() -> None:
    """At least one width of the series trains on fewer GPUs than its power of two."""
    assert any(
        smallest(ClusterSizes.NODES, w) < smallest(ClusterSizes.POWERS_OF_TWO, w) for w in WIDTHS
    )


@pytest.mark.parametrize("d_model", WIDTHS)
def test_cluster_sizes_one_node_fewer_is_insufficient(d_model: int) -> None:
    """One node fewer than the node answer does not train within the duration (the last
    pass of the refinement steps by one node)."""
    s = realistic(ClusterSizes.NODES)
    n_gpu = smallest(ClusterSizes.NODES, d_model)
    fewer = optimal_layout(
        s.hardware, shape_of(s, d_model), n_gpu - NODE, s.options, physics=s.physics
    )
    assert fewer is None or not fewer[1].training_time_s < s.duration_s


@pytest.mark.parametrize("d_model", WIDTHS)
def test_cluster_sizes_walk_finishes_only_the_size_it_returns(
    d_model: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk makes the layout and cost of one size, the one it returns, however many
    sufficient sizes the node refinement replaces on its way."""
    made: list[int] = []
    trained: list[int] = []
    found, best = search._realistic_found, search._best_of_choice

    def counting_found(*args: Any) -> search.BestAt:
        made.append(args[2])
        return found(*args)

    def counting_best(*args: Any) -> search.BestAt:
        at = best(*args)
        if at.pending is not None:
            trained.append(args[2])
        return at

    monkeypatch.setattr(search, "_realistic_found", counting_found)
    monkeypatch.setattr(search, "_best_of_choice", counting_best)
    s = realistic(ClusterSizes.NODES)
    point = smallest_cluster(
        s.hardware, shape_of(s, d_model), s.duration_s, s.options, physics=s.physics
    )
    assert point.layout is not None
    assert made == [point.layout.n_gpu]
    assert point.layout.n_gpu in trained


def test_cluster_sizes_follow_the_batch_factors() -> None:
    """docs/model.md R.10: at d_model 24576 (4.6e26 FLOP), under the 2021-2024 software's GEMM
    efficiency (`physics.stack=2024`), the critical law's batch of 7,168 sequences (2^10 · 7)
    needs 229,376 GPUs (7 · 2^15); the same model at 6,144 sequences (2^11 · 3), whose factors
    reach a smaller node multiple, needs 196,608 (3 · 2^16) at no lower utilization: the grid's
    answer sits where the batch's factors allow a layout."""
    s = realistic(ClusterSizes.NODES)
    s = dataclasses.replace(s, physics=dataclasses.replace(s.physics, stack=STACK_2024))
    law = series_shape(24576, s.laws, s.options.quirks, s.physics)
    assert law.batch_seqs == 7168
    found = {}
    for batch in (7168, 6144):
        shape = dataclasses.replace(law, batch_seqs=batch)
        point = smallest_cluster(s.hardware, shape, s.duration_s, s.options, physics=s.physics)
        assert point.layout is not None
        assert point.cost is not None
        assert batch % math.prod(point.layout.dp) == 0  # d divides the batch (whole sequences)
        found[batch] = (point.layout.n_gpu, point.cost.utilization)
    assert found[7168][0] == 229376
    assert found[6144][0] == 196608
    assert found[6144][1] >= found[7168][1] - 1e-9


def test_cluster_sizes_nodes_find_a_size_no_power_of_two_holds() -> None:
    """Under observed-size batches (`batch=deepseek`) the 49152-wide model has 576 = 9 · 64
    layers: at S·2^i its stages hold 9 layers or more and no layout fits one GPU's memory in
    time, at 9 · 2^20 GPUs 576 stages of one layer do. The walk tries the odd node multiples
    (`_Walk.odd_multiples`) when no layout fits at any S·2^i, so the size is feasible there, not
    `exceeds_gpu_memory`; and no power of two up to twice that size trains it."""
    s = load_scenario(compose_config(["physics=realistic", "batch=deepseek"]))
    shape = series_shape(49152, s.laws, s.options.quirks, s.physics)
    assert shape.n_layers == 576
    point = smallest_cluster(s.hardware, shape, s.duration_s, s.options, physics=s.physics)
    assert point.feasible
    assert point.layout is not None
    assert point.layout.n_gpu == 9 * 2**20
    assert math.prod(point.layout.pp) % 9 == 0
    for i in range(20, 26):
        best = optimal_layout(s.hardware, shape, 2**i, s.options, physics=s.physics)
        assert best is None or not best[1].training_time_s < s.duration_s, 2**i


def test_cluster_sizes_duration_walls_keep_the_powers_of_two() -> None:
    """A size some S·2^i fits in memory but none trains in time is the duration's wall, and
    the walk does not search odd multiples for it: the default dense series' 30,720-wide model
    (L = 384 = 3 · 128) stays `no_cluster_within_duration`, as its reason says of the powers
    of two (docs/model.md §9.4)."""
    s = realistic(ClusterSizes.NODES)
    shape = series_shape(30720, s.laws, s.options.quirks, s.physics)
    point = smallest_cluster(s.hardware, shape, s.duration_s, s.options, physics=s.physics)
    assert point.infeasible_reason is InfeasibleReason.NO_CLUSTER
