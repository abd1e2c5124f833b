"""The busiest expert rank's tokens (`compute.experts`, docs/model.md R.5.1)."""

from __future__ import annotations

import dataclasses

import numpy as np

from pipeline.model.compute.experts import busiest_rank_expert_tokens
from pipeline.model.records.scaling import ScalingLaws
from pipeline.model.records.switches import Physics
from pipeline.model.search.counts import model_shape
from pipeline.model.search.grid import grid_layer_work


def test_split_experts_compute_the_excess_and_one_rank_the_mean() -> None:
    """1 + x times the mean where e > 1; the mean where one rank holds every expert."""
    mean = np.array([100.0, 100.0, 64.0])
    ranks = np.array([1.0, 2.0, 8.0])
    assert busiest_rank_expert_tokens(mean, ranks, 0.5).tolist() == [100.0, 150.0, 96.0]


def test_balanced_routing_is_the_mean_itself() -> None:
    """x = 0 (the paper's model) returns the balanced tokens unchanged, bit for bit."""
    mean = np.array([3.0, 5.0])
    assert busiest_rank_expert_tokens(mean, np.array([4.0, 4.0]), 0.0) is mean


def test_grid_rows_apply_it_by_their_expert_ranks() -> None:
    """A grid row of a sparse model with S/local = N_EP > 1 ranks runs its experts on 1 + x
    times its nanobatch; a row holding every expert (local = S), on the nanobatch."""
    physics = dataclasses.replace(Physics(), expert_imbalance=0.25)
    shape = model_shape(4096, ScalingLaws())
    shape = dataclasses.replace(shape, sparsity=8)
    one = np.ones(2)
    work = grid_layer_work(physics, shape, one, one, np.array([64.0, 64.0]), np.array([1.0, 8.0]))
    assert work.expert_tokens.tolist() == [80.0, 64.0]
    assert work.tokens.tolist() == [64.0, 512.0]
