"""Realistic physics on the scaling-law grid (docs/model.md, "Realistic physics", R.7)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.execute.series import evaluate_series
from pipeline.model import caches
from pipeline.model.compute.layer import LayerTimes, layer_matmul_time_s, layer_times_s
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.results import InfeasibleReason
from pipeline.model.records.scaling import ModelShape, ScalingLaws, model_shape
from pipeline.model.records.switches import Physics, Recompute, TensorParallel
from pipeline.model.search import grid
from pipeline.model.search.enumeration import (
    context_parallel_degrees,
    context_parallel_table,
    layout_table,
)
from pipeline.model.search.grid import (
    grid_layer_times_s,
    grid_layer_work,
    grid_memory_by_mode_bytes,
    sequence_parallel_degree,
)
from pipeline.model.search.search import optimal_layout, smallest_cluster
from pipeline.schema import compose_config, load_scenario
from pipeline.schema.errors import ConfigError
from tests.presets import preset

DURATION_S = 0.25 * 3.154e7
MEMORY = Physics(name="memory", gpu_memory=True, recompute=Recompute.AUTO, zero_stage=1)


def dense(d_model: int = 12288):
    """A dense model of the paper's grid."""
    return model_shape(d_model, ScalingLaws(), SearchOptions().quirks)


def test_grid_layer_time_with_switches_off_is_the_papers() -> None:
    """With every switch off and ideal efficiencies, a layer costs the paper's six matmuls."""
    hw = preset("h100_sxm")
    tpm, tpff, nano = np.array([1.0, 4.0]), np.array([2.0, 8.0]), np.array([64.0, 2048.0])
    shape = dense()
    ours = layer_times_s(hw, Physics(), grid_layer_work(Physics(), shape, tpm, tpff, nano))
    paper = layer_matmul_time_s(hw, shape.d_model // tpm, shape.d_ff // tpff, nano)
    np.testing.assert_allclose(ours.forward_s + ours.backward_s, paper, rtol=1e-12)


def test_grid_point_exceeding_gpu_memory_has_its_reason() -> None:
    """A GPU of 64 bytes holds no shard of a 12288-wide model at any cluster: exceeds_gpu_memory."""
    hw = dataclasses.replace(preset("h100_sxm"), hbm_bytes=64.0)
    point = smallest_cluster(hw, dense(), DURATION_S, SearchOptions(), physics=MEMORY)
    assert not point.feasible
    assert point.infeasible_reason is InfeasibleReason.EXCEEDS_GPU_MEMORY


@pytest.mark.parametrize("prune", [True, False])
def test_grid_point_whose_usable_layouts_never_fit_exceeds_gpu_memory(prune: bool) -> None:
    """With N_TP kept inside the node, a model whose only fitting layouts need N_TP > 8 is
    infeasible with exceeds_gpu_memory in the pruned and in the exhaustive walk alike."""
    hw = dataclasses.replace(preset("h100_sxm"), hbm_bytes=2e6)
    physics = dataclasses.replace(MEMORY, tp_in_domain=True)
    wide = optimal_layout(hw, dense(1024), 2**17, SearchOptions(), physics=MEMORY)
    assert wide is not None
    assert math.prod(wide[0].tp_model) * math.prod(wide[0].tp_ff) > 8  # fits across nodes only
    point = smallest_cluster(hw, dense(1024), 3e4, SearchOptions(), prune, physics)
    assert point.infeasible_reason is InfeasibleReason.EXCEEDS_GPU_MEMORY


def test_grid_point_records_its_recompute_mode() -> None:
    """A feasible grid point under per-GPU memory names the recomputation mode it chose."""
    point = smallest_cluster(
        preset("h100_sxm"), dense(), DURATION_S, SearchOptions(), physics=MEMORY
    )
    assert point.feasible
    assert point.recompute in {"none", "selective", "full"}


@settings(max_examples=8, deadline=None)
@given(st.sampled_from([12288, 16384, 24576]), st.floats(20e9, 80e9), st.floats(1.0, 4.0))
def test_more_hbm_never_makes_a_feasible_grid_point_infeasible(
    d_model: int, hbm: float, factor: float
) -> None:
    """If a size trains within the duration on some GPU memory, it does on more."""
    hw = dataclasses.replace(preset("h100_sxm"), hbm_bytes=hbm)
    small = smallest_cluster(hw, dense(d_model), DURATION_S, SearchOptions(), physics=MEMORY)
    big_hw = dataclasses.replace(hw, hbm_bytes=hbm * factor)
    big = smallest_cluster(big_hw, dense(d_model), DURATION_S, SearchOptions(), physics=MEMORY)
    assert big.feasible or not small.feasible


@pytest.mark.parametrize("n_gpu", [1024, 4096])
def test_recompute_auto_never_slower_than_none(n_gpu: int) -> None:
    """Choosing recomputation per layout only adds layouts that fit: the best time never grows."""
    hw = preset("h100_sxm")
    none = optimal_layout(
        hw,
        dense(),
        n_gpu,
        SearchOptions(),
        physics=dataclasses.replace(MEMORY, recompute=Recompute.NONE),
    )
    auto = optimal_layout(hw, dense(), n_gpu, SearchOptions(), physics=MEMORY)
    assert auto is not None
    assert none is None or auto[1].training_time_s <= none[1].training_time_s


def test_realistic_linear_end_is_measured_from_the_peak() -> None:
    """Under realistic physics the linear end lies at or after the size of best utilization."""
    scenario = load_scenario(compose_config(["physics=realistic", "physics.tensor_parallel=2d"]))
    out = evaluate_series(scenario)
    feasible = [p for p in out.points if p.feasible and p.cost is not None]
    peak = max(feasible, key=lambda p: p.cost.utilization if p.cost else 0.0)
    assert out.limits.linear_end_flop is not None
    assert out.limits.linear_end_flop >= peak.shape.training_flop


REALISTIC_GRID = Physics(
    name="tp",
    attention=True,
    memory_bound_ops=True,
    gpu_memory=True,
    recompute=Recompute.AUTO,
    zero_stage=1,
    whole_sequences=True,
)


@pytest.mark.parametrize(("d_model", "n_gpu"), [(12288, 1024), (24576, 16384), (49152, 131072)])
def test_tensor_parallel_both_never_slower_than_either_kind(d_model: int, n_gpu: int) -> None:
    """`both` holds every 2-D and every 1-D candidate, so its best step is at most either's."""
    hw, shape = preset("h100_sxm"), dense(d_model)
    times = {}
    for kind in TensorParallel:
        physics = dataclasses.replace(REALISTIC_GRID, tensor_parallel=kind)
        found = optimal_layout(hw, shape, n_gpu, SearchOptions(), physics=physics)
        times[kind] = np.inf if found is None else found[1].training_time_s
    assert np.isfinite(times[TensorParallel.BOTH])
    best_single = min(times[TensorParallel.ONE_D], times[TensorParallel.TWO_D])
    assert times[TensorParallel.BOTH] <= best_single * (1 + 1e-12)


def test_tensor_parallel_1d_layouts_have_no_model_dimension_split() -> None:
    """Under `tensor_parallel=1d` every matrix is split along d_ff only (N_TPm = 1)."""
    physics = dataclasses.replace(REALISTIC_GRID, tensor_parallel=TensorParallel.ONE_D)
    found = optimal_layout(
        preset("h100_sxm"), dense(24576), 16384, SearchOptions(), physics=physics
    )
    assert found is not None
    assert all(f == 1 for f in found[0].tp_model)


def test_tp_in_domain_keeps_tensor_parallelism_on_level_zero() -> None:
    """With `tp_in_domain` the chosen layout's TP factors above level 0 are 1 and N_TP ≤ 8."""
    hw = preset("h100_sxm")
    physics = dataclasses.replace(
        REALISTIC_GRID, tensor_parallel=TensorParallel.BOTH, tp_in_domain=True
    )
    found = optimal_layout(hw, dense(12288), 4096, SearchOptions(), physics=physics)
    assert found is not None
    layout = found[0]
    assert all(f == 1 for f in (*layout.tp_model[1:], *layout.tp_ff[1:]))
    assert layout.tp_model[0] * layout.tp_ff[0] <= hw.level_sizes[0]


def test_sequence_parallel_degree_follows_the_tensor_parallel_kind() -> None:
    """2-D splits norms over N_TPm; 1-D (N_TPm = 1) under `1d`/`both` over all N_TP (Korthikanti §4.2.2)."""
    tpm, tpff = np.array([1.0, 2.0]), np.array([8.0, 4.0])
    two_d = sequence_parallel_degree(REALISTIC_GRID, tpm, tpff)
    both = sequence_parallel_degree(
        dataclasses.replace(REALISTIC_GRID, tensor_parallel=TensorParallel.BOTH), tpm, tpff
    )
    np.testing.assert_array_equal(two_d, [1.0, 2.0])
    np.testing.assert_array_equal(both, [8.0, 2.0])


def test_context_parallel_table_starts_with_the_whole_sequence_layouts() -> None:
    """The context-parallel table's c = 1 rows are `layout_table`'s whole-sequence rows, in order."""
    shape, opts = dense(), SearchOptions()
    plain = layout_table(shape, 4096, opts, True, TensorParallel.BOTH)
    with_cp = context_parallel_table(shape, 4096, opts, TensorParallel.BOTH, 8)
    assert plain is not None
    assert with_cp is not None
    table, cp = with_cp
    np.testing.assert_array_equal(table[: len(plain)], plain)
    assert (cp[: len(plain)] == 1).all()
    assert set(cp[len(plain) :].tolist()) == {2, 4, 8}


def test_context_parallel_rows_split_tokens_over_dp_times_c() -> None:
    """A c > 1 row: N_DP = d·c, d (not d·c) divides the batch's sequences, nanobatch B_tok/(d·c·m)."""
    shape, opts = dense(), SearchOptions()
    with_cp = context_parallel_table(shape, 4096, opts, TensorParallel.BOTH, 8)
    assert with_cp is not None
    table, cp = with_cp
    dp, m, nano = table[:, 0], table[:, 5], table[:, 7]
    d = dp // cp
    assert (dp == d * cp).all()
    assert (shape.batch_seqs % d == 0).all()
    np.testing.assert_array_equal(nano, shape.batch_tokens // (dp * m))


def test_context_parallel_degrees_are_powers_of_two_dividing_the_sequence() -> None:
    """c = 2, 4, 8 up to the maximum, only those dividing the sequence length."""
    assert context_parallel_degrees(dense(), 8) == (2, 4, 8)
    assert context_parallel_degrees(dense(), 1) == ()
    odd = dataclasses.replace(dense(), seq_len=12)
    assert context_parallel_degrees(odd, 16) == (2, 4)


def test_context_parallel_is_never_slower_on_the_grid() -> None:
    """Allowing c ≤ 8 only adds candidates: the best layout is never slower than without it."""
    hw = preset("h100_sxm")
    physics = load_scenario(compose_config(["physics=realistic"])).physics
    with_cp = dataclasses.replace(physics, max_context_parallel=8)
    shape = dense(16384)
    base = optimal_layout(hw, shape, 2**16, physics=physics)
    more = optimal_layout(hw, shape, 2**16, physics=with_cp)
    assert base is not None
    assert more is not None
    assert more[1].step_time_s <= base[1].step_time_s * (1.0 + 1e-12)


def test_context_parallel_is_not_the_papers_physics() -> None:
    """A physics allowing c > 1 is not the paper's model (which has no context parallelism)."""
    assert not Physics(max_context_parallel=2).is_paper
    assert Physics(max_context_parallel=1).is_paper


def test_context_parallel_key_rejects_zero() -> None:
    """physics.max_context_parallel=0 is bad input, named by its key."""
    with pytest.raises(ConfigError, match=r"physics\.max_context_parallel"):
        load_scenario(compose_config(["physics.max_context_parallel=0"]))


def test_grid_memory_by_mode_tiny_layout() -> None:
    """d=4, f=16, L=2, one GPU, 8 tokens: 2·(2·4·16) params · 16 B = 4096 B of state; per layer
    34·8·4 B without recomputation, 2·8·4 B with full (Korthikanti et al. 2022 §4)."""
    shape = ModelShape(4, 16, 2, 1, 8, 1, 20.0)
    one = np.array([1.0])
    physics = Physics(gpu_memory=True)
    none, full = grid_memory_by_mode_bytes(
        preset("h100_sxm"),
        physics,
        shape,
        (one, one, one, one, one),
        np.array([8.0]),
        (one, one, np.array([False])),
        (Recompute.NONE, Recompute.FULL),
    )
    state = 2 * (2 * 4 * 16) * 16.0
    assert none[0] == state + 2 * 34 * 8 * 4
    assert full[0] == state + 2 * 2 * 8 * 4


@pytest.mark.parametrize("scaling", ["dense", "sparse"])
def test_realistic_matmul_floor_skips_no_feasible_cluster(
    scaling: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Starting the cluster walk at the realistic matmul rate's floor gives the same series as
    starting it at the paper's F_eff floor (the floor only skips clusters too slow anyway)."""
    from pipeline.model.records.hardware import effective_flop_per_s
    from pipeline.model.search import search

    scenario = load_scenario(compose_config(["physics=realistic", f"scaling={scaling}"]))
    fast = evaluate_series(scenario).points
    monkeypatch.setattr(search, "matmul_rate_flop_per_s", lambda hw, _: effective_flop_per_s(hw))
    caches.clear_caches()
    assert evaluate_series(scenario).points == fast


def test_ring_exchange_check_value() -> None:
    """c = 4 ranks of t = 2 with 512 tokens of d = 1024: 3 sends of 2·512·1024/2 words (2 B),
    3,145,728 B at 100/2 GB/s plus 3 hops of 1 µs (docs/model.md R.7)."""
    from pipeline.model.network.ring import ring_exchange_s

    one = np.ones(1)
    t = ring_exchange_s(512 * one, 1024.0, 2 * one, 4 * one, 100e9 * one, 1e-6 * one)
    assert t[0] == pytest.approx(3_145_728 / 50e9 + 3e-6, rel=1e-12)
    assert ring_exchange_s(512 * one, 1024.0, one, one, 100e9 * one, 1e-6 * one)[0] == 0.0


def test_ring_level_is_the_first_holding_the_group() -> None:
    """t·c GPUs within an 8-GPU domain stay on level 0; 16 of them cross to level 1."""
    from pipeline.model.network.levels import group_level

    tp, cp = np.array([8.0, 8.0, 2.0, 64.0]), np.array([1.0, 2.0, 4.0, 8.0])
    assert group_level((8, 32), tp * cp).tolist() == [0, 1, 0, 2]


def test_charging_the_ring_never_speeds_a_layout_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """With context parallelism on the grid, the best layout with the ring charged trains no
    faster at any cluster size than with a free ring, and the ring costs something somewhere."""
    from pipeline.model.network import groups, ring
    from pipeline.model.search import search

    over = ["physics=realistic", "physics.tp_in_domain=true", "physics.max_context_parallel=8"]
    scenario = load_scenario(compose_config(over))
    shape = model_shape(24576, scenario.laws)
    sizes = [2**k for k in range(12, 20)]

    def times() -> list[float]:
        caches.clear_caches()
        found = [
            search.optimal_layout(
                scenario.hardware, shape, n, scenario.options, physics=scenario.physics
            )
            for n in sizes
        ]
        return [f[1].training_time_s if f else np.inf for f in found]

    charged = times()
    monkeypatch.setattr(
        groups, "ring_exchange_s", lambda *a: np.zeros_like(ring.ring_exchange_s(*a))
    )
    free = times()
    assert all(c >= f for c, f in zip(charged, free, strict=True))
    assert charged != free


def test_realistic_preset_tries_context_parallelism_up_to_sixteen() -> None:
    """`physics=realistic` tries context parallelism always, c = 2 to 16 at a 2,048-token
    sequence, and `physics.max_context_parallel=1` gives the search without it."""
    from pipeline.model.search.enumeration import tries_context_parallel

    physics = load_scenario(compose_config(["physics=realistic"])).physics
    assert tries_context_parallel(physics)
    assert context_parallel_degrees(dense(), physics.max_context_parallel) == (2, 4, 8, 16)
    off = ["physics=realistic", "physics.max_context_parallel=1"]
    assert not tries_context_parallel(load_scenario(compose_config(off)).physics)


def test_grid_kv_width_follows_the_kv_head_rule() -> None:
    """8 K/V heads of d_head 128 are 1,024 wide at any width of 8 heads or more (1/16 of d =
    16,384), as many as heads keep d, and the default scaling preset gives 8."""
    from pipeline.model.search.grid import grid_kv_width

    assert grid_kv_width(model_shape(16384, ScalingLaws(kv_heads=8))) == 1024.0
    assert grid_kv_width(model_shape(16384, ScalingLaws())) == 16384.0
    assert grid_kv_width(model_shape(12288, ScalingLaws(kv_heads=1000))) == 12288.0
    assert load_scenario(compose_config([])).laws.kv_heads == 8
    assert load_scenario(compose_config(["scaling.kv_heads=null"])).laws.kv_heads is None


def test_grouped_query_attention_shrinks_the_ring_exchange() -> None:
    """The ring a context-parallel candidate pays past its attention core (`_with_ring`) is
    never more with 8 K/V heads than with as many as heads, on every layout both enumerate,
    and less in all: K and V are 1/16 as wide at d = 16,384."""
    from pipeline.model.search.candidates import Candidates, _with_ring, enumerate_candidates
    from pipeline.model.search.search import physics_hardware

    physics = load_scenario(compose_config(["physics=realistic"])).physics
    hw = physics_hardware(preset("h100_sxm"), physics)
    ring: list[dict[tuple[int, ...], float]] = []
    for kv_heads in (None, 8):
        shape = model_shape(16384, ScalingLaws(kv_heads=kv_heads))
        c = enumerate_candidates(hw, shape, 4096, SearchOptions(), physics)
        assert isinstance(c, Candidates)
        assert c.cp is not None
        extra = _with_ring(c, hw, shape).t_layer_s - c.t_layer_s
        layouts = np.column_stack(
            [c.degrees, c.microbatches, c.zero_bubble, c.nanobatch, c.cp]
        ).astype(np.int64)  # each candidate's layout: the 8 K/V heads enumerate fewer
        ring.append(dict(zip(map(tuple, layouts.tolist()), extra.tolist(), strict=True)))
    common = sorted(set(ring[0]) & set(ring[1]))
    mha, gqa = (np.array([r[k] for k in common]) for r in ring)
    assert (gqa <= mha).all()
    assert 0.0 < gqa.sum() < mha.sum() / 8


def test_realistic_preset_keeps_tensor_parallelism_one_d_inside_nvlink() -> None:
    """Every feasible point of the default realistic series has Megatron's 1-D tensor
    parallelism inside one 8-GPU NVLink domain; `tensor_parallel=both tp_in_domain=false` (the
    preset before) reaches 2-D layouts past it on the same series."""
    from pipeline.model.records.switches import TensorParallel as Kind

    physics = load_scenario(compose_config(["physics=realistic"])).physics
    assert (physics.tensor_parallel, physics.tp_in_domain) == (Kind.ONE_D, True)
    points = [
        p
        for p in evaluate_series(load_scenario(compose_config(["physics=realistic"]))).points
        if p.layout is not None
    ]
    assert points
    for p in points:
        assert all(f == 1 for f in (*p.layout.tp_model, *p.layout.tp_ff[1:]))
        assert p.layout.tp_ff[0] <= 8
    before = ["physics=realistic", "physics.tensor_parallel=both", "physics.tp_in_domain=false"]
    layouts = [p.layout for p in evaluate_series(load_scenario(compose_config(before))).points]
    assert any(lay is not None and max(lay.tp_model) > 1 for lay in layouts)


@pytest.mark.parametrize("striped", [False, True])
def test_cp_all_gather_exposes_the_whole_exchange(striped: bool) -> None:
    """With `cp_all_gather` a context-parallel candidate pays its whole K/V exchange (forward,
    its rerun and backward's two, `ring_exposed_s` with nothing to overlap): unstriped at least
    what ring attention pays past the core on every candidate, and more on some; with
    `nic_striping` less only where the group crosses nodes holding several ranks of each
    (t·c > 8, t <= 4), the all-gather being an NCCL ring striped over their NICs and ring
    attention's sends point to point (docs/model.md R.10)."""
    from pipeline.model.network.groups import Levels, ring_attention_exposed_s
    from pipeline.model.search.candidates import Candidates, _with_ring, enumerate_candidates
    from pipeline.model.search.grid import grid_kv_width
    from pipeline.model.search.search import physics_hardware

    realistic = load_scenario(compose_config(["physics=realistic"])).physics
    ring_physics = dataclasses.replace(realistic, nic_striping=striped)
    hw = physics_hardware(preset("h100_sxm"), ring_physics)
    shape = model_shape(16384, ScalingLaws(kv_heads=8))
    extra = []
    for physics in (ring_physics, dataclasses.replace(ring_physics, cp_all_gather=True)):
        c = enumerate_candidates(hw, shape, 4096, SearchOptions(), physics)
        assert isinstance(c, Candidates)
        extra.append(_with_ring(c, hw, shape).t_layer_s - c.t_layer_s)
    assert c.cp is not None
    assert c.recompute is not None
    tp = (c.degrees[:, 1] * c.degrees[:, 2]).astype(float)
    zero = np.zeros(tp.shape)
    whole = ring_attention_exposed_s(
        Levels.as_given(hw, striped),
        c.nanobatch.astype(float),
        grid_kv_width(shape),
        tp,
        c.cp.astype(float),
        zero,
        zero,
        c.recompute,
        all_gather=True,
    )
    np.testing.assert_allclose(extra[1], whole, rtol=1e-9, atol=1e-15)
    cheaper = extra[1] < extra[0] - 1e-15
    if striped:
        assert cheaper.any()
        assert ((tp * c.cp > 8) & (tp <= 4))[cheaper].all()
    else:
        assert not cheaper.any()
    assert (extra[1] > extra[0]).any()


def test_grid_layer_times_kept_per_shard_equal_the_layer_times_of_every_shard() -> None:
    """Shards timed in two calls, the second meeting some of the first's, get exactly the
    times of `layer_times_s` on all of them at once, field by field."""
    physics = load_scenario(compose_config(["physics=realistic"])).physics
    hw, shape = preset("h100_sxm"), dense()
    shards = np.array(
        [[1, 8, 2048, 1], [1, 4, 512, 1], [2, 4, 64, 1], [1, 8, 4096, 1], [1, 1, 8192, 1]]
    )
    caches.clear_caches()
    grid_layer_times_s(hw, physics, shape, shards[:3])
    got = grid_layer_times_s(hw, physics, shape, shards[::-1])
    _assert_layer_times_of_shards(got, hw, physics, shape, shards[::-1])


def _assert_layer_times_of_shards(
    got: LayerTimes, hw: HardwareSpec, physics: Physics, shape: ModelShape, shards: np.ndarray
) -> None:
    """`got` is `layer_times_s` of the grid rows of `shards` on `hw`, field by field, bit for
    bit."""
    f = shards.astype(np.float64)
    want = layer_times_s(hw, physics, grid_layer_work(physics, shape, *f.T))
    for field in ("matmul_forward_s", "matmul_backward_s", "attention_forward_s"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field))
    np.testing.assert_array_equal(got.attention_backward_s, want.attention_backward_s)
    for field in got.ops.__slots__:
        np.testing.assert_array_equal(getattr(got.ops, field), getattr(want.ops, field))


@pytest.mark.parametrize(
    "overrides",
    [
        (),
        ("physics.fusion=none",),
        ("physics.memory_bound_ops=false", "physics.gemm_waves=false"),
        ("physics.precision=fp8",),
        ("physics.attention=false",),
    ],
)
def test_grid_layer_times_from_shared_traffic_equal_each_gpus_own(
    overrides: tuple[str, ...],
) -> None:
    """GPUs that differ in HBM bandwidth share each shard's layer traffic (computed once, on the
    first GPU that met it) and time it at their own bandwidth: bit for bit the times of
    `layer_times_s` on each GPU alone, shards met before and new ones mixed. A GPU's new
    shards are timed in the same batch for the GPUs of its bandwidth met before (the first GPU
    holds all five after the second asks for them), each at its own bandwidth."""
    physics = load_scenario(compose_config(["physics=realistic", *overrides])).physics
    shape = dense()
    shards = np.array(
        [[1, 8, 2048, 1], [1, 4, 512, 1], [2, 4, 64, 1], [1, 8, 4096, 1], [1, 1, 8192, 1]]
    )
    base = preset("h100_sxm")
    gpus = [dataclasses.replace(base, hbm_bandwidth_bytes_per_s=b) for b in (2e12, 3.35e12, 13e12)]
    caches.clear_caches()
    got = [
        grid_layer_times_s(gpus[0], physics, shape, shards[:3]),
        grid_layer_times_s(gpus[1], physics, shape, shards[::-1]),
        grid_layer_times_s(gpus[2], physics, shape, shards[1:]),
    ]
    assert grid._shard_traffic.cache_info().misses == 1  # one traffic store for the three
    for hw, part, times in zip(gpus, (shards[:3], shards[::-1], shards[1:]), got, strict=True):
        _assert_layer_times_of_shards(times, hw, physics, shape, part)
    first = grid._shard_times(grid.timing_gpu(gpus[0]), physics, shape)
    assert len(first) == len(shards)  # the second GPU's two new shards, timed for it too
    again = grid_layer_times_s(gpus[0], physics, shape, shards)
    _assert_layer_times_of_shards(again, gpus[0], physics, shape, shards)


def test_scaling_dropout_key_reads_false_in_the_presets_and_checks_its_value() -> None:
    """The scaling presets train the grid's transformer without dropout (`scaling.dropout:
    false`, as PaLM, Nemotron-4 and Llama 3 pretrain); `true` gives GPT's layer, the grid
    before; anything but a boolean is refused, and a run keeps its own `run.dropout`."""
    from pipeline.schema.run import check_run_overrides

    assert load_scenario(compose_config([])).laws.dropout is False
    assert load_scenario(compose_config(["scaling=sparse"])).laws.dropout is False
    assert load_scenario(compose_config(["scaling.dropout=true"])).laws.dropout is True
    assert model_shape(16384, ScalingLaws(dropout=False)).dropout is False
    with pytest.raises(ConfigError, match=r"scaling\.dropout"):
        load_scenario(compose_config(["scaling.dropout=0.1"]))
    with pytest.raises(ConfigError, match=r"run\.dropout"):
        check_run_overrides("gpt_7p5b", ("scaling.dropout=true",))


@pytest.mark.parametrize("kv_heads", [None, 8])
def test_grid_layer_without_dropout_stores_no_masks_as_a_run_without(kv_heads: int | None) -> None:
    """A grid layer without dropout stores what a run's layer with `dropout: false` stores
    (`memory.gpu_memory.LayerShape` with dropout off: no 2h of masks per token, no mask or
    output of the scores' dropout), and with dropout what it stored before: a GPT layer
    (`LayerShape` None) under multi-head attention, the K/V width's layer with dropout under
    grouped-query attention."""
    from pipeline.model.memory.gpu_memory import LayerShape, activation_bytes_per_layer

    with_dropout = model_shape(16384, ScalingLaws(kv_heads=kv_heads, dropout=True))
    without = dataclasses.replace(with_dropout, dropout=False)
    kv = grid.grid_kv_width(with_dropout)
    assert grid._grid_layer_shape(without) == LayerShape(kv, 4.0 * 16384, 2, False)
    expected = None if kv_heads is None else LayerShape(kv, 4.0 * 16384, 2, True)
    assert grid._grid_layer_shape(with_dropout) == expected
    tokens, split = np.array([4096.0]), (np.array([8.0]), np.array([8.0]))
    args = (tokens, 16384.0, 128.0, 2048.0, split, Recompute.NONE, True)
    kept = activation_bytes_per_layer(*args, grid._grid_layer_shape(with_dropout))
    dropped = activation_bytes_per_layer(*args, grid._grid_layer_shape(without))
    masks = tokens * (2.0 * 16384 / 8.0 + 3.0 * 128 * 2048 / 8.0)  # 2h/sp and 3·a·s/t per token
    np.testing.assert_allclose(kept - dropped, masks, rtol=1e-12)


@pytest.mark.parametrize("fusion", ["none", "fused", "flash"])
def test_grid_layer_without_dropout_runs_no_dropout_kernel(fusion: str) -> None:
    """A grid row without dropout runs no dropout kernel and moves no mask byte
    (`memory_ops.layer_memory_ops`): eager, three kernels fewer; fused, the attention dropout
    gone and each bias+dropout+add one mask byte per element lighter each way; flash, the
    latter alone. A run's kernels follow its own `dropout` key the same way."""
    from pipeline.model.compute.layer import layer_traffic
    from pipeline.model.compute.memory_ops import MASK_BYTES
    from pipeline.model.runs.training_run import RunLayouts, run_layer_work

    physics = load_scenario(compose_config(["physics=realistic", f"physics.fusion={fusion}"]))
    hw = preset("h100_sxm")
    one = np.ones(1)
    traffic = {}
    for dropout in (True, False):
        shape = model_shape(16384, ScalingLaws(kv_heads=8, dropout=dropout))
        work = grid.grid_layer_work(physics.physics, shape, one, 8.0 * one, 4096.0 * one)
        assert work.dropout is dropout
        ops = layer_traffic(hw, physics.physics, work).ops
        assert ops is not None
        traffic[dropout] = ops
    kept, dropped = traffic[True], traffic[False]
    fewer = {"none": 3, "fused": 1, "flash": 0}[fusion]
    assert len(kept.kinds) - len(dropped.kinds) == fewer
    assert dropped.forward_bytes.sum() < kept.forward_bytes.sum()
    assert dropped.backward_bytes.sum() < kept.backward_bytes.sum()
    if fusion == "flash":  # the two bias+dropout+add kernels, on b·s·h/sp elements each
        hidden = 4096.0 * 16384 / 8.0
        saved = kept.forward_bytes.sum() - dropped.forward_bytes.sum()
        assert math.isclose(saved, 2 * MASK_BYTES * hidden, rel_tol=1e-12)
    run = load_scenario(compose_config(["run=llama3_405b_8k_8192"])).run
    assert run is not None
    assert run.shape.dropout is False  # a run without dropout runs no dropout kernel either
    assert run_layer_work(run.shape, RunLayouts.of([run.layout])).dropout is False
    gpt = load_scenario(compose_config(["run=gpt_1t"])).run
    assert gpt is not None
    assert run_layer_work(gpt.shape, RunLayouts.of([gpt.layout])).dropout is True
