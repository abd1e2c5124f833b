"""A grid candidate and the concrete run of the same model and layout cost the same: both go
through one implementation of each quantity (docs/model.md R.7, "One implementation")."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from pipeline.model.records.options import SearchOptions
from pipeline.model.records.run import RunLayout, RunSpec
from pipeline.model.records.scaling import ModelShape, ScalingLaws, model_shape
from pipeline.model.records.switches import RECOMPUTE_ORDER, Physics, TensorParallel
from pipeline.model.records.transformer import TransformerShape
from pipeline.model.runs.run_point import run_counts
from pipeline.model.runs.training_run import RunCosts, RunLayouts, evaluate_run, run_costs
from pipeline.model.search.candidates import Candidates, enumerate_candidates
from pipeline.model.search.counts import grid_cost, grid_counts, grid_shape
from pipeline.model.search.fixed import fixed_point
from pipeline.model.search.grid import GRID_HEAD_DIM, grid_memory_by_mode_bytes
from pipeline.model.search.realistic import realistic_steps
from pipeline.model.search.search import network_physics, optimal_layout
from pipeline.schema import compose_config, load_scenario
from tests.presets import preset

N_GPU = 64
SCHEDULES = [
    SearchOptions(overlap_tp=False, overlap_pp_ep=False, overlap_dp=False),
    SearchOptions(overlap_tp=False, overlap_pp_ep=True, overlap_dp=True),
]
"""Grid options a run can match: no TP overlap (a run has none); asynchronous sends and an
overlapped gradient all-reduce as a run's `overlap_p2p` and `overlap_dp`, or neither."""


def realistic(**changes: object) -> Physics:
    """The shipped realistic physics with `changes`."""
    physics = load_scenario(compose_config(["physics=realistic"])).physics
    return dataclasses.replace(physics, **changes)  # type: ignore[arg-type]


def grid_model() -> ModelShape:
    """A dense model of the paper's grid small enough for 64 GPUs."""
    return model_shape(6144, ScalingLaws(), SearchOptions().quirks)


def run_model(shape: ModelShape) -> TransformerShape:
    """The grid model as a run: d_head = 128, as many K/V heads, GeLU, no vocabulary."""
    heads = shape.d_model // GRID_HEAD_DIM
    return TransformerShape(
        shape.n_layers, shape.d_model, shape.d_ff, heads, heads, 0, shape.seq_len
    )


def one_d_rows(c: Candidates) -> np.ndarray:
    """Candidates a Megatron run can express: 1-D tensor parallelism, 1F1B, no experts."""
    _, tpm, _, _, ep = c.degrees.T
    return np.flatnonzero((tpm == 1) & (ep == 1) & ~c.zero_bubble)


def matched_run(c: Candidates, row: int, shape: ModelShape, physics: Physics) -> RunCosts:
    """The run with candidate `row`'s layout and recomputation mode, evaluated as a run."""
    return scheduled_run(c, row, shape, physics, SCHEDULES[0])


def grid_rows(physics: Physics) -> tuple[Candidates, np.ndarray]:
    """The grid's candidates at 64 GPUs and those a run can express."""
    c = enumerate_candidates(preset("h100_sxm"), grid_model(), N_GPU, SearchOptions(), physics)
    assert isinstance(c, Candidates)
    rows = one_d_rows(c)
    assert rows.size > 0
    return c, rows


@pytest.mark.parametrize("ops", [False, True])
def test_parity_layer_time_without_tensor_parallelism(ops: bool) -> None:
    """On one tensor-parallel rank a candidate's layer time equals the matched run's, exactly,
    with and without memory-bound operators."""
    physics = realistic(memory_bound_ops=ops)
    c, rows = grid_rows(physics)
    rows = rows[c.degrees[rows, 2] == 1]
    assert rows.size > 0
    for row in rows:
        run = matched_run(c, int(row), grid_model(), physics)
        assert run.t_layer_s[0] == c.t_layer_s[row]


def test_parity_layer_time_with_tensor_parallelism_without_operators() -> None:
    """With t > 1 and no memory-bound operators the layer times are equal, exactly."""
    physics = realistic(memory_bound_ops=False)
    c, rows = grid_rows(physics)
    rows = rows[c.degrees[rows, 2] > 1]
    assert rows.size > 0
    for row in rows:
        assert matched_run(c, int(row), grid_model(), physics).t_layer_s[0] == c.t_layer_s[row]


def test_parity_layer_time_with_tensor_parallelism_and_operators() -> None:
    """With t > 1 and memory-bound operators the layer times are equal, exactly."""
    physics = realistic()
    c, rows = grid_rows(physics)
    rows = rows[c.degrees[rows, 2] > 1]
    assert rows.size > 0
    for row in rows:
        assert matched_run(c, int(row), grid_model(), physics).t_layer_s[0] == c.t_layer_s[row]


def test_parity_memory_and_optimizer_step() -> None:
    """A candidate's bytes per GPU under its chosen mode and its optimizer step equal the
    matched run's, exactly (ZeRO state, activations, microbatches in flight)."""
    physics = realistic()
    shape = grid_model()
    c, rows = grid_rows(physics)
    assert c.recompute is not None
    assert c.t_step_extra_s is not None
    for row in rows:
        run = matched_run(c, int(row), shape, physics)
        mode = RECOMPUTE_ORDER[int(c.recompute[row])]
        factors = tuple(c.degrees[row : row + 1, i].astype(float) for i in range(5))
        schedule = (
            c.microbatches[row : row + 1],
            c.interleave[row : row + 1],
            c.zero_bubble[row : row + 1],
        )
        nano = c.nanobatch[row : row + 1].astype(float)
        (grid_bytes,) = grid_memory_by_mode_bytes(physics, shape, factors, nano, schedule, (mode,))  # type: ignore[arg-type]
        assert run.memory_per_gpu_bytes[0] == grid_bytes[0]
        assert run.t_optimizer_s is not None
        assert run.t_optimizer_s[0] == c.t_step_extra_s[row]


def test_parity_counts_of_grid_and_run() -> None:
    """A realistic grid size counts the same parameters, tokens and training FLOP as the run
    of the same model and batch, exactly (`search.counts.grid_counts`, `runs.run_point.run_counts`)."""
    physics = realistic()
    shape = grid_model()
    layout = RunLayout(tp=1, pp=1, dp=N_GPU, microbatch_seqs=1)
    run = RunSpec("grid", run_model(shape), shape.batch_seqs, layout)
    assert grid_counts(physics, shape) == run_counts(physics, run, shape.tokens_per_param)


def test_parity_grid_cost_of_grid_and_run() -> None:
    """At the run's step time a candidate's MFU and HFU equal the matched run's, and its
    memory per GPU is the run's (the FLOP of both come from `compute.flop.flop_per_step`)."""
    physics = realistic()
    shape = grid_model()
    c, rows = grid_rows(physics)
    for row in rows:
        run = matched_run(c, int(row), shape, physics)
        used = grid_cost(
            preset("h100_sxm"), physics, shape, c, int(row), N_GPU, float(run.step_time_s[0])
        )
        assert used.mfu == pytest.approx(float(run.mfu[0]), rel=1e-12)
        assert used.hfu == pytest.approx(float(run.hfu[0]), rel=1e-12)
        assert used.memory_per_gpu_bytes == run.memory_per_gpu_bytes[0]


def scheduled_run(
    c: Candidates, row: int, shape: ModelShape, physics: Physics, opts: SearchOptions
) -> RunCosts:
    """The run of candidate `row` with the grid options' schedule choices as the run's."""
    layout = dataclasses.replace(
        run_layout_of(c, row, shape, physics),
        overlap_p2p=opts.overlap_pp_ep,
        overlap_dp=opts.overlap_dp,
    )
    rows = RunLayouts.of([layout])
    return run_costs(preset("h100_sxm"), physics, run_model(shape), shape.batch_seqs, rows)


@pytest.mark.parametrize("opts", SCHEDULES, ids=["exposed", "overlapped"])
def test_parity_step_time_of_every_matched_candidate(opts: SearchOptions) -> None:
    """Every candidate a run can express has the matched run's step time, bubble and TP, PP
    and DP communication per step, exactly (one network and step model, `search.realistic`)."""
    physics = realistic()
    shape = grid_shape(physics, grid_model())
    hw = network_physics(preset("h100_sxm"), physics)
    c = enumerate_candidates(hw, shape, N_GPU, opts, physics)
    assert isinstance(c, Candidates)
    steps = realistic_steps(hw, physics, shape, N_GPU, c, opts)
    rows = one_d_rows(c)
    rows = rows[steps.usable[rows]]  # `tp_in_domain` rejects the rest: no run to match
    assert rows.size > 0
    for row in rows:
        run = scheduled_run(c, int(row), shape, physics, opts)
        assert steps.t_step_s[row] == run.step_time_s[0]
        assert steps.bubble_fraction[row] == run.bubble_fraction[0]
        assert steps.t_tp_comm_s[row] == run.t_tp_comm_s[0]
        assert steps.t_pp_ep_comm_s[row] == run.t_pp_comm_s[0] + run.t_ep_comm_s[0]
        assert steps.t_dp_comm_s[row] == run.t_dp_comm_s[0]


def test_parity_step_time_through_the_entry_points() -> None:
    """The grid's search (`optimal_layout`) and a fixed layout (`fixed_point`) report for the
    layout they time the step time of the run of that layout (`evaluate_run`), exactly, and
    its MFU to rounding; the grid's 1-D layouts on one network level are runs' layouts."""
    physics = realistic(tensor_parallel=TensorParallel.ONE_D)
    opts = SearchOptions(overlap_tp=False, overlap_pp_ep=False, zero_bubble=False)
    hw = preset("h100_sxm")
    found = optimal_layout(hw, grid_model(), N_GPU, opts, physics=physics)
    assert found is not None
    layout, cost = found
    tp, pp, dp = (math.prod(getattr(layout, k)) for k in ("tp_ff", "pp", "dp"))
    assert math.prod(layout.tp_model) == 1
    shape = grid_shape(physics, grid_model())
    c = enumerate_candidates(network_physics(hw, physics), shape, N_GPU, opts, physics)
    assert isinstance(c, Candidates)
    row = int(
        np.flatnonzero(
            (c.degrees[:, 0] == dp)
            & (c.degrees[:, 2] == tp)
            & (c.degrees[:, 3] == pp)
            & (c.microbatches == layout.microbatches)
        )[0]
    )
    run = scheduled_run(c, row, shape, physics, opts)
    assert cost.step_time_s == run.step_time_s[0]
    assert cost.utilization == pytest.approx(float(run.mfu[0]), rel=1e-12)
    spec = RunSpec(
        "grid", run_model(shape), shape.batch_seqs, run_layout_of(c, row, shape, physics)
    )
    assert evaluate_run(hw, physics, spec).step_time_s == cost.step_time_s
    fixed = fixed_point(hw, grid_model(), layout, opts, math.inf, physics)
    assert fixed.cost is not None
    assert fixed.cost.step_time_s == cost.step_time_s


def run_layout_of(c: Candidates, row: int, shape: ModelShape, physics: Physics) -> RunLayout:
    """Candidate `row`'s layout as a run's (exposed sends and gradients)."""
    assert c.recompute is not None
    dp, _, tp, pp, _ = (int(v) for v in c.degrees[row])
    return RunLayout(
        tp=tp,
        pp=pp,
        dp=dp,
        microbatch_seqs=int(c.nanobatch[row]) // shape.seq_len,
        interleave=int(c.interleave[row]),
        sequence_parallel=tp > 1,
        recompute=RECOMPUTE_ORDER[int(c.recompute[row])],
        zero_stage=physics.zero_stage,
    )
