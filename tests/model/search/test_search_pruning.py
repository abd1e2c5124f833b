"""The pruned search equals the exhaustive one (docs/model.md §9.2), on small random cases."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from pipeline.model import caches
from pipeline.model.network.groups import Levels
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.results import PointResult
from pipeline.model.records.scaling import ModelShape, model_shape
from pipeline.model.records.switches import ClusterSizes, Physics
from pipeline.model.search import floors, kept, search
from pipeline.model.search.candidates import Candidates, _with_ring, enumerate_candidates
from pipeline.model.search.counts import grid_shape, matmul_rate_flop_per_s
from pipeline.model.search.enumeration import realistic_layout_rows
from pipeline.model.search.floors import (
    batch_share_floor,
    experts_split,
    layout_step_floors_s,
    step_floor_terms_s,
    tensor_parallel_floor_s,
)
from pipeline.model.search.grid import grid_layer_floor_s, grid_layer_launches_s
from pipeline.model.search.realistic import realistic_comm, realistic_steps
from pipeline.model.search.search import (
    PRUNE_SLACK,
    optimal_layout,
    physics_hardware,
    smallest_cluster,
)
from pipeline.model.step.assembly import StepParts, dp_bucket_params
from pipeline.schema import Scenario, compose_config, load_scenario
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


@settings(max_examples=10, deadline=None)
@given(hardware(), models(), search_options())
def test_pruned_smallest_cluster_equals_exhaustive_at_node_sizes(
    hw: HardwareSpec, shape: ModelShape, opts: SearchOptions
) -> None:
    """With node-granular cluster sizes (the paper's step), the refined smallest cluster, its
    layout and cost do not depend on pruning."""
    nodes = Physics(cluster_sizes=ClusterSizes.NODES)
    assert smallest_cluster(hw, shape, DURATION_S, opts, physics=nodes) == smallest_cluster(
        hw, shape, DURATION_S, opts, prune=False, physics=nodes
    )


REALISTIC_CASES = [
    (["scaling=dense"], (22528, 26624, 49152, 106496)),
    (["scaling=dense", "physics.cluster_sizes=powers_of_two"], (8192, 22528)),
    (["scaling=sparse"], (30720, 32768, 73728)),
    (["scaling=dense", "physics.max_context_parallel=8", "physics.tp_in_domain=true"], (22528,)),
    (
        [
            "scaling=dense",
            "physics.fusion=flash",
            "physics.whole_sequences=false",
            "physics.max_context_parallel=1",
        ],
        (73728,),
    ),
    (["scaling=sparse", "physics.attention=false", "physics.tensor_parallel=1d"], (73728,)),
    (
        ["scaling=sparse", "physics.whole_sequences=false", "physics.max_context_parallel=1"],
        (57344,),
    ),
    (["scaling=sparse", "physics.max_context_parallel=8"], (49152,)),
    (["scaling=dense", "scaling.kv_heads=null"], (49152,)),
    (["scaling=dense", "physics.few_microbatches=false"], (106496,)),
    (
        [
            "scaling=dense",
            "physics.nic_striping=true",
            "physics.tensor_parallel=both",
            "physics.tp_in_domain=false",
        ],
        (49152,),
    ),
    (["scaling=sparse", "physics.tp_in_domain=true", "physics.tensor_parallel=both"], (32768,)),
    (["scaling=sparse", "physics.fusion=none"], (30720,)),
    (["scaling=dense", "physics.precision=fp8"], (22528, 49152)),
    (["scaling=dense", "physics.precision=fp8", "physics.fp8_params=false"], (22528,)),
    (["scaling=sparse", "physics.precision=fp8", "physics.dp_overlap=false"], (30720,)),
    (["scaling=dense", "physics.grad_reduce_fp32=true"], (22528, 106496)),
    (["scaling=sparse", "physics.zero_stage=0", "physics.grad_reduce_fp32=true"], (30720,)),
    (
        ["scaling=dense", "physics.zero_stage=0", "hardware.network.bandwidth_gb_per_s=[900,25]"],
        (32768,),
    ),
    (["scaling=sparse", "hardware=b200", "physics.precision=fp8"], (32768,)),
    (["scaling=dense", "batch=constant", "hardware.network.level_sizes=[16]"], (26624,)),
    (["scaling=dense", "hardware.network.level_sizes=[64]"], (26624, 73728, 393216)),
    (["scaling=dense", "hardware=b200", "hardware.network.level_sizes=[32]"], (30720,)),
    (
        [
            "scaling=sparse",
            "parallelism.overlap_tp=false",
            "parallelism.overlap_pp_ep=false",
            "parallelism.overlap_dp=true",
            "parallelism.interleaving=false",
        ],
        (28672,),
    ),
]


TP_FLOOR_CASES = [REALISTIC_CASES[i] for i in (0, 1, 8, 9, 10, 13, 14, 16, 18, 20, 21, 22)]
"""The cases where some cluster the walk may try has layouts and a positive tensor-parallel
floor. In the others every layout's N_TPff divides the model's 8 K/V heads (whole heads,
docs/model.md R.7) and, with 1-D tensor parallelism or few microbatches, the fewest
tensor-parallel ranks a layout must have exceed 8 only where no layout is left."""


def _realistic(over: list[str], d_model: int) -> tuple[Scenario, ModelShape]:
    scenario = load_scenario(compose_config(["physics=realistic", *over]))
    return scenario, model_shape(d_model, scenario.laws, scenario.options.quirks)


@pytest.mark.parametrize(("over", "widths"), REALISTIC_CASES)
def test_realistic_smallest_cluster_equals_exhaustive(over: list[str], widths: tuple[int]) -> None:
    """Under realistic physics, skipping clusters by the compute-only step floor gives the
    point of the exhaustive walk, feasible or infeasible with its reason (docs/model.md §9.4)."""
    for d_model in widths:
        s, shape = _realistic(over, d_model)
        pruned = smallest_cluster(s.hardware, shape, s.duration_s, s.options, physics=s.physics)
        exhaustive = smallest_cluster(
            s.hardware, shape, s.duration_s, s.options, prune=False, physics=s.physics
        )
        assert pruned == exhaustive


def test_realistic_walk_on_a_domain_that_tiles_no_cluster_equals_exhaustive() -> None:
    """A 72-GPU NVLink domain tiles no cluster 2^i past 72 (the config refuses it,
    `schema.scenario.check_level_tiling`); the model's walk, which skips node refinement there,
    still gives the exhaustive walk's point."""
    s, shape = _realistic(["scaling=dense", "hardware=b200"], 30720)
    hw = dataclasses.replace(s.hardware, level_sizes=(72,))
    pruned = smallest_cluster(hw, shape, s.duration_s, s.options, physics=s.physics)
    exhaustive = smallest_cluster(
        hw, shape, s.duration_s, s.options, prune=False, physics=s.physics
    )
    assert pruned == exhaustive


def _walked_clusters(
    over: list[str], widths: tuple[int, ...]
) -> Iterator[tuple[Scenario, ModelShape, HardwareSpec, int, Candidates]]:
    """Every other power-of-two cluster the walk may try and, past four nodes, 3/4 of it (a
    node multiple the refinement may try), for each width's realistic model: the scenario,
    the grid shape, the network physics, the cluster size and its candidates (clusters
    without candidates left out)."""
    for d_model in widths:
        s, shape = _realistic(over, d_model)
        shape = grid_shape(s.physics, shape)
        hw = physics_hardware(s.hardware, s.physics)
        for i in range(0, s.options.max_cluster_doublings + 1, 2):
            power = shape.sparsity * 2**i
            # and a node multiple between powers of two (`cluster_sizes: nodes`) past 4 nodes
            for n_gpu in (power, 3 * power // 4) if power >= 32 else (power,):
                c = enumerate_candidates(hw, shape, n_gpu, s.options, s.physics)
                if isinstance(c, Candidates):
                    yield s, shape, hw, n_gpu, c


@pytest.mark.parametrize(("over", "widths"), REALISTIC_CASES)
def test_step_floor_terms_bound_every_candidate(over: list[str], widths: tuple[int]) -> None:
    """a + b/N is at most every candidate's network-free step at N GPUs (its compute with
    fill and drain: plain 1F1B with m < N_PP computes less than L layer calls but waits for
    them), for every cluster the walk may try (docs/model.md §9.4, `step_floor_terms_s`), with
    the busiest expert rank's FLOP where the cluster splits the experts (`experts_split`)."""
    checked = 0
    for s, shape, hw, n_gpu, c in _walked_clusters(over, widths):
        if c.t_compute_s is None:
            continue
        split = experts_split(shape, n_gpu)
        fixed_s, flop_s = step_floor_terms_s(hw, s.physics, s.options, shape, split)
        assert fixed_s + flop_s / n_gpu <= c.step_floor_s * (1.0 + PRUNE_SLACK)
        checked += 1
    assert checked > 0


@pytest.mark.parametrize(("over", "widths"), REALISTIC_CASES)
def test_batch_share_floor_bounds_every_layout(over: list[str], widths: tuple[int]) -> None:
    """Every enumerated layout keeps at least the share ρ of the batch in its nanobatches."""
    for d_model in widths:
        s, shape = _realistic(over, d_model)
        shape = grid_shape(s.physics, shape)
        share = batch_share_floor(s.physics, s.options, shape)
        assert 0.0 <= share <= 1.0
        for i in range(0, 40, 3):
            n_gpu = shape.sparsity * 2**i
            c = enumerate_candidates(s.hardware, shape, n_gpu, s.options, s.physics)
            if not isinstance(c, Candidates):
                continue
            kept = c.degrees[:, 0] * c.microbatches * c.nanobatch * shape.sparsity
            assert np.all(kept >= share * shape.batch_tokens)


@pytest.mark.parametrize(("over", "widths"), TP_FLOOR_CASES)
def test_tensor_parallel_floor_bounds_every_realistic_step(
    over: list[str], widths: tuple[int]
) -> None:
    """The tensor-parallel hops' floor is at most every candidate's realistic step at N GPUs,
    for every cluster the walk may try (docs/model.md §9.4, `tensor_parallel_floor_s`)."""
    checked = 0
    for s, shape, hw, n_gpu, c in _walked_clusters(over, widths):
        c = _with_ring(c, hw, shape)
        steps = realistic_steps(hw, s.physics, shape, n_gpu, c, s.options)
        floor_s = tensor_parallel_floor_s(hw, s.physics, s.options, shape, n_gpu)
        assert floor_s <= float(steps.t_step_s.min()) * (1.0 + PRUNE_SLACK)
        checked += floor_s > 0.0
    assert checked > 0


def _floors_by_row(
    hw: HardwareSpec, s: Scenario, shape: ModelShape, n_gpu: int
) -> dict[tuple[int, ...], float]:
    """`layout_step_floors_s` keyed by each enumerated row and, where the step reads it (the
    ring of attention), its context-parallel degree (1 elsewhere: rows that differ only in it
    then have one floor)."""
    rows = realistic_layout_rows(shape, n_gpu, s.options, s.physics)
    floors = layout_step_floors_s(hw, s.physics, s.options, shape, n_gpu)
    assert (rows is None) == (floors is None)
    if rows is None or floors is None:
        return {}
    table, cps = rows
    ring = cps is not None and s.physics.attention
    cp = cps if ring and cps is not None else np.ones(table.shape[0], dtype=np.int64)
    out: dict[tuple[int, ...], float] = {}
    for row, c, floor in zip(table, cp, floors, strict=True):
        key = (*map(int, row), int(c))
        assert out.setdefault(key, float(floor)) == float(floor)
    return out


def _candidate_keys(c: Candidates) -> list[tuple[int, ...]]:
    """Each candidate as its enumerated row (N_DP, N_TPm, N_TPff, N_PP, N_EP, m, zero-bubble,
    nanobatch) and context-parallel degree (1 where the step does not read it)."""
    cp = np.ones(c.degrees.shape[0], dtype=np.int64) if c.cp is None else c.cp
    return [
        (
            *map(int, c.degrees[i]),
            int(c.microbatches[i]),
            int(c.zero_bubble[i]),
            int(c.nanobatch[i]),
            int(cp[i]),
        )
        for i in range(c.degrees.shape[0])
    ]


@pytest.mark.parametrize(("over", "widths"), REALISTIC_CASES)
def test_layout_step_floors_bound_every_realistic_candidate(
    over: list[str], widths: tuple[int]
) -> None:
    """Each enumerated layout's floor is at most its candidate's realistic step, for every
    candidate of every cluster the walk may try (docs/model.md §9.4, `layout_step_floors_s`)."""
    checked = 0
    for s, shape, hw, n_gpu, c in _walked_clusters(over, widths):
        floors = _floors_by_row(hw, s, shape, n_gpu)
        keys = _candidate_keys(c)
        c = _with_ring(c, hw, shape)
        steps = realistic_steps(hw, s.physics, shape, n_gpu, c, s.options)
        for key, t_step in zip(keys, steps.t_step_s, strict=True):
            assert floors[key] <= float(t_step) * (1.0 + PRUNE_SLACK)
        checked += len(keys)
    assert checked > 0


def _shards(shape: ModelShape, c: Candidates) -> NDArray[np.int64]:
    """Each candidate's shard (N_TPm, N_TPff, nanobatch, local experts), `grid.Shard`."""
    d = c.degrees
    return np.stack([d[:, 1], d[:, 2], c.nanobatch, shape.sparsity // d[:, 4]], axis=1)


@pytest.mark.parametrize(("over", "widths"), REALISTIC_CASES)
def test_layer_floor_bounds_every_candidate_layer_at_any_hbm_bandwidth(
    over: list[str], widths: tuple[int]
) -> None:
    """Each candidate's layer, under its recomputation mode, on its GPU at the preset's HBM
    bandwidth and at 30 times it, is at least its shard's layer at unbounded HBM bandwidth
    (`grid_layer_floor_s`, what the layout floors read: docs/model.md §9.4)."""
    checked = 0
    for s, shape, hw, n_gpu, c in _walked_clusters(over, widths):
        floor = grid_layer_floor_s(hw, s.physics, shape, _shards(shape, c))
        assert np.all(floor <= c.t_layer_s * (1.0 + PRUNE_SLACK))
        fast = dataclasses.replace(hw, hbm_bandwidth_bytes_per_s=30 * hw.hbm_bandwidth_bytes_per_s)
        on_fast = enumerate_candidates(fast, shape, n_gpu, s.options, s.physics)
        assert isinstance(on_fast, Candidates)
        assert np.array_equal(on_fast.degrees, c.degrees)
        assert np.all(floor <= on_fast.t_layer_s * (1.0 + PRUNE_SLACK))
        checked += c.t_layer_s.size
    assert checked > 0


def test_layer_floor_counts_the_waves_of_small_nanobatches() -> None:
    """Near the sparse series' latency wall, on a cluster of 2^20 GPUs whose N_EP = 4 leaves
    five of the 20 experts on a GPU (nanobatches of tens of tokens: a GPU's whole sequence
    shards over its experts), a layer at unbounded HBM bandwidth takes over three times the
    layout floors' FLOP term (launches plus weight FLOP at the matmul rate), whose GEMMs it
    charges in whole waves of tiles (docs/model.md R.2, §9.4): the floors then set aside
    clusters the FLOP term let through."""
    s, shape = _realistic(["scaling=sparse"], 30720)
    shape = grid_shape(s.physics, shape)
    hw = floors.floor_hardware(physics_hardware(s.hardware, s.physics))
    assert shape.sparsity == 20
    rows = floors._floor_rows(shape, (2**20,), s.options, s.physics, 0)
    assert rows is not None
    flop_term = grid_layer_launches_s(hw, s.physics, shape, rows.shard_local) + rows.shard_work / (
        matmul_rate_flop_per_s(hw, s.physics)
    )
    layer = grid_layer_floor_s(hw, s.physics, shape, rows.shards)
    small = rows.shard_groups.tokens / rows.shard_local <= 64.0  # nanobatches of at most 64 tokens
    assert small.any()
    assert np.all(layer[small] > 3.0 * flop_term[small])
    assert np.all(layer >= flop_term)


@settings(max_examples=20, deadline=None)
@given(hardware(), models(), search_options(), st.integers(0, 16))
def test_layout_step_floors_bound_every_candidate_on_random_networks(
    hw: HardwareSpec, shape: ModelShape, opts: SearchOptions, doublings: int
) -> None:
    """On random networks, GPUs and search options, each enumerated layout's floor is at most
    its candidate's realistic step (`layout_step_floors_s`)."""
    s = dataclasses.replace(_realistic([], shape.d_model)[0], options=opts)
    shape = grid_shape(s.physics, shape)
    hw = physics_hardware(hw, s.physics)
    n_gpu = shape.sparsity * 2**doublings
    c = enumerate_candidates(hw, shape, n_gpu, opts, s.physics)
    if not isinstance(c, Candidates):
        return
    floors = _floors_by_row(hw, s, shape, n_gpu)
    keys = _candidate_keys(c)
    steps = realistic_steps(hw, s.physics, shape, n_gpu, _with_ring(c, hw, shape), opts)
    for key, t_step in zip(keys, steps.t_step_s, strict=True):
        assert floors[key] <= float(t_step) * (1.0 + PRUNE_SLACK)


def test_layout_step_floors_count_the_last_gradient_buckets() -> None:
    """Under Megatron-Core's overlapped distributed optimizer (`dp_overlap`) a layout's floor
    charges its last gradient buckets: never below the floor of a fully hidden reduction, and
    above it on some layouts of every cluster the walk may try (`layout_step_floors_s`)."""
    checked = 0
    for s, shape, hw, n_gpu, _ in _walked_clusters(["scaling=dense"], (22528, 49152)):
        assert s.physics.dp_overlap
        hidden = dataclasses.replace(s.physics, dp_overlap=False)
        opts = dataclasses.replace(s.options, overlap_dp=True)
        on = layout_step_floors_s(hw, s.physics, s.options, shape, n_gpu)
        off = layout_step_floors_s(hw, hidden, opts, shape, n_gpu)
        assert on is not None
        assert off is not None
        finite = np.isfinite(off)
        assert np.all(on[finite] >= off[finite])
        checked += bool(np.any(on[finite] > off[finite]))
    assert checked > 0


@pytest.mark.parametrize("zero_stage", [1, 0])
def test_exposed_reduction_floor_spans_the_whole_reduction_down_to_its_buckets(
    zero_stage: int,
) -> None:
    """Under `dp_overlap` the floor's exposed reduction is the whole reduction where a stage's
    pass is instant (t/2 + t'/2 sharded, t unsharded), never rises as the pass grows, and falls
    to the buckets' (t_b/2 + t'_b/2, t_b) where the pass outlasts it (docs/model.md §9.4,
    `floors._exposed_reduction_floor_s`): more than the buckets on the rows whose gradient
    spans several buckets."""
    s, shape = _realistic(["scaling=sparse", f"physics.zero_stage={zero_stage}"], 16384)
    shape = grid_shape(s.physics, shape)
    hw = floors.floor_hardware(physics_hardware(s.hardware, s.physics))
    rows = floors._floor_rows(shape, (131072,), s.options, s.physics, 0)
    assert rows is not None
    levels = Levels.as_given(hw, s.physics.nic_striping)
    t_grad, t_gather = floors._reductions_s(
        s.physics, levels, rows, False, rows.replicated, rows.expert
    )
    bucket = dp_bucket_params(rows.gradient.dense)
    expert_bucket = None if rows.expert is None else np.minimum(rows.expert, bucket)
    t_b, t_gather_b = floors._reductions_s(
        s.physics, levels, rows, False, np.minimum(rows.replicated, bucket), expert_bucket
    )
    sharded = zero_stage >= 1
    whole = 0.5 * (t_grad + t_gather) if sharded else t_grad
    buckets = 0.5 * (t_b + t_gather_b) if sharded else t_b

    def exposed(x: float) -> NDArray[np.float64]:
        at = np.full(rows.tp.shape, x)
        return floors._exposed_reduction_floor_s(s.physics, levels, rows, False, at)

    passes = [exposed(x) for x in (0.0, 1e-3, 1e-2, 1e-1, 1.0, np.inf)]
    assert np.allclose(passes[0], np.maximum(whole, buckets), rtol=1e-12)
    assert np.array_equal(passes[-1], buckets)
    for before, after in itertools.pairwise(passes):
        assert np.all(after <= before)
    assert np.any(passes[0] > 2.0 * buckets)


def test_layout_step_floors_share_their_rows_across_networks() -> None:
    """The layout floors of a cluster size on several networks read one network-free row set
    (`floors.FloorRows`) and equal those computed from empty caches, bit for bit."""
    s, shape = _realistic(["scaling=sparse"], 30720)
    shape = grid_shape(s.physics, shape)
    nets = [
        physics_hardware(dataclasses.replace(s.hardware, net_latency_s=(lat, lat)), s.physics)
        for lat in (2.5e-7, 1e-6, 4e-6)
    ]
    n_gpu = shape.sparsity * 2**12
    cold = []
    for hw in nets:
        caches.clear_caches()
        cold.append(layout_step_floors_s(hw, s.physics, s.options, shape, n_gpu))
    caches.clear_caches()
    for hw, alone in zip(nets, cold, strict=True):
        warm = layout_step_floors_s(hw, s.physics, s.options, shape, n_gpu)
        assert warm is not None
        assert alone is not None
        assert np.array_equal(warm, alone)
    info = floors._floor_rows.cache_info()
    assert (info.misses, info.hits) == (1, 2)


def _hbm_variants(s: Scenario, bandwidths: tuple[float, ...]) -> list[HardwareSpec]:
    """The scenario's GPU at each HBM bandwidth (bytes/s) with 80 and 192 GiB, its network at
    the physics' achieved fraction (`physics_hardware`)."""
    return [
        physics_hardware(
            dataclasses.replace(s.hardware, hbm_bandwidth_bytes_per_s=bw, hbm_bytes=gb * 2**30),
            s.physics,
        )
        for bw in bandwidths
        for gb in (80.0, 192.0)
    ]


@pytest.mark.parametrize("over", [["scaling=sparse"], ["physics.precision=fp8"]])
def test_layout_step_floors_are_shared_by_gpus_that_differ_in_hbm(over: list[str]) -> None:
    """GPUs that differ only in HBM bandwidth and capacity compute a cluster size's layout
    floors once, and the floors kept equal each GPU's own computed without the cache, bit for
    bit."""
    s, shape = _realistic(over, 30720)
    shape = grid_shape(s.physics, shape)
    gpus = _hbm_variants(s, (2e12, 3.35e12, 8e12))
    n_gpu = shape.sparsity * 2**12
    caches.clear_caches()
    for hw in gpus:
        kept = layout_step_floors_s(hw, s.physics, s.options, shape, n_gpu)
        own = floors._layout_step_floors_s(hw, s.physics, s.options, shape, n_gpu)
        assert kept is not None
        assert own is not None
        assert np.array_equal(kept, own)
    info = floors._layout_floors.cache_info()
    assert (info.misses, info.hits) == (1, len(gpus) - 1)


def _points_alone_then_warm(
    s: Scenario, shape: ModelShape, gpus: list[HardwareSpec]
) -> list[PointResult]:
    """Each GPU's point from empty caches; then, the caches emptied once, every GPU's point in
    turn, each checked equal to its own from empty caches (bit for bit)."""
    alone = []
    for hw in gpus:
        caches.clear_caches()
        alone.append(smallest_cluster(hw, shape, s.duration_s, s.options, physics=s.physics))
    caches.clear_caches()
    warm = [smallest_cluster(hw, shape, s.duration_s, s.options, physics=s.physics) for hw in gpus]
    assert warm == alone
    return alone


@pytest.mark.parametrize(
    ("scaling", "d_model", "shared"),
    [("dense", 16384, False), ("sparse", 12288, True), ("sparse", 22528, True)],
)
def test_kept_choices_are_shared_by_gpus_that_differ_in_hbm_capacity(
    scaling: str, d_model: int, shared: bool
) -> None:
    """GPUs that differ only in HBM capacity share a cluster size's realistic choice where they
    keep the same rows under the same modes (`search._kept_choices`), and each GPU's point
    equals its own computed from empty caches, bit for bit. In the first case no size keeps the
    same rows under the same modes on two of these GPUs (some keep the same rows under
    different modes), so none is shared."""
    s, shape = _realistic([f"scaling={scaling}"], d_model)
    gpus = [
        dataclasses.replace(s.hardware, hbm_bytes=gb * 2**30) for gb in (80.0, 141.0, 192.0, 288.0)
    ]
    alone = _points_alone_then_warm(s, shape, gpus)
    assert all(p.feasible for p in alone)
    assert (search._kept_choices.cache_info().hits > 0) == shared


@pytest.mark.parametrize("scaling", ["dense", "sparse"])
def test_kept_frames_are_shared_by_gpus_that_differ_only_in_hbm(scaling: str) -> None:
    """GPUs on one network that differ in HBM bandwidth and capacity share what the candidates
    of a cluster size's kept rows read of the network (`kept._kept_frames`), GPUs on two
    networks do not, and each GPU's point equals its own computed from empty caches, bit for
    bit (a frame shared across networks would give the second network the first one's
    collectives)."""
    s, shape = _realistic([f"scaling={scaling}"], 16384)
    slow = dataclasses.replace(
        s.hardware,
        net_bandwidth_bytes_per_s=tuple(b / 4 for b in s.hardware.net_bandwidth_bytes_per_s),
    )
    gpus = [
        dataclasses.replace(net, hbm_bandwidth_bytes_per_s=bw, hbm_bytes=gb * 2**30)
        for net in (s.hardware, slow)
        for bw, gb in ((2e12, 80.0), (3.35e12, 80.0), (8e12, 192.0))
    ]
    alone = _points_alone_then_warm(s, shape, gpus)
    assert all(p.feasible for p in alone)
    assert alone[0].layout != alone[3].layout or alone[0].cost != alone[3].cost
    assert kept._kept_frames.cache_info().hits > 0
    assert kept._kept_step_inputs.cache_info().hits > 0


@pytest.mark.parametrize("over", [["scaling=sparse"], ["physics.nic_striping=false"]])
def test_tensor_parallel_floor_terms_are_shared_by_gpus_that_differ_in_hbm(
    over: list[str],
) -> None:
    """GPUs that differ only in HBM bandwidth and capacity compute the tensor-parallel floor's
    terms once per cover (they read only the network), and each GPU's floor equals the one
    computed from terms of its own, bit for bit."""
    s, shape = _realistic(over, 30720)
    shape = grid_shape(s.physics, shape)
    gpus = _hbm_variants(s, (2e12, 8e12))
    n_gpu = next(  # the first cluster whose floor reads the terms (more GPUs than ranks)
        shape.sparsity * 2**i
        for i in range(40)
        if tensor_parallel_floor_s(gpus[0], s.physics, s.options, shape, shape.sparsity * 2**i)
    )
    floors_s = []
    for fresh in (False, True):
        caches.clear_caches()
        for hw in gpus:
            if fresh:
                caches.clear_caches()
            floors_s.append(tensor_parallel_floor_s(hw, s.physics, s.options, shape, n_gpu))
        if not fresh:
            assert floors._tensor_parallel_terms.cache_info().misses == 1
    assert floors_s[0] > 0.0
    assert floors_s[: len(gpus)] == floors_s[len(gpus) :]


@pytest.mark.parametrize(("over", "widths"), REALISTIC_CASES)
def test_realistic_comm_of_rows_equals_the_candidates_own(
    over: list[str], widths: tuple[int]
) -> None:
    """The pruned walk's collectives of a cluster size's rows, kept per network and taken per
    candidate under its recomputation mode (`realistic_comm`), give every candidate's step
    exactly as computed on the candidates alone (docs/model.md §9.2)."""
    for s, shape, hw, n_gpu, c in _walked_clusters(over, widths):
        assert c.rows is not None
        assert c.recompute is not None
        rows = realistic_comm(hw, s.physics, s.options, shape, n_gpu, 0)
        assert rows is not None
        kept = realistic_steps(
            hw, s.physics, shape, n_gpu, c, s.options, rows.rows(c.rows, c.recompute)
        )
        own = realistic_steps(hw, s.physics, shape, n_gpu, c, s.options)
        for field in StepParts.__slots__:
            a, b = getattr(kept.parts, field), getattr(own.parts, field)
            assert (a is None and b is None) or np.array_equal(a, b), field
        assert np.array_equal(kept.t_train_s, own.t_train_s)
