"""The pruned search equals the exhaustive one (docs/model.md §9.2), on small random cases."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.scaling import ModelShape
from pipeline.model.search.search import optimal_layout, smallest_cluster
from tests.strategies import hardware, models, search_options

EXAMPLES = settings(max_examples=30, deadline=None)
DURATION_S = 0.25 * 3.154e7
"""Model A's three months (spec §0)."""


@EXAMPLES
@given(hardware(), models(), search_options(), st.integers(0, 12))
def test_pruned_search_equals_exhaustive_at_a_cluster(
    hw: HardwareSpec, shape: ModelShape, opts: SearchOptions, doublings: int
) -> None:
    """At one cluster size, pruning picks the same layout with the same training time, bit for bit."""
    n_gpu = shape.sparsity * 2**doublings
    pruned = optimal_layout(hw, shape, n_gpu, opts)
    exhaustive = optimal_layout(hw, shape, n_gpu, opts, prune=False)
    assert (pruned is None) == (exhaustive is None)
    if pruned is None or exhaustive is None:
        return
    assert pruned[0] == exhaustive[0]
    assert pruned[1] == exhaustive[1]


@settings(max_examples=10, deadline=None)
@given(hardware(), models(), search_options())
def test_pruned_smallest_cluster_equals_exhaustive(
    hw: HardwareSpec, shape: ModelShape, opts: SearchOptions
) -> None:
    """The smallest sufficient cluster, its layout and cost do not depend on pruning."""
    assert smallest_cluster(hw, shape, DURATION_S, opts) == smallest_cluster(
        hw, shape, DURATION_S, opts, prune=False
    )
