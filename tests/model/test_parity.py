"""A grid candidate and the concrete run of the same model and layout cost the same: both go
through one implementation of each quantity (docs/model.md R.7, "One implementation")."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pipeline.model.records.options import SearchOptions
from pipeline.model.records.run import RunLayout, RunSpec
from pipeline.model.records.scaling import ModelShape, ScalingLaws, model_shape
from pipeline.model.records.switches import RECOMPUTE_ORDER, Physics
from pipeline.model.records.transformer import TransformerShape
from pipeline.model.runs.run_point import run_counts
from pipeline.model.runs.training_run import RunCosts, RunLayouts, run_costs
from pipeline.model.search.candidates import Candidates, enumerate_candidates
from pipeline.model.search.counts import grid_cost, grid_counts
from pipeline.model.search.grid import GRID_HEAD_DIM, grid_memory_by_mode_bytes
from pipeline.schema import compose_config, load_scenario
from tests.presets import preset

N_GPU = 64


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
    assert c.recompute is not None
    dp, _, tp, pp, _ = (int(v) for v in c.degrees[row])
    layout = RunLayout(
        tp=tp,
        pp=pp,
        dp=dp,
        microbatch_seqs=int(c.nanobatch[row]) // shape.seq_len,
        interleave=int(c.interleave[row]),
        sequence_parallel=tp > 1,
        recompute=RECOMPUTE_ORDER[int(c.recompute[row])],
        zero_stage=physics.zero_stage,
    )
    rows = RunLayouts.of([layout])
    return run_costs(preset("h100_sxm"), physics, run_model(shape), shape.batch_seqs, rows)


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
