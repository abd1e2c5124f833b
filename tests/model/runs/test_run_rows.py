"""A concrete run's row counts the model it timed: its own parameters, its tokens, its
training FLOP; over its duration budget it is infeasible; placeholders are null."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from pipeline.model.records.results import InfeasibleReason, PointResult
from pipeline.model.runs.run_point import run_point
from pipeline.model.runs.run_search import best_run_layout
from pipeline.schema import ConfigError, Scenario, compose_config, load_scenario


def scenario(*overrides: str) -> Scenario:
    """The realistic scenario of a run preset on A100 80GB with `overrides`."""
    return load_scenario(
        compose_config(["hardware=a100_sxm_80gb", "physics=realistic", *overrides])
    )


def point(s: Scenario, duration_s: float = math.inf) -> PointResult:
    """The run's point, as the series evaluates it."""
    assert s.run is not None
    return run_point(s.hardware, s.physics, s.run, False, s.laws.tokens_per_param, duration_s)


def test_run_point_tokens_default_to_the_scaling_law() -> None:
    """Without run.tokens a run trains tokens_per_param times its own parameters."""
    p = point(scenario("run=gpt_1p7b"))
    assert p.counts is not None
    assert p.counts.n_tokens == pytest.approx(20.0 * p.counts.n_params, rel=1e-15)


def test_run_point_tokens_from_the_run_key() -> None:
    """run.tokens sets the tokens, and the training FLOP and time follow them."""
    one = point(scenario("run=gpt_1p7b", "run.tokens=1e11"))
    two = point(scenario("run=gpt_1p7b", "run.tokens=2e11"))
    assert one.counts is not None
    assert two.counts is not None
    assert one.counts.n_tokens == 1e11
    assert two.counts.training_flop == pytest.approx(2.0 * one.counts.training_flop, rel=1e-12)
    assert one.cost is not None
    assert two.cost is not None
    assert two.cost.training_time_s == pytest.approx(2.0 * one.cost.training_time_s, rel=1e-12)


def test_run_point_training_flop_is_model_flop_per_step_times_steps() -> None:
    """training_flop = the step's model FLOP (MFU's count) times tokens / batch tokens."""
    s = scenario("run=gpt_1p7b")
    p = point(s)
    assert s.run is not None
    assert p.counts is not None
    assert p.run_cost is not None
    steps = p.counts.n_tokens / (s.run.global_batch_seqs * s.run.shape.seq_len)
    assert p.counts.training_flop == pytest.approx(
        p.run_cost.model_flop_per_step * steps, rel=1e-12
    )


def test_run_point_over_its_duration_is_infeasible() -> None:
    """A run that does not finish within the budget is infeasible and keeps its cost."""
    s = scenario("run=gpt_1t")
    late = point(s, duration_s=s.duration_s)
    assert not late.feasible
    assert late.infeasible_reason is InfeasibleReason.EXCEEDS_DURATION
    assert late.cost is not None
    assert late.cost.training_time_s > s.duration_s
    assert point(s, duration_s=2.0 * late.cost.training_time_s).feasible


def test_run_point_placeholders_are_null() -> None:
    """A run's latency columns are NaN (null) and its matmul bound None, never made up."""
    p = point(scenario("run=gpt_1p7b"))
    assert p.cost is not None
    assert math.isnan(p.cost.t_latency_s)
    assert math.isnan(p.cost.t_latency_paid_s)
    assert p.cost.matmul_bound is None


def test_run_search_within_a_gpu_budget_uses_at_most_it() -> None:
    """run.gpu_budget searches layouts on any count up to it, e.g. 100 GPUs for GPT 1.7B."""
    s = scenario("run=gpt_1p7b", "run.layout_search=true", "run.gpu_budget=100")
    assert s.run is not None
    found = best_run_layout(s.hardware, s.physics, s.run)
    assert found is not None
    assert 32 < found[0].layout.n_gpu <= 100


def test_run_search_budget_of_its_own_count_is_never_slower() -> None:
    """A budget equal to the run's GPU count finds a step at most the exact search's."""
    s = scenario("run=gpt_1p7b", "run.layout_search=true")
    assert s.run is not None
    exact = best_run_layout(s.hardware, s.physics, s.run)
    budget = best_run_layout(s.hardware, s.physics, replace(s.run, gpu_budget=32))
    assert exact is not None
    assert budget is not None
    assert budget[1].step_time_s <= exact[1].step_time_s * (1 + 1e-12)


def test_run_gpu_budget_without_search_is_refused() -> None:
    """A GPU budget is the layout search's: without run.layout_search one line refuses it."""
    with pytest.raises(ConfigError, match=r"run\.gpu_budget"):
        scenario("run=gpt_1p7b", "run.gpu_budget=100")
