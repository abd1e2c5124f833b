"""One concrete run as a point of the `points` table (pipeline/model/runs/run_point.py)."""

from __future__ import annotations

import dataclasses
import math

from pipeline.model.records.results import InfeasibleReason
from pipeline.model.records.run import RunLayout, RunSpec
from pipeline.model.records.switches import Physics
from pipeline.model.records.transformer import TransformerShape
from pipeline.model.runs.run_point import run_counts, run_point, run_shape, run_step_cost
from pipeline.model.runs.run_search import candidate_layouts
from pipeline.model.runs.training_run import evaluate_run
from pipeline.model.step.pipeline import bubble_time_s
from pipeline.schema import compose_config, load_scenario
from tests.presets import preset

SHAPE = TransformerShape(8, 2048, 8192, 16, 16, 51200, 2048)
RUN = RunSpec("r", SHAPE, 64, RunLayout(2, 2, 4, 2, sequence_parallel=True))


def realistic() -> Physics:
    """The shipped realistic physics."""
    return load_scenario(compose_config(["physics=realistic"])).physics


def test_run_point_training_time_is_its_steps_times_its_step() -> None:
    """The row's training time is D / B_tok steps of the run's step time."""
    cost = evaluate_run(preset("h100_sxm"), realistic(), RUN)
    shape = run_shape(RUN, 20.0)
    counts = run_counts(realistic(), RUN, 20.0)
    step = run_step_cost(cost, counts, shape)
    assert step.training_time_s == counts.n_tokens / shape.batch_tokens * cost.step_time_s
    assert step.step_time_s == cost.step_time_s


def test_run_point_over_one_gpus_memory_is_infeasible_with_its_cost() -> None:
    """A run whose bytes per GPU exceed its HBM is `exceeds_gpu_memory`, its cost kept."""
    small = dataclasses.replace(preset("h100_sxm"), hbm_bytes=1e9)
    point = run_point(small, realistic(), RUN, search=False, tokens_per_param=20.0)
    assert not point.feasible
    assert point.infeasible_reason is InfeasibleReason.EXCEEDS_GPU_MEMORY
    assert point.run_cost is not None
    assert point.run_cost.memory_per_gpu_bytes > 1e9


def test_run_point_fits_on_a_large_gpu() -> None:
    """The same run on the full 80 GB is feasible and names its recomputation mode."""
    point = run_point(preset("h100_sxm"), realistic(), RUN, search=False, tokens_per_param=20.0)
    assert point.feasible
    assert point.recompute == "none"


def test_run_with_fewer_microbatches_than_stages_pays_the_plain_bubble() -> None:
    """A run may give plain 1F1B fewer microbatches than stages, as Megatron-LM's
    non-interleaved schedule allows (docs/model.md R.7): its fill and drain do not shrink with
    m, so 32 microbatches over 64 stages idle most of the step, and 512 little of it."""
    scenario = load_scenario(
        compose_config(["run=gpt_1t", "physics=realistic", "run.global_batch_seqs=192"])
    )
    run = scenario.run
    assert run is not None
    microbatches = run.global_batch_seqs // (run.layout.dp * run.layout.microbatch_seqs)
    assert microbatches == 32 < run.layout.pp == 64
    few = evaluate_run(scenario.hardware, scenario.physics, run)
    full = evaluate_run(
        scenario.hardware, scenario.physics, dataclasses.replace(run, global_batch_seqs=3072)
    )
    assert few.bubble_fraction > 63 / (63 + 32) - 0.05
    assert full.bubble_fraction < 63 / (63 + 512) + 0.05
    assert full.mfu > 2 * few.mfu


def test_a_run_s_step_parts_add_up_to_its_step_on_uneven_stages() -> None:
    """The parts of a run's step are those of the stage its step times, on one GPU of the
    slowest pipeline stage (docs/schema.md, "Run and realistic physics"): 10 layers over 4 stages are 2, 3, 3, 2, and the
    last stage runs the logits. With a small vocabulary a 3-layer stage is the slowest and no
    logits are counted; with a large one the last stage is, its 2 layers and its logits. Either
    way compute, the collectives, the bubble and the optimizer add up to the step."""
    for vocab, logits_counted in ((1024, False), (2_000_000, True)):
        shape = dataclasses.replace(SHAPE, layers=10, vocab=vocab)
        run = RunSpec("r", shape, 64, RunLayout(2, 4, 2, 2, sequence_parallel=True))
        cost = evaluate_run(preset("h100_sxm"), realistic(), run)
        bubble = float(
            bubble_time_s(
                cost.bubble_fraction, cost.step_time_s, cost.t_dp_comm_s, cost.t_optimizer_s
            )
        )
        parts = (
            cost.t_compute_s,
            cost.t_tp_comm_s,
            cost.t_pp_comm_s,
            cost.t_ep_comm_s,
            cost.t_dp_comm_s,
            cost.t_optimizer_s or 0.0,
            bubble,
        )
        assert math.isclose(sum(parts), cost.step_time_s, rel_tol=1e-9), vocab
        no_logits = dataclasses.replace(run, shape=dataclasses.replace(shape, vocab=8))
        without = evaluate_run(preset("h100_sxm"), realistic(), no_logits)
        assert (cost.t_matmul_s > without.t_matmul_s) is logits_counted, vocab


def test_a_searched_run_that_fits_nowhere_keeps_the_closest_layout() -> None:
    """GPT 39.1B searched on at most 4 A100s: no layout fits one GPU's memory. The row is
    `exceeds_gpu_memory` with a layout and a cost, those of the layout needing the least
    memory per GPU, not null columns that would also read as "no layout evaluated"."""
    scenario = load_scenario(
        compose_config(
            [
                "run=gpt_39p1b",
                "hardware=a100_sxm_80gb",
                "physics=realistic",
                "run.layout_search=true",
                "+run.gpu_budget=4",
            ]
        )
    )
    run = scenario.run
    assert run is not None
    point = run_point(scenario.hardware, scenario.physics, run, search=True, tokens_per_param=20.0)
    assert point.infeasible_reason is InfeasibleReason.EXCEEDS_GPU_MEMORY
    assert point.layout is not None
    assert point.run_cost is not None
    assert point.layout.n_gpu <= 4
    least = min(
        evaluate_run(
            scenario.hardware, scenario.physics, dataclasses.replace(run, layout=lay)
        ).memory_per_gpu_bytes
        for lay in candidate_layouts(scenario.hardware, run)
    )
    assert point.run_cost.memory_per_gpu_bytes == least > point.run_cost.memory_capacity_bytes
