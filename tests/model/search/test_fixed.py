"""Fixed layouts (parallelism=fixed) under either physics (pipeline/model/search/fixed.py)."""

from __future__ import annotations

import dataclasses
import math

from pipeline.execute.series import evaluate_series
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.results import InfeasibleReason
from pipeline.model.records.scaling import ScalingLaws, model_shape
from pipeline.model.search.counts import grid_counts
from pipeline.model.search.fixed import fixed_point, layout_misfit
from pipeline.model.search.search import optimal_layout
from pipeline.schema import compose_config, load_scenario
from tests.presets import preset

DURATION_S = 0.25 * 3.154e7


def test_fixed_layout_under_realistic_physics_is_not_the_papers() -> None:
    """`parallelism=fixed physics=realistic` evaluates the realistic model: its points name it
    and a size both cost is slower than under the paper's physics."""
    paper = evaluate_series(load_scenario(compose_config(["parallelism=fixed"]))).points
    real = evaluate_series(
        load_scenario(compose_config(["parallelism=fixed", "physics=realistic"]))
    ).points
    assert {p.physics for p in real} == {"realistic"}
    both = [
        (p.cost.step_time_s, r.cost.step_time_s)
        for p, r in zip(paper, real, strict=True)
        if p.cost is not None and r.cost is not None
    ]
    assert both
    assert all(r > p for p, r in both)


def test_fixed_realistic_layout_costs_what_the_search_found() -> None:
    """The layout the realistic search chose, evaluated as a fixed layout, costs the same
    training time and keeps the search's recomputation mode."""
    physics = load_scenario(compose_config(["physics=realistic"])).physics
    hw = preset("h100_sxm")
    shape = model_shape(12288, ScalingLaws(), SearchOptions().quirks)
    found = optimal_layout(hw, shape, 4096, SearchOptions(), physics=physics)
    assert found is not None
    layout, cost = found
    point = fixed_point(hw, shape, layout, SearchOptions(), DURATION_S, physics)
    assert point.cost is not None
    assert point.cost.training_time_s == cost.training_time_s


def test_fixed_realistic_point_counts_its_model_and_carries_the_choices() -> None:
    """The search's layout evaluated as a fixed layout under realistic physics counts the
    grid model's parameters, tokens and FLOP, has the search's utilization (its MFU) and
    carries MFU, HFU and memory per GPU."""
    physics = load_scenario(compose_config(["physics=realistic"])).physics
    hw = preset("h100_sxm")
    shape = model_shape(12288, ScalingLaws(), SearchOptions().quirks)
    found = optimal_layout(hw, shape, 4096, SearchOptions(), physics=physics)
    assert found is not None
    point = fixed_point(hw, shape, found[0], SearchOptions(), DURATION_S, physics)
    assert point.counts == grid_counts(physics, shape)
    assert point.cost is not None
    assert point.grid_cost is not None
    assert point.cost.utilization == found[1].utilization == point.grid_cost.mfu


def test_fixed_layout_misfit_names_the_key() -> None:
    """A pipeline degree that does not divide the layers is a misfit of `pp`, with no cost."""
    shape = model_shape(12288, ScalingLaws(), SearchOptions().quirks)
    scenario = load_scenario(compose_config(["parallelism=fixed"]))
    assert scenario.fixed_layout is not None
    bad = dataclasses.replace(scenario.fixed_layout, pp=(1, shape.n_layers + 1))
    misfit = layout_misfit(bad, shape)
    assert misfit is not None
    assert misfit.key == "pp"
    point = fixed_point(preset("h100_sxm"), shape, bad, SearchOptions(), DURATION_S)
    assert point.infeasible_reason is InfeasibleReason.LAYOUT_DOES_NOT_DIVIDE
    assert point.cost is None


def test_fixed_layout_whole_sequences_needs_the_split_to_divide_the_sequences() -> None:
    """With whole-sequence microbatches N_DP · m must divide the batch's sequences."""
    shape = model_shape(12288, ScalingLaws(), SearchOptions().quirks)
    scenario = load_scenario(compose_config(["parallelism=fixed"]))
    assert scenario.fixed_layout is not None
    layout = dataclasses.replace(scenario.fixed_layout, microbatches=shape.batch_seqs + 1)
    assert layout_misfit(layout, shape, whole_sequences=False) is None
    misfit = layout_misfit(layout, shape, whole_sequences=True)
    assert misfit is not None
    assert misfit.key == "microbatches"


def test_fixed_realistic_layout_needs_whole_sequences_on_every_expert_rank() -> None:
    """Under realistic physics a sparse model's N_EP expert ranks each hold their own whole
    sequences, so N_DP · N_EP · m must divide the batch's sequences (docs/model.md R.7): a
    layout whose N_DP · m divides them but leaves each expert rank part of a sequence is a
    misfit there, and not under the paper's flag (spec Q3)."""
    laws = load_scenario(compose_config(["scaling=sparse"])).laws
    shape = model_shape(16384, laws, SearchOptions().quirks)
    scenario = load_scenario(compose_config(["parallelism=fixed"]))
    assert scenario.fixed_layout is not None
    ep = shape.sparsity
    m = shape.batch_seqs // 2  # N_DP = 1: two sequences a microbatch over the ep ranks
    assert ep > 2
    assert shape.batch_seqs % m == 0
    layout = dataclasses.replace(
        scenario.fixed_layout,
        dp=(1, 1),
        ep=(1, ep),
        pp=(1, 1),
        microbatches=m,
    )
    assert layout_misfit(layout, shape, whole_sequences=True) is None
    misfit = layout_misfit(layout, shape, whole_sequences=True, expert_sequences=True)
    assert misfit is not None
    assert misfit.key == "microbatches"
    assert "N_DP · N_EP · m" in misfit.rule


def test_fixed_realistic_layout_runs_fewer_microbatches_than_stages() -> None:
    """With `physics.few_microbatches` (on in `physics=realistic`) a fixed 1F1B layout may run
    m < N_PP microbatches, plain (v = 1) at its bubble, as the search's enumeration allows
    (docs/model.md R.7); with the switch off it is a misfit, as under the paper's rule."""
    base = ["parallelism=fixed", "physics=realistic", "scaling.grid.max_d_model=12288"]
    layout = {
        "tp_model": "[1,1]",
        "tp_ff": "[8,1]",
        "pp": "[1,64]",
        "dp": "[1,4]",
        "microbatches": "32",
        "zero_bubble": "false",
    }
    overrides = [*base, *(f"parallelism.layout.{k}={v}" for k, v in layout.items())]
    few = load_scenario(compose_config(overrides))
    off = load_scenario(compose_config([*overrides, "physics.few_microbatches=false"]))
    assert few.fixed_layout is not None
    [point] = [p for p in evaluate_series(few).points if p.shape.d_model == 12288]
    assert point.layout is not None
    assert point.cost is not None
    assert point.infeasible_reason is not InfeasibleReason.LAYOUT_DOES_NOT_DIVIDE
    assert point.layout.pp_interleave == 1
    # the bubble is the step's idle share, a ratio of times: to rounding
    assert math.isclose(point.cost.bubble_fraction, (64 - 1) / (64 - 1 + 32), rel_tol=1e-12)
    [refused] = [p for p in evaluate_series(off).points if p.shape.d_model == 12288]
    assert refused.infeasible_reason is InfeasibleReason.LAYOUT_DOES_NOT_DIVIDE
    assert refused.cost is None


def test_fixed_realistic_layout_past_the_domain_is_timed() -> None:
    """Under `tp_in_domain` the shipped fixed layout (N_TP = 32 over 8-GPU nodes) is timed where
    its TP group lies, with a finite step and utilization above zero, and its TP communication
    is what it is with the rule off."""
    base = ["parallelism=fixed", "physics=realistic"]
    on = load_scenario(compose_config(base))
    off = load_scenario(compose_config([*base, "physics.tp_in_domain=false"]))
    assert on.physics.tp_in_domain
    assert on.fixed_layout is not None
    shape = model_shape(12288, on.laws, on.options.quirks)
    points = [
        fixed_point(s.hardware, shape, on.fixed_layout, s.options, s.duration_s, s.physics)
        for s in (on, off)
    ]
    costs = [p.cost for p in points]
    assert costs[0] is not None
    assert costs[1] is not None
    assert math.isfinite(costs[0].step_time_s)
    assert costs[0].utilization > 0.0
    assert costs[0].step_time_s == costs[1].step_time_s


def test_fixed_realistic_layout_needs_whole_heads_on_every_tensor_rank() -> None:
    """Under realistic physics N_TPff must divide the model's K/V heads, as the
    search's rows do (docs/model.md R.7): 16 tensor ranks over 8 K/V heads are a misfit of
    `tp_ff` there, and not under the paper's physics, whose model has no heads."""
    laws = load_scenario(compose_config(["physics=realistic"])).laws
    shape = model_shape(26624, laws, SearchOptions().quirks)
    scenario = load_scenario(compose_config(["parallelism=fixed"]))
    assert scenario.fixed_layout is not None
    layout = dataclasses.replace(
        scenario.fixed_layout, tp_model=(1, 1), tp_ff=(16, 1), dp=(1, 1), pp=(1, 1)
    )
    assert layout_misfit(layout, shape) is None
    misfit = layout_misfit(layout, shape, whole_heads=True)
    assert misfit is not None
    assert misfit.key == "tp_ff"
    assert "8 K/V heads" in misfit.rule
