"""What a realistic grid row counts of the model it timed (pipeline/model/search/counts.py,
docs/model.md R.7 "What a grid row counts")."""

from __future__ import annotations

import functools

import numpy as np
import pytest

from pipeline.execute.series import SeriesOutcome, evaluate_series
from pipeline.model import caches
from pipeline.model.network.collectives import Network
from pipeline.model.network.times import dp_times_s
from pipeline.model.records.hardware import peak_flop_per_s
from pipeline.model.records.options import SearchOptions
from pipeline.model.records.results import PointResult
from pipeline.model.records.scaling import ScalingLaws, model_shape
from pipeline.model.search.counts import grid_counts, grid_shape, grid_shape_counts
from pipeline.schema import compose_config, load_scenario

REL = 1e-12
"""Relative tolerance of equalities that differ only by the order of floating-point operations."""


@functools.cache
def series(*overrides: str) -> SeriesOutcome:
    """The default H100 series under `overrides`, evaluated once per test session."""
    return evaluate_series(load_scenario(compose_config(list(overrides))))


def feasible(outcome: SeriesOutcome) -> list[PointResult]:
    """The series' feasible points (each with a layout and a cost)."""
    points = [p for p in outcome.points if p.feasible and p.cost is not None]
    assert points
    return points


def by_hand_attention_params(p: PointResult) -> float:
    """2·d² + 2·d·kv: the Q and output projections and the K and V ones of kv = 128 · K/V
    heads (as many as the d/128 heads when the scaling laws give none)."""
    s = p.shape
    heads = s.d_model // 128
    kv = 128 * (heads if s.kv_heads is None else min(s.kv_heads, heads))
    return 2.0 * s.d_model**2 + 2.0 * s.d_model * kv


def by_hand_params(p: PointResult) -> float:
    """L · (attention projections + S · 2·d·d_ff MLP weights): the grid model's weights."""
    s = p.shape
    return s.n_layers * (by_hand_attention_params(p) + s.sparsity * 2.0 * s.d_model * s.d_ff)


def by_hand_flop_per_step(p: PointResult) -> float:
    """3 · L · (2·B_tok·(attention projections + 2·d·d_ff) + 4·B_tok·s·d): forward and
    backward of the projections, one expert's MLP and the attention core (docs/model.md R.1)."""
    s = p.shape
    b = float(s.batch_tokens)
    weights = by_hand_attention_params(p) + 2.0 * s.d_model * s.d_ff
    return 3.0 * s.n_layers * (2.0 * b * weights + 4.0 * b * s.seq_len * s.d_model)


@pytest.mark.parametrize("scaling", ["dense", "sparse"])
def test_counts_realistic_grid_row_counts_its_own_parameters(scaling: str) -> None:
    """Every realistic grid row's parameters are those of the transformer it timed, attention
    projections included (more than the paper's MLP-only N), and it trains on 20 times them."""
    for p in series("physics=realistic", f"scaling={scaling}").points:
        assert p.counts is not None
        assert p.counts.n_params == pytest.approx(by_hand_params(p), rel=REL)
        assert p.counts.n_params > p.shape.n_params
        assert p.counts.n_tokens == pytest.approx(20.0 * by_hand_params(p), rel=REL)
        assert p.shape.n_tokens == p.counts.n_tokens  # the step counts these tokens


@pytest.mark.parametrize("scaling", ["dense", "sparse"])
@pytest.mark.parametrize("d_model", [12288, 32768, 131072])
def test_counts_grid_shape_counts_are_the_counts_of_the_grid_shape(
    scaling: str, d_model: int
) -> None:
    """`grid_shape_counts` gives `grid_shape` and the counts of that shape, bit for bit (the
    walk counts once what it used to count twice)."""
    scenario = load_scenario(compose_config(["physics=realistic", f"scaling={scaling}"]))
    shape = model_shape(d_model, scenario.laws, scenario.options.quirks)
    timed, counts = grid_shape_counts(scenario.physics, shape)
    assert timed == grid_shape(scenario.physics, shape)
    assert counts == grid_counts(scenario.physics, timed)
    assert grid_shape_counts(load_scenario(compose_config([])).physics, shape) == (shape, None)


@pytest.mark.parametrize("scaling", ["dense", "sparse"])
def test_counts_realistic_training_flop_is_the_model_flop_of_its_steps(scaling: str) -> None:
    """A realistic grid row's training FLOP is its model FLOP per step (projections, one
    expert's MLP, attention core) times its steps, D / B_tok."""
    for p in series("physics=realistic", f"scaling={scaling}").points:
        assert p.counts is not None
        steps = p.counts.n_tokens / p.shape.batch_tokens
        expected = by_hand_flop_per_step(p) * steps
        assert p.counts.training_flop == pytest.approx(expected, rel=REL)


@pytest.mark.parametrize("scaling", ["dense", "sparse"])
def test_counts_utilization_times_peak_and_time_is_the_rows_flop(scaling: str) -> None:
    """utilization · peak · N_GPU · training time equals the row's own training FLOP, and
    utilization is its MFU."""
    outcome = series("physics=realistic", f"scaling={scaling}")
    peak = peak_flop_per_s(outcome.scenario.hardware)
    for p in feasible(outcome):
        assert p.cost is not None
        assert p.layout is not None
        assert p.counts is not None
        assert p.grid_cost is not None
        done = p.cost.utilization * peak * p.layout.n_gpu * p.cost.training_time_s
        assert done == pytest.approx(p.counts.training_flop, rel=REL)
        assert p.cost.utilization == p.grid_cost.mfu


@pytest.mark.parametrize("scaling", ["dense", "sparse"])
def test_counts_realistic_grid_rows_carry_what_the_search_chose(scaling: str) -> None:
    """Feasible realistic grid rows carry the recomputation mode, MFU, HFU (at least the MFU,
    more only when a mode reruns a forward) and a memory per GPU within its HBM."""
    outcome = series("physics=realistic", f"scaling={scaling}")
    hbm = outcome.scenario.hardware.hbm_bytes
    for p in feasible(outcome):
        used = p.grid_cost
        assert used is not None
        assert p.recompute in {"none", "selective", "full"}
        assert 0.0 < used.mfu <= used.hfu
        assert (used.hfu == used.mfu) == (p.recompute == "none")
        assert 0.0 < used.memory_per_gpu_bytes <= hbm
        assert used.fits_memory


def test_counts_paper_rows_keep_the_papers_counts_and_no_choices() -> None:
    """Under paper physics a grid row counts the paper's N, D and C and carries no
    recomputation, MFU, HFU or memory per GPU (the paper models none of them)."""
    for p in series().points:
        assert p.counts is None
        assert p.counted_flop == p.shape.training_flop
        assert p.shape.n_tokens == 20.0 * p.shape.n_params
        assert p.grid_cost is None
        assert p.recompute is None


@pytest.mark.parametrize("scaling", ["dense", "sparse"])
def test_counts_series_limits_read_the_rows_flop(scaling: str) -> None:
    """A realistic series' last feasible and first infeasible compute are its rows' counted FLOP."""
    outcome = series("physics=realistic", f"scaling={scaling}")
    last = feasible(outcome)[-1]
    assert last.counts is not None
    assert outcome.limits.last_feasible_flop == last.counts.training_flop
    wall = next((p for p in outcome.points if not p.feasible), None)
    if wall is not None:
        assert wall.counts is not None
        assert outcome.limits.first_infeasible_flop == wall.counts.training_flop


@pytest.mark.parametrize("scaling", ["dense", "sparse"])
def test_counts_weight_flop_floor_skips_no_feasible_cluster(
    scaling: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Starting the cluster walk at the realistic weight FLOP's floor gives the same series as
    starting it at the paper's C (the floor only skips clusters too slow anyway)."""
    from pipeline.model.search import search

    scenario = load_scenario(compose_config(["physics=realistic", f"scaling={scaling}"]))
    caches.clear_caches()
    fast = evaluate_series(scenario).points
    monkeypatch.setattr(search, "weight_training_flop", lambda _, shape: shape.training_flop)
    caches.clear_caches()
    assert evaluate_series(scenario).points == fast


@pytest.mark.parametrize("scaling", ["dense", "sparse"])
def test_counts_data_parallel_all_reduce_moves_the_counted_parameters(scaling: str) -> None:
    """Under realistic physics a grid size's gradient all-reduce moves the parameters its row
    counts (attention projections too), not the paper's MLP-only N: its bandwidth time is the
    paper shape's times their ratio (1.5 for a dense size, d_ff = 4·d)."""
    physics = load_scenario(compose_config(["physics=realistic", f"scaling={scaling}"])).physics
    shape = model_shape(12288, ScalingLaws(sparse=scaling == "sparse"), SearchOptions().quirks)
    timed = grid_shape(physics, shape)
    assert timed.held_params == grid_counts(physics, shape).n_params
    net = Network(bandwidth_bytes_per_s=(900e9, 100e9), latency_s=(1e-6, 5e-6))
    dp = np.array([[8.0, 16.0]])
    paper_bw, _ = dp_times_s(shape, 4096, dp, net)
    timed_bw, _ = dp_times_s(timed, 4096, dp, net)
    ratio = by_hand_params(PointResult(shape, False, None, None, None)) / shape.n_params
    assert timed_bw == pytest.approx(paper_bw * ratio, rel=REL)
    assert ratio > 1.0


def test_counts_realistic_batch_is_the_law_at_the_row_flop() -> None:
    """Under `physics=realistic` every grid row's batch is the critical law's at the FLOP the
    row trains, R((C_r/3e23)^(1/6) · 2048) sequences (dense), at least the paper's C's; with
    `physics.batch_at_row_flop=false` it is the paper's batch of the width."""
    from pipeline.model.records.scaling import round_to_grid

    for p in feasible(series("physics=realistic")):
        assert p.counts is not None
        growth = (p.counts.training_flop / 3e23) ** (1.0 / 6.0)
        assert p.shape.batch_seqs == round_to_grid(growth * 2048)  # 2048² reference tokens
        paper = model_shape(p.shape.d_model, ScalingLaws(kv_heads=8))
        assert p.shape.batch_seqs >= paper.batch_seqs
    assert any(
        p.shape.batch_seqs > model_shape(p.shape.d_model, ScalingLaws()).batch_seqs
        for p in series("physics=realistic").points
    )
    for p in series("physics=realistic", "physics.batch_at_row_flop=false").points:
        assert p.shape.batch_seqs == model_shape(p.shape.d_model, ScalingLaws()).batch_seqs
