"""Grid layouts with several experts on a GPU (N_EP < S): the walk's lower bounds still hold
(pipeline/model/search/floors.py, docs/model.md §9.4) now that such a GPU runs its layer's
attention once and its experts one after another (docs/model.md R.7)."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.model.search.candidates import Candidates, _with_ring, enumerate_candidates
from pipeline.model.search.counts import grid_shape
from pipeline.model.search.floors import experts_split, step_floor_terms_s
from pipeline.model.search.realistic import realistic_steps
from pipeline.model.search.search import PRUNE_SLACK, physics_hardware
from tests.model.search.test_search_pruning import _candidate_keys, _floors_by_row, _realistic

SPARSE = ["scaling=sparse"]
D_MODEL = 8192
"""A sparse grid model of 5 experts: clusters of 3·2^i GPUs put all five on every GPU."""


@pytest.mark.parametrize("n_gpu", [384, 768, 1536, 3072])
def test_floors_bound_candidates_with_several_local_experts(n_gpu: int) -> None:
    """The compute floor a + b/N and each layout's own floor are at most the realistic step of
    every candidate with S/N_EP > 1 local experts."""
    s, shape = _realistic(SPARSE, D_MODEL)
    shape = grid_shape(s.physics, shape)
    hw = physics_hardware(s.hardware, s.physics)
    c = enumerate_candidates(hw, shape, n_gpu, s.options, s.physics)
    assert isinstance(c, Candidates)
    assert np.all(c.degrees[:, 4] < shape.sparsity)
    floors = _floors_by_row(hw, s, shape, n_gpu)
    keys = _candidate_keys(c)
    steps = realistic_steps(hw, s.physics, shape, n_gpu, _with_ring(c, hw, shape), s.options)
    for key, t_step in zip(keys, steps.t_step_s, strict=True):
        assert floors[key] <= float(t_step) * (1.0 + PRUNE_SLACK)
    a, b = step_floor_terms_s(hw, s.physics, s.options, shape, experts_split(shape, n_gpu))
    assert a + b / n_gpu <= float(steps.t_step_s.min()) * (1.0 + PRUNE_SLACK)
