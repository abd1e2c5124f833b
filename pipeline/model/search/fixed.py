"""A fixed layout (parallelism=fixed) evaluated as is at one model size, under either physics
(spec §16.4; docs/model.md §7, "Fixed layouts", and R.7).

Its rules live here: whether the layout fits the model (`layout_misfit`), the schedule it
runs (interleaving and nanobatch as the search would set them), the memory check, and the
duration. Under the paper's physics it is Part I's step of the layout. Under realistic
physics it is a search of one candidate: the candidate's layer time, recomputation mode,
optimizer step and per-GPU memory come from the grid's realistic candidates
(`search.candidates`), its collectives and step from `search.realistic` (the run of its
layout: the totals of its degrees, ranks in Megatron-Core's order, not its per-level factors).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from pipeline.model.memory.aggregate import memory_required_bytes
from pipeline.model.records.hardware import HardwareSpec
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.results import InfeasibleReason, Layout, PointResult
from pipeline.model.records.scaling import ModelShape
from pipeline.model.records.switches import PAPER, RECOMPUTE_ORDER, Physics, recompute_modes
from pipeline.model.search.candidates import (
    Candidates,
    _realistic_candidates,
    _with_step_inputs,
)
from pipeline.model.search.counts import grid_cost, grid_counts, grid_shape
from pipeline.model.search.enumeration import RowRules
from pipeline.model.search.realistic import realistic_step_cost, realistic_steps
from pipeline.model.search.search import physics_hardware
from pipeline.model.step.evaluate import evaluate_layout
from pipeline.model.step.schedule import interleave_degrees, nanobatch_tokens

DEGREES = ("dp", "tp_model", "tp_ff", "pp", "ep")
"""The five parallel degrees of a layout, in the spec's order (spec §5.1)."""


@dataclass(frozen=True, slots=True)
class Misfit:
    """Why a fixed layout cannot run a model: the layout key at fault, its value, the rule."""

    key: str
    value: object
    rule: str


def layout_misfit(
    layout: Layout,
    shape: ModelShape,
    whole_sequences: bool = False,
    expert_sequences: bool = False,
    few_microbatches: bool = False,
    whole_heads: bool = False,
) -> Misfit | None:
    """Why a fixed layout cannot run this model, or None if it can (spec §5.1, §7, §10).

    N_TPm must divide d_model, N_TPff d_ff, N_PP the layer count and N_EP the expert count;
    the schedule needs enough microbatches (m ≥ N_PP for 1F1B, m ≥ 2 · N_PP for zero-bubble;
    any m ≥ 1 for 1F1B with `few_microbatches`, which runs m < N_PP plain, as the search's
    enumeration allows: docs/model.md R.7);
    the nanobatch ⌊B_tok / (N_DP · m · S)⌋ must hold a token; with whole-sequence
    microbatches (`whole_sequences`) N_DP · m must divide the batch's sequences (spec Q3), and
    N_DP · N_EP · m with `expert_sequences` (realistic physics: every GPU holds whole
    sequences), as the search's enumeration requires (docs/model.md R.7,
    `search.enumeration.RowRules`); with `whole_heads` (attention modelled) N_TPff must divide
    the model's K/V heads (`RowRules.head_unit`), as the search's does.
    """
    degree = {name: math.prod(getattr(layout, name)) for name in DEGREES}
    divides = (
        ("tp_model", "d_model", shape.d_model),
        ("tp_ff", "d_ff", shape.d_ff),
        ("pp", "n_layers", shape.n_layers),
        ("ep", "sparsity (experts per layer)", shape.sparsity),
    )
    for name, quantity, size in divides:
        if size % degree[name]:
            rule = f"product {degree[name]} must divide the model's {quantity} = {size}"
            return Misfit(name, list(getattr(layout, name)), rule)
    heads = RowRules(whole_heads=whole_heads).head_unit(shape)
    if heads and heads % degree["tp_ff"]:
        rule = (
            f"product {degree['tp_ff']} must divide the model's {heads} K/V heads"
            " (each rank holds whole heads)"
        )
        return Misfit("tp_ff", list(layout.tp_ff), rule)
    needed = 2 * degree["pp"] if layout.zero_bubble else 1 if few_microbatches else degree["pp"]
    if layout.microbatches < needed:
        schedule = "zero-bubble needs m >= 2·N_PP" if layout.zero_bubble else "1F1B needs m >= N_PP"
        return Misfit("microbatches", layout.microbatches, f"{schedule} = {needed}")
    per_replica = degree["dp"] * layout.microbatches * shape.sparsity
    if nanobatch_tokens(shape.batch_tokens, degree["dp"], layout.microbatches, shape.sparsity) < 1:
        rule = (
            f"leaves no token per nanobatch: B_tok = {shape.batch_tokens} < "
            f"N_DP · m · S = {per_replica}"
        )
        return Misfit("microbatches", layout.microbatches, rule)
    ranks = degree["ep"] if expert_sequences else 1
    split = degree["dp"] * ranks * layout.microbatches
    if whole_sequences and shape.batch_seqs % split:
        product = "N_DP · N_EP · m" if expert_sequences else "N_DP · m"
        rule = (
            f"whole-sequence microbatches need {product} = {split} to divide the batch's "
            f"{shape.batch_seqs} sequences"
        )
        return Misfit("microbatches", layout.microbatches, rule)
    return None


def physics_misfit(layout: Layout, shape: ModelShape, physics: Physics) -> Misfit | None:
    """`layout_misfit` under the rules `physics` sets: whole sequences (`whole_sequences`),
    every GPU's own under realistic physics (R.7), whole heads on every rank (with
    `attention`), and plain 1F1B below the stages (`few_microbatches`). What `fixed_point`
    checks, and what a run's summary names when a size was `layout_does_not_divide`."""
    return layout_misfit(
        layout,
        shape,
        physics.whole_sequences,
        not physics.is_paper,
        physics.few_microbatches,
        physics.attention,
    )


def scheduled_layout(layout: Layout, shape: ModelShape, opts: SearchOptions) -> Layout:
    """The layout with the interleave v and nanobatch b the search would give it: v = L/N_PP
    for interleaved 1F1B (N_PP > 1, m ≥ N_PP), else 1 (`step.schedule.interleave_degrees`);
    b = ⌊B_tok / (N_DP · m · S)⌋ (spec §5.1, §7)."""
    pp = math.prod(layout.pp)
    dp = math.prod(layout.dp)
    v = interleave_degrees(
        np.array([pp]),
        np.array([layout.zero_bubble]),
        opts.interleaving,
        shape.n_layers,
        np.array([layout.microbatches]),
    )
    return dataclasses.replace(
        layout,
        pp_interleave=int(v[0]),
        nanobatch_tokens=nanobatch_tokens(
            shape.batch_tokens, dp, layout.microbatches, shape.sparsity
        ),
    )


def fixed_point(
    hw: HardwareSpec,
    shape: ModelShape,
    layout: Layout,
    opts: SearchOptions,
    duration_s: float,
    physics: Physics = PAPER,
) -> PointResult:
    """A fixed layout evaluated as is on one model; infeasible rows say why.

    A layout that does not fit the model is infeasible (`layout_does_not_divide`) with no
    cost. Otherwise the cost is kept even when infeasible over the cluster's memory (the
    paper's check, `exceeds_memory`), one GPU's memory at every recomputation mode it may use
    (realistic `gpu_memory`, `exceeds_gpu_memory`: costed at the mode needing the least
    memory) or the duration, so a row shows how far over budget the layout is.
    """
    if physics_misfit(layout, shape, physics) is not None:
        return _infeasible(shape, InfeasibleReason.LAYOUT_DOES_NOT_DIVIDE, None, physics)
    concrete = scheduled_layout(layout, shape, opts)
    if physics.is_paper:
        return _paper_point(hw, shape, concrete, opts, duration_s)
    return _realistic_point(hw, grid_shape(physics, shape), concrete, opts, duration_s, physics)


def _infeasible(
    shape: ModelShape, reason: InfeasibleReason, layout: Layout | None, physics: Physics
) -> PointResult:
    counts = None if physics.is_paper else grid_counts(physics, shape)
    return PointResult(shape, False, reason, layout, None, physics=physics.name, counts=counts)


def _paper_point(
    hw: HardwareSpec, shape: ModelShape, layout: Layout, opts: SearchOptions, duration_s: float
) -> PointResult:
    """Part I's step of the layout, the cluster-wide memory check, the duration (spec §16.4)."""
    cost = evaluate_layout(hw, shape, layout, opts)
    one = np.ones(1)
    need = memory_required_bytes(
        shape,
        one * math.prod(layout.dp),
        one * math.prod(layout.pp),
        one * layout.nanobatch_tokens,
        np.array([layout.zero_bubble]),
        opts,
    )
    reason = None
    if opts.memory_check and float(need[0]) > layout.n_gpu * hw.hbm_bytes:
        reason = InfeasibleReason.EXCEEDS_MEMORY
    elif not cost.training_time_s < duration_s:
        reason = InfeasibleReason.EXCEEDS_DURATION
    return PointResult(shape, reason is None, reason, layout, cost)


def _realistic_point(
    hw: HardwareSpec,
    shape: ModelShape,
    layout: Layout,
    opts: SearchOptions,
    duration_s: float,
    physics: Physics,
) -> PointResult:
    """The layout as the one candidate of a realistic search, timed as the run of its
    layout (`search.realistic`): its degrees' totals, its ranks in Megatron-Core's order."""
    hw = physics_hardware(hw, physics)
    degrees = [math.prod(getattr(layout, d)) for d in DEGREES]
    row = [*degrees, layout.microbatches, int(layout.zero_bubble), layout.nanobatch_tokens]
    table = np.array([row], dtype=np.int64)
    # the layout has no c, and its TP group lies where its degrees put it: `tp_in_domain`
    # restricts the search's choice, not a given layout (past the domain at the network's cost)
    one_candidate = dataclasses.replace(physics, max_context_parallel=1, tp_in_domain=False)
    found = _realistic_candidates(hw, shape, layout.n_gpu, (table, None), opts, one_candidate)
    reason = None
    if not isinstance(found, Candidates):  # over memory: costed all the same, at the mode
        # that needs the least of it, without the check
        reason = (
            InfeasibleReason.EXCEEDS_MEMORY
            if found is None
            else InfeasibleReason.EXCEEDS_GPU_MEMORY
        )
        unchecked = dataclasses.replace(
            one_candidate, gpu_memory=False, recompute=recompute_modes(physics)[-1]
        )
        no_check = dataclasses.replace(opts, memory_check=False)
        found = _realistic_candidates(hw, shape, layout.n_gpu, (table, None), no_check, unchecked)
        if not isinstance(found, Candidates):
            return _infeasible(shape, reason, layout, physics)
    c = _with_step_inputs(found, opts, shape)
    steps = realistic_steps(hw, physics, shape, layout.n_gpu, c, opts)
    cost = realistic_step_cost(hw, physics, shape, layout, steps, 0)
    used = grid_cost(hw, physics, shape, c, 0, layout.n_gpu, cost.step_time_s)
    cost = dataclasses.replace(cost, utilization=used.mfu)  # on the FLOP the row counts
    mode = None if c.recompute is None else RECOMPUTE_ORDER[int(c.recompute[0])].value
    if reason is None and not cost.training_time_s < duration_s:
        reason = InfeasibleReason.EXCEEDS_DURATION
    return PointResult(
        shape,
        reason is None,
        reason,
        layout,
        cost,
        recompute=mode,
        physics=physics.name,
        counts=grid_counts(physics, shape),
        grid_cost=used,
    )
