"""The walk computes the layout floors of several cluster sizes in one pass
(`floors.keep_layout_step_floors`, docs/model.md §9.4): each size's floors are its own, bit
for bit, so the walk decides as it would size by size, in fewer passes."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline.model import caches
from pipeline.model.records.scaling import model_shape
from pipeline.model.search import floors, search
from pipeline.model.search.counts import grid_shape
from pipeline.model.search.enumeration import realistic_layout_rows
from pipeline.model.search.floors import keep_layout_step_floors, layout_step_floors_s
from pipeline.model.search.search import domain_tp_unit, physics_hardware, sweep_series
from pipeline.schema import compose_config, load_scenario

CASES = [
    (["scaling=dense"], 22528),
    (["scaling=sparse"], 30720),
    (["scaling=dense", "physics.precision=fp8", "physics.tp_in_domain=false"], 26624),
    (["scaling=dense", "physics.max_context_parallel=1", "physics.whole_sequences=false"], 22528),
    (["scaling=dense", "physics.dp_overlap=false", "physics.few_microbatches=false"], 22528),
]


@pytest.mark.parametrize(("over", "d_model"), CASES)
def test_floors_kept_together_equal_each_sizes_own(over: list[str], d_model: int) -> None:
    """Node multiples around two doublings, one of them without a layout, kept in one pass:
    each size's floors (None where it has no row) equal those computed alone from empty
    caches, bit for bit, and are read back without being computed again."""
    s = load_scenario(compose_config(["physics=realistic", *over]))
    shape = grid_shape(s.physics, model_shape(d_model, s.laws, s.options.quirks))
    power = shape.sparsity * 2**14
    sizes = [power // 2 + k * power // 8 for k in range(1, 5)] + [2 * power]
    empty = next(
        n
        for n in range(power + 8, 2 * power, 8)
        if realistic_layout_rows(shape, n, s.options, s.physics) is None
    )
    _check_kept_together(over, d_model, [*sizes, empty])


def test_floors_kept_together_inside_and_past_a_node_equal_each_sizes_own() -> None:
    """Sizes of two GPUs to four nodes kept in one pass (`tp_in_domain` off: one N_TP unit for
    all), their pipeline sends exposed (`overlap_pp_ep` off), inside the node or across nodes
    with the size: each size's floors are its own."""
    over = ["scaling=dense", "physics.tp_in_domain=false", "parallelism.overlap_pp_ep=false"]
    _check_kept_together(over, 2048, [2, 4, 8, 16, 32])


def _check_kept_together(over: list[str], d_model: int, sizes: list[int]) -> None:
    """`keep_layout_step_floors` of `sizes` against each size's floors from empty caches."""
    s = load_scenario(compose_config(["physics=realistic", *over]))
    shape = grid_shape(s.physics, model_shape(d_model, s.laws, s.options.quirks))
    hw = physics_hardware(s.hardware, s.physics)
    units = {domain_tp_unit(hw, s.physics, n) for n in sizes}
    assert len(units) == 1  # past one node the unit is the same everywhere
    unit = units.pop()
    own = []
    for n in sizes:
        caches.clear_caches()
        own.append(layout_step_floors_s(hw, s.physics, s.options, shape, n, unit))
    assert sum(f is not None for f in own) >= 3
    caches.clear_caches()
    keep_layout_step_floors(hw, s.physics, s.options, shape, tuple(sizes), unit)
    for n, alone in zip(sizes, own, strict=True):
        kept = layout_step_floors_s(hw, s.physics, s.options, shape, n, unit)
        assert (kept is None) == (alone is None)
        if kept is not None and alone is not None:
            assert np.array_equal(kept, alone)
            assert not kept.flags.writeable
    info = floors._layout_floors.cache_info()
    assert (info.misses, info.hits) == (0, len(sizes))
    assert floors._floor_rows.cache_info().misses == 1


def test_the_walk_computes_the_floors_of_its_sizes_in_fewer_passes() -> None:
    """Along the H100 realistic sparse series' first sizes the walk reads the floors of more
    cluster sizes than it makes passes over rows (`_floor_rows` misses): refinement passes
    and runs of doublings share one."""
    s = load_scenario(compose_config(["physics=realistic", "scaling=sparse"]))
    caches.clear_caches()
    sweep_series(s.hardware, s.laws, (12288, 14336), s.duration_s, s.options, physics=s.physics)
    sizes = floors._layout_floors.cache_info().currsize
    passes = floors._floor_rows.cache_info().misses
    assert passes < sizes / 2


def test_a_first_doubling_without_a_refinement_below_shares_its_pass_with_the_next(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At d_model 22528 of the H100 realistic sparse series no node multiple below the first
    doubling whose floors the walk reads has a layout table, so that doubling does not train
    without the next one being read: the first pass holds both (docs/model.md §9.4)."""
    s = load_scenario(compose_config(["physics=realistic", "scaling=sparse"]))
    passes: list[tuple[int, ...]] = []

    def recorded(*args: object) -> None:
        passes.append(args[4])  # type: ignore[arg-type]
        keep_layout_step_floors(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(search, "keep_layout_step_floors", recorded)
    caches.clear_caches()
    sweep_series(s.hardware, s.laws, (22528,), s.duration_s, s.options, physics=s.physics)
    first = passes[0]
    assert len(first) == 2
    assert first[1] == 2 * first[0]
